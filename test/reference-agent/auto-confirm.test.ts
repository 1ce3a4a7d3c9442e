/**
 * A confirm nobody was asked (issue 15.12): `hookd agent` run without a terminal answers ctx.confirm by
 * --yes, and says so on stderr, naming the hook and the question. A real process, a scripted model.
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runHookd } from '../support/processes.js'
import { EXAMPLE_HOOKS } from '../support/sidecar.js'
import { workdir } from './support.js'

const SCRIPT = {
  version: 1,
  turns: [{ text: 'Cleaning.', toolCalls: [{ id: 'toolu_1', name: 'shell', arguments: { command: 'rm -rf build' } }] }, { text: 'Done.' }],
}

describe('hookd agent without a terminal', { timeout: 90_000 }, () => {
  it.each([
    [['--yes'], 'approved automatically (--yes)'],
    [[], 'declined automatically (no terminal to ask on, and no --yes)'],
  ])('says which confirm nobody saw and how it was answered (%j)', async (flags, answer) => {
    const dir = await workdir({ 'build/out.txt': 'x' })
    const script = join(dir, 'script.json')
    await writeFile(script, JSON.stringify(SCRIPT))
    // stdin is not a terminal here, so no person can be asked.
    const ran = await runHookd(['agent', '--hooks', EXAMPLE_HOOKS, '--hook', 'guard', '--workdir', dir, '--model', `scripted:${script}`, ...flags, 'clean up'], {
      env: { NO_COLOR: '1' },
      timeoutMs: 80_000,
    })
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stderr).toContain(`[guard] confirm "Dangerous command: rm -rf build" was not shown to anyone: ${answer}\n`)
  })
})
