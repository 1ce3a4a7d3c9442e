/**
 * The fair queue in front of the worker pool, for multi-tenant sidecars. About `slots` hook
 * invocations run at once across all tenants; past that, each tenant's invocations wait in the tenant's
 * own lane, and a freed slot goes to the lane served longest ago (round-robin), not to whoever queued
 * first. Two rules keep a flood from one tenant off the others' latency:
 *
 * - a lane with nothing running starts its invocation at once, even when every slot is taken (so the
 *   running count may exceed `slots` by at most one per tenant): a tenant making ordinary sequential
 *   calls never queues behind another tenant's flood, and only shares the CPU with `slots` of it;
 * - a hook waiting on its host (a capability call: a human answering ctx.confirm, a file read) does not
 *   hold a slot; when the answer comes it goes on at once rather than queue again behind later work.
 *
 * Measured in bench/tenants.ts.
 */

export interface Slot {
  /** The hook waits on its host: its slot is free meanwhile. Calls nest. */
  pause(): void
  resume(): void
}

interface Waiter {
  start(): void
}

export class FairQueue {
  private running = 0
  /** Invocations holding a slot, per lane. */
  private readonly active = new Map<string, number>()
  /** Lanes with waiting work. */
  private readonly lanes = new Map<string, Waiter[]>()
  /** When each lane last got a slot (a counter): the lane served longest ago goes next. */
  private readonly served = new Map<string, number>()
  private turn = 0

  constructor(readonly slots: number) {
    if (!(slots >= 1)) throw new RangeError(`slots must be at least 1; got ${slots}`)
  }

  /** Forgets a lane that will not be used again (a removed tenant). */
  forget(lane: string): void {
    if (!this.lanes.has(lane) && !this.active.has(lane)) this.served.delete(lane)
  }

  /** Invocations waiting in a lane (all lanes when none is named). */
  waiting(lane?: string): number {
    if (lane !== undefined) return this.lanes.get(lane)?.length ?? 0
    let n = 0
    for (const l of this.lanes.values()) n += l.length
    return n
  }

  /**
   * Runs `task` in `lane` once a slot is free. When `signal` aborts while it waits, it leaves the queue
   * and `onAbort` answers instead.
   */
  run<T>(lane: string, task: (slot: Slot) => Promise<T>, signal: AbortSignal | undefined, onAbort: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const start = (): void => {
        signal?.removeEventListener('abort', leave)
        let paused = 0
        let done = false
        const slot: Slot = {
          pause: () => {
            if (done || paused++ > 0) return
            this.release(lane)
          },
          resume: () => {
            if (done || paused === 0 || --paused > 0) return
            this.take(lane)
          },
        }
        task(slot)
          .then(resolve, reject)
          .finally(() => {
            done = true
            if (paused === 0) this.release(lane)
          })
      }
      const waiter: Waiter = { start }
      const leave = (): void => {
        const queue = this.lanes.get(lane)
        const at = queue?.indexOf(waiter) ?? -1
        if (!queue || at < 0) return
        queue.splice(at, 1)
        if (queue.length === 0) this.lanes.delete(lane)
        resolve(onAbort())
      }
      if (signal?.aborted) {
        resolve(onAbort())
        return
      }
      const idle = !this.active.has(lane) && !this.lanes.has(lane)
      if (idle || (this.running < this.slots && this.lanes.size === 0)) {
        this.take(lane)
        this.served.set(lane, ++this.turn)
        start()
        return
      }
      signal?.addEventListener('abort', leave, { once: true })
      const queue = this.lanes.get(lane)
      if (queue) queue.push(waiter)
      else this.lanes.set(lane, [waiter])
      this.pump()
    })
  }

  private take(lane: string): void {
    this.running += 1
    this.active.set(lane, (this.active.get(lane) ?? 0) + 1)
  }

  private release(lane: string): void {
    this.running -= 1
    const left = (this.active.get(lane) ?? 1) - 1
    if (left > 0) this.active.set(lane, left)
    else this.active.delete(lane)
    this.pump()
  }

  private pump(): void {
    while (this.running < this.slots && this.lanes.size > 0) {
      let lane = ''
      let oldest = Infinity
      for (const name of this.lanes.keys()) {
        const at = this.served.get(name) ?? 0
        if (at < oldest) {
          oldest = at
          lane = name
        }
      }
      const queue = this.lanes.get(lane) as Waiter[]
      const waiter = queue.shift() as Waiter
      if (queue.length === 0) this.lanes.delete(lane)
      this.served.set(lane, ++this.turn)
      this.take(lane)
      waiter.start()
    }
  }
}
