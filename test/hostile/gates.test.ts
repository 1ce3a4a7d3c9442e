/**
 * Gates never open by accident. A gate hook whose invocation ends without a decision it could help (a
 * limit, a crash, a cancel) refuses the call; a worker killed by one session's hook never turns another
 * session's pending gate into "allow"; an invocation lost to someone else's crash runs again, alone, on
 * a fresh worker; and the failure policy (hook.json "onError", the session's, the operator's) decides
 * the rest.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { SessionOptions } from '../../src/host/index.js'
import { type Running, sessionOptions } from '../support/sidecar.js'
import { CALL, UNCHANGED, expectServing, failed, runHooks, startHostile } from './support.js'

const GATES = ['asks-then-thinks', 'thinks-then-answers', 'crash-on-signal', 'throws-refuse', 'throws-plain', 'broken-refuse', 'sync-loop', 'slow-confirm']

/** What a gate refused by hookd itself looks like. */
function refusedByHookd(hook: string, why: string): Record<string, unknown> {
  return { allow: false, arguments: CALL.arguments, refusedBy: 'hookd', reason: `hookd refused the call: hook '${hook}' could not decide (${why})` }
}

let running: Running

beforeAll(async () => {
  // One worker, so that two sessions' invocations share it; limits far from the hooks' own pauses.
  running = await startHostile({ only: GATES, workers: 1, limits: { cpuMs: 400, wallMs: 30_000 } })
})

afterAll(async () => {
  await running?.stop()
})

describe('a hook that could not decide', () => {
  it('sync-loop: a gate hook stopped at its CPU limit refuses the call, by hookd, naming it', async () => {
    const run = await runHooks(running, ['sync-loop'])
    expect(run.diagnostics).toEqual([failed('sync-loop', 'cpu', 'used more than its CPU time limit of 400 ms and was stopped')])
    expect(run.result).toEqual(refusedByHookd('sync-loop', 'it ran past its CPU time limit'))
    await expectServing(running)
  })

  it('the same hook in a session that opts into fail-open is skipped, and the call goes through', async () => {
    const run = await runHooks(running, ['sync-loop'], { onError: 'skip' })
    expect(run.diagnostics).toEqual([failed('sync-loop', 'cpu', 'used more than its CPU time limit of 400 ms and was stopped')])
    expect(run.result).toEqual(UNCHANGED)
  })

  it('a gate cancelled while its guard waits on the human comes back refused, not allowed', async () => {
    const session = await running.client.openSession(
      sessionOptions(['slow-confirm'], { interactive: true, capabilities: { confirm: () => new Promise<boolean>(() => {}) } }),
    )
    try {
      const abort = new AbortController()
      const call = session.call('beforeToolExecute', CALL, { signal: abort.signal })
      await new Promise((resolve) => setTimeout(resolve, 300))
      abort.abort()
      const out = await call
      expect(out.result).toEqual({ allow: false, arguments: CALL.arguments, refusedBy: 'hookd', reason: "hookd refused the call: hook 'slow-confirm' could not decide (the call was cancelled)" })
      expect(out.trace).toEqual([expect.objectContaining({ hook: 'slow-confirm', outcome: 'cancelled' })])
    } finally {
      session.abandon()
    }
    await expectServing(running)
  })
})

describe("another session's crash", () => {
  // Its own sidecar: one worker, and CPU limits far from the hooks' pauses (they spin, on purpose).
  let shared: Running

  beforeAll(async () => {
    shared = await startHostile({ only: ['asks-then-thinks', 'thinks-then-answers', 'crash-on-signal', 'slow-confirm'], workers: 1, limits: { cpuMs: 60_000, wallMs: 120_000 }, confirmMs: 120_000 })
  })

  afterAll(async () => {
    await shared?.stop()
  })

  /** Opens a session whose confirm answers with `answer()`. */
  async function open(hooks: string[], answer: () => Promise<boolean> | boolean, extra: Partial<SessionOptions> = {}) {
    return shared.client.openSession(sessionOptions(hooks, { interactive: true, capabilities: { confirm: answer }, ...extra }))
  }

  it('never turns a pending gate into allow: the human said no, the worker died, the call is refused', async () => {
    let humanAnswered: () => void = () => {}
    const answered = new Promise<void>((resolve) => {
      humanAnswered = resolve
    })
    const careful = await open(['asks-then-thinks'], () => {
      setImmediate(humanAnswered)
      return false
    })
    const hostile = await open(['crash-on-signal'], async () => {
      await answered
      return true
    })
    try {
      const [gate, crashed] = await Promise.all([careful.call('beforeToolExecute', CALL), hostile.call('beforeToolExecute', CALL)])
      // The careful session's hook had asked the human: it is not run again (the human would be asked
      // twice), and its gate refuses.
      expect(gate.diagnostics).toEqual([
        expect.objectContaining({ hook: 'asks-then-thinks', kind: 'worker-crash', message: expect.stringMatching(/^hook 'asks-then-thinks' beforeToolExecute: the sandbox worker \(pid \d+\) died while the hook ran/) }),
      ])
      expect(gate.result).toEqual(refusedByHookd('asks-then-thinks', 'its sandbox worker died'))
      expect(crashed.result).toEqual(refusedByHookd('crash-on-signal', 'its sandbox worker died'))
    } finally {
      careful.abandon()
      hostile.abandon()
    }
    await expectServing(shared)
  })

  it('an invocation that called nothing runs again, alone, on a fresh worker, and keeps its own answer', async () => {
    const logs: string[] = []
    const innocent = await open(['thinks-then-answers'], () => true, { capabilities: { log: (line) => void logs.push(line.message) } })
    let asked: () => void = () => {}
    const waiting = new Promise<void>((resolve) => {
      asked = resolve
    })
    // The other invocation on the same worker has asked its host (it never hears back).
    const other = await open(['slow-confirm'], () => {
      asked()
      return new Promise<boolean>(() => {})
    })
    try {
      const kept = innocent.call('beforeToolExecute', CALL)
      const lost = other.call('beforeToolExecute', CALL)
      await waiting
      await vi.waitFor(() => expect(logs).toEqual(['thinking']), { timeout: 20_000, interval: 20 })
      // The worker dies under both (as if a hook had crashed it).
      const [pid] = shared.sidecar.pool.pids()
      process.kill(pid as number, 'SIGKILL')
      const [innocentOut, otherOut] = await Promise.all([kept, lost])
      expect(innocentOut.diagnostics).toEqual([])
      expect(innocentOut.result).toEqual({ allow: true, arguments: { ...CALL.arguments, thought: true } })
      // Two runs: the one lost with the worker, and the retry.
      expect(logs).toEqual(['thinking', 'thinking'])
      // The invocation that had asked its host is not run again (it would ask twice): its gate refuses.
      expect(otherOut.result).toEqual(refusedByHookd('slow-confirm', 'its sandbox worker died'))
    } finally {
      innocent.abandon()
      other.abandon()
    }
    await expectServing(shared)
  })
})

describe('the failure policy', () => {
  it('a hook whose hook.json says "onError": "refuse" refuses the call when it throws', async () => {
    const run = await runHooks(running, ['throws-refuse'])
    expect(run.diagnostics).toEqual([failed('throws-refuse', 'throw', 'Error: the guard broke', 4)])
    expect(run.result).toEqual(refusedByHookd('throws-refuse', 'it threw'))
  })

  it('such a hook that does not load refuses every gate call', async () => {
    const pushed: string[] = []
    const run = await runHooks(running, ['broken-refuse'], { capabilities: { diagnostic: (d) => void pushed.push(d.kind) } })
    expect(pushed).toEqual(['load'])
    expect(run.result).toEqual(refusedByHookd('broken-refuse', 'it did not load'))
  })

  it('a session that asks for fail-closed refuses when any hook throws; fail-open cannot undo a hook\'s "refuse"', async () => {
    const closed = await runHooks(running, ['throws-plain'], { onError: 'refuse' })
    expect(closed.result).toEqual(refusedByHookd('throws-plain', 'it threw'))
    const open = await runHooks(running, ['throws-plain'])
    expect(open.result).toEqual(UNCHANGED)
    const still = await runHooks(running, ['throws-refuse'], { onError: 'skip' })
    expect(still.result).toEqual(refusedByHookd('throws-refuse', 'it threw'))
  })

  it("the operator's floor (hookd serve --fail-closed) beats a session's fail-open", async () => {
    const strict = await startHostile({ only: ['throws-plain'], onError: 'refuse' })
    try {
      const run = await runHooks(strict, ['throws-plain'], { onError: 'skip' })
      expect(run.result).toEqual(refusedByHookd('throws-plain', 'it threw'))
    } finally {
      await strict.stop()
    }
  })
})

describe('memory parked on the host', () => {
  it('at most what the worker may hold waits on the host; the rest fail with limit, and their gates refuse', async () => {
    const parked = await startHostile({
      only: ['parks-memory'],
      workers: 1,
      limits: { memoryMb: 32, cpuMs: 20_000, wallMs: 60_000 },
      confirmMs: 60_000,
      pool: { maxParkedMb: 128 },
    })
    const waiting: Array<(yes: boolean) => void> = []
    try {
      const sessions = await Promise.all(
        Array.from({ length: 12 }, () =>
          parked.client.openSession(
            sessionOptions(['parks-memory'], {
              interactive: true,
              capabilities: { confirm: () => new Promise<boolean>((resolve) => waiting.push(resolve)) },
            }),
          ),
        ),
      )
      const calls = sessions.map((s) => s.call('beforeToolExecute', CALL))
      // 128 MB of 32 MB invocations: four wait on the host; the other eight are refused at once.
      const settled: Array<Awaited<(typeof calls)[number]>> = []
      for (const call of calls) void call.then((out) => settled.push(out), () => {})
      await vi.waitFor(() => expect(settled).toHaveLength(8), { timeout: 60_000, interval: 50 })
      expect(waiting).toHaveLength(4)
      for (const out of settled) {
        expect(out.diagnostics).toEqual([
          failed('parks-memory', 'limit', 'Error: ctx.confirm: invocations that wait on their host already hold 128 MB in this sandbox worker, and at most 128 MB may wait at once; try again when the host has answered', 7),
        ])
        expect(out.result).toEqual(refusedByHookd('parks-memory', 'it hit a per-invocation limit'))
      }
      for (const answer of waiting) answer(true)
      const all = await Promise.all(calls)
      expect(all.filter((out) => (out.result as { arguments: { yes?: boolean } }).arguments.yes === true)).toHaveLength(4)
      for (const s of sessions) s.abandon()
      await expectServing(parked)
    } finally {
      await parked.stop()
    }
  })
})
