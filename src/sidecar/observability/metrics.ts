/**
 * Prometheus metrics (`hookd serve --metrics HOST:PORT`), through prom-client: every metric hookd keeps,
 * in one registry of its own, with Node's default process metrics. docs/operations.md#metrics lists them
 * with their labels and what to alert on.
 *
 * Durations are in seconds (the Prometheus convention) with buckets from 100 µs to 10 s: a warm hook
 * invocation takes ~0.4 ms, and a hook may run up to its wall-time limit (10 s by default), so the
 * client's default buckets (5 ms up) would put nearly every call in the first one.
 *
 * Labels are bounded: points, outcomes, kinds and capability names are closed sets; hook names and
 * tenant ids are the operator's, and past a ceiling new ones are counted as "other" (bounded-labels.ts).
 * Never a session id, a decision id or anything a hook or a host chose.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import { isCapabilityName } from '../../protocol/capabilities.js'
import type { RegistryEvent } from '../hooks/registry.js'
import { TenantHookLabels } from './bounded-labels.js'
import type { CapabilityDecision, Served, SessionContext } from './observer.js'
import type { Decision, Outcome, Part, PartSession } from './part.js'
import type { Readiness } from './readiness.js'

export const DURATION_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

export interface MetricsOptions {
  version: string
  readiness?: Readiness
  /** Distinct tenant label values before new ones count as "other". Default 100. */
  maxTenants?: number
  /** Distinct hook label values per tenant before new ones count as "other". Default 100. */
  maxHooksPerTenant?: number
  /** Node's default process metrics (process_*, nodejs_*). Default true. */
  processMetrics?: boolean
}

/** Outcomes of hooks that ran, and so took time worth a histogram sample. */
const RAN = new Set(['changed', 'no-opinion', 'refused', 'failed'])

/**
 * What may tell an ask's outcome, as the `via` label: the agents' events and hookd's own accounts
 * (agents/agent-run.ts OutcomeVia). Anything else is counted as "other".
 */
const OUTCOME_VIAS: ReadonlySet<string> = new Set([
  'PostToolUse',
  'PostToolUseFailure',
  'PostToolBatch',
  'PermissionDenied',
  'postToolUse',
  'afterTool',
  'run ended',
  'expired',
  'too many asks',
  'rewrite refused',
  'cannot ask',
  'not followed',
])
const OUTCOMES: ReadonlySet<string> = new Set(['allowed', 'denied', 'unknown'])

export class Metrics implements Part {
  readonly registry = new Registry()
  private readonly labels: TenantHookLabels
  private current: () => readonly Served[] = () => []
  /** The audit log's count of decisions not written; 0 without an audit log. */
  private auditUnwritten: () => number = () => 0

  private readonly pointCalls: Counter<'tenant' | 'point' | 'outcome'>
  private readonly pointDuration: Histogram<'tenant' | 'point'>
  private readonly hookInvocations: Counter<'tenant' | 'point' | 'hook' | 'outcome'>
  private readonly hookDuration: Histogram<'tenant' | 'hook'>
  private readonly diagnostics: Counter<'tenant' | 'kind'>
  private readonly refusals: Counter<'tenant' | 'point' | 'refused_by'>
  private readonly failDecisions: Counter<'tenant' | 'point' | 'mode' | 'kind'>
  private readonly askOutcomes: Counter<'tenant' | 'outcome' | 'by' | 'via'>
  private readonly capabilityCalls: Counter<'tenant' | 'capability' | 'decision'>
  private readonly quotaRefusals: Counter<'tenant' | 'point'>
  private readonly sessions: Gauge<'tenant' | 'transport'>
  private readonly workerRestarts: Counter<'tenant' | 'reason'>
  private readonly hookLoads: Counter<'tenant' | 'hook' | 'result'>
  private readonly lastLoad: Gauge<'tenant' | 'hook'>
  private readonly shadowDecisions: Counter<'tenant' | 'hook' | 'would'>

  constructor(options: MetricsOptions) {
    this.labels = new TenantHookLabels(options.maxTenants ?? 100, options.maxHooksPerTenant ?? 100)
    const registers = [this.registry]
    if (options.processMetrics !== false) collectDefaultMetrics({ register: this.registry })
    new Gauge({ name: 'hookd_info', help: 'Always 1; the hookd release in its label.', labelNames: ['version'], registers }).set({ version: options.version }, 1)
    const readiness = options.readiness
    if (readiness) {
      new Gauge({
        name: 'hookd_ready',
        help: '1 when hookd is ready (every hook folder loaded once, not draining, workers running), else 0.',
        registers,
        collect() {
          this.set(readiness.ready ? 1 : 0)
        },
      })
    }
    const served = (): readonly Served[] => this.current()
    new Gauge({
      name: 'hookd_bundle_revision_info',
      help: 'Always 1: the revision of the hooks bundle served (hookd serve --hooks-from) in its label, per tenant.',
      labelNames: ['tenant', 'revision'],
      registers,
      collect() {
        this.reset()
        for (const s of served()) if (s.registry.revision !== undefined) this.set({ tenant: s.tenant ?? '', revision: s.registry.revision }, 1)
      },
    })
    this.pointCalls = new Counter({
      name: 'hookd_point_calls_total',
      help: "Point calls answered, by outcome: allowed, refused or asked (gates; asked: left to the agent's own prompt), changed or unchanged (other points).",
      labelNames: ['tenant', 'point', 'outcome'],
      registers,
    })
    this.pointDuration = new Histogram({
      name: 'hookd_point_call_duration_seconds',
      help: "Time to run a point call's chain of hooks, in seconds (host waits included).",
      labelNames: ['tenant', 'point'],
      buckets: DURATION_BUCKETS,
      registers,
    })
    this.shadowDecisions = new Counter({
      name: 'hookd_shadow_decisions_total',
      help: 'What shadow hooks (hook.json "mode": "shadow") would have decided, enforcing nothing: refuse, rewrite, replace-result, context, ask, failed, none.',
      labelNames: ['tenant', 'hook', 'would'],
      registers,
    })
    this.hookInvocations = new Counter({
      name: 'hookd_hook_invocations_total',
      help: 'Hooks consulted by point calls, by outcome: changed, no-opinion, refused, failed, not-run, cancelled.',
      labelNames: ['tenant', 'point', 'hook', 'outcome'],
      registers,
    })
    this.hookDuration = new Histogram({
      name: 'hookd_hook_duration_seconds',
      help: 'Wall time of hook invocations that ran, in seconds, as their runner measured it (host waits excluded).',
      labelNames: ['tenant', 'hook'],
      buckets: DURATION_BUCKETS,
      registers,
    })
    this.diagnostics = new Counter({ name: 'hookd_diagnostics_total', help: 'Diagnostics in point results, by kind.', labelNames: ['tenant', 'kind'], registers })
    this.refusals = new Counter({
      name: 'hookd_refusals_total',
      help: "Gate calls refused, by who refused: a hook's name, or hookd (a hook could not decide, a quota, a cancel).",
      labelNames: ['tenant', 'point', 'refused_by'],
      registers,
    })
    this.failDecisions = new Counter({
      name: 'hookd_fail_decisions_total',
      help: "Gate calls at which a hook failed: mode closed (hookd refused the call for it) or open (the call went through without that hook's opinion), by the failure's kind.",
      labelNames: ['tenant', 'point', 'mode', 'kind'],
      registers,
    })
    this.askOutcomes = new Counter({
      name: 'hookd_ask_outcomes_total',
      help: "What became of asked gate calls: outcome allowed (the call ran), denied (it did not) or unknown; by agent, host (a gRPC host's own account) or hookd; via the agent's event that said it, or the account (run ended, expired, too many asks, rewrite refused, not followed); other vias a host reports count as other.",
      labelNames: ['tenant', 'outcome', 'by', 'via'],
      registers,
    })
    this.capabilityCalls = new Counter({
      name: 'hookd_capability_calls_total',
      help: "Hooks' ctx capability calls, by capability and the policy's decision: allowed, denied, invalid.",
      labelNames: ['tenant', 'capability', 'decision'],
      registers,
    })
    this.quotaRefusals = new Counter({ name: 'hookd_quota_refusals_total', help: "Point calls refused by a tenant's quotas.", labelNames: ['tenant', 'point'], registers })
    this.sessions = new Gauge({ name: 'hookd_sessions_active', help: 'Open sessions: Session streams (grpc) and agent runs of the HTTP front door (http).', labelNames: ['tenant', 'transport'], registers })
    const current = (): readonly Served[] => this.current()
    const labels = this.labels
    new Gauge({
      name: 'hookd_workers',
      help: 'Sandbox worker processes by state: starting, idle, busy, retiring.',
      labelNames: ['tenant', 'state'],
      registers,
      collect() {
        this.reset()
        for (const s of current()) for (const [state, n] of Object.entries(s.pool.states())) this.inc({ tenant: labels.tenant(s.tenant), state }, n)
      },
    })
    this.workerRestarts = new Counter({
      name: 'hookd_worker_restarts_total',
      help: 'Sandbox workers that exited and were replaced, by reason: crashed, killed, start-failure, retired.',
      labelNames: ['tenant', 'reason'],
      registers,
    })
    this.hookLoads = new Counter({
      name: 'hookd_hook_loads_total',
      help: 'Hook versions loaded, by result: loaded (first time), reloaded, failed, removed.',
      labelNames: ['tenant', 'hook', 'result'],
      registers,
    })
    this.lastLoad = new Gauge({
      name: 'hookd_hook_last_load_timestamp_seconds',
      help: 'When the version a hook serves now was loaded (Unix time, seconds).',
      labelNames: ['tenant', 'hook'],
      registers,
    })
    new Gauge({
      name: 'hookd_hooks',
      help: 'Hook folders by status: ready, stale (an edit failed to load; the last good version serves), broken (never loaded).',
      labelNames: ['tenant', 'status'],
      registers,
      collect() {
        this.reset()
        for (const s of current()) for (const info of s.registry.list()) this.inc({ tenant: labels.tenant(s.tenant), status: info.status })
      },
    })
    const unwritten = (): number => this.auditUnwritten()
    new Counter({
      name: 'hookd_audit_unwritten_total',
      help: 'Decisions the audit log could not write (a full disk, say): answered all the same, and counted in a line of the log once it can write again.',
      registers,
      collect() {
        // The audit log keeps the count; a scrape reads it (it only grows).
        this.reset()
        this.inc(unwritten())
      },
    })
  }

  /** The text a scrape gets, and its content type. */
  async scrape(): Promise<{ text: string; contentType: string }> {
    return { text: await this.registry.metrics(), contentType: this.registry.contentType }
  }

  attach(current: () => readonly Served[]): void {
    this.current = current
  }

  auditLog(unwritten: () => number): void {
    this.auditUnwritten = unwritten
  }

  served({ tenant: id, registry, pool }: Served): void {
    const tenant = this.labels.tenant(id)
    for (const info of registry.list()) {
      const hook = this.labels.hook(tenant, info.name)
      this.hookLoads.inc({ tenant, hook, result: info.status === 'broken' ? 'failed' : 'loaded' })
      if (info.loadedAtMs) this.lastLoad.set({ tenant, hook }, info.loadedAtMs / 1000)
    }
    registry.subscribe((event) => this.registryEvent(tenant, event))
    pool.onWorkerExit((exit) => this.workerRestarts.inc({ tenant, reason: exit.reason }))
  }

  session(context: SessionContext): PartSession {
    const tenant = this.labels.tenant(context.tenant)
    const transport = context.transport === 'http' ? 'http' : 'grpc'
    let open = false
    return {
      opened: () => {
        // A unary Invoke is one call, not a session that stays open.
        if (context.transport === 'grpc-invoke' || open) return
        open = true
        this.sessions.inc({ tenant, transport })
      },
      ended: () => {
        if (!open) return
        open = false
        this.sessions.dec({ tenant, transport })
      },
      decided: (decision) => this.decided(tenant, decision),
      outcome: ({ report }: Outcome) =>
        this.askOutcomes.inc({
          tenant,
          outcome: OUTCOMES.has(report.outcome) ? report.outcome : 'unknown',
          by: report.by === 'agent' || report.by === 'host' ? report.by : 'hookd',
          via: OUTCOME_VIAS.has(report.via) ? report.via : 'other',
        }),
      capability: (capability: string, decision: CapabilityDecision) =>
        this.capabilityCalls.inc({ tenant, capability: isCapabilityName(capability) ? capability : 'unknown', decision }),
      quotaRefused: (point) => this.quotaRefusals.inc({ tenant, point }),
    }
  }

  private decided(tenant: string, { result, facts }: Decision): void {
    const point = result.point
    this.pointCalls.inc({ tenant, point, outcome: facts.outcome })
    this.pointDuration.observe({ tenant, point }, result.durationUs / 1e6)
    for (const t of result.trace) {
      const hook = this.labels.hook(tenant, t.hook)
      this.hookInvocations.inc({ tenant, point, hook, outcome: t.outcome })
      if (RAN.has(t.outcome)) this.hookDuration.observe({ tenant, hook }, t.durationUs / 1e6)
      if (t.would !== undefined) this.shadowDecisions.inc({ tenant, hook, would: t.would })
    }
    for (const d of result.diagnostics) this.diagnostics.inc({ tenant, kind: d.kind })
    if (facts.refusedBy !== undefined) {
      const by = facts.refusedBy === 'hookd' ? 'hookd' : this.labels.hook(tenant, facts.refusedBy)
      this.refusals.inc({ tenant, point, refused_by: by })
    }
    if (facts.failure) this.failDecisions.inc({ tenant, point, mode: facts.failure.mode, kind: facts.failure.kind })
  }

  private registryEvent(tenant: string, event: RegistryEvent): void {
    const hook = this.labels.hook(tenant, event.name)
    if (event.type === 'loaded') {
      this.hookLoads.inc({ tenant, hook, result: event.previous ? 'reloaded' : 'loaded' })
      this.lastLoad.set({ tenant, hook }, event.hook.loadedAtMs / 1000)
    } else if (event.type === 'failed') {
      this.hookLoads.inc({ tenant, hook, result: 'failed' })
    } else {
      this.hookLoads.inc({ tenant, hook, result: 'removed' })
      this.lastLoad.remove({ tenant, hook })
    }
  }
}
