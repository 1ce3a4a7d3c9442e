/**
 * A worker as the pool sees it (src/sidecar/worker/pool/worker-process.ts), over a fake child process
 * that emits the worker protocol's messages and its exit: it keeps its own state, settles its own
 * flights with the worker's answers and, when the process dies, each with a `worker-crash` that says
 * how; it holds waits on the host to the parked cap and kills itself when hung. What a real process
 * does is test/hostile/workers.test.ts.
 */
import { describe, expect, it, vi } from 'vitest'
import { DEFAULT_LIMITS } from '../../../src/sidecar/limits.js'
import { FAILURE_TEXT } from '../../../src/sidecar/runners/failure-text.js'
import type { ChainRequest, InvocationReport, InvocationRequest, InvokeOutcome } from '../../../src/sidecar/runners/hook-runner.js'
import type { LoadOutcome } from '../../../src/sidecar/worker/protocol.js'
import { type Flight, deadlineIn } from '../../../src/sidecar/worker/pool/flights.js'
import type { WorkerProcess, WorkerSettings } from '../../../src/sidecar/worker/pool/worker-process.js'
import { fakeWorker } from './fake-worker.js'

function worker(settings: Partial<WorkerSettings> = {}) {
  return fakeWorker({ settings })
}

const HOOK = { name: 'g', version: 'v1', filename: 'g/index.js', source: 'exports.beforeRun = () => {}' }

function invocation(extra: Partial<InvocationRequest> = {}): InvocationRequest {
  return {
    hook: HOOK,
    point: 'beforeRun',
    args: [{}],
    ctx: {
      workdir: '/work',
      session: { id: 's', interactive: false, autoApprove: false },
      agent: { id: 'a', modelId: 'm' },
      config: {},
      system: { platform: 'linux', arch: 'x64', hookdVersion: '0' },
      env: {},
      hook: { name: 'g', version: 'v1', point: 'beforeRun' },
    },
    limits: DEFAULT_LIMITS,
    onCapability: () => Promise.resolve({ ok: true, value: true }),
    onLog: () => {},
    ...extra,
  }
}

/** An invoke flight of `memoryMb`, recording how it settled. */
function invokeFlight(memoryMb: number, request = invocation()) {
  const settled: Array<[InvocationReport, boolean]> = []
  const flight: Flight = { type: 'invoke', request, called: new Set(), ...deadlineIn(60_000, memoryMb), settle: (report, lost) => settled.push([report, lost]) }
  return { flight, settled }
}

/** Starts `flight` on a ready worker as the pool does: room reserved, then sent. */
function send(w: WorkerProcess, flight: Flight): number {
  w.reserve(flight.memoryMb, false)
  return w.start(flight, (id) => ({ $: 'cancel', id }))
}

describe('its state', () => {
  it('is starting until the worker says ready, then ready (the owner hears), then retiring (a replacement asked for once)', () => {
    const { child, told, w } = worker()
    expect([w.state, w.phase]).toEqual(['starting', 'starting'])
    child.says({ $: 'ready', pid: 4242 })
    expect([w.state, w.phase]).toEqual(['ready', 'ready'])
    child.says({ $: 'retire', reason: 'isolated-vm lost an isolate' })
    child.says({ $: 'retire', reason: 'again' })
    expect([w.state, w.phase]).toEqual(['retiring', 'retiring'])
    expect(told.events).toEqual(['changed', 'retiring'])
  })

  it('is gone for the balancer as soon as its channel closes, before the exit', () => {
    const { child, w } = worker()
    child.says({ $: 'ready', pid: 4242 })
    child.connected = false
    expect([w.state, w.phase]).toEqual(['gone', 'ready'])
  })

  it('counts reserved room and running flights, and gives the room back as they end', () => {
    const { child, w } = worker()
    child.says({ $: 'ready', pid: 4242 })
    w.reserve(64, false)
    expect([w.runningMb, w.inflight]).toEqual([64, 0])
    const { flight, settled } = invokeFlight(64)
    const id = w.start(flight, (id) => ({ $: 'cancel', id }))
    expect([w.runningMb, w.inflight, w.dispatched]).toEqual([64, 1, 1])
    child.says({ $: 'done', id, outcome: { ok: true }, wallUs: 5, cpuUs: 3 })
    expect(settled).toEqual([[{ outcome: { ok: true }, wallUs: 5, cpuUs: 3 }, false]])
    expect([w.runningMb, w.inflight]).toEqual([0, 0])
  })

  it('is killed when it speaks outside the protocol', () => {
    const { child, w } = worker()
    child.says({ $: 'ready', pid: 4242 })
    child.says({ $: 'done', id: 'not a number' })
    expect(child.kills).toEqual(['SIGKILL'])
    child.die(null, 'SIGKILL')
    expect(w.lastWords()).toBe('it sent a message outside the sidecar<->worker protocol')
  })

  it('is killed when it is not ready in time', async () => {
    const { child } = worker({ startTimeoutMs: 10 })
    await vi.waitFor(() => expect(child.kills).toEqual(['SIGKILL']))
  })

  it('is killed when it closes its channel and does not exit (else it would hold its place, never given work, never replaced)', async () => {
    const { child } = worker({ disconnectGraceMs: 10 })
    child.says({ $: 'ready', pid: 4242 })
    child.connected = false
    child.emit('disconnect')
    await vi.waitFor(() => expect(child.kills).toEqual(['SIGKILL']))
    // An ordinary death (the channel closes as the process exits) is not killed again.
    const { child: dying } = worker({ disconnectGraceMs: 50 })
    dying.says({ $: 'ready', pid: 4242 })
    dying.emit('disconnect')
    dying.die(1, null)
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(dying.kills).toEqual([])
  })
})

describe('when it dies', () => {
  it('settles every flight it ran with worker-crash, saying how, then tells its owner', () => {
    const { child, told, w } = worker()
    child.says({ $: 'ready', pid: 4242 })
    const invoke = invokeFlight(32)
    const ended: Array<[InvokeOutcome | undefined, boolean[]]> = []
    const chainRequest = { steps: [{}, {}] } as unknown as ChainRequest
    const chain: Flight = {
      type: 'chain',
      request: chainRequest,
      called: new Set([0]),
      ...deadlineIn(60_000, 32),
      stepped: () => {},
      end: (outcome, retryable) => ended.push([outcome, [0, 1].map((s) => retryable?.(s) ?? false)]),
    }
    const loads: LoadOutcome[] = []
    const load: Flight = { type: 'load', ...deadlineIn(60_000, 32), resolve: (outcome) => loads.push(outcome) }
    for (const f of [invoke.flight, chain, load]) send(w, f)
    told.events.length = 0

    child.die(null, 'SIGSEGV')
    const message = 'the sandbox worker (pid 4242) died while the hook ran (signal SIGSEGV) (2 other invocations running on it ended too); a new worker replaces it'
    expect(invoke.settled).toEqual([[{ outcome: { ok: false, kind: 'worker-crash', message }, wallUs: 0, cpuUs: 0 }, true]])
    // The chain's step that made a capability call may not run again; the other may.
    expect(ended).toEqual([[{ ok: false, kind: 'worker-crash', message }, [false, true]]])
    expect(loads).toEqual([{ ok: false, message }])
    expect(told.exits).toEqual([{ pid: 4242, reason: 'crashed', how: 'signal SIGSEGV', message }])
    expect(told.events).toEqual(['exited'])
    expect([w.state, w.inflight, w.runningMb]).toEqual(['gone', 0, 0])
  })

  it('names why the pool killed it, and V8 when V8 reported a fatal error', async () => {
    const killed = worker()
    killed.child.says({ $: 'ready', pid: 4242 })
    const hung = invokeFlight(32)
    send(killed.w, hung.flight)
    killed.w.kill('it stopped answering')
    killed.child.die(null, 'SIGKILL')
    expect(hung.settled[0]?.[0].outcome).toEqual({
      ok: false,
      kind: 'worker-crash',
      message: 'the sandbox worker (pid 4242) was killed because it stopped answering; a new worker replaces it',
    })
    expect(killed.told.exits[0]?.reason).toBe('killed')

    const fatal = worker()
    fatal.child.says({ $: 'ready', pid: 4242 })
    const big = invokeFlight(32)
    send(fatal.w, big.flight)
    fatal.child.stderr.write('FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n')
    await new Promise((resolve) => setImmediate(resolve))
    fatal.child.die(null, 'SIGABRT')
    expect(big.settled[0]?.[0].outcome).toMatchObject({
      message: 'the sandbox worker (pid 4242) died while the hook ran (signal SIGABRT, V8 reported a fatal error); a new worker replaces it',
    })
    expect(fatal.told.exits[0]).toMatchObject({ reason: 'crashed', how: 'signal SIGABRT, V8 reported a fatal error' })
  })

  it('is a start failure when it had been given no work, and retired when it asked to retire', () => {
    const early = worker()
    early.child.die(7, null)
    expect(early.told.exits).toEqual([
      { pid: 4242, reason: 'start-failure', how: 'exit code 7', message: 'the sandbox worker (pid 4242) died while the hook ran (exit code 7); a new worker replaces it' },
    ])
    expect(early.w.lastWords()).toBe('exit code 7')

    const retired = worker()
    retired.child.says({ $: 'ready', pid: 4242 })
    retired.child.says({ $: 'retire', reason: 'lost an isolate' })
    retired.child.die(0, null)
    expect(retired.told.exits[0]?.reason).toBe('retired')
  })
})

describe('waits on the host', () => {
  it('holds waits to the parked cap: one within it reaches the host and frees its running room, one past it gets limit in the hook', async () => {
    const { child, told, w } = worker({ maxParkedMb: 64 })
    child.says({ $: 'ready', pid: 4242 })
    const asked: string[] = []
    const host = (): Promise<{ ok: true; value: boolean }> => {
      asked.push('asked')
      return new Promise(() => {})
    }
    const first = invokeFlight(32, invocation({ onCapability: host }))
    const second = invokeFlight(32, invocation({ onCapability: host }))
    const a = send(w, first.flight)
    const b = send(w, second.flight)
    told.events.length = 0
    // The first holds 48 MB as it starts to wait: it counts that, more than its 32 MB limit.
    child.says({ $: 'capability', id: a, callId: 1, capability: 'confirm', args: { message: 'ok?' }, heldMb: 48 })
    expect([w.parkedMb, w.runningMb]).toEqual([48, 32])
    expect(told.events).toEqual(['changed'])
    // 48 + 32 > 64: refused at once, and the host is never asked.
    child.says({ $: 'capability', id: b, callId: 1, capability: 'confirm', args: { message: 'ok?' }, heldMb: 0 })
    expect(asked).toEqual(['asked'])
    expect(child.sent.at(-1)).toEqual({
      $: 'capabilityResult',
      id: b,
      callId: 1,
      reply: { ok: false, code: 'limit', message: FAILURE_TEXT.parked('confirm', 64, 48) },
    })
    expect(w.parkedMb).toBe(48)
  })

  it('does not judge a flight hung while its host has the call, and kills the worker once a running one is past its deadline', async () => {
    const { child, w } = worker()
    child.says({ $: 'ready', pid: 4242 })
    const waiting = invokeFlight(32, invocation({ onCapability: () => new Promise(() => {}) }))
    waiting.flight.deadline = 0
    const id = send(w, waiting.flight)
    child.says({ $: 'capability', id, callId: 1, capability: 'confirm', args: {}, heldMb: 0 })
    w.killIfHung(performance.now(), 300)
    expect(child.kills).toEqual([])
    const running = invokeFlight(32)
    running.flight.deadline = 0
    send(w, running.flight)
    w.killIfHung(performance.now(), 300)
    expect(child.kills).toEqual(['SIGKILL'])
    child.die(null, 'SIGKILL')
    expect(running.settled[0]?.[0].outcome).toMatchObject({
      message: 'the sandbox worker (pid 4242) was killed because it stopped answering: an invocation ran 300 ms past its wall-time limit (1 other invocation running on it ended too); a new worker replaces it',
    })
  })
})
