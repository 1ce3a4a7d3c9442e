/**
 * An agent run whose host is the front door itself: a sidecar `Session` opened for an agent that
 * speaks HTTP (Claude Code), with the front door serving the hooks' capabilities in the host's place:
 *
 * - `ctx.file.*`: the host library's default handlers, confined to the run's workdir as it was when the
 *   run opened (real path, pinned), never under a protected path, with the agent's user's privileges
 *   (run-files.ts); read-only unless the profile opts in;
 * - `ctx.http.fetch`: the host library's allowlisted fetch, with the profile's origins;
 * - `ctx.log` and `ctx.notify`: lines for the operator (the sidecar's stderr);
 * - `ctx.confirm` at a gate, in `ask` mode: answered yes for the chain, and recorded so that the
 *   adapter answers the agent `ask` (its own permission prompt decides). Elsewhere, when the agent
 *   cannot ask (Codex, Gemini CLI), or when its permission mode never asks (dontAsk,
 *   bypassPermissions), answered no.
 *
 * A deferred confirm's yes is marked so (session.ts LinkReply): the Session records the decision as
 * asked, not allowed. The run then keeps the ask waiting (pending-asks.ts, bounded) until the agent
 * says what became of the call (the adapters call `outcome`), or the run ends; each outcome is the
 * audit log's second line for the decision (Session.outcome).
 *
 * The session's own policy and its tenant's are checked by the Session before any call gets here.
 */
import type { AgentRun, Ask, AskOutcome, ChainAnswer, OutcomeVia, RunEndReason, RunEndedBy, RunPoint, RunStart } from '../../agents/agent-run.js'
import { label as sessionLabel } from '../../agents/agent-runs.js'
import { PendingAsks, type PendingAsksOptions } from '../../agents/pending-asks.js'
import { type CapabilityHandlers, type FileHandlers, allowlistedFetch } from '../../host/capabilities.js'
import { type CapabilityTable, capabilityTable, serveCall } from '../../host/capability-table.js'
import { policyClassOf } from '../../protocol/capabilities.js'
import type { Diagnostic } from '../../protocol/diagnostic.js'
import { type AnyPoint, getPoint, handlerFor, isGate } from '../../protocol/points/points.js'
import { PROTOCOL_VERSION } from '../../protocol/version.js'
import type { CapabilityCallData, PointResultData } from '../../protocol/wire.js'
import { mayAsk } from '../hooks/may-ask.js'
import type { SessionObserver } from '../observability/observer.js'
import { type LinkReply, Session } from '../session/session.js'
import type { Tenant } from '../tenant.js'
import type { Profile } from './agent-route.js'
import type { DoorCapture, RunTap } from './door-capture.js'
import { runFiles } from './run-files.js'
import type { UserFiles } from './user-files.js'

/** Permission modes in which the agent never asks its person, so a confirm is answered no at once. */
export const NEVER_ASKS = new Set(['dontAsk', 'bypassPermissions'])

export interface SidecarRunOptions {
  tenant: Tenant
  start: RunStart
  profile: Profile
  /**
   * Serve ctx.file from this machine's disk, confined to the workdir. True when the agent runs where
   * the sidecar does (a sidecar without tenants); false for tenants' agents, whose files are on their
   * own machines: the same path here is some other file, so hooks get a refusal instead.
   */
  localFiles: boolean
  /** The HTTP token's file: hooks neither read nor write it. */
  tokenFile?: string | undefined
  /** Serves the file calls of runs whose agent's user is not the sidecar's (run-files.ts). */
  userFiles?: UserFiles | undefined
  /** Lines for the operator. */
  report(line: string): void
  /** Metrics, traces and logs of the run's session. */
  observe?: SessionObserver
  /** The bounds of the asks waiting for their outcome (pending-asks.ts). */
  asks?: Omit<PendingAsksOptions, 'settled'>
  /** Sees the run's point calls (`hookd serve --capture`, door-capture.ts). */
  capture?: DoorCapture | undefined
}

export class SidecarRun implements AgentRun {
  private nextSeq = 1
  /** The asks whose outcome the agent has yet to report. */
  private readonly pending: PendingAsks

  private constructor(
    private readonly tenant: Tenant,
    private readonly session: Session,
    private readonly declared: readonly string[],
    /** The confirms left to the agent, by the seq of the point call that made them. */
    private readonly asks: Map<number, Ask[]>,
    private readonly report: (line: string) => void,
    /** Lets the run's file helper forget it (run-files.ts). */
    private readonly releaseFiles: () => void,
    bounds: Omit<PendingAsksOptions, 'settled'>,
    private readonly tap: RunTap | undefined,
  ) {
    this.pending = new PendingAsks({ ...bounds, settled: (settled) => session.outcome(settled) })
  }

  /** Opens the run's Session. Throws a HookdError when it cannot (an unknown hook, most often). */
  static open(options: SidecarRunOptions): SidecarRun {
    const { tenant, start, profile } = options
    // The session id is the agent's event text: inert, and short (agent-runs.ts label).
    const label = `${start.agentId} session ${sessionLabel(start.key.sessionId)}`
    const report = (line: string): void => options.report(`${label}: ${line}`)
    const ask = profile.confirm === 'ask' && start.canAsk !== false && !NEVER_ASKS.has(start.permissionMode ?? '')
    const asks = new Map<number, Ask[]>()
    const files = runFiles({
      checked: options.localFiles ? start.checked : undefined,
      hooksRoot: tenant.registry.root,
      tokenFile: options.tokenFile,
      userFiles: options.userFiles,
    })
    const serving: Serving = {
      files: files.files,
      fetch: allowlistedFetch(profile.policy.httpOrigins),
      report,
      ask: (seq, a) => {
        const list = asks.get(seq)
        if (!ask || !list) return false
        list.push(a)
        return true
      },
    }
    const table = frontDoorTable(serving)
    const env: Record<string, string> = {}
    for (const name of profile.policy.env) {
      const value = process.env[name]
      if (value !== undefined) env[name] = value
    }
    const route = (start.key.channel ?? '').slice(start.agentId.length + 1)
    const tap = options.capture?.run({ sessionId: start.key.sessionId, agentId: start.agentId, modelId: start.modelId, route, profile, interactive: ask, autoApprove: profile.confirm === 'allow', env })
    // A run that fails to open made no file call: nothing of its files needs releasing.
    const { session } = Session.open(
      tenant,
      {
        protocolVersion: PROTOCOL_VERSION,
        sessionId: start.key.sessionId,
        agentId: start.agentId,
        modelId: start.modelId,
        hooks: profile.hooks,
        workdir: start.key.workdir,
        // With `ask`, confirms come to this link (serve, below); otherwise the Session answers them itself.
        interactive: ask,
        autoApprove: profile.confirm === 'allow',
        policy: { file: profile.policy.file, httpOrigins: profile.policy.httpOrigins, env: profile.policy.env, denyConfirm: false },
        env,
        onError: profile.onError,
      },
      {
        capability: (c) => (tap ? serve(c, table).then((reply) => (tap.capability(c, reply), reply)) : serve(c, table)),
        log: (line) => {
          tap?.log(line)
          report(`[${line.hook}] ${line.message}`)
        },
        diagnostic: (d) => {
          tap?.diagnostic(d)
          report(describe(d))
        },
      },
      options.observe,
    )
    return new SidecarRun(tenant, session, profile.hooks, asks, report, files.release, options.asks ?? {}, tap)
  }

  /**
   * True when some declared hook serves the point; for a gate, also when a declared hook is not loaded
   * (which points it serves is unknown: the chain decides, and refuses when the hook must not be skipped).
   */
  serves(point: RunPoint): boolean {
    const spec = getPoint(point) as AnyPoint
    return this.declared.some((name) => {
      const hook = this.tenant.registry.get(name)
      if (!hook) return isGate(spec)
      return handlerFor(spec, hook.points) !== undefined
    })
  }


  /** A signal that aborts (the agent went away) cancels the point call, as a host's cancel message does. */
  async call(point: RunPoint, payload: unknown, signal?: AbortSignal): Promise<ChainAnswer> {
    const seq = this.nextSeq++
    this.asks.set(seq, [])
    const cancel = (): void => this.session.cancel(seq)
    this.tap?.call(seq, point, payload)
    let seen: PointResultData | undefined
    try {
      const running = this.session.call(seq, point, Buffer.from(JSON.stringify(payload)))
      if (signal?.aborted) cancel()
      else signal?.addEventListener('abort', cancel, { once: true })
      const result = await running
      seen = result
      for (const d of result.diagnostics) this.report(describe(d))
      return { result: result.result, diagnostics: result.diagnostics, asks: this.asks.get(seq) ?? [], ...(result.decisionId ? { decisionId: result.decisionId } : {}) }
    } finally {
      this.tap?.result(seq, seen)
      signal?.removeEventListener('abort', cancel)
      this.asks.delete(seq)
    }
  }

  awaitOutcome(key: string, decisionId: string): void {
    this.pending.add(key, decisionId)
  }

  outcome(key: string, outcome: AskOutcome, via: OutcomeVia, by: 'agent' | 'hookd' = 'agent'): void {
    this.pending.settle(key, outcome, via, by)
  }

  awaitsOutcomes(): boolean {
    return this.pending.size > 0
  }

  async close(reason: RunEndReason, endedBy: RunEndedBy = 'agent'): Promise<ChainAnswer> {
    try {
      this.pending.end(endedBy, this.reportsRan())
      const result = await this.session.close(reason)
      for (const d of result.diagnostics) this.report(describe(d))
      return { result: result.result, diagnostics: result.diagnostics, asks: [] }
    } finally {
      this.releaseFiles()
    }
  }

  abort(): void {
    this.pending.end('hookd', false)
    this.session.abort()
    this.releaseFiles()
  }

  /**
   * Whether the agent would have reported a call that ran: the events that say so are the after-tool
   * ones, which setup registers when the hooks serve afterToolExecute or may ask at the gate
   * (front-door.ts describe). Read now: hot reloads change the hooks.
   */
  private reportsRan(): boolean {
    const after = getPoint('afterToolExecute') as AnyPoint
    const gate = getPoint('beforeToolExecute') as AnyPoint
    return this.declared.some((name) => {
      const hook = this.tenant.registry.get(name)
      return hook !== undefined && (handlerFor(after, hook.points) !== undefined || (handlerFor(gate, hook.points) !== undefined && mayAsk(hook)))
    })
  }
}

interface Serving {
  files: FileHandlers
  fetch: NonNullable<CapabilityHandlers['fetch']>
  report(line: string): void
  /** Records a gate's confirm for the agent's prompt; false when this run does not ask. */
  ask(seq: number, ask: Ask): boolean
}

/**
 * The front door's handlers, one per capability (capability-table.ts: a capability it does not serve is
 * a compile error here). Its confirm answers yes only when the question is left to the agent's prompt.
 */
function frontDoorTable(s: Serving): CapabilityTable {
  return capabilityTable({
    confirm: (message, origin) => {
      const gate = isGate(getPoint(origin.point) as AnyPoint)
      const asked = gate && s.ask(origin.seq, { hook: origin.hook, title: message.title, ...(message.body !== undefined ? { body: message.body } : {}) })
      if (!asked) s.report(`[${origin.hook}] ctx.confirm(${JSON.stringify(message.title)}) at ${origin.point} answered no: nobody can be asked there`)
      return asked
    },
    notify: (message, origin) => s.report(`[${origin.hook}] notify: ${message.title}${message.body ? `: ${message.body}` : ''}`),
    file: s.files,
    fetch: s.fetch,
  })
}

async function serve(c: CapabilityCallData, table: CapabilityTable): Promise<LinkReply> {
  const served = await serveCall(table, { capability: c.capability, args: c.args, origin: { hook: c.hook, point: c.point, seq: c.seq } })
  // The front door's yes to a question (ctx.confirm) is the agent's person's to give (frontDoorTable): a
  // deferral, so the Session records the decision as asked, not allowed.
  if (served.ok && policyClassOf(c.capability) === 'ask' && served.value === true) return { ok: true, value: true, deferred: true }
  return served
}

function describe(d: Diagnostic): string {
  return `${d.kind} diagnostic${d.hook ? ` from hook '${d.hook}'` : ''}: ${d.message}`
}

