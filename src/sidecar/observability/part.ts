/**
 * One kind of observation (metrics, traces, logs) as observability.ts composes it. A part implements only
 * what it needs; a part that has nothing to do for a session returns no session part, so a session pays
 * only for the parts that watch it. Internal to observability/.
 */
import type { DecisionFacts } from './decision.js'
import type { CapabilityDecision, DecidedResult, DrainReport, OutcomeReport, Served, SessionContext, TraceCarrier } from './observer.js'

/** A point call's answer, with what every part needs worked out once. */
export interface Decision {
  result: DecidedResult
  facts: DecisionFacts
  context: SessionContext
  sessionId: string
  /** Set by the tracing part (which runs before the log part) when the call was traced. */
  traceId?: string
  spanId?: string
}

/** What became of an asked decision, with the session it belongs to. */
export interface Outcome {
  report: OutcomeReport
  context: SessionContext
  sessionId: string
}

export interface PartSession {
  opened?(sessionId: string): void
  decided?(decision: Decision): void
  outcome?(outcome: Outcome): void
  capability?(capability: string, decision: CapabilityDecision): void
  quotaRefused?(point: string): void
  ended?(): void
}

export interface Part {
  session?(context: SessionContext): PartSession | undefined
  withRequest?<T>(carrier: TraceCarrier, fn: () => T): T
  served?(served: Served): void
  attach?(current: () => readonly Served[]): void
  auditLog?(unwritten: () => number): void
  draining?(report: DrainReport): void
  drained?(report: { ms: number; cut: number }): void
  /** Flushes and stops (traces still queued are exported). */
  close?(): Promise<void>
}
