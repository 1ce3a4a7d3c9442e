/**
 * The one interface through which the sidecar reports what it does, for metrics, traces and logs
 * (observability.ts composes them). Sessions, the pool and the registry know only this file; the
 * default, `NO_OBSERVER`, does nothing, so a sidecar embedded without observability (hookd test, hookd
 * invoke, the test suite) pays one empty call per point call and nothing else.
 *
 * Reports are made after the fact (a point call's result, with its trace of hooks and their timings),
 * never around the work: no span, timer or label is started on the hot path, and nothing here can
 * make a point call fail or wait.
 */
import type { AskOutcome, OutcomeBy } from '../../protocol/ask-outcomes.js'
import type { Registry } from '../hooks/registry.js'
import type { PointResultData } from '../../protocol/wire.js'
import type { ChainTrace, DecidedBy } from '../chain/chain.js'
import type { WorkerPool } from '../worker/pool/worker-pool.js'

/** How a session reached the sidecar. */
export type Transport = 'grpc-session' | 'grpc-invoke' | 'http'

/** Trace context the caller sent (W3C `traceparent`/`tracestate`), read lazily: only tracing asks. */
export interface TraceCarrier {
  get(key: string): string | undefined
}

/** What the edge that opens a session knows about it. */
export interface SessionContext {
  /** The tenant's id; undefined on a sidecar without tenants. */
  tenant: string | undefined
  transport: Transport
  /** gRPC metadata or HTTP headers, for the caller's trace context. Absent: none was sent. */
  carrier?: TraceCarrier
}

/**
 * A ctx.confirm at a gate that the session's link deferred to the agent's own prompt (the front door's
 * `ask`): the hook got yes for the chain's sake, and the agent's person decides. Hook text, clipped.
 */
export interface AskedQuestion {
  hook: string
  title: string
  /** Empty when the hook gave none. */
  body: string
}

/**
 * A point result as the session sends it: with its decision id, and the questions deferred to the
 * agent's prompt during it. A gate that let the call through with questions deferred was asked, not
 * allowed: the agent's person decides (decision.ts).
 */
export type DecidedResult = Omit<PointResultData, 'trace'> & {
  /** Each hook consulted, with its layer and, for a shadow hook, what it would have decided. */
  trace: ChainTrace[]
  decisionId: string
  asked?: readonly AskedQuestion[]
  decidedBy?: DecidedBy | undefined
}

/**
 * What became of an asked decision, as the agent reported it (or a gRPC host, or hookd concluded): the
 * audit log's second line for that decision id. `via` names what told: at the front door one of a
 * closed set (agents/agent-run.ts OutcomeVia); from a host, its own words, checked (ask-outcomes.ts viaProblem).
 */
export interface OutcomeReport {
  decisionId: string
  outcome: AskOutcome
  by: OutcomeBy
  via: string
}

/** Whether the session's policy (and its tenant's) let a capability call through. */
export type CapabilityDecision = 'allowed' | 'denied' | 'invalid'

/** What one session reports. Each method returns at once and never throws. */
export interface SessionObserver {
  /** The session opened (its id, as the host chose it). */
  opened(sessionId: string): void
  /** A point call was answered (also one answered without hooks because of a quota). */
  decided(result: DecidedResult): void
  /** What became of an asked decision (the agent's report, or hookd's account of it). */
  outcome(report: OutcomeReport): void
  /** A hook's capability call was judged by the policy. */
  capability(capability: string, decision: CapabilityDecision): void
  /** A point call was refused by the tenant's quotas (before any hook ran). */
  quotaRefused(point: string): void
  /** The session closed or was aborted (idempotent). */
  ended(): void
}

/** What a tenant's hooks run on: reported once its first load finished, and again when replaced. */
export interface Served {
  /** undefined on a sidecar without tenants. */
  tenant: string | undefined
  registry: Registry
  pool: WorkerPool
}

/** The sidecar's drain (SIGINT/SIGTERM), as Sidecar.stop runs it. */
export interface DrainReport {
  /** Session streams open when it began. */
  sessions: number
  graceMs: number
  /** What started it, when known (`SIGTERM`). */
  cause?: string
}

export interface Observer {
  /** An observer for one session, made by the edge that opens it. */
  session(context: SessionContext): SessionObserver
  /**
   * Runs `fn` (an HTTP request's handling) with the trace context its headers carry, so that the point
   * calls it makes join the caller's trace. Calls `fn` straight away when tracing is off.
   */
  withRequest<T>(carrier: TraceCarrier, fn: () => T): T
  /** A tenant's registry and workers, after their first load: reloads and worker exits are followed. */
  served(served: Served): void
  /** What the sidecar serves now, read at each metrics scrape (workers by state, hooks by status). */
  attach(current: () => readonly Served[]): void
  /** The audit log's count of decisions it could not write (a full disk), read at each metrics scrape. */
  auditLog(unwritten: () => number): void
  draining(report: DrainReport): void
  drained(report: { ms: number; cut: number }): void
}

export const NO_SESSION_OBSERVER: SessionObserver = Object.freeze({
  opened() {},
  decided() {},
  outcome() {},
  capability() {},
  quotaRefused() {},
  ended() {},
})

export const NO_OBSERVER: Observer = Object.freeze({
  session: () => NO_SESSION_OBSERVER,
  withRequest: <T>(_carrier: TraceCarrier, fn: () => T): T => fn(),
  served() {},
  attach() {},
  auditLog() {},
  draining() {},
  drained() {},
})
