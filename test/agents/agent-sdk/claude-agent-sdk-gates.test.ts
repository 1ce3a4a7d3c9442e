/**
 * hookd-sandbox/claude-agent-sdk asks the chain at every gate, as the front door does (issue 27 item 8):
 * a run that is already open follows hot reloads of its hooks instead of a view cached when it opened,
 * so a guard that gains a PreToolUse handler refuses from the next tool call on; and it sends no point
 * call when no declared hook could serve the point and all of them are loaded.
 *
 * Through the adapter's own seam: the hook callback that `hookdHooks` hands the SDK, called with the
 * event JSON the SDK passes it, against a real sidecar that watches its hooks folder. The SDK adds
 * nothing here but the call itself (claude-agent-sdk.test.ts shows it calling this callback and acting on
 * the answer, the hot-fix included), and without it each scenario costs no Claude Code process.
 * Point calls are counted on the real HostSession the run opens.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type HookdHooks, type SdkHookCallback, hookdHooks } from '../../../src/agents/claude-agent-sdk/index.js'
import type { HookdClient } from '../../../src/host/client.js'
import type { Diagnostic } from '../../../src/protocol/diagnostic.js'
import { type Running, hook, startSidecar, writeTree } from '../../support/sidecar.js'
import { waitFor } from '../../reload/support.js'

/** Serves no gate: a hook that only reads results. */
const AUDIT_ONLY = hook({ afterToolExecute: `function (ctx, call, result) {}` })
/** The hot-fix: refuses rm -rf. */
const REFUSES = hook({
  afterToolExecute: `function (ctx, call, result) {}`,
  beforeToolExecute: `function (ctx, call) { if (/rm -rf/.test(String(call.arguments.command))) return { allow: false, reason: 'hot-fixed: no rm -rf' } }`,
})

let running: Running
let hooks: string
let work: string
const calls: string[] = []
let sessionCounter = 0

/** A client whose sessions count the point calls they send, by point. */
function counting(client: HookdClient): HookdClient {
  return new Proxy(client, {
    get(target, key, receiver) {
      if (key !== 'openSession') return Reflect.get(target, key, receiver) as unknown
      return async (...args: Parameters<HookdClient['openSession']>) => {
        const session = await target.openSession(...args)
        const call = session.call.bind(session)
        session.call = ((point, payload, options) => {
          calls.push(point)
          return call(point, payload, options)
        }) as typeof session.call
        return session
      }
    },
  })
}

beforeAll(async () => {
  hooks = await writeTree({ 'late/index.js': AUDIT_ONLY, 'quiet/index.js': AUDIT_ONLY, 'never-loads/index.js': 'module.exports = {\n' })
  work = await writeTree({ 'victim/keep.txt': 'keep me\n' })
  running = await startSidecar({ hooks, watch: true })
})

afterAll(async () => {
  await running?.stop()
  await Promise.all([hooks, work].filter(Boolean).map((dir) => rm(dir, { recursive: true, force: true })))
})

interface Run {
  hookd: HookdHooks
  preToolUse(command: string): Promise<unknown>
  pushed: Diagnostic[]
  /** Point calls sent since the run was made. */
  sent(): string[]
}

async function open(names: string[]): Promise<Run> {
  const pushed: Diagnostic[] = []
  const first = calls.length
  const hookd = await hookdHooks({ client: counting(running.client), hooks: names, onDiagnostic: (d) => void pushed.push(d) })
  const sessionId = `gates-${process.pid}-${++sessionCounter}`
  let n = 0
  const preToolUse = (command: string): Promise<unknown> => {
    const callback = hookd.hooks.PreToolUse?.[0]?.hooks[0] as SdkHookCallback | undefined
    if (!callback) throw new Error(`no PreToolUse callback: the events are ${hookd.events.join(', ')}`)
    const id = `toolu_gates_${++n}`
    const event = { hook_event_name: 'PreToolUse', session_id: sessionId, cwd: work, permission_mode: 'default', tool_name: 'Bash', tool_input: { command }, tool_use_id: id }
    return callback(event, id, { signal: new AbortController().signal })
  }
  return { hookd, preToolUse, pushed, sent: () => calls.slice(first) }
}

async function edit(name: string, source: string): Promise<void> {
  await mkdir(join(hooks, name), { recursive: true })
  await writeFile(join(hooks, name, 'index.js'), source)
}

const DENIED = { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'hot-fixed: no rm -rf' } }
/** A guard that does not load (or whose folder went) refuses the call: the adapter's sessions fail closed on a hook's own failure. */
const refusedBecause = (hook: string, why: string): unknown => ({
  hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: `hookd refused the call: hook '${hook}' could not decide (${why})` },
})

describe('hookd-sandbox/claude-agent-sdk: a run already open asks the chain at every gate', () => {
  it('registers PreToolUse even when no hook serves it yet, and answers it without a point call while none could', async () => {
    const run = await open(['quiet'])
    try {
      expect(run.hookd.events).toEqual(['PreToolUse', 'PostToolUse', 'PostToolUseFailure'])
      for (let i = 0; i < 3; i++) expect(await run.preToolUse('rm -rf victim')).toEqual({})
      expect(run.sent()).toEqual([])
    } finally {
      await run.hookd.close()
    }
  })

  it('a guard that served no PreToolUse when the run opened and gains one in a hot reload refuses from the next tool call on; fixed back, no point call is sent again', async () => {
    const run = await open(['late'])
    try {
      expect(await run.preToolUse('rm -rf victim')).toEqual({})
      expect(run.sent(), 'the run is open, and nothing served the gate').toEqual([])

      await edit('late', REFUSES)
      await waitFor('the reload to reach the run', () => run.pushed.find((d) => d.kind === 'reload' && d.hook === 'late'))
      expect(await run.preToolUse('rm -rf victim')).toEqual(DENIED)
      expect(await run.preToolUse('ls')).toEqual({})
      expect(run.sent()).toEqual(['beforeToolExecute', 'beforeToolExecute'])

      // Back to a version without the gate: once the run has read the new list, no point call again.
      const reloads = run.pushed.length
      await edit('late', AUDIT_ONLY)
      await waitFor('the second reload to reach the run', () => run.pushed.slice(reloads).find((d) => d.kind === 'reload' && d.hook === 'late'))
      await waitFor('a tool call answered without a point call', async () => {
        const before = run.sent().length
        const answer = await run.preToolUse('rm -rf victim')
        expect(answer).toEqual({})
        return run.sent().length === before ? true : undefined
      })
      const settled = run.sent().length
      for (let i = 0; i < 3; i++) expect(await run.preToolUse('rm -rf victim')).toEqual({})
      expect(run.sent()).toHaveLength(settled)
    } finally {
      await run.hookd.close()
    }
  })

  it("a declared hook that never loaded makes every gate ask the chain (which points it would serve is unknown), and the same run's hook, once it loads, refuses", async () => {
    const run = await open(['never-loads'])
    try {
      expect(run.hookd.events).toEqual(['PreToolUse'])
      expect(await run.preToolUse('rm -rf victim')).toEqual(refusedBecause('never-loads', 'it did not load'))
      expect(run.sent()).toEqual(['beforeToolExecute'])
      await edit('never-loads', REFUSES)
      await waitFor('the load to reach the run', () => run.pushed.find((d) => d.kind === 'reload' && d.hook === 'never-loads'))
      expect(await run.preToolUse('rm -rf victim')).toEqual(DENIED)
    } finally {
      await run.hookd.close()
      await edit('never-loads', 'module.exports = {\n')
    }
  })

  it('a declared hook removed while the run is open is asked for at gates, as the front door does; restored with a gate, it refuses', async () => {
    await edit('gone', AUDIT_ONLY)
    await waitFor('gone to load', async () => ((await running.client.listHooks()).some((h) => h.name === 'gone' && h.status === 'ready') ? true : undefined))
    const run = await open(['gone'])
    try {
      expect(await run.preToolUse('rm -rf victim')).toEqual({})
      expect(run.sent()).toEqual([])
      await rm(join(hooks, 'gone'), { recursive: true, force: true })
      await waitFor('the removal to reach the run', () => run.pushed.find((d) => d.kind === 'hook-removed' && d.hook === 'gone'))
      await waitFor('a gate that asks the chain', async () => {
        const before = run.sent().length
        // A hook whose folder was removed is skipped (only a hook's failure refuses): the chain has no guard to ask.
        expect(await run.preToolUse('rm -rf victim')).toEqual({})
        return run.sent().length > before ? true : undefined
      })
      await edit('gone', REFUSES)
      await waitFor('the restore to reach the run', () => run.pushed.find((d) => d.kind === 'reload' && d.hook === 'gone'))
      expect(await run.preToolUse('rm -rf victim')).toEqual(DENIED)
    } finally {
      await run.hookd.close()
    }
  })

  it('the same sidecar answers an ordinary run afterwards', async () => {
    const run = await open(['late'])
    try {
      expect(await run.preToolUse('echo hi')).toEqual({})
    } finally {
      await run.hookd.close()
    }
  })
})
