/**
 * Whether the sidecar is live and whether it is ready, in one place, for the gRPC health service and the
 * metrics listener's /healthz and /readyz.
 *
 * - Live: the process can do its job. Not live once a worker pool without tenants gave up restarting
 *   workers (every hook would fail with worker-crash): a restart is what helps.
 * - Ready: live, every hook folder's first load has finished (with tenants: every tenant's), and not
 *   draining. A hook that failed to load has finished loading: it is reported and skipped, as it always
 *   was; readiness waits for the loads, not for them to succeed.
 *
 * Later loads (hot reload, a tenant added by a tenants-file edit) never make the sidecar unready: the
 * registry serves the last good version while a new one loads, and a new tenant is not served before
 * its hooks have loaded.
 */

export type ReadinessListener = () => void

export class Readiness {
  /** What is still loading, by ticket. */
  private readonly pending = new Map<number, string>()
  private nextTicket = 1
  private brokenReason: string | undefined
  private drainingSince: number | undefined
  private readonly listeners = new Set<ReadinessListener>()
  /** The bundle revision served (hookd serve --hooks-from), for /readyz. */
  private servedRevision: string | undefined

  /** Marks `what` (e.g. "hooks") as loading; returns the function that marks it done (idempotent). */
  loading(what: string): () => void {
    const ticket = this.nextTicket++
    this.pending.set(ticket, what)
    this.changed()
    return () => {
      if (this.pending.delete(ticket)) this.changed()
    }
  }

  /** The bundle revision now served (hookd serve --hooks-from). */
  serving(revision: string): void {
    this.servedRevision = revision
    this.changed()
  }

  get revision(): string | undefined {
    return this.servedRevision
  }

  broken(reason: string): void {
    if (this.brokenReason !== undefined) return
    this.brokenReason = reason
    this.changed()
  }

  drain(): void {
    if (this.drainingSince !== undefined) return
    this.drainingSince = Date.now()
    this.changed()
  }

  /** True once the sidecar began to drain (SIGINT/SIGTERM). */
  get stopping(): boolean {
    return this.drainingSince !== undefined
  }

  get live(): boolean {
    return this.brokenReason === undefined
  }

  get ready(): boolean {
    return this.live && this.drainingSince === undefined && this.pending.size === 0
  }

  /** Why the sidecar is not ready (or not live); undefined when it is ready. */
  reason(): string | undefined {
    if (this.brokenReason !== undefined) return this.brokenReason
    if (this.drainingSince !== undefined) return 'draining: it is shutting down'
    if (this.pending.size > 0) return `loading ${[...new Set(this.pending.values())].join(', ')}`
    return undefined
  }

  /** Calls `listener` on every change. Returns the function that unregisters it. */
  onChange(listener: ReadinessListener): () => void {
    this.listeners.add(listener)
    return () => {
      this.listeners.delete(listener)
    }
  }

  private changed(): void {
    for (const listener of [...this.listeners]) listener()
  }
}
