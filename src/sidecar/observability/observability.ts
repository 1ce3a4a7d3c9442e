/**
 * The sidecar's Observer: metrics, traces and the operator log, each optional, composed behind the one
 * interface of observer.ts. What is off costs nothing: prom-client and OpenTelemetry are imported only
 * when asked for, and a session that no part watches gets the shared no-op session observer.
 *
 * A part that throws must not cost a point call: every report is guarded, and the first failure of each
 * kind is logged (as an internal error) instead.
 */
import { decisionFacts } from './decision.js'
import type { Logger } from './logger.js'
import type { Metrics, MetricsOptions } from './metrics.js'
import {
  type CapabilityDecision,
  type DecidedResult,
  type DrainReport,
  NO_SESSION_OBSERVER,
  type OutcomeReport,
  type Observer,
  type Served,
  type SessionContext,
  type SessionObserver,
  type TraceCarrier,
} from './observer.js'
import { OperatorLog } from './operator-log.js'
import type { Part, PartSession } from './part.js'
import type { TracingConfig } from './tracing-config.js'

export interface ObservabilityOptions {
  version: string
  /** The operator log: decisions, reloads, worker exits, drain. Absent: none of them is logged. */
  logger?: Logger
  /** Prometheus metrics (the registry is `observability.metrics`). */
  metrics?: Omit<MetricsOptions, 'version'>
  /** OpenTelemetry traces (tracing-config.ts says whether the environment asks for them). */
  tracing?: TracingConfig
}

export class Observability implements Observer {
  private readonly failed = new Set<string>()

  private constructor(
    private readonly parts: readonly Part[],
    /** Present when metrics were asked for. */
    readonly metrics: Metrics | undefined,
    private readonly logger: Logger | undefined,
  ) {}

  static async start(options: ObservabilityOptions): Promise<Observability> {
    const parts: Part[] = []
    let metrics: Metrics | undefined
    if (options.metrics) {
      const { Metrics } = await import('./metrics.js')
      metrics = new Metrics({ ...options.metrics, version: options.version })
      parts.push(metrics)
    }
    // Before the log part: it writes the trace id the tracing part sets on each decision.
    if (options.tracing) {
      const { Tracing } = await import('./tracing.js')
      const logger = options.logger
      parts.push(await Tracing.start(options.tracing, { version: options.version, report: (message) => logger?.log('warn', 'otel', `tracing: ${message}`) }))
    }
    if (options.logger) parts.push(new OperatorLog(options.logger))
    return new Observability(parts, metrics, options.logger)
  }

  session(context: SessionContext): SessionObserver {
    const parts: PartSession[] = []
    for (const part of this.parts) {
      const session = this.guard('session', () => part.session?.(context))
      if (session) parts.push(session)
    }
    if (parts.length === 0) return NO_SESSION_OBSERVER
    let sessionId = ''
    const each = (what: string, call: (p: PartSession) => void): void => {
      for (const p of parts) this.guard(what, () => call(p))
    }
    return {
      opened: (id: string) => {
        sessionId = id
        each('opened', (p) => p.opened?.(id))
      },
      decided: (result: DecidedResult) => {
        const facts = this.guard('decided', () => decisionFacts(result))
        if (!facts) return
        const decision = { result, facts, context, sessionId }
        each('decided', (p) => p.decided?.(decision))
      },
      outcome: (report: OutcomeReport) => {
        const outcome = { report, context, sessionId }
        each('outcome', (p) => p.outcome?.(outcome))
      },
      capability: (capability: string, decision: CapabilityDecision) => each('capability', (p) => p.capability?.(capability, decision)),
      quotaRefused: (point: string) => each('quotaRefused', (p) => p.quotaRefused?.(point)),
      ended: () => each('ended', (p) => p.ended?.()),
    }
  }

  withRequest<T>(carrier: TraceCarrier, fn: () => T): T {
    // Only tracing wraps requests; at most one part does.
    const part = this.parts.find((p) => p.withRequest)
    return part?.withRequest ? part.withRequest(carrier, fn) : fn()
  }

  served(served: Served): void {
    for (const part of this.parts) this.guard('served', () => part.served?.(served))
  }

  attach(current: () => readonly Served[]): void {
    for (const part of this.parts) this.guard('attach', () => part.attach?.(current))
  }

  auditLog(unwritten: () => number): void {
    for (const part of this.parts) this.guard('auditLog', () => part.auditLog?.(unwritten))
  }

  draining(report: DrainReport): void {
    for (const part of this.parts) this.guard('draining', () => part.draining?.(report))
  }

  drained(report: { ms: number; cut: number }): void {
    for (const part of this.parts) this.guard('drained', () => part.drained?.(report))
  }

  /** Exports the spans still queued (bounded) and stops. */
  async close(): Promise<void> {
    for (const part of this.parts) await part.close?.().catch(() => {})
  }

  private guard<T>(what: string, fn: () => T): T | undefined {
    try {
      return fn()
    } catch (err) {
      if (!this.failed.has(what)) {
        this.failed.add(what)
        this.logger?.log('error', 'message', `internal error in observability (${what}), still serving: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`)
      }
      return undefined
    }
  }
}
