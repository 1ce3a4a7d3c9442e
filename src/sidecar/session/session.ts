/**
 * A session: one agent run. It resolves the declared hooks, runs point calls through the chain, checks
 * capability calls against the session's policy (and its tenant's) and forwards the allowed ones to the
 * host. It knows nothing of gRPC: the Session stream (or the unary Invoke) supplies a `SessionLink` to
 * reach the host.
 */
import { arch, platform } from 'node:os'
import { isAbsolute } from 'node:path'
import { DEFAULT_PENDING_ASKS, viaProblem } from '../../protocol/ask-outcomes.js'
import { CAPABILITIES, type CapabilityName, type HostCapabilityName, isHostCapabilityName, parseCapabilityArgs, passOn, questionOf } from '../../protocol/capabilities.js'
import { parseJson } from '../../protocol/bounded-json.js'
import { clip, quoted } from '../../protocol/text.js'
import type { Diagnostic } from '../../protocol/diagnostic.js'
import { type AnyPoint, GATE_POINTS, POINT_NAMES, type PointName, getPoint, handlerFor, isGate } from '../../protocol/points.js'
import { HookdError } from '../../protocol/status.js'
import { HOOKD_VERSION, PROTOCOL_VERSION } from '../../protocol/version.js'
import {
  type AutoConfirm,
  type CapabilityCallData,
  type HookInfoData,
  type LogLineData,
  type OnError,
  type OpenSessionWire,
  type OutcomeReportData,
  type PointResultData,
} from '../../protocol/wire.js'
import { type ChainHook, type ChainStep, runChain } from '../chain/chain.js'
import { closestPoint } from '../hooks/hook-files.js'
import type { LoadedHook } from '../hooks/registry.js'
import { type AskedQuestion, NO_SESSION_OBSERVER, type OutcomeReport, type SessionObserver } from '../observability/observer.js'
import {
  type CapabilityReply,
  type ChainRun,
  type CtxData,
  type HookRunner,
  type InvocationHost,
  type InvocationReport,
  failedReport,
} from '../runners/hook-runner.js'
import type { Tenant } from '../tenant.js'
import { AskedDecisions, type ReportAnswer } from './asked-decisions.js'
import { type AuditContext, decide, gateDecision } from './audit.js'
import { hookdStateRoots, hooksRoot, type ProtectedRoot } from '../../protocol/protected-paths.js'
import { DEFAULT_POLICY, type SessionPolicy, originOf, refusal } from './policy.js'
import { quotaResult } from './quota-result.js'
import { issueText } from '../../protocol/issue-text.js'

/**
 * A link's own answer to a capability call. `deferred` marks a ctx.confirm at a gate answered yes for
 * the chain's sake and left to the agent's own prompt (the front door's `ask`): the decision is then
 * recorded as asked, not allowed, and the link's owner records its outcome (`outcome`). A host's
 * answer says it with CapabilityResult.deferred, checked (`answerFromHost`), and its host reports the
 * outcome (`reportOutcome`).
 */
export type LinkReply = CapabilityReply & { deferred?: true }

/** How a session reaches its host. */
export interface SessionLink {
  /**
   * Forwards an allowed capability call. A link that can answer at once (the unary Invoke, the front
   * door) returns the reply; a stream link sends the call and the answer comes back through `Session.answer`.
   */
  capability(call: CapabilityCallData): Promise<LinkReply> | undefined
  log(line: LogLineData): void
  diagnostic(d: Diagnostic): void
  /**
   * True for the unary Invoke: a call over the tenant's quota fails with RESOURCE_EXHAUSTED. A stream
   * is not ended for it: the call is answered with a `quota` diagnostic instead (see quota-result.ts).
   */
  quotaFails?: boolean
}

interface PendingCapability {
  resolve(reply: LinkReply): void
  timer: NodeJS.Timeout
  seq: number
  capability: CapabilityName
  hook: string
  point: string
}

/**
 * What a host sent on the stream to answer a capability call: a value (JSON) or an error; `deferred`
 * with a confirm's yes at a gate left to the agent's own prompt.
 */
export interface HostAnswer {
  value?: Buffer | null | undefined
  error?: { code: string; message: string } | null | undefined
  deferred?: boolean | undefined
}

/** The largest capability answer a host may send (the sidecar's gRPC message limit bounds it anyway). */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024

/** Deferred questions kept per point call for its record, and how long each title and body may be there. */
const MAX_ASKED = 16
const ASKED_TITLE_CHARS = 256
const ASKED_BODY_CHARS = 1024

/** Refused outcome reports a host may send in one session; one more ends the stream. */
const MAX_REFUSED_REPORTS = DEFAULT_PENDING_ASKS.max

export class Session {
  readonly id: string
  readonly hooks: readonly string[]
  private readonly policy: SessionPolicy
  /** hookd's state folders, protected in every session whatever its policy (protected-paths.ts). */
  private readonly stateRoots: readonly ProtectedRoot[] = hookdStateRoots()
  private readonly env: Record<string, string>
  private readonly seqs = new Set<number>()
  private readonly running = new Map<number, AbortController>()
  private readonly pending = new Map<number, PendingCapability>()
  /** Per running point call: the confirms the auto-approve flag answered, by hook, for its trace. */
  private readonly autoConfirms = new Map<number, Array<{ hook: string; confirm: AutoConfirm }>>()
  /** Per running point call: the confirms the link deferred to the agent's prompt (LinkReply), for its record. */
  private readonly asked = new Map<number, AskedQuestion[]>()
  /** The running point calls in which the host (not the link) answered a confirm `deferred`. */
  private readonly hostDeferred = new Set<number>()
  /** The asked decisions whose outcome the host is to report (asked-decisions.ts, bounded). */
  private readonly hostAsks = new AskedDecisions({ settled: (report) => this.outcome(report) })
  private refusedReports = 0
  private nextCapabilityId = 1
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
    const policy = open.policy
    this.policy = policy
      ? {
          file: policy.file,
          httpOrigins: policy.httpOrigins.map((o) => originOf(o) ?? o),
          env: policy.env,
          confirm: !policy.denyConfirm,
        }
      : DEFAULT_POLICY
    const offered = Object.fromEntries(Object.entries(open.env).filter(([name]) => this.policy.env.includes(name)))
    this.env = tenant.env(offered)
    observe.opened(this.id)
  }

  /** Validates an open request; fails with a HookdError naming what was wrong. */
  static open(tenant: Tenant, open: OpenSessionWire, link: SessionLink, observe: SessionObserver = NO_SESSION_OBSERVER): { session: Session; hooks: HookInfoData[] } {
    if (open.protocolVersion !== PROTOCOL_VERSION) {
      throw new HookdError(
        'failed-precondition',
        `protocol_version ${open.protocolVersion} is not supported; this sidecar (hookd ${HOOKD_VERSION}) speaks version ${PROTOCOL_VERSION}`,
      )
    }
    if (!open.sessionId) throw new HookdError('invalid-argument', 'open.session_id is empty; give the run an id')
    // ctx.workdir means one folder whatever the sidecar's own working directory; file capabilities are
    // confined to it.
    const absolute = "give the run's working directory as an absolute path (ctx.workdir, and the folder file capabilities are confined to)"
    if (!open.workdir) throw new HookdError('invalid-argument', `open.workdir is empty; ${absolute}`)
    if (!isAbsolute(open.workdir)) throw new HookdError('invalid-argument', `open.workdir ${quoted(open.workdir)} is not an absolute path; ${absolute}`)
    const seen = new Set<string>()
    for (const name of open.hooks) {
      if (seen.has(name)) throw new HookdError('invalid-argument', `hook '${name}' is declared twice; declare each hook once`)
      seen.add(name)
    }
    const registry = tenant.registry
    const missing = open.hooks.filter((name) => !registry.has(name))
    if (missing.length) {
      const known = registry.list().map((h) => h.name)
      const where = tenant.id === undefined ? registry.root : `tenant '${tenant.id}''s hooks`
      throw new HookdError(
        'not-found',
        `unknown hook${missing.length > 1 ? 's' : ''} ${missing.map((n) => `'${n}'`).join(', ')} in ${where} (available: ${known.length ? known.join(', ') : 'none'})`,
      )
    }
    const session = new Session(tenant, open, link, observe)
    const infos = registry.list()
    const hooks = open.hooks.map((name) => infos.find((h) => h.name === name) as HookInfoData)
    // A declared hook that exists but never loaded is reported now and skipped on every point.
    // A stale hook (its newest edit failed to load) is served in its older version: say so too.
    for (const info of hooks) if (info.status !== 'ready' && info.lastError) link.diagnostic(info.lastError)
    return { session, hooks }
  }

  /**
   * Pushes the registry's news about this session's hooks to the host as diagnostics: `reload` (a new
   * version serves), `load` (an edit failed to load; the older version still serves), `hook-removed`.
   * For stream sessions; stops when the session closes or aborts.
   */
  followRegistry(): void {
    if (this.unfollow || this.closed) return
    this.unfollow = this.tenant.registry.subscribe((event) => {
      if (this.hooks.includes(event.name)) this.link.diagnostic(event.diagnostic)
    })
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
    return { tenant: this.tenant.id, session: this.id, agent: this.open.agentId, workdir: this.open.workdir }
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
   * (INVALID_ARGUMENT), which ends the stream.
   */
  reportOutcome(report: OutcomeReportData): ReportAnswer {
    const answer = this.checkReport(report)
    if (answer.recorded) return answer
    this.refusedReports += 1
    if (this.refusedReports > MAX_REFUSED_REPORTS) {
      throw new HookdError(
        'invalid-argument',
        `the host sent ${this.refusedReports} outcome reports hookd refused (the last: ${answer.message}); a host reports the outcome of each decision it left to its agent once, with that result's decision_id`,
      )
    }
    return answer
  }

  private checkReport(report: OutcomeReportData): ReportAnswer {
    const refused = (why: string): ReportAnswer => ({ recorded: false, message: `the outcome report of decision ${quoted(report.decisionId, 64)}: ${why}` })
    if (this.closed || this.closing) return refused('the session is closing, and its asks still waiting were recorded unknown (run ended); report outcomes before close')
    if (report.outcome === undefined) return refused('outcome is unspecified; report ASK_OUTCOME_ALLOWED, ASK_OUTCOME_DENIED or ASK_OUTCOME_UNKNOWN')
    const via = viaProblem(report.via)
    if (via) return refused(via)
    return this.hostAsks.report(report.decisionId, report.outcome, report.via, report.by)
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
    const autoConfirms: Array<{ hook: string; confirm: AutoConfirm }> = []
    this.autoConfirms.set(seq, autoConfirms)
    const asked: AskedQuestion[] = []
    this.asked.set(seq, asked)
    try {
      const steps = this.steps(seq, point, payload, abort.signal)
      const onError = (hook: ChainHook): OnError => this.onErrorOf(hook.onError ?? this.tenant.registry.onErrorOf(hook.name))
      const result = await runChain(point, seq, payload, steps, { signal: abort.signal, jsonDepth: this.tenant.limits.jsonDepth, onError })
      // A confirm that no person saw is part of what the hook did: the trace says so.
      for (const entry of result.trace) {
        const asked = autoConfirms.filter((a) => a.hook === entry.hook).map((a) => a.confirm)
        if (asked.length) entry.autoConfirms = asked
      }
      // A gate let through with questions deferred was asked, not allowed (audit.ts, decision.ts).
      const decided = this.decided(decide(result, who, payload, this.tenant.audit, isGate(point) ? asked : []))
      // Deferred by the host: its outcome is the host's to report.
      if (this.hostDeferred.has(seq) && decided.asked && gateDecision(point.name, decided.result)?.allow === true) this.hostAsks.add(decided.decisionId)
      return decided
    } finally {
      this.running.delete(seq)
      this.autoConfirms.delete(seq)
      this.asked.delete(seq)
      this.hostDeferred.delete(seq)
      admission.release()
    }
  }

  /** Reports a result to the observer, and returns it. */
  private decided<R extends PointResultData & { decisionId: string }>(result: R): R {
    this.observe.decided(result)
    return result
  }

  /**
   * The host answered a capability call on the stream. The answer is checked before the hook sees it:
   * bounded JSON (depth and size), and the shape the capability returns (a boolean for confirm, ...).
   * Every answer that does not fit (not JSON, the wrong type, an empty value, neither a value nor an
   * error, `deferred` anywhere but with a confirm's yes at a gate) is treated one way: a protocol
   * mistake, a HookdError (INVALID_ARGUMENT) naming the call, which ends the session; the hook never
   * sees it. An error answer reaches the hook as an error, its message clipped.
   */
  answerFromHost(id: number, answer: HostAnswer): void {
    const pending = this.pending.get(id)
    if (!pending) return this.answer(id, { ok: false, code: 'failed', message: '' })
    const what = `capability_result ${id} (ctx.${pending.capability} of hook '${pending.hook}')`
    if (answer.deferred) {
      const problem = deferredProblem(pending, answer)
      if (problem) throw new HookdError('invalid-argument', `${what}: ${problem}`)
    }
    if (answer.error) {
      this.answer(id, { ok: false, code: passOn(clip(answer.error.code, 64)), message: clip(answer.error.message) })
      return
    }
    const expected = CAPABILITIES[pending.capability].result
    if (!answer.value || answer.value.length === 0) {
      const has = answer.value ? 'has an empty value' : 'has neither a value nor an error'
      throw new HookdError('invalid-argument', `${what} ${has}; answer with the value as JSON (${expected.example}), or with an error`)
    }
    const parsed = parseJson(answer.value, 'the value', { maxDepth: this.tenant.limits.jsonDepth, maxBytes: MAX_ANSWER_BYTES })
    if (!parsed.ok) throw new HookdError('invalid-argument', `${what}: ${parsed.message}`)
    const shaped = expected.schema.safeParse(parsed.value)
    if (!shaped.success) throw new HookdError('invalid-argument', `${what}: ${issueText(shaped.error, 'the value')}; ctx.${pending.capability} is answered with ${expected.example}`)
    if (!answer.deferred) return this.answer(id, { ok: true, value: shaped.data })
    if (shaped.data !== true) throw new HookdError('invalid-argument', `${what}: deferred goes with the value true (yes, left to the agent's own prompt); answer false without deferred`)
    // Left to the agent's prompt by the host: recorded asked, and the host reports the outcome.
    this.hostDeferred.add(pending.seq)
    this.settle(id, { ok: true, value: true, deferred: true })
  }

  /**
   * A capability call's answer, already checked. An answer to a call this session never made is a protocol
   * error; a late answer (after the call's wait ceiling, a cancel, or a second answer) is dropped, since
   * a human may well answer a confirm after hookd stopped waiting.
   */
  answer(id: number, reply: CapabilityReply): void {
    // A host's answer is never a deferral, whatever else its object holds.
    this.settle(id, reply.ok ? { ok: true, value: reply.value } : reply)
  }

  /** A capability call's answer: the host's (checked), or the link's own, which may be deferred. */
  private settle(id: number, reply: LinkReply): void {
    const pending = this.pending.get(id)
    if (!pending) {
      if (id >= 1 && id < this.nextCapabilityId) return
      throw new HookdError(
        'failed-precondition',
        `capability_result ${id} answers no capability call of this session (the last call made has id ${this.nextCapabilityId - 1})`,
      )
    }
    this.pending.delete(id)
    clearTimeout(pending.timer)
    pending.resolve(reply)
  }

  cancel(seq: number): void {
    this.running.get(seq)?.abort()
    for (const [id, pending] of this.pending) {
      if (pending.seq !== seq) continue
      this.pending.delete(id)
      clearTimeout(pending.timer)
      pending.resolve({ ok: false, code: 'cancelled', message: 'the host cancelled this point call' })
    }
  }

  /**
   * Ends the run and refuses further calls. Runs afterRun with the reason (as seq 0, which no host call
   * uses), unless a point call already ran the end-of-run hooks: then its result is the answer.
   */
  async close(reason: string): Promise<PointResultData> {
    if (this.closed || this.closing) throw new HookdError('failed-precondition', 'the session is already closed or closing; send close once')
    this.closing = true
    // The host's asks whose outcome it did not report are settled now: nothing more can say it.
    this.hostAsks.end()
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
    this.hostAsks.end()
    this.observe.ended()
    for (const controller of this.running.values()) controller.abort()
    for (const [id, pending] of this.pending) {
      clearTimeout(pending.timer)
      pending.resolve({ ok: false, code: 'unavailable', message: 'the host disconnected' })
      this.pending.delete(id)
    }
  }

  /**
   * One ChainStep per declared hook that serves the point, each run by its hook's runner. When two or
   * more run and every one has the same runner, and that runner can run a chain in one trip (the worker
   * pool: one worker message for the whole chain), they go as one chain: the runner reports each step as
   * it ends, and the chain here (runChain) awaits those reports instead of one round trip per hook, so it
   * still judges every answer with the catalog's rules. A step the runner did not run (its worker died
   * mid-chain, or a cancel raced it) is invoked on its own, as always.
   */
  private steps(seq: number, point: AnyPoint, initial: unknown, signal: AbortSignal): ChainStep[] {
    const pointName = point.name
    const steps: ChainStep[] = []
    const served: Array<{ hook: LoadedHook; ctx: CtxData; host: InvocationHost }> = []
    /** Each step's run, by itself (the chain's fallback), in step order; undefined for removed hooks. */
    const runs: Array<((handler: string, args: readonly unknown[], resultArg: number | undefined, retries?: number) => Promise<InvocationReport>) | undefined> = []
    let removed = false
    for (const name of this.hooks) {
      // The version current when the call started is the one that runs.
      const hook = this.tenant.registry.get(name)
      if (!hook) {
        // Removed while this session used it: a `hook-removed` diagnostic on each point it handled.
        const gone = this.tenant.registry.removed(name)
        if (gone && handlerFor(point, gone.points)) {
          steps.push({ hook: gone, invoke: () => Promise.resolve(removedReport(this.tenant.registry.root, name)) })
          runs.push(undefined)
          removed = true
        }
        // Declared, but it never loaded: which points it would serve is unknown. A hook that must not be
        // skipped (onError "refuse") refuses every gate call meanwhile.
        const broken = this.tenant.registry.list().find((h) => h.name === name)
        if (!gone && broken && isGate(point) && this.onErrorOf(this.tenant.registry.onErrorOf(name)) === 'refuse') {
          const message = `it did not load (${broken.lastError?.message ?? 'no version of it ever loaded'})`
          steps.push({
            hook: { name, version: '', filename: `${name}/index.js`, points: new Set([point.name as PointName]), onError: 'refuse' },
            invoke: () => Promise.resolve(failedReport('load', message)),
          })
          runs.push(undefined)
          removed = true
        }
        continue
      }
      if (!handlerFor(point, hook.points)) continue
      const ctx = this.ctxFor(hook, pointName)
      const host: InvocationHost = {
        onCapability: (capability, args) => this.capability(seq, name, pointName, capability, args),
        onLog: (message) => this.link.log({ seq, hook: name, point: pointName, message, timeMs: Date.now() }),
      }
      served.push({ hook, ctx, host })
      const code = { name, version: hook.version, filename: hook.filename, source: hook.source }
      const limits = this.tenant.limits
      // A retry (`retries` 0) is the rerun of a chain step lost with its worker: it runs alone.
      const run = (handler: string, args: readonly unknown[], resultArg: number | undefined, retries?: number): Promise<InvocationReport> =>
        hook.runner.invoke({
          ...host,
          hook: code,
          ctx,
          limits,
          signal,
          point: handler,
          args,
          ...(resultArg !== undefined ? { resultArg } : {}),
          ...(retries !== undefined ? { retries, alone: true } : {}),
        })
      runs.push(run)
      steps.push({ hook, invoke: (handler, args, resultArg) => run(handler, args, resultArg) })
    }
    const runner: HookRunner | undefined = served[0]?.hook.runner
    if (removed || served.length < 2 || !runner?.invokeChain || served.some((s) => s.hook.runner !== runner)) return steps

    // Started by the first step the chain invokes: the runner's chain skips the same steps before it.
    let run: ChainRun | undefined
    const start = (): ChainRun =>
      (run ??= (runner.invokeChain as NonNullable<HookRunner['invokeChain']>).call(runner, {
        point: pointName,
        initial,
        steps: served.map(({ hook, ctx, host }) => ({
          ...host,
          hook: { name: hook.name, version: hook.version, filename: hook.filename, source: hook.source },
          points: [...hook.points],
          ctx,
          onError: this.onErrorOf(hook.onError),
        })),
        limits: this.tenant.limits,
        signal,
      }))
    // A step the chain's runner did not run goes on its own; the step that was running when the runner
    // lost the chain (a worker died) runs once more, and that is its retry.
    return steps.map((step, i) => ({
      hook: step.hook,
      invoke: async (handler, args, resultArg) => {
        const chain = start()
        const report = await chain.report(i)
        if (report) return report
        const run = runs[i] as NonNullable<(typeof runs)[number]>
        return run(handler, args, resultArg, chain.lost(i) ? 0 : undefined)
      },
    }))
  }

  /**
   * What a hook's failure does at a gate: the strictest of the operator's floor, the session's choice
   * and the hook's own hook.json ("refuse" from any of them wins; then "skip" from the session or the
   * hook; else the default).
   */
  /**
   * What a failure of a hook with `hook` (its hook.json "onError") does at a gate: `refuse` from the
   * operator, the session or the hook wins; a session that guards an agent (`refuse-unless-skip`)
   * refuses unless the hook itself says `skip`; else `skip` from either; else the seed's rule.
   */
  private onErrorOf(hook: OnError): OnError {
    const session = this.open.onError
    if (this.tenant.onError === 'refuse' || session === 'refuse' || hook === 'refuse') return 'refuse'
    if (session === 'refuse-unless-skip') return hook === 'skip' ? 'skip' : 'refuse'
    if (session === 'skip' || hook === 'skip') return 'skip'
    return 'default'
  }

  private ctxFor(hook: LoadedHook, point: string): CtxData {
    return {
      workdir: this.open.workdir,
      session: { id: this.id, interactive: this.open.interactive, autoApprove: this.open.autoApprove },
      agent: { id: this.open.agentId, modelId: this.open.modelId },
      config: hook.config,
      system: { platform: platform(), arch: arch(), hookdVersion: HOOKD_VERSION },
      env: this.env,
      hook: { name: hook.name, version: hook.version, point },
    }
  }

  private async capability(seq: number, hook: string, point: string, capability: string, raw: unknown): Promise<CapabilityReply> {
    // Only what the host serves is forwarded to it (every capability, today: capabilities.ts).
    if (!isHostCapabilityName(capability)) {
      this.observe.capability(capability, 'invalid')
      return { ok: false, code: 'invalid', message: `ctx has no capability '${capability}'` }
    }
    return this.forward(seq, hook, point, capability, raw)
  }

  private async forward<N extends HostCapabilityName>(seq: number, hook: string, point: string, capability: N, raw: unknown): Promise<CapabilityReply> {
    const parsed = parseCapabilityArgs(capability, raw)
    if (!parsed.success) {
      this.observe.capability(capability, 'invalid')
      return { ok: false, code: 'invalid', message: `ctx.${capability}: invalid ${issueText(parsed.error, 'arguments')}` }
    }
    const args = parsed.data
    // The hooks folder is read at each call: a tenants-file edit may move it.
    const place = { workdir: this.open.workdir, roots: [hooksRoot(this.tenant.registry.root), ...this.stateRoots] }
    const why = refusal(this.policy, capability, args, place) ?? this.tenant.refusal(capability, args)
    this.observe.capability(capability, why ? 'denied' : 'allowed')
    if (why) return { ok: false, code: 'denied', message: why }
    // An `ask`-class call (ctx.confirm) is the human's: auto-approve answers it when nobody can, it waits
    // the confirm ceiling, and the link may leave it to the agent's own prompt.
    const question = questionOf(capability, args)
    if (question && !this.open.interactive) {
      this.autoConfirms.get(seq)?.push({ hook, confirm: { title: question.title, body: question.body ?? '', approved: this.open.autoApprove } })
      return { ok: true, value: this.open.autoApprove }
    }

    const id = this.nextCapabilityId++
    const waits = this.tenant.waits
    const ceiling = question ? waits.confirmMs : waits.capabilityMs
    const answer = new Promise<LinkReply>((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(id)
        resolve({
          ok: false,
          code: 'timeout',
          message: `ctx.${capability}: the host did not answer within ${ceiling} ms`,
        })
      }, ceiling)
      timer.unref()
      this.pending.set(id, { resolve, timer, seq, capability, hook, point })
    })
    const direct = this.link.capability({ id, seq, hook, point, capability, args })
    direct?.then(
      (reply) => {
        if (this.pending.has(id)) this.settle(id, reply)
      },
      (err: unknown) => {
        if (this.pending.has(id)) this.settle(id, { ok: false, code: 'failed', message: String(err) })
      },
    )
    if (!question) return answer
    const reply = await answer
    if (!reply.ok || reply.deferred !== true) return reply
    // Left to the agent's prompt: the hook sees a plain yes, the call's record says asked.
    const asked = this.asked.get(seq)
    if (asked && asked.length < MAX_ASKED) asked.push({ hook, title: clip(question.title, ASKED_TITLE_CHARS), body: clip(question.body ?? '', ASKED_BODY_CHARS) })
    return { ok: true, value: reply.value }
  }
}

/** What is wrong with a host's `deferred` on this answer, before its value is read; undefined when nothing is. */
function deferredProblem(pending: PendingCapability, answer: HostAnswer): string | undefined {
  if (pending.capability !== 'confirm') return `deferred is only for ctx.confirm, not ctx.${pending.capability}; answer without it`
  const point = getPoint(pending.point)
  if (!point || !isGate(point)) {
    return `deferred is only for a confirm at a gate point (${GATE_POINTS.join(', ')}), where the agent's own prompt can decide the call, and this one was made at ${pending.point}; answer true or false without it`
  }
  if (answer.error) return "deferred goes with the value true (yes, left to the agent's own prompt), not with an error; send the error without it"
  return undefined
}

function removedReport(root: string, name: string): InvocationReport {
  return failedReport(
    'hook-removed',
    `the hook's folder ${root}/${name} was removed while this session used it; skipped. Restore the folder, or drop '${name}' from the agent's hooks`,
  )
}
