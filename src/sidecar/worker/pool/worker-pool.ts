/**
 * The worker pool: supervised child processes that run isolates, so that a V8 fatal error costs one
 * worker, never the sidecar. A dead worker is replaced; what it was running ends with a `worker-crash`
 * outcome. A worker that stops answering (its deadline passes with no capability call outstanding) is
 * killed and replaced the same way. Workers that keep dying before they are given any work stop being
 * restarted after `maxStartFailures` in a row (start() fails with UNAVAILABLE; later invocations fail
 * fast with a `worker-crash` diagnostic that says why), instead of looping forever.
 */
import { type ChildProcess, fork } from 'node:child_process'
import { availableParallelism } from 'node:os'
import { fileURLToPath } from 'node:url'
import { HookdError } from '../../../protocol/status.js'
import type { CtxData, CapabilityReply, HookCode, InvokeOutcome, Limits, LoadOutcome, ToWorker } from '../protocol.js'
import { fromWorker, hookCodeKey } from '../protocol.js'

export interface InvocationRequest {
  hook: HookCode & { source: string }
  point: string
  args: readonly unknown[]
  /** See ToWorker 'invoke': answer with this argument after the call instead of the return value. */
  resultArg?: number
  ctx: CtxData
  limits: Limits
  signal?: AbortSignal
  onCapability(capability: string, args: unknown): Promise<CapabilityReply>
  onLog(message: string): void
}

export interface InvocationReport {
  outcome: InvokeOutcome
  wallUs: number
  cpuUs: number
}

/** Consecutive sandboxed hooks of one point call, run in one worker message (see ToWorker 'chain'). */
export interface ChainRequest {
  /** The catalog point the chain runs. */
  point: string
  /** The chain's initial state: the point's validated payload. */
  initial: unknown
  steps: ReadonlyArray<{
    hook: HookCode & { source: string }
    points: readonly string[]
    ctx: CtxData
    onCapability(capability: string, args: unknown): Promise<CapabilityReply>
    onLog(message: string): void
  }>
  /** Per invocation, for each step. */
  limits: Limits
  signal?: AbortSignal
}

/**
 * A chain on its way in a worker. The caller runs the same chain (chain.ts) on its reports: `report(i)`
 * settles with step i's report once the worker ran it, or with undefined when the worker ended the
 * chain without running it (its worker died, or it judged the step should not run); the caller then
 * invokes that step on its own. The step running when a worker dies gets a `worker-crash` report.
 */
export interface ChainRun {
  report(step: number): Promise<InvocationReport | undefined>
  /** Settles when the worker is done with the chain (or it ended without one). */
  readonly done: Promise<void>
}

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
}

/** What the pool is doing, for tests and status output. */
export interface PoolStats {
  /** Workers started so far, replacements included. */
  spawned: number
  /** Live workers that are ready for work. */
  ready: number
  /** Workers in a row that died before they were given any work. */
  startFailures: number
  /** Set once the pool gave up restarting workers. */
  broken?: string
}

interface InvokeFlight {
  type: 'invoke'
  request: InvocationRequest
  resolve(report: InvocationReport): void
  cleanup(): void
  /** When the worker must have answered, unless a capability call is outstanding (ms, monotonic). */
  deadline: number
  outstanding: number
  pausedAt: number
}

interface LoadFlight {
  type: 'load'
  resolve(outcome: LoadOutcome): void
  deadline: number
  outstanding: 0
}

interface ChainFlight {
  type: 'chain'
  request: ChainRequest
  /** A step's report arrived. */
  stepped(step: number, report: InvocationReport): void
  /** The chain is over: reports not received settle (the awaited one with `crash` when given). */
  end(crash?: InvokeOutcome): void
  deadline: number
  outstanding: number
  pausedAt: number
}

type Inflight = InvokeFlight | LoadFlight | ChainFlight

class Worker {
  readonly inflight = new Map<number, Inflight>()
  /** hookCodeKeys whose code this worker holds, least recently used first. */
  readonly code = new Map<string, true>()
  ready = false
  retiring = false
  /** Invocations and loads sent to it. */
  dispatched = 0
  /** Why the pool killed it, when it did. */
  killedFor: string | undefined
  stderrTail = ''
  startTimer: NodeJS.Timeout | undefined
  constructor(readonly child: ChildProcess) {}
  post(message: ToWorker): void {
    if (!this.child.connected) return
    try {
      this.child.send(message)
    } catch {
      // The channel closed under us: 'exit' follows and ends what was in flight.
    }
  }
  get exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null
  }
}

const here = fileURLToPath(import.meta.url)
const fromSource = here.endsWith('.ts')
const ENTRY = fileURLToPath(new URL(fromSource ? '../process/main.ts' : '../process/main.js', import.meta.url))
// isolated-vm needs --no-node-snapshot on Node 20. From source, the worker loads TypeScript through tsx,
// resolved here: a bare 'tsx' would be looked up from the worker's working directory, which may be any.
// A worker's own heap holds only messages and bookkeeping (hooks run in their isolates' heaps), but
// under load V8 grew its young generation to many MB of short-lived garbage: capped at 1 MB per
// semi-space, each worker stays ~10-20 MB smaller (measured over 40k invocations) with no throughput
// lost that the noise would show (docs/performance.md).
const EXEC_ARGV = ['--no-node-snapshot', '--max-semi-space-size=1', ...(fromSource ? ['--import', import.meta.resolve('tsx')] : [])]
const CHECK_MS = 250

const now = (): number => performance.now()

export class WorkerPool {
  readonly size: number
  private readonly maxStartFailures: number
  private readonly startTimeoutMs: number
  private readonly hangGraceMs: number
  private readonly keepVersions: number
  private readonly execArgv: readonly string[]
  private readonly workers: Worker[] = []
  private readonly waiters: Array<() => void> = []
  private nextId = 1
  private spawned = 0
  private startFailures = 0
  private brokenReason: string | undefined
  private closed = false
  private checker: NodeJS.Timeout | undefined
  /** Replacements waiting for their back-off; they keep the process alive, and close() clears them. */
  private readonly respawns = new Set<NodeJS.Timeout>()

  private readonly brokenListeners: Array<(reason: string) => void> = []

  /**
   * Calls `listener` once if the pool gives up restarting workers (at once if it already has): from then
   * on every invocation fails fast with `worker-crash`, and the sidecar reports NOT_SERVING.
   */
  onBroken(listener: (reason: string) => void): void {
    if (this.brokenReason) listener(this.brokenReason)
    else this.brokenListeners.push(listener)
  }

  constructor(options: PoolOptions = {}) {
    this.size = Math.max(1, options.size ?? availableParallelism())
    this.maxStartFailures = Math.max(1, options.maxStartFailures ?? 5)
    this.startTimeoutMs = options.startTimeoutMs ?? 30_000
    this.hangGraceMs = options.hangGraceMs ?? 5000
    this.keepVersions = Math.max(1, options.keepVersions ?? 256)
    this.execArgv = options.execArgv ?? []
  }

  /**
   * Starts the workers and waits until at least one is ready. Fails with UNAVAILABLE when workers keep
   * dying at start-up (`maxStartFailures` in a row), naming the last failure.
   */
  async start(): Promise<void> {
    this.checker ??= setInterval(() => this.checkDeadlines(), CHECK_MS)
    this.checker.unref()
    for (let i = 0; i < this.size; i++) this.spawn()
    await this.anyReady()
    if (this.brokenReason) {
      await this.close()
      throw new HookdError('unavailable', `no sandbox worker could start: ${this.brokenReason}`)
    }
  }

  /** Runs one invocation in a fresh isolate on the least busy worker. Never rejects. */
  async invoke(request: InvocationRequest): Promise<InvocationReport> {
    const worker = await this.pick()
    if (!worker) return { outcome: this.unavailable(), wallUs: 0, cpuUs: 0 }
    const id = this.nextId++
    worker.dispatched += 1
    const hook: HookCode = this.withCode(worker, request.hook)
    return new Promise<InvocationReport>((resolve) => {
      const onAbort = (): void => worker.post({ $: 'cancel', id })
      request.signal?.addEventListener('abort', onAbort, { once: true })
      worker.inflight.set(id, {
        type: 'invoke',
        request,
        resolve,
        cleanup: () => request.signal?.removeEventListener('abort', onAbort),
        deadline: now() + request.limits.wallMs + this.hangGraceMs,
        outstanding: 0,
        pausedAt: 0,
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
  }

  /**
   * Runs consecutive sandboxed hooks of one point call on one worker, in one message: the worker runs
   * the chain and reports each step as it ends, so a chain of n hooks costs one round trip instead of
   * n. Never rejects. See ChainRun for what the caller does with the reports.
   */
  invokeChain(request: ChainRequest): ChainRun {
    const reports = new Map<number, InvocationReport>()
    let over = false
    let crash: InvokeOutcome | undefined
    let waiting: { step: number; resolve(report: InvocationReport | undefined): void } | undefined
    let finish: () => void = () => {}
    const done = new Promise<void>((resolve) => {
      finish = resolve
    })
    const end = (outcome?: InvokeOutcome): void => {
      if (over) return
      over = true
      crash = outcome
      finish()
      if (waiting) {
        const { resolve } = waiting
        waiting = undefined
        resolve(crash ? { outcome: crash, wallUs: 0, cpuUs: 0 } : undefined)
        crash = undefined
      }
    }
    const run: ChainRun = {
      report: (step) => {
        const known = reports.get(step)
        if (known) return Promise.resolve(known)
        if (over) {
          // The first step asked for after the worker died is the one it was running.
          const outcome = crash
          crash = undefined
          return Promise.resolve(outcome ? { outcome, wallUs: 0, cpuUs: 0 } : undefined)
        }
        return new Promise((resolve) => {
          waiting = { step, resolve }
        })
      },
      done,
    }
    const stepped = (step: number, report: InvocationReport): void => {
      if (over) return
      reports.set(step, report)
      if (waiting?.step === step) {
        const { resolve } = waiting
        waiting = undefined
        resolve(report)
      }
    }
    // The worker is told which code to drop (withCode) before it gets the chain: a chain longer than
    // what a worker keeps could lose its own first hooks, so such a chain runs step by step instead.
    if (request.steps.length > this.keepVersions) {
      end()
      return run
    }
    void this.pick().then((worker) => {
      if (!worker) return end(this.unavailable())
      if (request.signal?.aborted) return end()
      const id = this.nextId++
      worker.dispatched += 1
      const steps = request.steps.map((step) => ({ hook: this.withCode(worker, step.hook), points: [...step.points], ctx: step.ctx }))
      const onAbort = (): void => worker.post({ $: 'cancel', id })
      request.signal?.addEventListener('abort', onAbort, { once: true })
      worker.inflight.set(id, {
        type: 'chain',
        request,
        stepped,
        end: (outcome) => {
          request.signal?.removeEventListener('abort', onAbort)
          end(outcome)
        },
        deadline: now() + request.steps.length * request.limits.wallMs + this.hangGraceMs,
        outstanding: 0,
        pausedAt: 0,
      })
      worker.post({ $: 'chain', id, point: request.point, initial: JSON.stringify(request.initial), steps, limits: request.limits })
    })
    return run
  }

  /** Compiles and evaluates a hook in a throwaway isolate; reports its exported function names. */
  async load(hook: HookCode & { source: string }, limits: Limits): Promise<LoadOutcome> {
    const worker = await this.pick()
    if (!worker) return { ok: false, message: this.unavailable().message }
    const id = this.nextId++
    worker.dispatched += 1
    this.withCode(worker, hook)
    return new Promise<LoadOutcome>((resolve) => {
      worker.inflight.set(id, { type: 'load', resolve, deadline: now() + limits.wallMs + this.hangGraceMs, outstanding: 0 })
      worker.post({ $: 'load', id, hook, limits })
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
    return this.workers.filter((w) => w.ready && !w.retiring).map((w) => w.child.pid ?? 0)
  }

  stats(): PoolStats {
    return {
      spawned: this.spawned,
      ready: this.pids().length,
      startFailures: this.startFailures,
      ...(this.brokenReason ? { broken: this.brokenReason } : {}),
    }
  }

  /** The code to send: the source the first time this worker sees the version, then only its name. */
  private withCode(worker: Worker, hook: HookCode & { source: string }): HookCode {
    const key = hookCodeKey(hook)
    if (worker.code.delete(key)) {
      worker.code.set(key, true)
      return { name: hook.name, version: hook.version, filename: hook.filename }
    }
    worker.code.set(key, true)
    for (const old of worker.code.keys()) {
      if (worker.code.size <= this.keepVersions) break
      worker.code.delete(old)
      worker.post({ $: 'forget', key: old })
    }
    return hook
  }

  private unavailable(): Extract<InvokeOutcome, { ok: false }> {
    return {
      ok: false,
      kind: 'worker-crash',
      message: this.closed
        ? 'the sidecar is shutting down'
        : `no sandbox worker is available: ${this.brokenReason ?? 'workers are restarting'}`,
    }
  }

  private spawn(): void {
    if (this.closed || this.brokenReason) return
    const child = fork(ENTRY, [], {
      execArgv: [...EXEC_ARGV, ...this.execArgv],
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      serialization: 'json',
    })
    this.spawned += 1
    const worker = new Worker(child)
    this.workers.push(worker)
    worker.startTimer = setTimeout(() => {
      if (!worker.ready) this.kill(worker, `it was not ready ${this.startTimeoutMs} ms after it started`)
    }, this.startTimeoutMs)
    worker.startTimer.unref()
    child.stderr?.setEncoding('utf8')
    child.stderr?.on('data', (chunk: string) => {
      worker.stderrTail = (worker.stderrTail + chunk).slice(-4000)
    })
    child.on('message', (raw) => this.onMessage(worker, raw))
    child.on('error', () => {
      // 'exit' follows and does the bookkeeping.
    })
    child.on('exit', (code, signal) => this.onExit(worker, code, signal))
  }

  private kill(worker: Worker, why: string): void {
    if (worker.exited) return
    worker.killedFor ??= why
    worker.child.kill('SIGKILL')
  }

  /** Kills workers that hold an invocation past its deadline with no capability call outstanding. */
  private checkDeadlines(): void {
    const t = now()
    for (const worker of this.workers) {
      for (const flight of worker.inflight.values()) {
        if (flight.outstanding === 0 && t > flight.deadline) {
          this.kill(worker, `it stopped answering: an invocation ran ${this.hangGraceMs} ms past its wall-time limit`)
          break
        }
      }
    }
  }

  private served(): void {
    this.startFailures = 0
  }

  private onMessage(worker: Worker, raw: unknown): void {
    const parsed = fromWorker.safeParse(raw)
    if (!parsed.success) {
      // A worker that speaks out of protocol is not trusted with more work.
      this.kill(worker, 'it sent a message outside the sidecar<->worker protocol')
      return
    }
    const message = parsed.data
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
        const inflight = worker.inflight.get(message.id)
        const target = inflight && handlerOf(inflight, message.step)
        if (!inflight || inflight.type === 'load' || !target) return
        if (inflight.outstanding++ === 0) inflight.pausedAt = now()
        const answer = (reply: CapabilityReply): void => {
          if (--inflight.outstanding === 0) inflight.deadline += now() - inflight.pausedAt
          worker.post({ $: 'capabilityResult', id: message.id, callId: message.callId, reply })
        }
        void target.onCapability(message.capability, message.args).then(answer, (err: unknown) =>
          answer({ ok: false, code: 'failed', message: err instanceof Error ? err.message : String(err) }),
        )
        return
      }
      case 'log': {
        const inflight = worker.inflight.get(message.id)
        if (inflight) handlerOf(inflight, message.step)?.onLog(message.message)
        return
      }
      case 'step': {
        const inflight = worker.inflight.get(message.id)
        if (inflight?.type !== 'chain' || message.step >= inflight.request.steps.length) return
        inflight.stepped(message.step, { outcome: message.outcome, wallUs: message.wallUs, cpuUs: message.cpuUs })
        return
      }
      case 'chained': {
        const inflight = worker.inflight.get(message.id)
        if (inflight?.type !== 'chain') return
        worker.inflight.delete(message.id)
        this.served()
        inflight.end()
        return
      }
      case 'done': {
        const inflight = worker.inflight.get(message.id)
        if (inflight?.type !== 'invoke') return
        worker.inflight.delete(message.id)
        this.served()
        inflight.cleanup()
        inflight.resolve({ outcome: message.outcome, wallUs: message.wallUs, cpuUs: message.cpuUs })
        return
      }
      case 'loaded': {
        const inflight = worker.inflight.get(message.id)
        if (inflight?.type !== 'load') return
        worker.inflight.delete(message.id)
        this.served()
        inflight.resolve(message.outcome)
        return
      }
    }
  }

  private onExit(worker: Worker, code: number | null, signal: NodeJS.Signals | null): void {
    if (worker.startTimer) clearTimeout(worker.startTimer)
    const index = this.workers.indexOf(worker)
    if (index >= 0) this.workers.splice(index, 1)
    const how = signal ? `signal ${signal}` : `exit code ${code}`
    const fatal = /FATAL ERROR|Fatal JavaScript|out of memory|is_heap_oom|Fatal process/i.test(worker.stderrTail)
      ? ', V8 reported a fatal error'
      : ''
    const pid = worker.child.pid
    const others = worker.inflight.size - 1
    const also = others > 0 ? ` (${others} other invocation${others > 1 ? 's' : ''} running on it ended too)` : ''
    const message = worker.killedFor
      ? `the sandbox worker (pid ${pid}) was killed because ${worker.killedFor}${also}; a new worker replaces it`
      : `the sandbox worker (pid ${pid}) died while the hook ran (${how}${fatal})${also}; a new worker replaces it`
    for (const [, inflight] of worker.inflight) {
      if (inflight.type === 'invoke') {
        inflight.cleanup()
        inflight.resolve({ outcome: { ok: false, kind: 'worker-crash', message }, wallUs: 0, cpuUs: 0 })
      } else if (inflight.type === 'chain') {
        inflight.end({ ok: false, kind: 'worker-crash', message })
      } else {
        inflight.resolve({ ok: false, message })
      }
    }
    worker.inflight.clear()
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
        for (const listener of this.brokenListeners.splice(0)) listener(this.brokenReason)
        return
      }
    }
    const delay = startFailure ? Math.min(2000, 50 * 2 ** this.startFailures) : 0
    const timer = setTimeout(() => {
      this.respawns.delete(timer)
      this.spawn()
    }, delay)
    this.respawns.add(timer)
  }

  private anyReady(): Promise<void> {
    if (this.workers.some(usable) || this.brokenReason || this.closed) return Promise.resolve()
    return new Promise((resolve) => this.waiters.push(resolve))
  }

  private turn = 0

  private async pick(): Promise<Worker | undefined> {
    for (;;) {
      if (this.closed || this.brokenReason) return undefined
      // The least busy worker; among equals, the next in turn, so that sequential calls alternate and
      // each worker warms its next isolates while another one answers (warm.ts).
      let best: Worker | undefined
      const n = this.workers.length
      for (let i = 0; i < n; i++) {
        const w = this.workers[(this.turn + i) % n] as Worker
        if (usable(w) && (!best || w.inflight.size < best.inflight.size)) best = w
      }
      if (best) {
        this.turn = (this.workers.indexOf(best) + 1) % n
        return best
      }
      await this.anyReady()
    }
  }
}

/** Who gets a capability call or log line: the invocation, or the chain's step that made it. */
function handlerOf(inflight: Inflight, step: number | undefined): Pick<InvocationRequest, 'onCapability' | 'onLog'> | undefined {
  if (inflight.type === 'invoke') return step === undefined ? inflight.request : undefined
  if (inflight.type === 'chain') return step === undefined ? undefined : inflight.request.steps[step]
  return undefined
}

function usable(w: Worker): boolean {
  return w.ready && !w.retiring && w.child.connected
}
