/**
 * Supervision of a pool's workers: starts `size` of them behind the walls, replaces each that exits
 * (at once when a hook killed it, after a back-off when it died before any work), kills one that stops
 * answering, and gives up after `maxStartFailures` start failures in a row instead of looping (the pool
 * is then broken: invocations fail fast with a `worker-crash` that says why, and listeners hear it once).
 * What a worker was running is settled by the worker itself (worker-process.ts); the pool (worker-pool.ts)
 * hears of every change that may give waiting work room.
 */
import { backoffDelay } from '../../../protocol/backoff.js'
import { now } from './flights.js'
import { type WallOptions, type Walls, walls } from './walls.js'
import { type WorkerExit, WorkerProcess } from './worker-process.js'
import { fromSource, spawnWorker } from './worker-spawn.js'

export interface SupervisorOptions {
  size: number
  maxStartFailures: number
  startTimeoutMs: number
  hangGraceMs: number
  keepVersions: number
  execArgv: readonly string[]
  maxParkedMb: number
  walls: WallOptions
}

const CHECK_MS = 250
/** Restarts after start failures wait 50 ms, doubling, up to 2 s; a worker a hook killed is replaced at once. */
const RESTART_BACKOFF = { firstMs: 50, maxMs: 2000 }

export class Supervisor {
  private readonly live: WorkerProcess[] = []
  private walls: Walls | undefined
  private readonly brokenListeners = new Set<(reason: string) => void>()
  private readonly exitListeners = new Set<(exit: WorkerExit) => void>()
  /** Replacements waiting for their back-off; close() clears them. */
  private readonly respawns = new Set<NodeJS.Timeout>()
  private checker: NodeJS.Timeout | undefined
  private spawnedCount = 0
  private failures = 0
  private brokenReason: string | undefined
  private isClosed = false

  /** `changed`: a worker became ready, or room may have freed in one (the pool's wake loop). */
  constructor(
    private readonly options: SupervisorOptions,
    private readonly changed: () => void,
  ) {}

  /** The live workers, in the order they started. */
  get workers(): readonly WorkerProcess[] {
    return this.live
  }

  /** Workers started so far, replacements included. */
  get spawned(): number {
    return this.spawnedCount
  }

  /** Workers in a row that died before they were given any work. */
  get startFailures(): number {
    return this.failures
  }

  /** Why it gave up restarting workers, once it has. */
  get broken(): string | undefined {
    return this.brokenReason
  }

  get closed(): boolean {
    return this.isClosed
  }

  /** What stands around the workers: one line per wall (after start). */
  wallLines(): string[] {
    return this.walls?.describe() ?? []
  }

  /** Calls `listener` once if it gives up restarting workers (at once if it already has). Returns the function that unregisters it. */
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

  /** Calls `listener` for every worker that exits while it is open. Returns the function that unregisters it. */
  onWorkerExit(listener: (exit: WorkerExit) => void): () => void {
    this.exitListeners.add(listener)
    return () => {
      this.exitListeners.delete(listener)
    }
  }

  /** Starts the workers (not waiting for them) and the check for hung ones. */
  start(): void {
    this.walls ??= walls({ fromSource, ...this.options.walls })
    this.checker ??= setInterval(() => this.checkDeadlines(), CHECK_MS)
    this.checker.unref()
    for (let i = 0; i < this.options.size; i++) this.spawn()
  }

  /** Stops every worker and waits for them to exit; what they ran ends as `worker-crash`. */
  async close(): Promise<void> {
    this.isClosed = true
    if (this.checker) clearInterval(this.checker)
    for (const timer of this.respawns) clearTimeout(timer)
    this.respawns.clear()
    await Promise.all(this.live.map((w) => w.stop()))
    this.live.length = 0
  }

  private spawn(): void {
    if (this.isClosed || this.brokenReason || !this.walls) return
    const child = spawnWorker({ execArgv: this.options.execArgv, walls: this.walls })
    const { keepVersions, maxParkedMb, startTimeoutMs } = this.options
    const worker: WorkerProcess = new WorkerProcess(
      child,
      { keepVersions, maxParkedMb, startTimeoutMs },
      {
        changed: this.changed,
        answered: () => {
          this.failures = 0
        },
        retiring: () => this.spawn(),
        exited: (exit) => this.exited(worker, exit),
      },
    )
    this.spawnedCount += 1
    this.live.push(worker)
  }

  /** Kills workers that hold an invocation past its deadline with no capability call outstanding. */
  private checkDeadlines(): void {
    const t = now()
    for (const worker of this.live) worker.killIfHung(t, this.options.hangGraceMs)
  }

  private exited(worker: WorkerProcess, exit: WorkerExit): void {
    const index = this.live.indexOf(worker)
    if (index >= 0) this.live.splice(index, 1)
    if (this.isClosed) return
    for (const listener of this.exitListeners) listener(exit)
    if (exit.reason === 'retired') return
    // Dying before it was given any work, ready or not, is a start failure: that is what could loop.
    // A worker that dies running a hook is the hook's doing (the pool replaces it at once, as often
    // as hooks crash workers), and must not count towards giving up on workers altogether.
    const startFailure = worker.dispatched === 0
    if (startFailure) {
      this.failures += 1
      if (this.failures >= this.options.maxStartFailures) {
        this.brokenReason = `workers failed to start ${this.failures} times in a row (last: ${worker.lastWords()})`
        this.changed()
        const listeners = [...this.brokenListeners]
        this.brokenListeners.clear()
        for (const listener of listeners) listener(this.brokenReason)
        return
      }
    }
    const delay = startFailure ? backoffDelay(RESTART_BACKOFF, this.failures) : 0
    const timer = setTimeout(() => {
      this.respawns.delete(timer)
      this.spawn()
    }, delay)
    this.respawns.add(timer)
  }
}
