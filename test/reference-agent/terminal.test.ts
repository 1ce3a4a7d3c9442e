/** What the terminal shows: text on stdout, everything else on stderr, a spinner only on a terminal. */
import { describe, expect, it } from 'vitest'
import { TerminalUI } from '../../src/host/reference-agent/index.js'
import { Capture } from './support.js'

function terminal(tty: boolean): { ui: TerminalUI; out: Capture; err: Capture } {
  const out = new Capture()
  const err = Object.assign(new Capture(), { isTTY: tty })
  return { ui: new TerminalUI({ stdout: out, stderr: err, color: false }), out, err }
}

describe('TerminalUI', () => {
  it('keeps streamed text on stdout and starts each stderr line on a fresh line', () => {
    const { ui, out, err } = terminal(false)
    ui.waiting(1, 'claude-test')
    ui.text('Let me ')
    ui.text('look.')
    ui.decision({ point: 'beforeToolExecute', hooks: ['guard'], summary: 'refused shell: refused by the user' })
    ui.toolCall({ id: 't1', name: 'shell', input: { command: 'ls' } })
    ui.toolResult({ id: 't1', name: 'shell', input: { command: 'ls' } }, { text: 'a\nb\n', isError: false })
    ui.log({ seq: 1, hook: 'audit', point: 'beforeToolExecute', message: 'tool call t1 shell', timeMs: 0 })
    ui.end({ reason: 'end_turn', turns: 1 })
    expect(out.text).toBe('Let me look.\n')
    expect(err.text).toBe(
      [
        '[guard] refused shell: refused by the user',
        '→ shell {"command":"ls"}',
        '← shell (2 lines): "a b"',
        '[audit] tool call t1 shell',
        'hookd agent: done after 1 turn',
        '',
      ].join('\n'),
    )
  })

  it('turns a spinner while waiting on the model only when stderr is a terminal, and clears it', () => {
    const quiet = terminal(false)
    quiet.ui.waiting(2, 'claude-test')
    quiet.ui.answered(2)
    expect(quiet.err.text).toBe('')

    const tty = terminal(true)
    tty.ui.waiting(2, 'claude-test')
    expect(tty.err.text).toMatch(/^\r. waiting for claude-test \(turn 2\)/)
    tty.ui.text('Hi')
    expect(tty.err.text.endsWith('\r\x1b[K')).toBe(true)
    expect(tty.out.text).toBe('Hi')
  })
})
