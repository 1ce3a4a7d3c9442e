/**
 * How many bytes of event bodies the front door holds at once, per tenant and in all. A request's
 * body counts from its first byte read (its declared Content-Length, before anything is read) until
 * its answer is sent or its client goes away; a request whose body would pass either budget is
 * refused before the rest of it is read: 429 for its tenant's budget (that tenant's own requests are
 * what fill it), 503 for the sidecar's (everyone's are).
 *
 * Bytes of body are what a request can be made to hold, so they are what is counted: while its call
 * waits on the hooks, each byte of an event costs the sidecar's main process a few more (the parsed
 * event, the point's payload and its parsed copy in the session: docs/containment.md).
 */
import { HookdError } from '../../protocol/status.js'
import type { BodyCounter } from './http-exchange.js'

export interface ByteBudgetOptions {
  /** Bytes one tenant's requests may hold together. */
  tenantBytes: number
  /** Bytes all requests may hold together. */
  totalBytes: number
}

/** 64 MiB per tenant, 256 MiB in all (docs/agents.md#endpoints says why). */
export const DEFAULT_BYTE_BUDGET: ByteBudgetOptions = { tenantBytes: 64 * 1024 * 1024, totalBytes: 256 * 1024 * 1024 }

/** One request's bytes: counted by `add`, all given back by `release` (idempotent). */
export interface BodyHold extends BodyCounter {
  release(): void
}

export class ByteBudget {
  private held = 0
  private readonly tenants = new Map<string, number>()

  constructor(readonly options: ByteBudgetOptions = DEFAULT_BYTE_BUDGET) {
    for (const [name, value] of Object.entries(options)) {
      if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`the front door's ${name} must be a positive integer; got ${value}`)
    }
  }

  /** Bytes held now, in all and by tenant (`''` without tenants). */
  get bytes(): { total: number; tenants: ReadonlyMap<string, number> } {
    return { total: this.held, tenants: this.tenants }
  }

  /** A hold for one request of `tenant` (undefined: the sidecar without tenants). */
  hold(tenant: string | undefined): BodyHold {
    const key = tenant ?? ''
    let mine = 0
    let released = false
    return {
      add: (bytes) => {
        if (released) return undefined
        const theirs = this.tenants.get(key) ?? 0
        const { tenantBytes, totalBytes } = this.options
        if (theirs + bytes > tenantBytes) return overTenant(tenant === undefined ? "this sidecar's agents" : `tenant '${tenant}'`, theirs, bytes, tenantBytes)
        if (this.held + bytes > totalBytes) return overTotal(this.held, bytes, totalBytes)
        mine += bytes
        this.held += bytes
        this.tenants.set(key, theirs + bytes)
        return undefined
      },
      release: () => {
        if (released) return
        released = true
        this.held -= mine
        const left = (this.tenants.get(key) ?? 0) - mine
        if (left > 0) this.tenants.set(key, left)
        else this.tenants.delete(key)
      },
    }
  }
}

function size(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MiB` : bytes >= 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${bytes} bytes`
}

function overTenant(whose: string, held: number, more: number, limit: number): HookdError {
  return new HookdError(
    'resource-exhausted',
    `over the byte budget per tenant: the events of ${whose} waiting on their hooks hold ${size(held)}, and this one's ${size(more)} would pass the budget of ${size(limit)}; retry when calls have finished (slow hooks hold their events), or raise it (hookd serve --http-tenant-mb)`,
  )
}

function overTotal(held: number, more: number, limit: number): HookdError {
  return new HookdError(
    'unavailable',
    `over the sidecar's byte budget: the events of all tenants waiting on their hooks hold ${size(held)}, and this one's ${size(more)} would pass the budget of ${size(limit)} for all requests; retry shortly, or raise it (hookd serve --http-total-mb)`,
  )
}
