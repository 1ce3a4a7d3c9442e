/**
 * What the operator log (logger.ts) says about the sidecar's work: at info, one line per decision (an
 * ask says so, with its questions: `beforeToolExecute asked: "Dangerous command: rm -rf victim"
 * (guard)`), one per ask's outcome, each reload, each worker exit and the drain; at warn, only
 * decisions at which a hook failed or a quota refused, failed reloads and dying workers. Field names
 * are listed in docs/operations.md#logs.
 *
 * Reload lines read exactly as `hookd serve` has always printed them ("hook 'x' reloaded: ...", with
 * tenants "tenant 'acme': hook 'x' ..."): this part prints them now, in place of serve.ts and
 * tenants.ts, so that they come out as JSON with --log-format json.
 */
import type { RegistryEvent } from '../hooks/registry.js'
import type { WorkerExit } from '../worker/pool/worker-pool.js'
import { clip } from '../../protocol/text.js'
import type { Logger, LogLevel } from './logger.js'
import type { DrainReport, Served, SessionContext } from './observer.js'
import type { AskedQuestion } from './observer.js'
import type { Decision, Outcome, Part, PartSession } from './part.js'

const RAN = new Set(['changed', 'no-opinion', 'refused', 'failed'])

/** Microseconds as milliseconds with three decimals (a number in JSON, text in a line). */
function ms(us: number): number {
  return Math.round(us) / 1000
}

function prefix(tenant: string | undefined): string {
  return tenant === undefined ? '' : `tenant '${tenant}': `
}

/** The questions of an ask as a line shows them: `"title: body" (hook)`, each clipped. */
function questions(asked: readonly AskedQuestion[]): string {
  return asked.map((q) => `${JSON.stringify(clip(q.body ? `${q.title}: ${q.body}` : q.title, 160))} (${q.hook})`).join(', ')
}

export class OperatorLog implements Part {
  constructor(private readonly logger: Logger) {}

  session(context: SessionContext): PartSession | undefined {
    // Decisions are logged at info, and at warn when something failed: below warn there is nothing to do.
    if (!this.logger.enabled('warn')) return undefined
    const outcomes = this.logger.enabled('info')
    return { decided: (decision) => this.decided(decision), ...(outcomes ? { outcome: (outcome: Outcome) => this.outcome(outcome) } : {}) }
  }

  served({ tenant, registry, pool }: Served): void {
    registry.subscribe((event) => this.reloaded(tenant, event))
    pool.onWorkerExit((exit) => this.workerExited(tenant, exit))
  }

  draining({ sessions, graceMs, cause }: DrainReport): void {
    this.logger.log('info', 'drain', `draining${cause ? ` after ${cause}` : ''}: health says NOT_SERVING, new sessions and calls get UNAVAILABLE; ${sessions} open session(s) end once their running calls finish (at most ${graceMs} ms, --grace-ms)`, {
      phase: 'started',
      sessions,
      grace_ms: graceMs,
      ...(cause ? { cause } : {}),
    })
  }

  drained({ ms: took, cut }: { ms: number; cut: number }): void {
    this.logger.log('info', 'drain', cut ? `drained in ${took} ms: the grace period ended with ${cut} session(s) still running, cut with UNAVAILABLE; stopped` : `drained in ${took} ms: every session ended; stopped`, { phase: 'done', duration_ms: took, cut })
  }

  private decided({ result, facts, context, sessionId, traceId, spanId }: Decision): void {
    this.shadows({ result, facts, context, sessionId })
    const level: LogLevel = facts.failedKinds.size > 0 || facts.quota ? 'warn' : 'info'
    if (!this.logger.enabled(level)) return
    const by = facts.refusedBy !== undefined ? ` by ${facts.refusedBy === 'hookd' ? 'hookd' : `'${facts.refusedBy}'`}` : ''
    const failure = facts.failure ? ` (fail ${facts.failure.mode}: '${facts.failure.hook}' ${facts.failure.kind})` : facts.quota ? ' (over quota)' : ''
    const hooks = result.trace.map((t) => {
      const kind = t.outcome === 'failed' ? facts.failedKinds.get(t.hook) : undefined
      return `${t.hook} ${t.outcome}${kind ? ` (${kind})` : ''}${RAN.has(t.outcome) ? ` ${ms(t.durationUs)} ms` : ''}`
    })
    const asked = facts.asked ? `: ${questions(facts.asked)}` : ''
    const msg = `${prefix(context.tenant)}decision ${result.decisionId}: ${result.point} ${facts.outcome}${asked}${by}${failure} in ${ms(result.durationUs)} ms${hooks.length ? `; ${hooks.join(', ')}` : ''}`
    this.logger.log(level, 'decision', msg, {
      decision_id: result.decisionId,
      tenant: context.tenant ?? null,
      session: clip(sessionId, 128),
      seq: result.seq,
      point: result.point,
      outcome: facts.outcome,
      refused_by: facts.refusedBy,
      asked: facts.asked?.map((q) => ({ hook: q.hook, title: q.title, body: q.body || undefined })),
      fail_mode: facts.failure?.mode,
      fail_kind: facts.failure?.kind,
      quota: facts.quota || undefined,
      duration_ms: ms(result.durationUs),
      layer: result.decidedBy?.layer,
      hooks: result.trace.map((t) => ({
        hook: t.hook,
        version: t.version,
        layer: t.layer,
        would: t.would,
        outcome: t.outcome,
        kind: t.outcome === 'failed' ? facts.failedKinds.get(t.hook) : undefined,
        duration_ms: ms(t.durationUs),
        cpu_ms: ms(t.cpuUs),
      })),
      trace_id: traceId,
      span_id: spanId,
    })
  }

  /**
   * One line per shadow hook that would have done something (hook.json "mode": "shadow"), at info: what
   * it would have decided, which it did not enforce. A shadow hook that would do nothing says nothing.
   */
  private shadows({ result, context, sessionId }: Pick<Decision, 'result' | 'facts' | 'context' | 'sessionId'>): void {
    if (!this.logger.enabled('info')) return
    for (const t of result.trace) {
      if (t.would === undefined || t.would === 'none') continue
      const what = t.would === 'failed' ? 'failed (it could not decide)' : `would ${t.would}`
      this.logger.log('info', 'shadow', `${prefix(context.tenant)}shadow hook '${t.hook}' ${what} at ${result.point} (decision ${result.decisionId}); not enforced`, {
        decision_id: result.decisionId,
        tenant: context.tenant ?? null,
        session: clip(sessionId, 128),
        seq: result.seq,
        point: result.point,
        hook: t.hook,
        version: t.version,
        would: t.would,
      })
    }
  }

  /** The outcome of an ask: `decision ID (asked): denied by the agent (PostToolBatch)`. */
  private outcome({ report, context, sessionId }: Outcome): void {
    const by = report.by === 'agent' ? 'the agent' : report.by === 'host' ? 'the host' : 'hookd'
    this.logger.log('info', 'outcome', `${prefix(context.tenant)}decision ${report.decisionId} (asked): ${report.outcome} by ${by} (${report.via})`, {
      decision_id: report.decisionId,
      tenant: context.tenant ?? null,
      session: clip(sessionId, 128),
      outcome: report.outcome,
      by: report.by,
      via: report.via,
    })
  }

  private reloaded(tenant: string | undefined, event: RegistryEvent): void {
    const result = event.type === 'loaded' ? (event.previous ? 'reloaded' : 'loaded') : event.type
    const d = event.diagnostic
    this.logger.log(event.type === 'failed' ? 'warn' : 'info', 'reload', `${prefix(tenant)}${d.message}`, {
      tenant: tenant ?? null,
      hook: event.name,
      result,
      version: event.type === 'loaded' ? event.hook.version : d.version,
      previous_version: event.type === 'loaded' ? event.previous?.version : undefined,
      file: event.type === 'failed' ? d.file : undefined,
      line: event.type === 'failed' ? d.line : undefined,
    })
  }

  private workerExited(tenant: string | undefined, exit: WorkerExit): void {
    const what =
      exit.reason === 'retired'
        ? `the sandbox worker (pid ${exit.pid}) retired (isolated-vm lost an isolate); a new worker replaced it`
        : exit.reason === 'start-failure'
          ? `the sandbox worker (pid ${exit.pid}) died before it was given any work (${exit.how}); a new worker replaces it`
          : exit.message
    this.logger.log(exit.reason === 'retired' ? 'info' : 'warn', 'worker-exit', `${prefix(tenant)}${what}`, {
      tenant: tenant ?? null,
      pid: exit.pid,
      reason: exit.reason,
      exit: exit.how,
    })
  }
}
