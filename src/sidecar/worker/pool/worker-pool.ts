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
 *
 * The parts: supervision (start, restart, back-off, giving up) is supervisor.ts; each worker keeps its
 * own state and flights and settles them when it dies (worker-process.ts); which worker takes work,
 * and which waiting work starts when room frees, is the balancer's (balancer.ts), applied by the one
 * queue of work waiting for room (room-queue.ts). This file is the HookRunner over them: it sends the
 * work and runs lost work again.
 */
import { availableParallelism } from 'node:os'
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
import { FAILURE_TEXT } from '../../runners/failure-text.js'
import type { LoadOutcome } from '../protocol.js'
import { chainRunState } from './chain-run.js'
import { deadlineIn } from './flights.js'
import { RoomQueue } from './room-queue.js'
import { Supervisor } from './supervisor.js'
import type { WallOptions } from './walls.js'
import type { WorkerExit } from './worker-process.js'

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

export type { WorkerExit } from './worker-process.js'

export class WorkerPool implements HookRunner {
  readonly size: number
  private readonly keepVersions: number
  private readonly hangGraceMs: number
  private readonly supervisor: Supervisor
  private readonly room: RoomQueue

  constructor(options: PoolOptions = {}) {
    this.size = Math.max(1, options.size ?? availableParallelism())
    this.keepVersions = Math.max(1, options.keepVersions ?? 256)
    this.hangGraceMs = options.hangGraceMs ?? 5000
    this.supervisor = new Supervisor(
      {
        size: this.size,
        maxStartFailures: Math.max(1, options.maxStartFailures ?? 5),
        startTimeoutMs: options.startTimeoutMs ?? 30_000,
        hangGraceMs: this.hangGraceMs,
        keepVersions: this.keepVersions,
        execArgv: options.execArgv ?? [],
        maxParkedMb: Math.max(1, options.maxParkedMb ?? 512),
        walls: options.walls ?? {},
      },
      () => this.room.changed(),
    )
    this.room = new RoomQueue({
      workers: () => this.supervisor.workers,
      stopped: () => this.supervisor.closed || this.supervisor.broken !== undefined,
      maxRunningMb: Math.max(1, options.maxRunningMb ?? 256),
    })
  }

  /** What stands around the workers: one line per wall (after start). */
  wallLines(): string[] {
    return this.supervisor.wallLines()
  }

  /**
   * Calls `listener` once if the pool gives up restarting workers (at once if it already has): from then
   * on every invocation fails fast with `worker-crash`, and the sidecar reports NOT_SERVING. Returns the
   * function that unregisters it.
   */
  onBroken(listener: (reason: string) => void): () => void {
    return this.supervisor.onBroken(listener)
  }

  /** Calls `listener` for every worker that exits while the pool is open. Returns the function that unregisters it. */
  onWorkerExit(listener: (exit: WorkerExit) => void): () => void {
    return this.supervisor.onWorkerExit(listener)
  }

  /**
   * Starts the workers and waits until at least one is ready. Fails with UNAVAILABLE when workers keep
   * dying at start-up (`maxStartFailures` in a row), naming the last failure.
   */
  async start(): Promise<void> {
    this.supervisor.start()
    await this.room.whenReady()
    const broken = this.supervisor.broken
    if (broken) {
      await this.close()
      throw new HookdError('unavailable', `no sandbox worker could start: ${broken}`)
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
  private alone(request: InvocationRequest): Promise<InvocationReport> {
    return this.room.alone(() => this.dispatch(request, true))
  }

  private async dispatch(request: InvocationRequest, alone: boolean): Promise<InvocationReport> {
    const memoryMb = request.limits.memoryMb
    const worker = await this.room.pick({ memoryMb, alone }, request.signal)
    if (!worker) return request.signal?.aborted ? failedReport('cancelled', FAILURE_TEXT.cancelledBeforeStart()) : this.unavailable()
    const called = new Set<number>()
    const report = await new Promise<InvocationReport>((resolve) => {
      const onAbort = (): void => worker.cancel(id)
      const id = worker.start(
        {
          type: 'invoke',
          request,
          called,
          ...deadlineIn(request.limits.wallMs + this.hangGraceMs, memoryMb),
          settle: (report, lost) => {
            request.signal?.removeEventListener('abort', onAbort)
            resolve(lost ? this.retry(request, called, report) : report)
          },
        },
        (id) => ({
          $: 'invoke',
          id,
          hook: worker.codeFor(request.hook),
          point: request.point,
          args: JSON.stringify(request.args),
          ...(request.resultArg !== undefined ? { resultArg: request.resultArg } : {}),
          ctx: request.ctx,
          limits: request.limits,
        }),
      )
      request.signal?.addEventListener('abort', onAbort, { once: true })
    })
    if (alone) {
      worker.release()
      this.room.changed()
    }
    return report
  }

  /**
   * A run lost with a dead worker may run again: alone on a worker with nothing else in flight (new
   * work waits for it), so that whichever of the lost runs killed the worker cannot take the others
   * down with it a second time. One that dies again, or that made a capability call, ends as `crash`.
   */
  private retry(request: InvocationRequest, called: ReadonlySet<number>, crash: InvocationReport): InvocationReport | Promise<InvocationReport> {
    const retries = request.retries ?? 1
    if (retries <= 0 || called.size > 0 || this.supervisor.closed) return crash
    return this.alone({ ...request, retries: retries - 1, alone: true })
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
    void this.room.pick({ memoryMb, alone: false }, request.signal).then((worker) => {
      if (!worker) return request.signal?.aborted ? state.end() : state.end(this.unavailable().outcome)
      if (request.signal?.aborted) {
        worker.unreserve(memoryMb)
        this.room.changed()
        return state.end()
      }
      const onAbort = (): void => worker.cancel(id)
      const id = worker.start(
        {
          type: 'chain',
          request,
          stepped: state.stepped,
          end: (outcome, retryable) => {
            request.signal?.removeEventListener('abort', onAbort)
            state.end(outcome, retryable)
          },
          called: new Set(),
          ...deadlineIn(request.steps.length * request.limits.wallMs + this.hangGraceMs, memoryMb),
        },
        (id) => {
          const steps = request.steps.map((step) => ({
            hook: worker.codeFor(step.hook),
            points: [...step.points],
            ctx: step.ctx,
            onError: step.onError,
            ...(step.mode ? { mode: step.mode } : {}),
            ...(step.layer ? { layer: step.layer } : {}),
            ...(step.permissions ? { permissions: step.permissions } : {}),
          }))
          return { $: 'chain', id, point: request.point, initial: JSON.stringify(request.initial), steps, limits: request.limits, ...(request.canAsk ? { canAsk: true } : {}) }
        },
      )
      request.signal?.addEventListener('abort', onAbort, { once: true })
    })
    return state.run
  }

  /** Compiles and evaluates a hook in a throwaway isolate; reports its exported function names. */
  async load(hook: RunnableHook, limits: Limits): Promise<LoadOutcome> {
    const worker = await this.room.pick({ memoryMb: limits.memoryMb, alone: false })
    if (!worker) return { ok: false, message: this.unavailable().outcome.message }
    return new Promise<LoadOutcome>((resolve) => {
      worker.start({ type: 'load', resolve, ...deadlineIn(limits.wallMs + this.hangGraceMs, limits.memoryMb) }, (id) => ({
        $: 'load',
        id,
        hook: { ...worker.codeFor(hook), source: hook.source },
        limits,
      }))
    })
  }

  /** Stops every worker; in-flight invocations end as `worker-crash`. */
  async close(): Promise<void> {
    await this.supervisor.close()
    this.room.changed()
  }

  /** Process ids of the live, ready workers (for tests and `hookd` status output). */
  pids(): number[] {
    return this.supervisor.workers.filter((w) => w.phase === 'ready').map((w) => w.pid)
  }

  /** Live workers by state, for metrics. */
  states(): { starting: number; idle: number; busy: number; retiring: number } {
    const states = { starting: 0, idle: 0, busy: 0, retiring: 0 }
    for (const w of this.supervisor.workers) states[w.phase === 'ready' ? (w.inflight > 0 ? 'busy' : 'idle') : w.phase] += 1
    return states
  }

  stats(): PoolStats {
    const broken = this.supervisor.broken
    return {
      spawned: this.supervisor.spawned,
      ready: this.pids().length,
      startFailures: this.supervisor.startFailures,
      waiting: this.room.waiting,
      ...(broken ? { broken } : {}),
    }
  }

  private unavailable(): InvocationReport & { outcome: InvokeFailure } {
    const message = this.supervisor.closed ? 'the sidecar is shutting down' : `no sandbox worker is available: ${this.supervisor.broken ?? 'workers are restarting'}`
    return failedReport('worker-crash', message) as InvocationReport & { outcome: InvokeFailure }
  }
}
