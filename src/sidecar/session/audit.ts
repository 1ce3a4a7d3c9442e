/**
 * The audit log (`hookd serve --audit FILE|-`): one JSON line per point result, written when the result
 * is sent. Every result gets a decision id, audit log or not; the host receives it as
 * `PointResult.decision_id`, so a host's own records can point at the sidecar's line.
 *
 * A line holds: time, decisionId, tenant (null on a sidecar without tenants), session, the agent and
 * the workdir the session named, seq, point, the hooks that were consulted with their versions,
 * outcomes and layers (a shadow hook's with what it `would` have decided), the decision for gates
 * (allowed, refused, or asked: left to the agent's own prompt, with the questions), the layer that
 * decided (`layer`: floor, tenant, project, session or hookd; absent when no hook changed anything),
 * the kinds of the diagnostics, and the duration. Each consulted hook carries its declared
 * permissions in one line (hook-permissions.ts describePermissions), or null when its hook.json has
 * none (it may do whatever the session allows). Payloads, results and diagnostic messages
 * (which can quote a payload) are logged only with `--audit-payloads`.
 *
 * An asked decision gets a second line once its outcome is known (`recordOutcome`): the same
 * decisionId, with `outcome` (allowed, denied, unknown), `by` (agent, host or hookd) and `via` (the
 * event that told, or the host's or hookd's account). See docs/tenants.md for the format.
 *
 * Every text a host, an agent or a hook chose is clipped, and each line is written as inert JSON (no
 * character a terminal acts on, no newline of its own), so `--audit -` cannot be steered from a hook.
 * Writing is audit-file.ts: each line reaches the file before its result is sent, and a line the disk
 * refuses is counted and reported, never dropped silently.
 */
import { randomUUID } from 'node:crypto'
import type { PointResultData } from '../../protocol/wire.js'
import type { ChainTrace, DecidedBy } from '../chain/chain.js'
import { getPoint, isGate } from '../../protocol/points/points.js'
import { clip, inert } from '../../protocol/text.js'
import { type HookPermissions, describePermissions } from '../../protocol/hook-permissions.js'
import type { AskedQuestion, OutcomeReport } from '../observability/observer.js'
import { type AuditSink, openAuditSink } from './audit-file.js'

export interface AuditOptions {
  /** A file path (appended to), or '-' for stdout. */
  to: string
  /** Also log each call's payload, result and diagnostic messages. Default false. */
  payloads?: boolean
  /**
   * The log's own news, one line each (it cannot write, still cannot, writes again, how many it did not
   * write). Default: `hookd: ...` lines on stderr.
   */
  report?(line: string): void
}

/** Who made a call: the tenant, the session, and the agent and folder the session named. */
export interface AuditContext {
  tenant: string | undefined
  session: string
  /** The session's agent id (OpenSession.agent_id; `claude-code`, ... at the front door). */
  agent: string
  /** The session's workdir (the agent's cwd at the front door). */
  workdir: string
  /** The revision of the bundle its hooks come from (hookd serve --hooks-from), when they come from one. */
  revision?: string | undefined
}

/** How long the agent and workdir in a line may be; longer ones are clipped. */
const AGENT_CHARS = 128
const WORKDIR_CHARS = 4096

/** The decision of a gate point, as the chain's result says it (allow or not, and who refused). */
export interface GateDecision {
  allow: boolean
  reason?: string
  /** The hook that refused, or 'hookd' when the sidecar did (a quota). */
  by?: string
}

/**
 * A gate's decision in an audit line: `allowed`, `refused` (with its reason and who), or `asked` (the
 * call went to the agent's own prompt, with each question; no `allow`, since the agent's person
 * decides, and the outcome line says what they did).
 */
export type AuditDecision =
  | { outcome: 'allowed'; allow: true }
  | { outcome: 'refused'; allow: false; reason?: string; by?: string }
  | { outcome: 'asked'; asked: AskedQuestion[] }

export interface AuditLine {
  time: string
  decisionId: string
  tenant: string | null
  session: string
  agent: string
  workdir: string
  seq: number
  point: string
  /** The bundle revision the hooks came from (hookd serve --hooks-from); absent otherwise. */
  revision?: string
  hooks: Array<{
    hook: string
    version: string
    /** The content digest of the version that ran (what hookd.lock pins). */
    digest?: string
    outcome: string
    durationUs: number
    cpuUs: number
    /** Confirms no person saw (the auto-approve flag answered): each answer, and the question with payloads. */
    autoConfirms?: Array<{ approved: boolean; title?: string; body?: string }>
    /** Where the hook comes from (chain/layer.ts). */
    layer?: string
    /** A shadow hook: what it would have decided (chain/would.ts); it enforced nothing. */
    would?: string
    /** hook.json "permissions" in one line; null: the hook declares none. Absent when the session did not say. */
    permissions?: string | null
  }>
  decision?: AuditDecision
  /**
   * The layer whose hook made the result what it is: the one that refused a gate (also when hookd
   * refused because that hook could not decide), else the last one that changed something; `hookd`
   * for a quota or a cancel; absent when no hook changed anything.
   */
  layer?: DecidedBy['layer']
  diagnostics: Array<{ hook: string; kind: string; message?: string }>
  durationUs: number
  payload?: unknown
  result?: unknown
}

export class AuditLog {
  private readonly payloads: boolean

  private constructor(private readonly sink: AuditSink, options: AuditOptions) {
    this.payloads = options.payloads ?? false
  }

  /** Opens the log; fails with a message naming the file when it cannot be written. */
  static async open(options: AuditOptions): Promise<AuditLog> {
    const report = options.report ?? ((line: string) => void process.stderr.write(`hookd: ${inert(line)}\n`))
    return new AuditLog(await openAuditSink(options.to, report), options)
  }

  /** Decisions not written since the last line that was (the disk is full now, say). */
  get unwritten(): number {
    return this.sink.unwritten
  }

  /** Decisions not written since the log was opened. */
  get totalUnwritten(): number {
    return this.sink.totalUnwritten
  }

  /**
   * Writes one result's line; `asked` are the questions deferred to the agent's prompt during it,
   * `granted` the declared permissions of the hooks that ran (undefined: none declared).
   */
  record(
    who: AuditContext,
    result: AuditedResult,
    payload: unknown,
    asked: readonly AskedQuestion[] = [],
    granted?: ReadonlyMap<string, HookPermissions | undefined>,
  ): void {
    const line: AuditLine = {
      time: new Date().toISOString(),
      decisionId: result.decisionId,
      tenant: who.tenant ?? null,
      session: who.session,
      agent: clip(who.agent, AGENT_CHARS),
      workdir: clip(who.workdir, WORKDIR_CHARS),
      seq: result.seq,
      point: result.point,
      ...(who.revision !== undefined ? { revision: clip(who.revision, 128) } : {}),
      hooks: result.trace.map((t: ChainTrace) => ({
        hook: t.hook,
        version: t.version,
        ...(t.digest ? { digest: t.digest } : {}),
        outcome: t.outcome,
        durationUs: t.durationUs,
        cpuUs: t.cpuUs,
        ...(t.autoConfirms ? { autoConfirms: t.autoConfirms.map((c) => (this.payloads ? c : { approved: c.approved })) } : {}),
        ...(t.layer !== undefined ? { layer: t.layer } : {}),
        ...(t.would !== undefined ? { would: t.would } : {}),
        ...(granted?.has(t.hook) ? { permissions: permissionsLine(granted.get(t.hook)) } : {}),
      })),
      diagnostics: result.diagnostics.map((d) => (this.payloads ? { hook: d.hook, kind: d.kind, message: d.message } : { hook: d.hook, kind: d.kind })),
      durationUs: result.durationUs,
    }
    const decision = gateDecision(result.point, result.result)
    if (decision) line.decision = auditDecision(decision, asked)
    const layer = result.decidedBy?.layer ?? (decision?.allow === false ? 'hookd' : undefined)
    if (layer !== undefined) line.layer = layer
    if (this.payloads) {
      line.payload = payload
      line.result = result.result
    }
    this.write(line)
  }

  /** Writes the second line of an asked decision: what became of the call. */
  recordOutcome(who: AuditContext, report: OutcomeReport): void {
    this.write({
      time: new Date().toISOString(),
      decisionId: report.decisionId,
      tenant: who.tenant ?? null,
      session: who.session,
      agent: clip(who.agent, AGENT_CHARS),
      workdir: clip(who.workdir, WORKDIR_CHARS),
      outcome: report.outcome,
      by: report.by,
      via: report.via,
    })
  }

  private write(line: object): void {
    this.sink.write(line)
  }

  /** Closes the log (saying how many decisions it could not write, if it still cannot). */
  close(): Promise<void> {
    return this.sink.close()
  }
}

/** A result as the audit log records it: with its decision id, and who decided it when the chain says. */
export type AuditedResult = PointResultData & { decisionId: string; decidedBy?: DecidedBy | undefined }

/**
 * The decision in a gate's result: `{allow, reason, refusedBy}` (step point), or the changed fields of a
 * event gate (`{block: true, reason}` when refused, no `block` when let through). Undefined for points
 * that are not gates.
 */
export function gateDecision(point: string, result: unknown): GateDecision | undefined {
  const spec = getPoint(point)
  if (!spec || !isGate(spec)) return undefined
  const r = (result !== null && typeof result === 'object' ? result : {}) as Record<string, unknown>
  const reason = typeof r.reason === 'string' ? r.reason : undefined
  if (typeof r.allow === 'boolean') {
    const d: GateDecision = { allow: r.allow }
    if (!r.allow && reason !== undefined) d.reason = reason
    if (!r.allow && typeof r.refusedBy === 'string') d.by = r.refusedBy
    return d
  }
  const d: GateDecision = { allow: r.block !== true }
  if (r.block === true && reason !== undefined) d.reason = reason
  return d
}

/** A hook's permissions in its audit entry: one line, clipped; null for a hook that declares none. */
function permissionsLine(granted: HookPermissions | undefined): string | null {
  return granted === undefined ? null : clip(describePermissions(granted), PERMISSIONS_CHARS)
}

/** How long a hook's permissions may be in a line (the block itself is bounded: hook-permissions.ts). */
const PERMISSIONS_CHARS = 2048

/** A gate's decision as its audit line says it: asked when the chain let it through with questions deferred. */
function auditDecision(decision: GateDecision, asked: readonly AskedQuestion[]): AuditDecision {
  if (!decision.allow) {
    return { outcome: 'refused', allow: false, ...(decision.reason !== undefined ? { reason: decision.reason } : {}), ...(decision.by !== undefined ? { by: decision.by } : {}) }
  }
  return asked.length ? { outcome: 'asked', asked: [...asked] } : { outcome: 'allowed', allow: true }
}

/**
 * Gives a result its decision id and writes its audit line (when there is a log). Called once per point
 * result, by the session, just before the result is sent. `asked` are the questions the session's link
 * deferred to the agent's prompt: with them, an allowed gate is recorded as asked.
 */
export function decide<R extends PointResultData & { decidedBy?: DecidedBy | undefined }>(
  result: R,
  who: AuditContext,
  payload: unknown,
  audit: AuditLog | undefined,
  asked: readonly AskedQuestion[] = [],
  granted?: ReadonlyMap<string, HookPermissions | undefined>,
): R & { decisionId: string; asked?: readonly AskedQuestion[] } {
  const decided = { ...result, decisionId: randomUUID(), ...(asked.length ? { asked } : {}) }
  audit?.record(who, decided, payload, asked, granted)
  return decided
}
