/**
 * A guard's own bug must not let the agent's call through (docs/protocol.md, "What a hook's failure
 * does at a gate"): sessions the agents' front door opens refuse at a gate when a hook throws, returns
 * an invalid value or does not load, unless that hook's hook.json says "onError": "skip"; a gRPC host
 * keeps the seed's rule (the hook is skipped, the chain goes on) unless it asks otherwise. The attack:
 * a `.env` guard with a bug, and `echo SECRET=1 > .env`.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HookdClient } from '../../src/host/index.js'
import { Sidecar } from '../../src/sidecar/sidecar.js'
import { hook, sessionOptions, writeTree } from '../support/sidecar.js'

const TOKEN = 'hkd_buggy-guard-test-token-0123456789abcdefghijklm'
/** A guard for .env files with a bug: it reads a field the call does not have. */
const BUGGY = hook({ beforeToolExecute: "function (ctx, call) { if (call.arguments.target.path === '.env') return { allow: false, reason: 'no .env' } }" })

let hooks = ''
let project = ''
let sidecar: Sidecar
let url = ''
let address = ''

beforeAll(async () => {
  hooks = await writeTree({
    'env-guard/index.js': BUGGY,
    'lenient-guard/index.js': BUGGY,
    'lenient-guard/hook.json': JSON.stringify({ onError: 'skip' }),
    'broken-guard/index.js': 'module.exports = { beforeToolExecute(ctx, call) { return (',
    'wrong-answer/index.js': hook({ beforeToolExecute: "function () { return { decision: 'block' } }" }),
  })
  project = await mkdtemp(join(tmpdir(), 'hookd-buggy-guard-'))
  sidecar = await Sidecar.create({ hooks, workers: 1, watch: false })
  url = await sidecar.listenHttp('127.0.0.1', 0, { token: TOKEN, report: () => {} })
  address = await sidecar.listen(`unix:${join(project, 'hookd.sock')}`)
}, 60_000)

afterAll(async () => {
  await sidecar?.stop()
  await rm(hooks, { recursive: true, force: true })
  await rm(project, { recursive: true, force: true })
})

let sessions = 0
async function preToolUse(route: string, command: string): Promise<Record<string, unknown>> {
  const event = { session_id: `buggy-${++sessions}`, cwd: project, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command }, tool_use_id: 't1' }
  const res = await fetch(`${url}/claude-code/${route}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: JSON.stringify(event) })
  expect(res.status).toBe(200)
  return ((await res.json()) as { hookSpecificOutput?: Record<string, unknown> }).hookSpecificOutput ?? {}
}

describe("a guard's own bug at the agents' front door", () => {
  it('refuses the call when the guard throws, naming the hook and what it did', async () => {
    expect(await preToolUse('env-guard', 'echo SECRET=1 > .env')).toEqual({
      hookEventName: 'PreToolUse',
      permissionDecision: 'deny',
      permissionDecisionReason: "hookd refused the call: hook 'env-guard' could not decide (it threw)",
    })
  })

  it('refuses when the guard does not load, or answers something the point does not take', async () => {
    expect((await preToolUse('broken-guard', 'ls')).permissionDecisionReason).toBe("hookd refused the call: hook 'broken-guard' could not decide (it did not load)")
    expect((await preToolUse('wrong-answer', 'ls')).permissionDecisionReason).toBe("hookd refused the call: hook 'wrong-answer' could not decide (it returned a value the point does not accept)")
  })

  it('lets the call through when the hook says "onError": "skip", and the same sidecar answers an ordinary call', async () => {
    expect(await preToolUse('lenient-guard', 'echo SECRET=1 > .env')).toEqual({})
    expect(await preToolUse('lenient-guard,env-guard', 'ls')).toMatchObject({ permissionDecision: 'deny' })
  })
})

describe('a gRPC host keeps the seed rule unless it asks otherwise', () => {
  it('skips the throwing hook by default, and refuses with onError refuse-unless-skip', async () => {
    const client = await HookdClient.connect(address)
    try {
      const seed = await client.openSession(sessionOptions(['env-guard']))
      const call = { id: 'c1', name: 'shell', arguments: { command: 'echo SECRET=1 > .env' } }
      const skipped = await seed.call('beforeToolExecute', call)
      expect(skipped.result).toEqual({ allow: true, arguments: call.arguments })
      expect(skipped.diagnostics.map((d) => d.kind)).toEqual(['throw'])
      await seed.close('end_turn')
      const guarded = await client.openSession(sessionOptions(['env-guard', 'lenient-guard'], { onError: 'refuse-unless-skip' }))
      const refused = await guarded.call('beforeToolExecute', call)
      expect(refused.result).toMatchObject({ allow: false, refusedBy: 'hookd', reason: "hookd refused the call: hook 'env-guard' could not decide (it threw)" })
      await guarded.close('end_turn')
    } finally {
      client.close()
    }
  })
})
