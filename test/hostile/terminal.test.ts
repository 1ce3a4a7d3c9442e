/**
 * Text from hooks is inert: escape sequences and newlines a hook writes into its logs, notifications,
 * error messages or load failures reach the terminal and the logs escaped, one line per event.
 */
import { cp, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runHookd, startServe, stopProcess } from '../support/processes.js'
import { FIXTURES } from './support.js'

// C0 controls other than the newline that ends each line, DEL, C1 controls, bidirectional marks.
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/

let hooks: string

beforeAll(async () => {
  hooks = await mkdtemp(join(tmpdir(), 'hookd-terminal-'))
  for (const name of ['escape-sequences', 'forged-line', 'ordinary']) await cp(join(FIXTURES, name), join(hooks, name), { recursive: true })
})

afterAll(async () => {
  if (hooks) await rm(hooks, { recursive: true, force: true })
})

describe('what hookd prints', () => {
  it('hookd invoke: logs, notifications and diagnostics on stderr are escaped, one line each; stdout is safe JSON', async () => {
    const ran = await runHookd([
      'invoke', '--hooks', hooks, '--hook', 'escape-sequences', '--point', 'beforeToolExecute',
      '--payload', '{"id":"c1","name":"shell","arguments":{"command":"ls"}}',
    ])
    expect(ran.code).toBe(0)
    expect(ran.stderr).not.toMatch(RAW_CONTROL)
    expect(ran.stdout).not.toMatch(RAW_CONTROL)
    const lines = ran.stderr.trimEnd().split('\n')
    expect(lines).toContain('[escape-sequences] \\u001b]0;pwned\\u0007\\u001b[2J\\u009b31mred\\u202eevil\\nhookd: forged line')
    expect(lines).toContain('[escape-sequences] notify: title \\u001b[31m - body\\r\\nhookd: forged too')
    expect(lines.filter((l) => l.startsWith('hookd: '))).toEqual([])
    const out = JSON.parse(ran.stdout) as { diagnostics: Array<{ message: string }>; logs: Array<{ message: string }> }
    expect(out.diagnostics[0]?.message).toContain('boom \u001b[2J\nhookd: listening')
    expect(out.logs[0]?.message).toContain('\u009b31m')
  })

  it('hookd serve: a load error that would forge a log line and clear the screen stays one escaped line', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'hookd-terminal-serve-'))
    const { child, output } = await startServe(['--hooks', hooks, '--workers', '1', '--listen', `unix:${join(cwd, 'h.sock')}`], { cwd })
    try {
      expect(output.stderr).not.toMatch(RAW_CONTROL)
      const lines = output.stderr.trimEnd().split('\n')
      const failed = lines.filter((l) => l.includes('forged-line'))
      expect(failed).toHaveLength(1)
      expect(failed[0]).toContain('top level\\nhookd: listening on unix:/tmp/evil.sock\\u001b[2J')
      expect(lines.filter((l) => l.startsWith('hookd: listening on '))).toHaveLength(1)
    } finally {
      await stopProcess(child, 'SIGTERM')
      await rm(cwd, { recursive: true, force: true })
    }
  })
})
