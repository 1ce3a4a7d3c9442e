/**
 * A hook gets what its hook.json "permissions" declare, not the session's whole grant (issue 31): an
 * env name or an origin the session allows but the hook did not declare is refused inside the hook,
 * and a shell command rewritten by a hook that may not rewrite shell does not run rewritten under a
 * session that auto-approves (nobody is asked there: the rewrite is dropped).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Running } from '../../support/sidecar.js'
import { CALL, UNCHANGED, expectServing, failed, runHooks, startHostile } from '../support.js'

let running: Running

beforeAll(async () => {
  running = await startHostile({ only: ['undeclared-env', 'undeclared-origin', 'shell-rewriter'] })
})

afterAll(async () => {
  await running?.stop()
})

describe('what a hook did not declare', () => {
  it('undeclared-env: an env name the session allows but the hook does not declare throws capability-denied, and its value never reaches the hook', async () => {
    const run = await runHooks(running, ['undeclared-env'], {
      policy: { env: ['HOOKD_DECLARED', 'HOOKD_SECRET'] },
      env: { HOOKD_DECLARED: 'yes', HOOKD_SECRET: 's3cret' },
    })
    expect(run.diagnostics).toEqual([
      failed(
        'undeclared-env',
        'capability-denied',
        `Error: ctx.env.HOOKD_SECRET refused: hook 'undeclared-env' does not declare env name HOOKD_SECRET in its hook.json "permissions"; add "HOOKD_SECRET" to "env" there if it needs it`,
        5,
      ),
    ])
    expect(run.logs).toEqual(['declared=yes'])
    expect(JSON.stringify(run)).not.toContain('s3cret')
    expect(run.result).toEqual(UNCHANGED)
    await expectServing(running)
  })

  it('undeclared-origin: an origin the session allows but the hook does not declare is refused before the host is asked', async () => {
    const fetched: string[] = []
    const run = await runHooks(running, ['undeclared-origin'], {
      policy: { httpOrigins: ['https://allowed.example', 'https://declared.example'] },
      capabilities: {
        fetch: async (url) => {
          fetched.push(url)
          return { status: 200, headers: {}, body: 'the host answered' }
        },
      },
    })
    expect(run.diagnostics).toEqual([
      failed(
        'undeclared-origin',
        'capability-denied',
        `Error: ctx.http.fetch('https://allowed.example/collect?d=1') refused: hook 'undeclared-origin' does not declare origin https://allowed.example in its hook.json "permissions"; add "https://allowed.example" to "origins" there if it needs it`,
        4,
      ),
    ])
    expect(fetched).toEqual([])
    expect(run.logs).toEqual([])
    expect(run.result).toEqual(UNCHANGED)
    await expectServing(running)
  })
})

describe('a decision a hook may not make', () => {
  it('shell-rewriter: a shell rewrite by a hook that may only rewrite write_file is dropped under auto-approve, and the command runs as the agent wrote it', async () => {
    const run = await runHooks(running, ['shell-rewriter'], { interactive: false, autoApprove: true })
    expect(run.result).toEqual(UNCHANGED)
    expect(run.diagnostics).toEqual([
      {
        hook: 'shell-rewriter',
        point: 'beforeToolExecute',
        kind: 'not-permitted',
        message: `hook 'shell-rewriter' rewrote the arguments of shell, which its hook.json "permissions" do not allow; dropped, since nobody can be asked to approve it here (to allow it, add "shell" to "decide": {"rewriteArguments": [...]})`,
        file: 'shell-rewriter/index.js',
        version: expect.any(String) as unknown as string,
      },
    ])
    expect(CALL.arguments).toEqual({ command: 'ls' })
    await expectServing(running)
  })
})
