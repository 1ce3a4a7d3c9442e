/**
 * How many calls the runs of one AgentRuns (at the front door: one tenant's) make at once: `size` run,
 * up to `queued` more wait their turn in order, each at most `waitMs`; past that a call is refused
 * with a HookdError (resource-exhausted), which an adapter turns into a refusal at a gate and the front
 * door into a 429 elsewhere. A waiting call whose agent went away (its signal aborts) leaves the queue.
 */
import { HookdError } from '../protocol/status.js'

export interface CallSlotsOptions {
  size: number
  queued: number
  waitMs: number
  /** Whose calls these are, in refusals (`tenant 'acme'`, `this sidecar's agents`). */
  who: string
}

interface Waiter {
  resolve(): void
  reject(err: HookdError): void
  timer: NodeJS.Timeout
  leave(): void
}

export class CallSlots {
  private running = 0
  private readonly waiting: Waiter[] = []

  constructor(private readonly options: CallSlotsOptions) {
    for (const name of ['size', 'queued', 'waitMs'] as const) {
      const value = options[name]
      if (!Number.isSafeInteger(value) || value < (name === 'queued' ? 0 : 1)) throw new RangeError(`the calls at once: ${name} must be a ${name === 'queued' ? 'non-negative' : 'positive'} integer; got ${value}`)
    }
  }

  /** Calls running now, and calls waiting. */
  get counts(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length }
  }

  /** Resolves once the call may run; `give` must follow. Rejects when it may not. */
  take(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(gone())
    if (this.running < this.options.size) {
      this.running += 1
      return Promise.resolve()
    }
    const { size, queued, waitMs, who } = this.options
    if (this.waiting.length >= queued) {
      return Promise.reject(
        new HookdError('resource-exhausted', `too many calls at once for ${who}: ${size} running and ${queued} waiting for one of them to finish (the front door's concurrency quota); retry when calls have finished`),
      )
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        resolve: () => {
          waiter.leave()
          resolve()
        },
        reject: (err) => {
          waiter.leave()
          reject(err)
        },
        timer: setTimeout(
          () =>
            waiter.reject(
              new HookdError('resource-exhausted', `too many calls at once for ${who}: this one waited ${waitMs} ms for one of the ${size} running to finish (the front door's concurrency quota); retry when calls have finished`),
            ),
          waitMs,
        ),
        leave: () => {
          clearTimeout(waiter.timer)
          signal?.removeEventListener('abort', onAbort)
          const at = this.waiting.indexOf(waiter)
          if (at >= 0) this.waiting.splice(at, 1)
        },
      }
      const onAbort = (): void => waiter.reject(gone())
      signal?.addEventListener('abort', onAbort, { once: true })
      this.waiting.push(waiter)
    })
  }

  /** Ends a call that `take` let run: its slot goes to the first call waiting. */
  give(): void {
    const next = this.waiting[0]
    if (next) next.resolve()
    else this.running -= 1
  }

  /** Refuses every call still waiting. */
  close(err: HookdError): void {
    for (const waiter of [...this.waiting]) waiter.reject(err)
  }
}

function gone(): HookdError {
  return new HookdError('cancelled', 'the agent went away before its call could run')
}
