/**
 * The worker pool: supervised child processes that run isolates, so that a V8 fatal error costs one
 * worker, never the sidecar. It is the `HookRunner` of sandboxed hooks. A dead worker is replaced; what
 * it was running ends with a `worker-crash` outcome. A worker that stops answering (its deadline passes
 * with no capability call outstanding) is killed and replaced the same way. Workers that keep dying
 * before they are given any work stop being restarted after `maxStartFailures` in a row (start() fails
 * with UNAVAILABLE; later invocations fail fast with a `worker-crash` diagnostic that says why), instead
 * of looping forever.
 *
 * Memory, per worker, in the invocations' memory limits (memory-room.ts): what runs at once (not
 * waiting on its host) is capped by `maxRunningMb`, and new work waits in the pool for room; what waits
 * on its host at once is capped by `maxParkedMb`, and a capability call past it fails in the hook with
 * `limit`. So a worker holds at most about the two together, however many calls arrive.
 */
import { availableParallelism } from 'node:os'
import { backoffDelay } from '../../../protocol/backoff.js'
import { HookdError } from '../../../protocol/status.js'
import type { Limits } from '../../limits.js'
import {
  type ChainRequest,
  type ChainRun,
  type HookRunner,
  type InvocationReport,
  type InvocationRequest,
  type InvokeFailure,
  type RunnableHook,
  failedReport,
} from '../../runners/hook-runner.js'
import type { InvokeFlight } from './flights.js'
import { FAILURE_TEXT } from '../../runners/failure-text.js'
import { type FromWorker, type LoadOutcome, fromWorker } from '../protocol.js'
import { chainRunState } from './chain-run.js'
import { deadlineIn, hostOf, now, pause, resume } from './flights.js'
import { admitWait, roomToRun } from './memory-room.js'
import { type WallOptions, type Walls, walls } from './walls.js'
import { WorkerProcess, fromSource } from './worker-process.js'

export interface PoolOptions {
  /** Worker processes; default: the number of cores, at least 1. */
  size?: number
  /**
   * Workers in a row that die before they were given any work (at start-up, or idle right after it),
   * after which the pool stops restarting them. Default 5.
   */
  maxStartFailures?: number
  /** A worker not ready this long after it was started is killed (a start failure). Default 30 s. */
  startTimeoutMs?: number
  /**
   * How long past an invocation's wall-time limit (host waits excluded) the pool waits for the worker's
   * answer before it kills the worker as hung. The worker's own watchdog ends every invocation at its
   * limit, so this only fires when the worker process itself is stuck. Default 5 s.
   */
  hangGraceMs?: number
  /** Hook versions whose compiled code each worker keeps. Default 256. */
  keepVersions?: number
  /** Extra Node.js options for the worker processes, e.g. ['--max-semi-space-size=16']. */
  execArgv?: readonly string[]
  /**
   * The memory (sum of the invocations' memory limits) that invocations waiting on their host may hold
   * in one worker at once; a capability call past it fails in the hook with code 'limit'. An invocation
   * whose isolate holds more than its limit as it starts to wait (isolated-vm's limit is a guideline)
   * counts what it holds. Default 512.
   */
  maxParkedMb?: number
  /**
   * The memory (sum of the invocations' memory limits) of invocations running in one worker at once,
   * not counting those waiting on their host; new work waits in the pool until a worker has room. A
   * worker with nothing running takes one invocation whatever its limit. Default 256.
   */
  maxRunningMb?: number
  /** The second wall around the workers (walls.ts). Default: every wall this machine allows. */
  walls?: WallOptions
}

/** What the pool is doing, for tests and status output. */
export interface PoolStats {
  /** Workers started so far, replacements included. */
  spawned: number
  /** Live workers that are ready for work. */
  ready: number
  /** Workers in a row that died before they were given any work. */
  startFailures: number
  /** Invocations, chains and loads waiting in the pool for a worker with room for them. */
  waiting: number
  /** Set once the pool gave up restarting workers. */
  broken?: string
}

/** A worker that exited while the pool was open (it is replaced unless the pool gave up), for observers. */
export interface WorkerExit {
  pid: number
  /** retired: isolated-vm lost an isolate; killed: hung or out of protocol; start-failure: died before any work; crashed: died running hooks. */
  reason: 'retired' | 'killed' | 'start-failure' | 'crashed'
  /** `exit code N` or `signal S`. */
  how: string
  /** What the invocations it was running were told. */
  message: string
}

const CHECK_MS = 250
/** Restarts after start failures wait 50 ms, doubling, up to 2 s; a worker a hook killed is replaced at once. */
const RESTART_BACKOFF = { firstMs: 50, maxMs: 2000 }
const FATAL = /FATAL ERROR|Fatal JavaScript|out of memory|is_heap_oom|Fatal process/i

export class WorkerPool implements HookRunner {
  readonly size: number
  private readonly maxStartFailures: number
  private readonly startTimeoutMs: number
  private readonly hangGraceMs: number
  private readonly keepVersions: number
  private readonly execArgv: readonly string[]
  private readonly maxParkedMb: number
  private readonly maxRunningMb: number
  private readonly wallOptions: WallOptions
  private walls: Walls | undefined
  private readonly workers: WorkerProcess[] = []
  private readonly waiters: Array<() => void> = []
  private readonly brokenListeners = new Set<(reason: string) => void>()
  private readonly exitListeners = new Set<(exit: WorkerExit) => void>()
  /** Replacements waiting for their back-off; close() clears them. */
  private readonly respawns = new Set<NodeJS.Timeout>()
  private nextId = 1
  private spawned = 0
  private startFailures = 0
  private brokenReason: string | undefined
  private closed = false
  private checker: NodeJS.Timeout | undefined
  private turn = 0
  /** Lost runs waiting to run again alone (see retry). */
  private retrying = 0
  /** Work waiting in pick() for a worker. */
  private waiting = 0

  constructor(options: PoolOptions = {}) {
    this.size = Math.max(1, options.size ?? availableParallelism())
    this.maxStartFailures = Math.max(1, options.maxStartFailures ?? 5)
    this.startTimeoutMs = options.startTimeoutMs ?? 30_000
    this.hangGraceMs = options.hangGraceMs ?? 5000
    this.keepVersions = Math.max(1, options.keepVersions ?? 256)
    this.execArgv = options.execArgv ?? []
    this.maxParkedMb = Math.max(1, options.maxParkedMb ?? 512)
    this.maxRunningMb = Math.max(1, options.maxRunningMb ?? 256)
    this.wallOptions = options.walls ?? {}
  }

  /** What stands around the workers: one line per wall (after start). */
  wallLines(): string[] {
    return this.walls?.describe() ?? []
  }

  /**
   * Calls `listener` once if the pool gives up restarting workers (at once if it already has): from then
   * on every invocation fails fast with `worker-crash`, and the sidecar reports NOT_SERVING. Returns the
   * function that unregisters it.
   */
  onBroken(listener: (reason: string) => void): () => void {
    if (this.brokenReason) {
      listener(this.brokenReason)
      return () => {}
    }
    this.brokenListeners.add(listener)
    return () => {
      this.brokenListeners.delete(listener)
    }
  }

  /** Calls `listener` for every worker that exits while the pool is open. Returns the function that unregisters it. */
  onWorkerExit(listener: (exit: WorkerExit) => void): () => void {
    this.exitListeners.add(listener)
    return () => {
      this.exitListeners.delete(listener)
    }
  }

  /**
   * Starts the workers and waits until at least one is ready. Fails with UNAVAILABLE when workers keep
   * dying at start-up (`maxStartFailures` in a row), naming the last failure.
   */
  async start(): Promise<void> {
    this.walls ??= walls({ fromSource, ...this.wallOptions })
    this.checker ??= setInterval(() => this.checkDeadlines(), CHECK_MS)
    this.checker.unref()
    for (let i = 0; i < this.size; i++) this.spawn()
    await this.anyReady()
    if (this.brokenReason) {
      await this.close()
      throw new HookdError('unavailable', `no sandbox worker could start: ${this.brokenReason}`)
    }
  }

  /**
   * Runs one invocation in a fresh isolate on the least busy worker. Never rejects. An invocation lost
   * because its worker died (for its own hook or another's) runs again once, alone on a fresh worker,
   * unless it had made a capability call (InvocationRequest.retries).
   */
  async invoke(request: InvocationRequest): Promise<InvocationReport> {
    return request.alone ? this.alone(request) : this.dispatch(request, false)
  }

  /** Runs alone on a worker with nothing else in flight; new work waits until it has one. */
  private async alone(request: InvocationRequest): Promise<InvocationReport> {
    this.retrying += 1
    try {
      return await this.dispatch(request, true)
    } finally {
      this.retrying -= 1
      for (const wake of this.waiters.splice(0)) wake()
    }
  }

  private async dispatch(request: InvocationRequest, alone: boolean): Promise<InvocationReport> {
    const memoryMb = request.limits.memoryMb
    const worker = await this.pick(memoryMb, alone, request.signal)
    if (!worker) return request.signal?.aborted ? failedReport('cancelled', FAILURE_TEXT.cancelledBeforeStart()) : this.unavailable()
    worker.reservedMb -= memoryMb
    const id = this.nextId++
    worker.dispatched += 1
    const hook = worker.codeFor(request.hook)
    const report = await new Promise<InvocationReport>((resolve) => {
      const onAbort = (): void => worker.post({ $: 'cancel', id })
      request.signal?.addEventListener('abort', onAbort, { once: true })
      worker.inflight.set(id, {
        type: 'invoke',
        request,
        resolve,
        cleanup: () => request.signal?.removeEventListener('abort', onAbort),
        called: new Set(),
        ...deadlineIn(request.limits.wallMs + this.hangGraceMs, memoryMb),
      })
      worker.post({
        $: 'invoke',
        id,
        hook,
        point: request.point,
        args: JSON.stringify(request.args),
        ...(request.resultArg !== undefined ? { resultArg: request.resultArg } : {}),
        ctx: request.ctx,
        limits: request.limits,
      })
    })
    if (alone) this.release(worker)
    return report
  }

  /**
   * The runs lost with a dead worker that may run again: each runs alone on a worker with nothing else
   * in flight (new work waits for them), so that whichever of them killed the worker cannot take the
   * others down with it a second time. One that dies again ends as `worker-crash`.
   */
  private retry(flight: InvokeFlight, crash: InvocationReport): void {
    const retries = flight.request.retries ?? 1
    if (retries <= 0 || flight.called.size > 0 || this.closed) return flight.resolve(crash)
    void this.alone({ ...flight.request, retries: retries - 1, alone: true }).then(flight.resolve)
  }

  /**
   * Runs consecutive sandboxed hooks of one point call on one worker, in one message: the worker runs
   * the chain and reports each step as it ends, so a chain of n hooks costs one round trip instead of
   * n. Never rejects. See ChainRun for what the caller does with the reports.
   */
  invokeChain(request: ChainRequest): ChainRun {
    const state = chainRunState()
    // The worker is told which code to drop (codeFor) before it gets the chain: a chain longer than
    // what a worker keeps could lose its own first hooks, so such a chain runs step by step instead.
    if (request.steps.length > this.keepVersions) {
      state.end()
      return state.run
    }
    const memoryMb = request.limits.memoryMb
    void this.pick(memoryMb, false, request.signal).then((worker) => {
      if (!worker) return request.signal?.aborted ? state.end() : state.end(this.unavailable().outcome)
      worker.reservedMb -= memoryMb
      if (request.signal?.aborted) {
        this.wakeAll()
        return state.end()
      }
      const id = this.nextId++
      worker.dispatched += 1
      const steps = request.steps.map((step) => ({ hook: worker.codeFor(step.hook), points: [...step.points], ctx: step.ctx, onError: step.onError }))
      const onAbort = (): void => worker.post({ $: 'cancel', id })
      request.signal?.addEventListener('abort', onAbort, { once: true })
      worker.inflight.set(id, {
        type: 'chain',
        request,
        stepped: state.stepped,
        end: (outcome, retryable) => {
          request.signal?.removeEventListener('abort', onAbort)
          state.end(outcome, retryable)
        },
        called: new Set(),
        ...deadlineIn(request.steps.length * request.limits.wallMs + this.hangGraceMs, memoryMb),
      })
      worker.post({ $: 'chain', id, point: request.point, initial: JSON.stringify(request.initial), steps, limits: request.limits })
    })
    return state.run
  }

  /** Compiles and evaluates a hook in a throwaway isolate; reports its exported function names. */
  async load(hook: RunnableHook, limits: Limits): Promise<LoadOutcome> {
    const worker = await this.pick(limits.memoryMb)
    if (!worker) return { ok: false, message: this.unavailable().outcome.message }
    worker.reservedMb -= limits.memoryMb
    const id = this.nextId++
    worker.dispatched += 1
    const code = worker.codeFor(hook)
    return new Promise<LoadOutcome>((resolve) => {
      worker.inflight.set(id, { type: 'load', resolve, ...deadlineIn(limits.wallMs + this.hangGraceMs, limits.memoryMb) })
      worker.post({ $: 'load', id, hook: { ...code, source: hook.source }, limits })
    })
  }

  /** Stops every worker; in-flight invocations end as `worker-crash`. */
  async close(): Promise<void> {
    this.closed = true
    if (this.checker) clearInterval(this.checker)
    for (const timer of this.respawns) clearTimeout(timer)
    this.respawns.clear()
    const exits = this.workers.map(
      (w) =>
        new Promise<void>((resolve) => {
          if (w.exited) return resolve()
          w.child.once('exit', () => resolve())
          w.child.kill('SIGKILL')
        }),
    )
    await Promise.all(exits)
    this.workers.length = 0
    for (const wake of this.waiters.splice(0)) wake()
  }

  /** Process ids of the live, ready workers (for tests and `hookd` status output). */
  pids(): number[] {
    return this.workers.filter((w) => w.ready && !w.retiring).map((w) => w.pid)
  }

  /** Live workers by state, for metrics. */
  states(): { starting: number; idle: number; busy: number; retiring: number } {
    const states = { starting: 0, idle: 0, busy: 0, retiring: 0 }
    for (const w of this.workers) states[w.retiring ? 'retiring' : !w.ready ? 'starting' : w.inflight.size > 0 ? 'busy' : 'idle'] += 1
    return states
  }

  stats(): PoolStats {
    return {
      spawned: this.spawned,
      ready: this.pids().length,
      startFailures: this.startFailures,
      waiting: this.waiting,
      ...(this.brokenReason ? { broken: this.brokenReason } : {}),
    }
  }

  private unavailable(): InvocationReport & { outcome: InvokeFailure } {
    const message = this.closed ? 'the sidecar is shutting down' : `no sandbox worker is available: ${this.brokenReason ?? 'workers are restarting'}`
    return failedReport('worker-crash', message) as InvocationReport & { outcome: InvokeFailure }
  }

  private spawn(): void {
    if (this.closed || this.brokenReason) return
    if (!this.walls) return
    const worker = WorkerProcess.spawn({ keepVersions: this.keepVersions, execArgv: this.execArgv, walls: this.walls })
    this.spawned += 1
    this.workers.push(worker)
    worker.startTimer = setTimeout(() => {
      if (!worker.ready) worker.kill(`it was not ready ${this.startTimeoutMs} ms after it started`)
    }, this.startTimeoutMs)
    worker.startTimer.unref()
    worker.child.on('message', (raw) => this.onMessage(worker, raw))
    worker.child.on('error', () => {
      // 'exit' follows and does the bookkeeping.
    })
    worker.child.on('exit', (code, signal) => this.onExit(worker, code, signal))
  }

  /** Kills workers that hold an invocation past its deadline with no capability call outstanding. */
  private checkDeadlines(): void {
    const t = now()
    for (const worker of this.workers) {
      for (const flight of worker.inflight.values()) {
        if (flight.outstanding === 0 && t > flight.deadline) {
          worker.kill(`it stopped answering: an invocation ran ${this.hangGraceMs} ms past its wall-time limit`)
          break
        }
      }
    }
  }

  private onMessage(worker: WorkerProcess, raw: unknown): void {
    const parsed = fromWorker.safeParse(raw)
    if (!parsed.success) {
      // A worker that speaks out of protocol is not trusted with more work.
      worker.kill('it sent a message outside the sidecar<->worker protocol')
      return
    }
    this.route(worker, parsed.data)
  }

  private route(worker: WorkerProcess, message: FromWorker): void {
    switch (message.$) {
      case 'ready':
        worker.ready = true
        if (worker.startTimer) clearTimeout(worker.startTimer)
        for (const wake of this.waiters.splice(0)) wake()
        return
      case 'retire':
        // isolated-vm lost an isolate: no new work here; a replacement starts now.
        if (!worker.retiring) {
          worker.retiring = true
          this.spawn()
        }
        return
      case 'capability': {
        const flight = worker.inflight.get(message.id)
        const host = flight && hostOf(flight, message.step)
        if (!flight || !host || flight.type === 'load') return
        flight.called.add(message.step ?? 0)
        // An invocation waiting on its host keeps its isolate (and the memory it filled) alive in this
        // worker for as long as the host takes: how much may wait at once is capped, per worker.
        const refused = flight.outstanding === 0 ? admitWait(worker, flight, message.heldMb, this.maxParkedMb) : undefined
        if (refused) {
          worker.post({
            $: 'capabilityResult',
            id: message.id,
            callId: message.callId,
            reply: { ok: false, code: 'limit', message: FAILURE_TEXT.parked(message.capability, this.maxParkedMb, refused.parkedMb, refused.holdsMb) },
          })
          return
        }
        pause(flight)
        // It no longer runs: its room in the worker's running memory goes to the work waiting for it.
        if (flight.outstanding === 1) this.wakeAll()
        const answer = (reply: Parameters<typeof worker.post>[0] & { $: 'capabilityResult' }): void => {
          resume(flight)
          worker.post(reply)
        }
        void host.onCapability(message.capability, message.args).then(
          (reply) => answer({ $: 'capabilityResult', id: message.id, callId: message.callId, reply }),
          (err: unknown) =>
            answer({
              $: 'capabilityResult',
              id: message.id,
              callId: message.callId,
              reply: { ok: false, code: 'failed', message: err instanceof Error ? err.message : String(err) },
            }),
        )
        return
      }
      case 'log': {
        const flight = worker.inflight.get(message.id)
        if (flight) hostOf(flight, message.step)?.onLog(message.message)
        return
      }
      case 'step': {
        const flight = worker.inflight.get(message.id)
        if (flight?.type !== 'chain' || message.step >= flight.request.steps.length) return
        flight.stepped(message.step, { outcome: message.outcome, wallUs: message.wallUs, cpuUs: message.cpuUs })
        return
      }
      case 'chained': {
        const flight = worker.inflight.get(message.id)
        if (flight?.type !== 'chain') return
        worker.inflight.delete(message.id)
        this.startFailures = 0
        flight.end()
        this.wakeAll()
        return
      }
      case 'done': {
        const flight = worker.inflight.get(message.id)
        if (flight?.type !== 'invoke') return
        worker.inflight.delete(message.id)
        this.startFailures = 0
        flight.cleanup()
        flight.resolve({ outcome: message.outcome, wallUs: message.wallUs, cpuUs: message.cpuUs })
        this.wakeAll()
        return
      }
      case 'loaded': {
        const flight = worker.inflight.get(message.id)
        if (flight?.type !== 'load') return
        worker.inflight.delete(message.id)
        this.startFailures = 0
        flight.resolve(message.outcome)
        this.wakeAll()
        return
      }
    }
  }

  private onExit(worker: WorkerProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (worker.startTimer) clearTimeout(worker.startTimer)
    const index = this.workers.indexOf(worker)
    if (index >= 0) this.workers.splice(index, 1)
    const how = signal ? `signal ${signal}` : `exit code ${code}`
    const fatal = FATAL.test(worker.stderrTail) ? ', V8 reported a fatal error' : ''
    const others = worker.inflight.size - 1
    const also = others > 0 ? ` (${others} other invocation${others > 1 ? 's' : ''} running on it ended too)` : ''
    const message = worker.killedFor
      ? `the sandbox worker (pid ${worker.pid}) was killed because ${worker.killedFor}${also}; a new worker replaces it`
      : `the sandbox worker (pid ${worker.pid}) died while the hook ran (${how}${fatal})${also}; a new worker replaces it`
    for (const flight of worker.inflight.values()) {
      if (flight.type === 'invoke') {
        flight.cleanup()
        this.retry(flight, failedReport('worker-crash', message))
      } else if (flight.type === 'chain') {
        flight.end({ ok: false, kind: 'worker-crash', message }, (step) => !flight.called.has(step))
      } else {
        flight.resolve({ ok: false, message })
      }
    }
    worker.inflight.clear()
    if (!this.closed) {
      const reason = worker.retiring ? 'retired' : worker.killedFor ? 'killed' : worker.dispatched === 0 ? 'start-failure' : 'crashed'
      for (const listener of this.exitListeners) listener({ pid: worker.pid, reason, how: `${how}${fatal}`, message })
    }
    if (this.closed || worker.retiring) return
    // Dying before it was given any work, ready or not, is a start failure: that is what could loop.
    // A worker that dies running a hook is the hook's doing (the pool replaces it at once, as often
    // as hooks crash workers), and must not count towards giving up on workers altogether.
    const startFailure = worker.dispatched === 0
    if (startFailure) {
      this.startFailures += 1
      if (this.startFailures >= this.maxStartFailures) {
        const tail = worker.stderrTail.trim().split('\n').slice(-3).join(' | ').slice(0, 500)
        this.brokenReason = `workers failed to start ${this.startFailures} times in a row (last: ${worker.killedFor ?? how}${tail ? `: ${tail}` : ''})`
        for (const wake of this.waiters.splice(0)) wake()
        const listeners = [...this.brokenListeners]
        this.brokenListeners.clear()
        for (const listener of listeners) listener(this.brokenReason)
        return
      }
    }
    const delay = startFailure ? backoffDelay(RESTART_BACKOFF, this.startFailures) : 0
    const timer = setTimeout(() => {
      this.respawns.delete(timer)
      this.spawn()
    }, delay)
    this.respawns.add(timer)
  }

  private anyReady(): Promise<void> {
    if (this.workers.some((w) => w.usable) || this.brokenReason || this.closed) return Promise.resolve()
    return new Promise((resolve) => this.waiters.push(resolve))
  }

  /**
   * A worker for new work whose isolates run with `memoryMb`: the least busy usable one with room for it
   * to run (memory-room.ts), which keeps that room reserved (WorkerProcess.reservedMb) until the caller
   * sends the work or gives it back. Waits
   * until there is one; undefined when the pool is closed or broken, or `signal` aborted. `alone`: one
   * with nothing in flight, kept for this run until `release` (retries after a crash); while retries
   * wait, new work waits behind them.
   */
  private async pick(memoryMb: number, alone = false, signal?: AbortSignal): Promise<WorkerProcess | undefined> {
    for (;;) {
      if (this.closed || this.brokenReason || signal?.aborted) return undefined
      // The least busy worker; among equals, the next in turn, so that sequential calls alternate and
      // each worker warms its next isolates while another one answers (warm-isolates.ts).
      let best: WorkerProcess | undefined
      const n = this.workers.length
      if (alone || this.retrying === 0) {
        for (let i = 0; i < n; i++) {
          const w = this.workers[(this.turn + i) % n] as WorkerProcess
          if (!w.usable || w.reserved || (alone && w.inflight.size > 0) || !roomToRun(w, memoryMb, this.maxRunningMb)) continue
          if (!best || w.inflight.size < best.inflight.size) best = w
        }
      }
      if (best) {
        this.turn = (this.workers.indexOf(best) + 1) % n
        if (alone) best.reserved = true
        best.reservedMb += memoryMb
        return best
      }
      this.waiting += 1
      try {
        await this.anyChange(signal)
      } finally {
        this.waiting -= 1
      }
    }
  }

  private release(worker: WorkerProcess): void {
    worker.reserved = false
    this.wakeAll()
  }

  private wakeAll(): void {
    for (const wake of this.waiters.splice(0)) wake()
  }

  /**
   * Resolves when a worker may have become available (ready, released, work ended or started to wait
   * on its host), the pool closed, or `signal` aborted.
   */
  private anyChange(signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        signal?.removeEventListener('abort', wake)
        resolve()
      }
      signal?.addEventListener('abort', wake, { once: true })
      this.waiters.push(wake)
    })
  }
}
