/**
 * The worker pool: supervised child processes that run isolates, so that a V8 fatal error costs one
 * worker, never the sidecar. A dead worker is replaced; what it was running ends with a `worker-crash`
 * outcome. Workers that keep dying before they are ready stop being restarted, and every invocation then
 * fails fast with a diagnostic that says so, instead of looping forever.
 */
import { type ChildProcess, fork } from 'node:child_process'
import { availableParallelism } from 'node:os'
import { fileURLToPath } from 'node:url'
import type { CtxData, CapabilityReply, HookCode, InvokeOutcome, Limits, LoadOutcome, ToWorker } from './protocol.js'
import { fromWorker } from './protocol.js'

export interface InvocationRequest {
  hook: HookCode & { source: string }
  point: string
  args: readonly unknown[]
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

export interface PoolOptions {
  /** Worker processes; default: the number of cores, at least 1. */
  size?: number
  /** Consecutive start-up failures after which the pool stops restarting workers. */
  maxStartFailures?: number
}

type Inflight =
  | { type: 'invoke'; request: InvocationRequest; resolve(report: InvocationReport): void; cleanup(): void }
  | { type: 'load'; resolve(outcome: LoadOutcome): void }

class Worker {
  readonly inflight = new Map<number, Inflight>()
  readonly versions = new Set<string>()
  ready = false
  stderrTail = ''
  constructor(readonly child: ChildProcess) {}
  post(message: ToWorker): void {
    if (this.child.connected) this.child.send(message)
  }
}

const here = fileURLToPath(import.meta.url)
const fromSource = here.endsWith('.ts')
const ENTRY = fileURLToPath(new URL(fromSource ? './main.ts' : './main.js', import.meta.url))
// Run from TypeScript sources (tests, tsx), workers load the same sources through tsx, resolved from
// here so that the working directory does not matter.
const EXEC_ARGV = ['--no-node-snapshot', ...(fromSource ? ['--import', import.meta.resolve('tsx')] : [])]

export class WorkerPool {
  readonly size: number
  private readonly maxStartFailures: number
  private readonly workers: Worker[] = []
  private readonly waiters: Array<() => void> = []
  private nextId = 1
  private startFailures = 0
  private brokenReason: string | undefined
  private closed = false

  constructor(options: PoolOptions = {}) {
    this.size = Math.max(1, options.size ?? availableParallelism())
    this.maxStartFailures = options.maxStartFailures ?? 5
  }

  /** Starts the workers and waits until at least one is ready. */
  async start(): Promise<void> {
    for (let i = 0; i < this.size; i++) this.spawn()
    await this.anyReady()
  }

  /** Runs one invocation in a fresh isolate on the least busy worker. Never rejects. */
  async invoke(request: InvocationRequest): Promise<InvocationReport> {
    const worker = await this.pick()
    if (!worker) return { outcome: this.unavailable(), wallUs: 0, cpuUs: 0 }
    const id = this.nextId++
    const hook: HookCode = worker.versions.has(request.hook.version)
      ? { name: request.hook.name, version: request.hook.version, filename: request.hook.filename }
      : request.hook
    worker.versions.add(request.hook.version)
    return new Promise<InvocationReport>((resolve) => {
      const onAbort = (): void => worker.post({ $: 'cancel', id })
      request.signal?.addEventListener('abort', onAbort, { once: true })
      worker.inflight.set(id, {
        type: 'invoke',
        request,
        resolve,
        cleanup: () => request.signal?.removeEventListener('abort', onAbort),
      })
      worker.post({
        $: 'invoke',
        id,
        hook,
        point: request.point,
        args: JSON.stringify(request.args),
        ctx: request.ctx,
        limits: request.limits,
      })
    })
  }

  /** Compiles and evaluates a hook in a throwaway isolate; reports its exported function names. */
  async load(hook: HookCode & { source: string }, limits: Limits): Promise<LoadOutcome> {
    const worker = await this.pick()
    if (!worker) return { ok: false, message: this.unavailable().message }
    const id = this.nextId++
    worker.versions.add(hook.version)
    return new Promise<LoadOutcome>((resolve) => {
      worker.inflight.set(id, { type: 'load', resolve })
      worker.post({ $: 'load', id, hook, limits })
    })
  }

  /** Stops every worker; in-flight invocations end as `worker-crash`. */
  async close(): Promise<void> {
    this.closed = true
    const exits = this.workers.map(
      (w) =>
        new Promise<void>((resolve) => {
          if (w.child.exitCode !== null || w.child.signalCode !== null) return resolve()
          w.child.once('exit', () => resolve())
          w.child.kill('SIGKILL')
        }),
    )
    await Promise.all(exits)
    this.workers.length = 0
    for (const wake of this.waiters.splice(0)) wake()
  }

  /** Process ids of the live workers (for tests and `hookd` status output). */
  pids(): number[] {
    return this.workers.filter((w) => w.ready).map((w) => w.child.pid ?? 0)
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
    if (this.closed) return
    const child = fork(ENTRY, [], {
      execArgv: EXEC_ARGV,
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      serialization: 'json',
    })
    const worker = new Worker(child)
    this.workers.push(worker)
    child.stderr?.setEncoding('utf8')
    child.stderr?.on('data', (chunk: string) => {
      worker.stderrTail = (worker.stderrTail + chunk).slice(-2000)
    })
    child.on('message', (raw) => this.onMessage(worker, raw))
    child.on('error', () => {
      // 'exit' follows and does the bookkeeping.
    })
    child.on('exit', (code, signal) => this.onExit(worker, code, signal))
  }

  private onMessage(worker: Worker, raw: unknown): void {
    const parsed = fromWorker.safeParse(raw)
    if (!parsed.success) {
      // A worker that speaks out of protocol is not trusted with more work.
      worker.child.kill('SIGKILL')
      return
    }
    const message = parsed.data
    switch (message.$) {
      case 'ready':
        worker.ready = true
        this.startFailures = 0
        for (const wake of this.waiters.splice(0)) wake()
        return
      case 'capability': {
        const inflight = worker.inflight.get(message.id)
        if (inflight?.type !== 'invoke') return
        void inflight.request.onCapability(message.capability, message.args).then(
          (reply) => worker.post({ $: 'capabilityResult', id: message.id, callId: message.callId, reply }),
          (err: unknown) =>
            worker.post({
              $: 'capabilityResult',
              id: message.id,
              callId: message.callId,
              reply: { ok: false, code: 'failed', message: err instanceof Error ? err.message : String(err) },
            }),
        )
        return
      }
      case 'log': {
        const inflight = worker.inflight.get(message.id)
        if (inflight?.type === 'invoke') inflight.request.onLog(message.message)
        return
      }
      case 'done': {
        const inflight = worker.inflight.get(message.id)
        if (inflight?.type !== 'invoke') return
        worker.inflight.delete(message.id)
        inflight.cleanup()
        inflight.resolve({ outcome: message.outcome, wallUs: message.wallUs, cpuUs: message.cpuUs })
        return
      }
      case 'loaded': {
        const inflight = worker.inflight.get(message.id)
        if (inflight?.type !== 'load') return
        worker.inflight.delete(message.id)
        inflight.resolve(message.outcome)
        return
      }
    }
  }

  private onExit(worker: Worker, code: number | null, signal: NodeJS.Signals | null): void {
    const index = this.workers.indexOf(worker)
    if (index >= 0) this.workers.splice(index, 1)
    const how = signal ? `signal ${signal}` : `exit code ${code}`
    const fatal = /Fatal|out of memory|heap/i.test(worker.stderrTail) ? ' (V8 reported a fatal error)' : ''
    const message = `the sandbox worker (pid ${worker.child.pid}) died while running the hook, by ${how}${fatal}; the worker was replaced`
    for (const [, inflight] of worker.inflight) {
      if (inflight.type === 'invoke') {
        inflight.cleanup()
        inflight.resolve({ outcome: { ok: false, kind: 'worker-crash', message }, wallUs: 0, cpuUs: 0 })
      } else {
        inflight.resolve({ ok: false, message })
      }
    }
    worker.inflight.clear()
    if (this.closed) return
    if (!worker.ready) {
      this.startFailures += 1
      if (this.startFailures >= this.maxStartFailures) {
        const tail = worker.stderrTail.trim().split('\n').slice(-3).join(' | ')
        this.brokenReason = `workers failed to start ${this.startFailures} times in a row (last: ${how}${tail ? `: ${tail}` : ''})`
        for (const wake of this.waiters.splice(0)) wake()
        return
      }
    }
    const delay = worker.ready ? 0 : Math.min(2000, 50 * 2 ** this.startFailures)
    setTimeout(() => this.spawn(), delay).unref()
  }

  private anyReady(): Promise<void> {
    if (this.workers.some((w) => w.ready) || this.brokenReason || this.closed) return Promise.resolve()
    return new Promise((resolve) => this.waiters.push(resolve))
  }

  private async pick(): Promise<Worker | undefined> {
    for (;;) {
      if (this.closed || this.brokenReason) return undefined
      let best: Worker | undefined
      for (const w of this.workers) {
        if (w.ready && w.child.connected && (!best || w.inflight.size < best.inflight.size)) best = w
      }
      if (best) return best
      await this.anyReady()
    }
  }
}
