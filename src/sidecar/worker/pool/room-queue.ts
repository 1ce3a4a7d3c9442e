/**
 * Work waiting in the pool for a worker with room for it: one queue, oldest first, and the one wake
 * loop (`changed`) that gives each waiting piece of work the worker the balancer places it on
 * (balancer.ts) whenever something changes that may let it start: a worker became ready or was
 * released, work ended or started to wait on its host, a retry ended; or that stops it: the pool closed
 * or gave up. The worker given has the room reserved (WorkerProcess.reserve) until the work is sent or
 * the room given back.
 */
import { type Turn, type Want, assign, choose } from './balancer.js'
import type { WorkerProcess } from './worker-process.js'

interface Waiter extends Want {
  give(worker: WorkerProcess | undefined): void
}

export interface RoomQueueOptions {
  /** The live workers, in a stable order (the balancer's turn indexes them). */
  workers(): readonly WorkerProcess[]
  /** True once the pool serves no more work (closed, or broken): waiting work is given undefined. */
  stopped(): boolean
  /** PoolOptions.maxRunningMb. */
  maxRunningMb: number
}

export class RoomQueue {
  private readonly queue: Waiter[] = []
  /** Waiting for a first ready worker (WorkerPool.start). */
  private readonly starting: Array<() => void> = []
  /** Where the balancer's search among equals starts. */
  private turn = 0
  /** Retries waiting to run alone, or running: other work waits behind them. */
  private retrying = 0

  constructor(private readonly options: RoomQueueOptions) {}

  /** Work waiting now. */
  get waiting(): number {
    return this.queue.length
  }

  /**
   * A worker for work that asks for `want`, its room reserved (and, for a retry, the worker held until
   * WorkerProcess.release). Waits until the balancer places it; undefined when the pool stops, or
   * `signal` aborts.
   */
  pick(want: Want, signal?: AbortSignal): Promise<WorkerProcess | undefined> {
    if (this.options.stopped() || signal?.aborted) return Promise.resolve(undefined)
    // Nothing that waits could take a worker now (the last change placed what it could), so new work
    // only asks whether it can.
    const workers = this.options.workers()
    const at = choose(workers, want, this.turnNow())
    if (at !== undefined) {
      const worker = workers[at] as WorkerProcess
      this.turn = (at + 1) % workers.length
      worker.reserve(want.memoryMb, want.alone)
      return Promise.resolve(worker)
    }
    return new Promise((resolve) => {
      const waiter: Waiter = { ...want, give: resolve }
      if (signal) {
        const onAbort = (): void => {
          const at = this.queue.indexOf(waiter)
          if (at >= 0) this.queue.splice(at, 1)
          resolve(undefined)
        }
        signal.addEventListener('abort', onAbort, { once: true })
        waiter.give = (w) => {
          signal.removeEventListener('abort', onAbort)
          resolve(w)
        }
      }
      this.queue.push(waiter)
    })
  }

  /** Runs a retry (it picks with `alone`): while it waits or runs, other work waits behind it. */
  async alone<T>(run: () => Promise<T>): Promise<T> {
    this.retrying += 1
    try {
      return await run()
    } finally {
      this.retrying -= 1
      this.changed()
    }
  }

  /** Resolves once a worker is ready, or the pool stopped. */
  whenReady(): Promise<void> {
    if (this.anyReady()) return Promise.resolve()
    return new Promise((resolve) => this.starting.push(resolve))
  }

  /** The one wake loop (see above). */
  changed(): void {
    if (this.options.stopped()) {
      for (const waiter of this.queue.splice(0)) waiter.give(undefined)
    } else if (this.queue.length > 0) {
      const workers = this.options.workers()
      const { placed, turn } = assign(this.queue, workers, this.turnNow())
      this.turn = turn
      const given = placed.map(({ waiter, worker }) => {
        const w = workers[worker] as WorkerProcess
        const want = this.queue[waiter] as Waiter
        w.reserve(want.memoryMb, want.alone)
        return { want, w }
      })
      // Out of the queue from the back, so that the indexes still hold; the rest keep their order.
      for (let i = placed.length - 1; i >= 0; i--) this.queue.splice((placed[i] as (typeof placed)[number]).waiter, 1)
      for (const { want, w } of given) want.give(w)
    }
    if (this.starting.length > 0 && this.anyReady()) for (const ready of this.starting.splice(0)) ready()
  }

  private anyReady(): boolean {
    return this.options.stopped() || this.options.workers().some((w) => w.state === 'ready')
  }

  private turnNow(): Turn {
    return { turn: this.turn, retrying: this.retrying, maxRunningMb: this.options.maxRunningMb }
  }
}
