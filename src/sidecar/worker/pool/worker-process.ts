/**
 * One sandbox worker process, as the sidecar sees it: its state (starting, ready, retiring, gone), the
 * flights it runs and the room they take (memory-room.ts), which hook versions' code it holds, and why
 * it was killed. It changes its own state from the worker's messages, holds its own flights and settles
 * them: with the worker's answers, and, when the process dies, each with a `worker-crash` outcome that
 * says how. Its owner (supervisor.ts) hears what it cannot decide alone: room freed, a replacement
 * wanted, its exit. The balancer reads it through WorkerView (balancer.ts). How the process starts is
 * worker-spawn.ts; the process side is worker/process/main.ts.
 */
import type { ChildProcess } from 'node:child_process'
import type { RunnableHook } from '../../runners/hook-runner.js'
import { FAILURE_TEXT } from '../../runners/failure-text.js'
import { type FromWorker, type HookCode, type ToWorker, fromWorker, hookCodeKey } from '../protocol.js'
import type { WorkerState, WorkerView } from './balancer.js'
import { type Flight, crashed, hostOf, pause, resume } from './flights.js'
import { admitWait, parkedMbOf, runningMbOf } from './memory-room.js'

/** A worker that exited while its pool was open (it is replaced unless the pool gave up), for observers. */
export interface WorkerExit {
  pid: number
  /** retired: isolated-vm lost an isolate; killed: hung or out of protocol; start-failure: died before any work; crashed: died running hooks. */
  reason: 'retired' | 'killed' | 'start-failure' | 'crashed'
  /** `exit code N` or `signal S`. */
  how: string
  /** What the invocations it was running were told. */
  message: string
}

/** What a worker tells its owner. */
export interface WorkerOwner {
  /** Room may have freed: it became ready, a flight ended, or one started to wait on its host. */
  changed(): void
  /** It answered a flight: it works. */
  answered(): void
  /** It retires (isolated-vm lost an isolate): no new work goes to it, and a replacement should start now. */
  retiring(): void
  /** Its process exited; the flights it ran are settled already. */
  exited(exit: WorkerExit): void
}

export interface WorkerSettings {
  /** Hook versions whose compiled code the worker keeps. */
  keepVersions: number
  /** What invocations waiting on their host may hold in it at once (PoolOptions.maxParkedMb). */
  maxParkedMb: number
  /** Killed (a start failure) when it is not ready this long after it started. */
  startTimeoutMs: number
  /**
   * Killed when it closed its channel to the sidecar and has not exited this long after: a process
   * that only closed its channel (an escaped hook could) would be given no work and never replaced.
   * Default 2 s, long enough for an ordinary death to say how it died.
   */
  disconnectGraceMs?: number
}

type CapabilityResult = Extract<ToWorker, { $: 'capabilityResult' }>

const FATAL = /FATAL ERROR|Fatal JavaScript|out of memory|is_heap_oom|Fatal process/i

export class WorkerProcess implements WorkerView {
  private readonly flights = new Map<number, Flight>()
  /** hookCodeKeys whose code this worker holds, least recently used first. */
  private readonly code = new Map<string, true>()
  private nextId = 1
  private isReady = false
  private isRetiring = false
  private hasExited = false
  private held = false
  /** Memory limits of work the pool chose this worker for and has not sent yet (memory-room.ts). */
  private reservedMb = 0
  private sent = 0
  private killReason: string | undefined
  /** How the process ended (`exit code N`, `signal S`), once it has. */
  private endedHow = ''
  private stderr = ''
  private readonly startTimer: NodeJS.Timeout

  /** Takes over a worker process started by spawnWorker (worker-spawn.ts). */
  constructor(
    private readonly child: ChildProcess,
    private readonly settings: WorkerSettings,
    private readonly owner: WorkerOwner,
  ) {
    child.stderr?.setEncoding('utf8')
    child.stderr?.on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-4000)
    })
    this.startTimer = setTimeout(() => {
      if (!this.isReady) this.kill(`it was not ready ${settings.startTimeoutMs} ms after it started`)
    }, settings.startTimeoutMs)
    this.startTimer.unref()
    child.on('message', (raw) => this.onMessage(raw))
    child.on('error', () => {
      // 'exit' follows and does the bookkeeping.
    })
    child.on('disconnect', () => {
      const timer = setTimeout(() => this.kill('it closed its channel to the sidecar without exiting'), settings.disconnectGraceMs ?? 2000)
      timer.unref()
      child.once('exit', () => clearTimeout(timer))
    })
    child.on('exit', (code, signal) => this.onExit(code, signal))
  }

  get pid(): number {
    return this.child.pid ?? 0
  }

  /** For the balancer: gone once its channel closed or it exited, even before the pool hears of it. */
  get state(): WorkerState {
    if (this.hasExited || this.exited || !this.child.connected) return 'gone'
    return this.phase
  }

  /** Where it is in its life, by its own messages (its channel aside): for status and metrics. */
  get phase(): 'starting' | 'ready' | 'retiring' {
    return this.isRetiring ? 'retiring' : this.isReady ? 'ready' : 'starting'
  }

  get exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null
  }

  get inflight(): number {
    return this.flights.size
  }

  get runningMb(): number {
    return runningMbOf(this.flights.values(), this.reservedMb)
  }

  get parkedMb(): number {
    return parkedMbOf(this.flights.values())
  }

  get heldAlone(): boolean {
    return this.held
  }

  /** Invocations, chains and loads sent to it: none means a death is a start failure. */
  get dispatched(): number {
    return this.sent
  }

  /** Once it exited: why it was killed, else how it ended, with the last lines it wrote (for the pool's broken reason). */
  lastWords(): string {
    const tail = this.stderr.trim().split('\n').slice(-3).join(' | ').slice(0, 500)
    return `${this.killReason ?? this.endedHow}${tail ? `: ${tail}` : ''}`
  }

  /** Keeps room for work the pool chose it for (balancer.ts), until `start` sends it or `unreserve` gives it back. `alone`: holds it too. */
  reserve(memoryMb: number, alone: boolean): void {
    this.reservedMb += memoryMb
    if (alone) this.held = true
  }

  unreserve(memoryMb: number): void {
    this.reservedMb -= memoryMb
  }

  /** A retry that ran alone here is over: other work may come again. */
  release(): void {
    this.held = false
  }

  /**
   * Sends work whose room was reserved: `flight` is what its caller waits for, `message(id)` what the
   * worker is told (built now, so that `codeFor` tells the worker what to forget first). Returns its id.
   */
  start(flight: Flight, message: (id: number) => ToWorker): number {
    const id = this.nextId++
    this.sent += 1
    this.reservedMb -= flight.memoryMb
    this.flights.set(id, flight)
    this.post(message(id))
    return id
  }

  /** Asks the worker to end flight `id` (its caller's signal aborted); the flight settles with its answer. */
  cancel(id: number): void {
    this.post({ $: 'cancel', id })
  }

  kill(why: string): void {
    if (this.exited) return
    this.killReason ??= why
    this.child.kill('SIGKILL')
  }

  /**
   * Ends the process (the pool closes; no reason of the pool's, so what it ran is told it died).
   * Resolves once it exited and its flights are settled.
   */
  stop(): Promise<void> {
    if (this.exited) return Promise.resolve()
    return new Promise((resolve) => {
      this.child.once('exit', () => resolve())
      this.child.kill('SIGKILL')
    })
  }

  /** Kills it when a flight with no capability call outstanding is past its deadline at `t`. */
  killIfHung(t: number, hangGraceMs: number): void {
    for (const flight of this.flights.values()) {
      if (flight.outstanding === 0 && t > flight.deadline) {
        this.kill(`it stopped answering: an invocation ran ${hangGraceMs} ms past its wall-time limit`)
        return
      }
    }
  }

  /**
   * The code to send with an invocation: the source the first time this worker sees the version, then
   * only its name. Versions past `keepVersions` are forgotten, least recently used first, and the
   * worker is told so before it gets the message that needs the new one.
   */
  codeFor(hook: RunnableHook): HookCode {
    const key = hookCodeKey(hook)
    if (this.code.delete(key)) {
      this.code.set(key, true)
      return { name: hook.name, version: hook.version, filename: hook.filename }
    }
    this.code.set(key, true)
    for (const old of this.code.keys()) {
      if (this.code.size <= this.settings.keepVersions) break
      this.code.delete(old)
      this.post({ $: 'forget', key: old })
    }
    return { name: hook.name, version: hook.version, filename: hook.filename, source: hook.source }
  }

  private post(message: ToWorker): void {
    if (!this.child.connected) return
    try {
      this.child.send(message)
    } catch {
      // The channel closed under us: 'exit' follows and ends what was in flight.
    }
  }

  private onMessage(raw: unknown): void {
    const parsed = fromWorker.safeParse(raw)
    if (!parsed.success) {
      // A worker that speaks out of protocol is not trusted with more work.
      this.kill('it sent a message outside the sidecar<->worker protocol')
      return
    }
    this.route(parsed.data)
  }

  private route(message: FromWorker): void {
    switch (message.$) {
      case 'ready':
        this.isReady = true
        clearTimeout(this.startTimer)
        this.owner.changed()
        return
      case 'retire':
        // isolated-vm lost an isolate: no new work here; a replacement starts now.
        if (!this.isRetiring) {
          this.isRetiring = true
          this.owner.retiring()
        }
        return
      case 'capability':
        this.onCapability(message)
        return
      case 'log': {
        const flight = this.flights.get(message.id)
        if (flight) hostOf(flight, message.step)?.onLog(message.message)
        return
      }
      case 'step': {
        const flight = this.flights.get(message.id)
        if (flight?.type !== 'chain' || message.step >= flight.request.steps.length) return
        flight.stepped(message.step, { outcome: message.outcome, wallUs: message.wallUs, cpuUs: message.cpuUs })
        return
      }
      case 'chained': {
        const flight = this.flights.get(message.id)
        if (flight?.type !== 'chain') return
        this.answered(message.id)
        flight.end()
        this.owner.changed()
        return
      }
      case 'done': {
        const flight = this.flights.get(message.id)
        if (flight?.type !== 'invoke') return
        this.answered(message.id)
        flight.settle({ outcome: message.outcome, wallUs: message.wallUs, cpuUs: message.cpuUs }, false)
        this.owner.changed()
        return
      }
      case 'loaded': {
        const flight = this.flights.get(message.id)
        if (flight?.type !== 'load') return
        this.answered(message.id)
        flight.resolve(message.outcome)
        this.owner.changed()
        return
      }
    }
  }

  private answered(id: number): void {
    this.flights.delete(id)
    this.owner.answered()
  }

  private onCapability(message: Extract<FromWorker, { $: 'capability' }>): void {
    const flight = this.flights.get(message.id)
    const host = flight && hostOf(flight, message.step)
    if (!flight || !host || flight.type === 'load') return
    flight.called.add(message.step ?? 0)
    // An invocation waiting on its host keeps its isolate (and the memory it filled) alive in this
    // worker for as long as the host takes: how much may wait at once is capped, per worker.
    if (flight.outstanding === 0) {
      const admitted = admitWait(this.parkedMb, flight.memoryMb, message.heldMb, this.settings.maxParkedMb)
      if (!admitted.ok) {
        const { parkedMb, holdsMb } = admitted.refused
        const reply = { ok: false, code: 'limit', message: FAILURE_TEXT.parked(message.capability, this.settings.maxParkedMb, parkedMb, holdsMb) } as const
        this.post({ $: 'capabilityResult', id: message.id, callId: message.callId, reply })
        return
      }
      flight.parkedMb = admitted.parkedMb
    }
    pause(flight)
    // It no longer runs: its room in the worker's running memory goes to the work waiting for it.
    if (flight.outstanding === 1) this.owner.changed()
    const answer = (reply: CapabilityResult['reply']): void => {
      resume(flight)
      this.post({ $: 'capabilityResult', id: message.id, callId: message.callId, reply })
    }
    void host.onCapability(message.capability, message.args).then(answer, (err: unknown) =>
      answer({ ok: false, code: 'failed', message: err instanceof Error ? err.message : String(err) }),
    )
  }

  /** The process is gone: every flight ends with a `worker-crash` that says how, then the owner hears. */
  private onExit(code: number | null, signal: NodeJS.Signals | null): void {
    clearTimeout(this.startTimer)
    this.hasExited = true
    const how = signal ? `signal ${signal}` : `exit code ${code}`
    this.endedHow = how
    const fatal = FATAL.test(this.stderr) ? ', V8 reported a fatal error' : ''
    const others = this.flights.size - 1
    const also = others > 0 ? ` (${others} other invocation${others > 1 ? 's' : ''} running on it ended too)` : ''
    const message = this.killReason
      ? `the sandbox worker (pid ${this.pid}) was killed because ${this.killReason}${also}; a new worker replaces it`
      : `the sandbox worker (pid ${this.pid}) died while the hook ran (${how}${fatal})${also}; a new worker replaces it`
    const flights = [...this.flights.values()]
    this.flights.clear()
    for (const flight of flights) crashed(flight, message)
    const reason = this.isRetiring ? 'retired' : this.killReason ? 'killed' : this.sent === 0 ? 'start-failure' : 'crashed'
    this.owner.exited({ pid: this.pid, reason, how: `${how}${fatal}`, message })
  }
}
