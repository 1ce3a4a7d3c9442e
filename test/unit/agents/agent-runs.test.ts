/** AgentRuns with fake runs: order within a run, the bounds, the concurrency quota, cancels, and a run that fails to open. */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AgentRun, ChainAnswer, RunStart } from '../../../src/agents/agent-run.js'
import { AgentRuns } from '../../../src/agents/agent-runs.js'

let workdir = ''
beforeAll(async () => {
  workdir = await mkdtemp(join(tmpdir(), 'hookd-agent-runs-'))
})
afterAll(() => rm(workdir, { recursive: true, force: true }))

const start = (sessionId: string): RunStart => ({ key: { sessionId, workdir }, agentId: 'test', modelId: '' })
const answer: ChainAnswer = { result: {}, diagnostics: [], asks: [] }

/** A run that records what it was asked, in order. */
function fakeRun(log: string[], id: string, gate?: Promise<void>): AgentRun {
  return {
    serves: () => true,
    call: async (point) => {
      log.push(`${id} ${point} start`)
      if (point !== 'beforeRun') await gate
      log.push(`${id} ${point} end`)
      return answer
    },
    close: async (reason) => {
      log.push(`${id} afterRun ${reason}`)
      return answer
    },
    abort: () => log.push(`${id} abort`),
  }
}

describe('AgentRuns', () => {
  it('runs beforeRun before any call, and afterRun after the calls in flight', async () => {
    const log: string[] = []
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => (release = resolve))
    const runs = new AgentRuns(async () => fakeRun(log, 'a', gate))
    const calls = [1, 2].map(() => runs.with(start('s'), (run) => run.call('beforeToolExecute', {})))
    const ended = runs.end(start('s').key, 'end_turn')
    await expect.poll(() => log.length, { timeout: 10_000 }).toBe(4)
    expect(log).toEqual(['a beforeRun start', 'a beforeRun end', 'a beforeToolExecute start', 'a beforeToolExecute start'])
    release()
    await Promise.all([...calls, ended])
    expect(log.slice(4)).toEqual(['a beforeToolExecute end', 'a beforeToolExecute end', 'a afterRun end_turn'])
    expect(runs.isOpen(start('s').key)).toBe(false)
    await runs.closeAll('interrupted')
  })

  it('ends the least recently used idle run to make room, and refuses when every run is busy', async () => {
    const log: string[] = []
    const reports: string[] = []
    let n = 0
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => (release = resolve))
    const runs = new AgentRuns(async () => fakeRun(log, `r${++n}`, gate), { maxRuns: 2, report: (l) => reports.push(l) })
    await runs.with(start('one'), async () => {})
    await runs.with(start('two'), async () => {})
    await runs.with(start('three'), async () => {})
    await expect.poll(() => log, { timeout: 10_000 }).toContain('r1 afterRun interrupted')
    expect(reports).toEqual(['session one ended (afterRun: interrupted) to make room: 2 sessions are open'])
    const busy = [runs.with(start('two'), (run) => run.call('beforeToolExecute', {})), runs.with(start('three'), (run) => run.call('beforeToolExecute', {}))]
    await expect(runs.with(start('four'), async () => {})).rejects.toThrow('hookd already holds 2 sessions, all busy; session four cannot start now, retry shortly')
    release()
    await Promise.all(busy)
    await runs.closeAll('interrupted')
  })

  it('caps the calls in flight of one run', async () => {
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => (release = resolve))
    const runs = new AgentRuns(async () => fakeRun([], 'a', gate), { maxInFlight: 2 })
    const two = [1, 2].map(() => runs.with(start('s'), (run) => run.call('beforeToolExecute', {})))
    await expect(runs.with(start('s'), (run) => run.call('beforeToolExecute', {}))).rejects.toThrow('session s already has 2 calls in flight; retry when one has finished')
    release()
    await Promise.all(two)
    await runs.closeAll('interrupted')
  })

  it('forgets a run that failed to open, so the next event tries again; a folder that is not there is refused', async () => {
    let attempts = 0
    const runs = new AgentRuns(async () => {
      attempts += 1
      if (attempts === 1) throw new Error('first open fails')
      return fakeRun([], 'a')
    })
    await expect(runs.with(start('s'), async () => {})).rejects.toThrow('first open fails')
    await expect(runs.with(start('s'), async () => 'ok')).resolves.toBe('ok')
    await expect(runs.with({ ...start('t'), key: { sessionId: 't', workdir: join(workdir, 'gone') } }, async () => {})).rejects.toThrow(
      `the event's cwd '${join(workdir, 'gone')}' cannot be the hooks' workdir (no such folder); run the agent in an existing folder`,
    )
    await runs.closeAll('interrupted')
  })

  it("keeps two users' runs apart, and opens each with its folder as checked for its own user", async () => {
    const opened: RunStart[] = []
    const runs = new AgentRuns(async (s) => (opened.push(s), fakeRun([], 'a')))
    const uid = process.geteuid?.() ?? 0
    const as = (who: number | undefined): RunStart => ({ ...start('same'), key: { ...start('same').key, peer: { uid: who } } })
    await runs.with(as(uid), async () => {})
    await runs.with(as(uid), async () => {})
    expect(opened).toHaveLength(1)
    expect(opened[0]?.checked).toMatchObject({ real: workdir, uid })
    await expect(runs.with(as(uid + 1), async () => {})).rejects.toThrow(`belongs to uid ${uid}, not to uid ${uid + 1}, who posted the event`)
    await expect(runs.with(as(undefined), async () => {})).rejects.toThrow('an unknown user owns no folder')
    expect([runs.isOpen(as(uid).key), runs.isOpen(as(uid + 1).key), runs.size]).toEqual([true, false, 1])
    await runs.closeAll('interrupted')
  })

  it('runs at most maxCalls calls of all runs at once; maxQueued more wait their turn, at most queueMs; the rest are refused', async () => {
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => (release = resolve))
    const log: string[] = []
    const runs = new AgentRuns(async () => fakeRun(log, 'a', gate), { maxCalls: 1, maxQueued: 1, queueMs: 60_000, who: "tenant 'acme'" })
    const first = runs.with(start('one'), (run) => run.call('beforeToolExecute', {}))
    await expect.poll(() => log).toContain('a beforeToolExecute start')
    const second = runs.with(start('two'), (run) => run.call('beforeToolExecute', {}))
    // The second is in the queue (its beforeRun waits its turn) before the third arrives.
    await expect.poll(() => runs.calls).toEqual({ running: 1, waiting: 1 })
    await expect(runs.with(start('three'), async () => 'ran')).rejects.toThrow(
      "too many calls at once for tenant 'acme': 1 running and 1 waiting for one of them to finish (the front door's concurrency quota); retry when calls have finished",
    )
    // The second has not started: it waits for the first.
    expect(log.filter((l) => l === 'a beforeToolExecute start')).toHaveLength(1)
    release()
    await Promise.all([first, second])
    expect(log.filter((l) => l === 'a beforeToolExecute end')).toHaveLength(2)
    await runs.closeAll('interrupted')

    const slowLog: string[] = []
    const slow = new AgentRuns(async () => fakeRun(slowLog, 'b', new Promise(() => {})), { maxCalls: 1, maxQueued: 1, queueMs: 50 })
    void slow.with(start('one'), (run) => run.call('beforeToolExecute', {}))
    // The first holds the one slot (its run opened and its call started) before the second arrives.
    await expect.poll(() => slowLog).toContain('b beforeToolExecute start')
    await expect(slow.with(start('two'), async () => 'ran')).rejects.toThrow(
      "too many calls at once for this sidecar's agents: this one waited 50 ms for one of the 1 running to finish (the front door's concurrency quota); retry when calls have finished",
    )
    await slow.closeAll('interrupted', 10)
  })

  it("an aborted signal takes a waiting call out of the queue, and reaches a running call's point call", async () => {
    const signals: Array<AbortSignal | undefined> = []
    const runs = new AgentRuns(
      async () => ({
        ...fakeRun([], 'a'),
        call: (point, _payload, signal) => {
          if (point === 'beforeRun') return Promise.resolve(answer)
          signals.push(signal)
          return new Promise<ChainAnswer>((resolve) => signal?.addEventListener('abort', () => resolve(answer)))
        },
      }),
      { maxCalls: 1, maxQueued: 4 },
    )
    const running = new AbortController()
    const first = runs.with(start('s'), (run) => run.call('beforeToolExecute', {}), running.signal)
    await expect.poll(() => signals.length).toBe(1)
    expect(signals[0]).toBe(running.signal)
    const waiting = new AbortController()
    const second = runs.with(start('s'), async () => 'ran', waiting.signal)
    waiting.abort()
    await expect(second).rejects.toThrow('the agent went away before its call could run')
    running.abort()
    await expect(first).resolves.toEqual(answer)
    // The slot is free again.
    await expect(runs.with(start('s'), async () => 'ran')).resolves.toBe('ran')
    await runs.closeAll('interrupted', 10)
  })
})
