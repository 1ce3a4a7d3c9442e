/**
 * Per-tenant quotas: point calls running at once, and point calls started per second. An "invocation"
 * here is one point call (one Invoke, or one PointCall on a Session stream), whatever the number of
 * hooks in its chain: a call is admitted or refused whole, never half-way through its chain.
 *
 * Over a quota, a unary Invoke fails with RESOURCE_EXHAUSTED. A Session stream is not ended (that would
 * cost the whole agent run for one busy moment): the call is answered at once, no hook runs, and the
 * result carries a `quota` diagnostic naming the quota. Gates fail closed (the call is refused, with the
 * quota as the reason), so that being over quota never lets a tool call past its guards; every other
 * point is returned unchanged, as when a host's failure policy answers for an absent sidecar.
 */
import type { Admission } from '../tenant.js'
import type { TenantLimits } from './tenants-file.js'

/** One tenant's counters. Kept across tenants-file reloads; `configure` changes the limits in place. */
export class Quota {
  private running = 0
  private tokens: number
  private refilledAt = performance.now()
  private limits: TenantLimits

  constructor(
    private readonly tenant: string,
    limits: TenantLimits,
  ) {
    this.limits = limits
    this.tokens = limits.invocationsPerSecond ?? 0
  }

  configure(limits: TenantLimits): void {
    this.refill()
    this.limits = limits
    if (limits.invocationsPerSecond !== undefined) this.tokens = Math.min(this.tokens, limits.invocationsPerSecond)
  }

  /** Counts one point call, or says which quota it is over. `release` (idempotent) ends the call. */
  admit(): Admission {
    const { concurrentInvocations: concurrent, invocationsPerSecond: rate } = this.limits
    if (concurrent !== undefined && this.running >= concurrent) {
      return {
        ok: false,
        message: `tenant '${this.tenant}' is over its limit of ${concurrent} concurrent invocation${concurrent > 1 ? 's' : ''}; retry when one of its calls has finished`,
      }
    }
    if (rate !== undefined) {
      this.refill()
      if (this.tokens < 1) {
        return { ok: false, message: `tenant '${this.tenant}' is over its limit of ${rate} invocation${rate > 1 ? 's' : ''} per second; retry in a moment` }
      }
      this.tokens -= 1
    }
    this.running += 1
    let released = false
    return {
      ok: true,
      release: () => {
        if (released) return
        released = true
        this.running -= 1
      },
    }
  }

  private refill(): void {
    const now = performance.now()
    const rate = this.limits.invocationsPerSecond
    if (rate !== undefined) this.tokens = Math.min(rate, this.tokens + ((now - this.refilledAt) / 1000) * rate)
    this.refilledAt = now
  }
}
