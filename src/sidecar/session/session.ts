/**
 * A session: one agent run. It opens on a checked request (check-open.ts), follows the registry's news
 * about its hooks, runs each point call through the chain over the steps its planner gives
 * (step-planner.ts), answers a call over the tenant's quota without hooks, and records each result.
 * Its hooks' capability calls go through its broker (capability-broker.ts), which checks them against
 * the session's policy (and its tenant's) and forwards the allowed ones to the host; the outcomes its
 * host reports of asked decisions go through outcome-reports.ts. It knows nothing of gRPC: the Session
 * stream (or the unary Invoke, or the front door) supplies a `SessionLink` to reach the host.
 */
import { parseJson } from '../../protocol/bounded-json.js'
import type { Diagnostic } from '../../protocol/diagnostic.js'
import { issueText } from '../../protocol/issue-text.js'
import { type AnyPoint, getPoint, isGate } from '../../protocol/points/points.js'
import { HookdError } from '../../protocol/status.js'
import { quoted } from '../../protocol/text.js'
import type { HookInfoData, OnError, OpenSessionWire, OutcomeReportData, PointResultData } from '../../protocol/wire.js'
import { type ChainHook, runChain } from '../chain/chain.js'
import { closestPoint } from '../hooks/hook-files.js'
import { NO_SESSION_OBSERVER, type OutcomeReport, type SessionObserver } from '../observability/observer.js'
import type { CapabilityReply } from '../runners/hook-runner.js'
import type { Tenant } from '../tenant.js'
import type { ReportAnswer } from './asked-decisions.js'
import { type AuditContext, decide, gateDecision } from './audit.js'
import { CapabilityBroker, type HostAnswer, MAX_ANSWER_BYTES } from './capability-broker.js'
import { checkOpen } from './check-open.js'
import { OutcomeReports } from './outcome-reports.js'
import { sessionPolicy } from './policy.js'
import { quotaResult } from './quota-result.js'
import type { SessionLink } from './session-link.js'
import { StepPlanner } from './step-planner.js'

export type { HostAnswer } from './capability-broker.js'
export type { LinkReply, SessionLink } from './session-link.js'

export class Session {
  readonly id: string
  readonly hooks: readonly string[]
  private readonly env: Record<string, string>
  private readonly broker: CapabilityBroker
  private readonly planner: StepPlanner
  /** The outcomes the host reports of the decisions it left to its agent's prompt. */
  private readonly reports = new OutcomeReports((report) => this.outcome(report))
  private readonly seqs = new Set<number>()
  private readonly running = new Map<number, AbortController>()
  private closed = false
  private closing = false
  /**
   * The point call that ran the session's end-of-run hooks: an explicit afterRun, or agent:done (which
   * afterRun hooks serve on a hookable host). Once it is set, close answers with its result instead of
   * running afterRun again: afterRun runs once per session.
   */
  private endOfRun: { seq: number; point: string; result?: Promise<PointResultData> } | undefined
  private unfollow: (() => void) | undefined

  private constructor(
    private readonly tenant: Tenant,
    private readonly open: OpenSessionWire,
    private readonly link: SessionLink,
    /** Metrics, traces and logs of this session (observability/observer.ts); no-op by default. */
    private readonly observe: SessionObserver,
  ) {
    this.id = open.sessionId
    this.hooks = open.hooks
    const policy = sessionPolicy(open.policy)
    const offered = Object.fromEntries(Object.entries(open.env).filter(([name]) => policy.env.includes(name)))
    this.env = tenant.env(offered)
    this.broker = new CapabilityBroker({ tenant, open, policy, link, observe })
    this.planner = new StepPlanner({
      tenant,
      open,
      hooks: this.hooks,
      env: this.env,
      host: (seq, hook, point, granted, shadow) => ({
        onCapability: (capability, args) => this.broker.call(seq, hook, point, capability, args, granted, shadow),
        onLog: (message) => this.link.log({ seq, hook, point, message, timeMs: Date.now() }),
      }),
    })
    observe.opened(this.id)
  }

  /** Validates an open request; fails with a HookdError naming what was wrong. */
  static open(tenant: Tenant, open: OpenSessionWire, link: SessionLink, observe: SessionObserver = NO_SESSION_OBSERVER): { session: Session; hooks: HookInfoData[] } {
    const hooks = checkOpen(tenant, open)
    const session = new Session(tenant, open, link, observe)
    // A declared hook that exists but never loaded is reported now and skipped on every point.
    // A stale hook (its newest edit failed to load) is served in its older version: say so too.
    for (const info of hooks) if (info.status !== 'ready' && info.lastError) link.diagnostic(info.lastError)
    // A declared name that is a floor hook's is the floor's; a hook of the tenant's by that name is never run.
    for (const name of open.hooks) {
      if (tenant.floor?.has(name) && tenant.registry.has(name)) link.diagnostic(floorShadows(tenant, name))
    }
    return { session, hooks }
  }

  /**
   * Pushes the registry's news about this session's hooks to the host as diagnostics: `reload` (a new
   * version serves), `load` (an edit failed to load; the older version still serves), `hook-removed`.
   * For stream sessions; stops when the session closes or aborts.
   */
  followRegistry(): void {
    if (this.unfollow || this.closed) return
    const own = this.tenant.registry.subscribe((event) => {
      if (this.hooks.includes(event.name)) this.link.diagnostic(event.diagnostic)
    })
    // The floor's hooks run in every session: their news is every session's.
    const floor = this.tenant.floor?.registry.subscribe((event) => this.link.diagnostic(event.diagnostic))
    this.unfollow = () => {
      own()
      floor?.()
    }
  }

  /** Runs a point call. Protocol errors throw HookdError; hook failures are diagnostics. */
  async call(seq: number, pointName: string, payloadBytes: Buffer): Promise<PointResultData> {
    if (this.closed || this.closing) throw new HookdError('failed-precondition', `point call ${seq} arrived after the session was closed`)
    if (this.seqs.has(seq)) {
      throw new HookdError('invalid-argument', `point call seq ${seq} was already used in this session; use a new seq for every call`)
    }
    if (pointName === 'afterRun' && this.endOfRun) {
      const { seq: first, point } = this.endOfRun
      throw new HookdError(
        'failed-precondition',
        `afterRun already ran in this session (point call seq ${first}${point === 'afterRun' ? '' : `, ${point}`}); it runs once per session, and close does not run it again`,
      )
    }
    const result = this.run(seq, pointName, payloadBytes, () => {
      this.seqs.add(seq)
      if (pointName === 'afterRun' || pointName === 'agent:done') this.endOfRun ??= { seq, point: pointName }
    })
    // run() accepts the call (or throws) before it first waits, so the mark is already set.
    if (this.endOfRun?.seq === seq) this.endOfRun.result ??= result
    return result
  }

  /**
   * Checks a call and starts it. Not async: the payload's bytes are parsed here and not held while the
   * chain runs (an async function's frame keeps its arguments alive across its awaits), so a call
   * waiting on slow hooks holds its payload once, parsed, not also as bytes.
   */
  private run(seq: number, pointName: string, payloadBytes: Buffer, accept: () => void): Promise<PointResultData> {
    const point = getPoint(pointName)
    if (!point) {
      // The name is the host's: quoted and clipped; the answer names the closest point, never all ~140.
      const near = closestPoint(pointName)
      const hint = near ? `did you mean '${near}'?` : 'the step points are beforeRun, afterRun, beforeModelRequest, afterModelResponse, beforeToolExecute, afterToolExecute; docs/points.md lists the event points'
      throw new HookdError('invalid-argument', `unknown point ${quoted(pointName, 64)}; ${hint}`)
    }
    const json = parseJson(payloadBytes, `${pointName} payload`, { maxDepth: this.tenant.limits.jsonDepth, maxBytes: MAX_ANSWER_BYTES })
    if (!json.ok) throw new HookdError('invalid-argument', json.message)
    const payload = point.payload.safeParse(json.value)
    if (!payload.success) {
      throw new HookdError('invalid-argument', issueText(payload.error, `${pointName} payload`))
    }
    accept()
    return this.runChecked(seq, point, payload.data)
  }

  /** Who the audit log says made the calls: the tenant, the session, its agent and workdir. */
  private get who(): AuditContext {
    const revision = this.tenant.registry.revision
    return { tenant: this.tenant.id, session: this.id, agent: this.open.agentId, workdir: this.open.workdir, ...(revision !== undefined ? { revision } : {}) }
  }

  /**
   * Records what became of an asked decision (its id from this session's result): the audit log's
   * second line for it, and the observer's count. The front door calls it when the agent reports the
   * call's fate (or the run ends first); also after the session closed, for the asks it left.
   */
  outcome(report: OutcomeReport): void {
    this.tenant.audit?.recordOutcome(this.who, report)
    this.observe.outcome(report)
  }

  /**
   * The host's report of what became of a decision it left to its agent's prompt (AskOutcomeReport):
   * recorded once, for an asked decision of this session still waiting; refused otherwise, saying
   * why. Past MAX_REFUSED_REPORTS refusals in one session the host is misbehaving: a HookdError
   * (INVALID_ARGUMENT), which ends the stream (outcome-reports.ts).
   */
  reportOutcome(report: OutcomeReportData): ReportAnswer {
    return this.reports.report(report, this.closed || this.closing)
  }

  private async runChecked(seq: number, point: AnyPoint, payload: unknown): Promise<PointResultData> {
    const who = this.who
    const admission = this.tenant.admit()
    if (!admission.ok) {
      this.observe.quotaRefused(point.name)
      if (this.link.quotaFails) throw new HookdError('resource-exhausted', admission.message)
      const hooks = this.hooks.flatMap((name) => this.tenant.registry.get(name) ?? [])
      return this.decided(decide(quotaResult(point, seq, payload, hooks, admission.message), who, payload, this.tenant.audit))
    }
    const abort = new AbortController()
    this.running.set(seq, abort)
    const asks = this.broker.begin(seq)
    try {
      // A person can be asked at a gate of an interactive session whose policy (and tenant's) allows ctx.confirm.
      const canAsk = isGate(point) && this.open.interactive && this.broker.mayConfirm()
      const steps = this.planner.steps(seq, point, payload, abort.signal, canAsk)
      const onError = (hook: ChainHook): OnError => this.planner.onErrorFor(hook)
      const result = await runChain(point, seq, payload, steps, {
        signal: abort.signal,
        jsonDepth: this.tenant.limits.jsonDepth,
        onError,
        ...(canAsk ? { ask: (hook: ChainHook, question: { title: string; body: string }) => this.broker.ask(seq, hook.name, point.name, question) } : {}),
      })
      // A confirm that no person saw is part of what the hook did: the trace says so.
      for (const entry of result.trace) {
        const asked = asks.autoConfirms.filter((a) => a.hook === entry.hook).map((a) => a.confirm)
        if (asked.length) entry.autoConfirms = asked
        // A shadow hook that asked the human would have asked, unless its answer would refuse.
        if (entry.would !== undefined && entry.would !== 'refuse' && asks.shadowAsks.has(entry.hook)) entry.would = 'ask'
      }
      // A gate let through with questions deferred was asked, not allowed (audit.ts, decision.ts).
      // The permissions of the versions that ran, for the audit line.
      const granted = new Map(steps.map((step) => [step.hook.name, step.hook.permissions]))
      const decided = this.decided(decide(result, who, payload, this.tenant.audit, isGate(point) ? asks.asked : [], granted))
      // Deferred by the host: its outcome is the host's to report.
      if (asks.hostDeferred && decided.asked && gateDecision(point.name, decided.result)?.allow === true) this.reports.add(decided.decisionId)
      return decided
    } finally {
      this.running.delete(seq)
      this.broker.end(seq)
      admission.release()
    }
  }

  /** Reports a result to the observer, and returns it. */
  private decided<R extends PointResultData & { decisionId: string }>(result: R): R {
    this.observe.decided(result)
    return result
  }

  /**
   * The host answered a capability call on the stream: checked before the hook sees it; an answer that
   * does not fit is a HookdError (INVALID_ARGUMENT) that ends the session (capability-broker.ts).
   */
  answerFromHost(id: number, answer: HostAnswer): void {
    this.broker.answerFromHost(id, answer)
  }

  /**
   * A capability call's answer, already checked. An answer to a call this session never made is a protocol
   * error; a late answer (after the call's wait ceiling, a cancel, or a second answer) is dropped, since
   * a human may well answer a confirm after hookd stopped waiting.
   */
  answer(id: number, reply: CapabilityReply): void {
    this.broker.answer(id, reply)
  }

  cancel(seq: number): void {
    this.running.get(seq)?.abort()
    this.broker.cancel(seq)
  }

  /**
   * Ends the run and refuses further calls. Runs afterRun with the reason (as seq 0, which no host call
   * uses), unless a point call already ran the end-of-run hooks: then its result is the answer.
   */
  async close(reason: string): Promise<PointResultData> {
    if (this.closed || this.closing) throw new HookdError('failed-precondition', 'the session is already closed or closing; send close once')
    this.closing = true
    // The host's asks whose outcome it did not report are settled now: nothing more can say it.
    this.reports.end()
    const payload = Buffer.from(JSON.stringify({ reason }))
    try {
      const ran = this.endOfRun?.result
      if (ran) return await ran
      return await this.run(0, 'afterRun', payload, () => {})
    } finally {
      this.closed = true
      this.unfollow?.()
      this.observe.ended()
    }
  }

  /** The host went away: stop everything still running. */
  abort(): void {
    this.closed = true
    this.unfollow?.()
    this.reports.end()
    this.observe.ended()
    for (const controller of this.running.values()) controller.abort()
    this.broker.abort()
  }
}

/** The diagnostic of a declared name that is both a floor hook's and one of the tenant's own hooks. */
function floorShadows(tenant: Tenant, name: string): Diagnostic {
  const where = tenant.who ?? (tenant.id === undefined ? 'the hooks folder' : `tenant '${tenant.id}''s hooks`)
  return {
    hook: name,
    point: '',
    kind: 'load',
    message: `hook '${name}' of ${where} is not run: the operator's floor has a hook of that name, which runs first in every session (and the session's '${name}' is the floor's); rename the folder to run yours as well`,
  }
}
