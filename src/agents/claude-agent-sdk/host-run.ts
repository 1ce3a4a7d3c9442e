/**
 * An agent run over gRPC: a hookd Session stream opened through the host library, for an agent that
 * lives in this process (the Claude Agent SDK). The host library serves the hooks' capabilities here:
 * files confined to the run's workdir, fetch to the allowed origins, and `ctx.confirm` either by the
 * application's own `confirm` (a person answers while the hook waits) or, without one, by the agent's
 * permission flow: at a gate the confirm is answered `'deferred'` (yes for the chain, and the sidecar
 * records the decision asked, with the question), so the adapter answers `ask` (the SDK then asks the
 * application's `canUseTool`).
 *
 * Each ask then waits for its outcome (pending-asks.ts, bounded like the front door's) until the SDK's
 * own events say what became of the call (the adapter calls `outcome`: PostToolUse or
 * PostToolUseFailure, it ran; PostToolBatch without them or PermissionDenied, it did not) or the run
 * ends; each outcome is reported to the sidecar (HostSession.reportOutcome), which writes it as the
 * decision's second audit line. The sidecar holds the same bounds (64 waiting, 30 minutes) and records
 * an ask they settle itself, so those are not reported twice.
 *
 * Calls of one run go one at a time, so a confirm always belongs to the call in flight.
 *
 * Which points the run serves follows the sidecar's hot reloads (live-hooks.ts): a run that opened
 * before a guard gained its PreToolUse handler asks the chain from the next tool call on.
 */
import type { CallOrigin, CapabilityHandlers, ConfirmAnswer, Message } from '../../host/capabilities.js'
import type { HookdClient, SessionOptions } from '../../host/client.js'
import type { HostSession } from '../../host/session.js'
import type { Diagnostic } from '../../protocol/diagnostic.js'
import { type PointName, getPoint, isGate } from '../../protocol/points/points.js'
import type { AgentRun, Ask, AskOutcome, AskSettled, ChainAnswer, OutcomeVia, RunEndReason, RunEndedBy, RunPoint, RunStart } from '../agent-run.js'
import { PendingAsks, type PendingAsksOptions } from '../pending-asks.js'
import { LiveHooks } from './live-hooks.js'

export interface HostRunOptions {
  hooks: readonly string[]
  policy?: SessionOptions['policy']
  /** What a hook's failure does at a gate. Default `refuse-unless-skip`. */
  onError?: SessionOptions['onError']
  env?: Record<string, string>
  /** The application answers ctx.confirm itself; without it, a confirm at a gate becomes `ask`. */
  confirm?(message: Message, origin: CallOrigin): boolean | Promise<boolean>
  /** Other capability handlers (notify, log, file, fetch); the host library's defaults otherwise. */
  capabilities?: Omit<CapabilityHandlers, 'confirm'>
  /** Every diagnostic of every call, and those the sidecar pushes. */
  onDiagnostic(d: Diagnostic): void
  /**
   * Whether the SDK sends the events that say a call ran (PostToolUse and PostToolUseFailure are
   * registered): then an ask with no word of its call by the end of the run was denied; else unknown.
   */
  reportsRan?: boolean
  /** The bounds of the asks waiting for their outcome (pending-asks.ts). Default 64, 30 minutes. */
  asks?: Omit<PendingAsksOptions, 'settled'>
}

/** Settlements the sidecar makes itself, by the same bounds (asked-decisions.ts): not reported. */
const SIDECAR_BOUNDS: ReadonlySet<OutcomeVia> = new Set(['too many asks', 'expired'])

export class HostRun implements AgentRun {
  /** The asks of the call in flight; undefined between calls. */
  private collecting: Ask[] | undefined
  private queue: Promise<unknown> = Promise.resolve()
  /** The asks whose outcome the SDK has yet to say. */
  private readonly pending: PendingAsks
  /** Set when the run is abandoned: the sidecar settles what is left, nothing more is reported. */
  private quiet = false

  private constructor(
    private session: HostSession,
    private readonly live: LiveHooks,
    private readonly onDiagnostic: (d: Diagnostic) => void,
    private readonly reportsRan: boolean,
    bounds: Omit<PendingAsksOptions, 'settled'>,
  ) {
    this.pending = new PendingAsks({ ...bounds, settled: (settled) => this.report(settled) })
  }

  static async open(client: HookdClient, start: RunStart, options: HostRunOptions): Promise<HostRun> {
    let run: HostRun | undefined
    let live: LiveHooks | undefined
    const early: Diagnostic[] = []
    const confirm = async (message: Message, origin: CallOrigin): Promise<ConfirmAnswer> => {
      if (options.confirm) return options.confirm(message, origin)
      const point = getPoint(origin.point)
      const collecting = run?.collecting
      if (!point || !isGate(point) || !collecting) return false
      collecting.push({ hook: origin.hook, title: message.title, ...(message.body !== undefined ? { body: message.body } : {}) })
      // Yes for the chain; the SDK's canUseTool decides, so the sidecar records it asked.
      return 'deferred'
    }
    const session = await client.openSession({
      sessionId: start.key.sessionId,
      agentId: start.agentId,
      modelId: start.modelId,
      hooks: options.hooks,
      workdir: start.key.workdir,
      interactive: true,
      // A guard's own bug refuses the agent's call, unless its hook.json says "onError": "skip".
      onError: options.onError ?? 'refuse-unless-skip',
      ...(options.policy ? { policy: options.policy } : {}),
      ...(options.env ? { env: options.env } : {}),
      capabilities: {
        ...options.capabilities,
        confirm,
        diagnostic: (d) => {
          // A diagnostic pushed right after `opened` may come before this function has the session.
          if (live) live.pushed(d)
          else early.push(d)
          options.onDiagnostic(d)
        },
      },
    })
    live = new LiveHooks(options.hooks, session.hooks, () => client.listHooks())
    for (const d of early.splice(0)) live.pushed(d)
    run = new HostRun(session, live, options.onDiagnostic, options.reportsRan ?? false, options.asks ?? {})
    return run
  }

  /** What the sidecar serves now (live-hooks.ts), not what it served when the run opened. */
  serves(point: RunPoint): boolean {
    return this.live.serves(point)
  }

  call(point: RunPoint, payload: unknown): Promise<ChainAnswer> {
    const next = this.queue.then(async () => {
      const asks: Ask[] = []
      this.collecting = asks
      try {
        const result = await this.session.call(point as PointName, payload as never)
        for (const d of result.diagnostics) this.onDiagnostic(d)
        return { result: result.result, diagnostics: result.diagnostics, asks, ...(result.decisionId ? { decisionId: result.decisionId } : {}) }
      } finally {
        this.collecting = undefined
      }
    })
    this.queue = next.catch(() => {})
    return next
  }

  /** An ask the sidecar recorded asked: followed only where the sidecar takes outcome reports. */
  awaitOutcome(key: string, decisionId: string): void {
    if (this.session.askOutcomes) this.pending.add(key, decisionId)
  }

  outcome(key: string, outcome: AskOutcome, via: OutcomeVia, by: 'agent' | 'hookd' = 'agent'): void {
    this.pending.settle(key, outcome, via, by)
  }

  awaitsOutcomes(): boolean {
    return this.pending.size > 0
  }

  /** Ends the run: the asks still waiting are settled (and reported) before the session closes. */
  async close(reason: RunEndReason, endedBy: RunEndedBy = 'agent'): Promise<ChainAnswer> {
    await this.queue
    this.live.close()
    this.pending.end(endedBy, this.reportsRan)
    const result = await this.session.close(reason)
    for (const d of result.diagnostics) this.onDiagnostic(d)
    return { result: result.result, diagnostics: result.diagnostics, asks: [] }
  }

  abort(): void {
    this.quiet = true
    this.pending.end('hookd', false)
    this.live.close()
    this.session.abandon()
  }

  /**
   * Tells the sidecar what became of an ask: said by the agent (its events, its end of the run), or
   * concluded by this host (a rewrite the tool cannot take, a run hookd ended). A refusal means the
   * sidecar's record differs from this run's, which is hookd's fault: a diagnostic says so.
   */
  private report(settled: AskSettled): void {
    if (this.quiet || this.session.isEnded) return
    if (settled.by === 'hookd' && SIDECAR_BOUNDS.has(settled.via)) return
    const by = settled.by === 'agent' ? 'agent' : 'host'
    this.session.reportOutcome({ decisionId: settled.decisionId, outcome: settled.outcome, via: settled.via, by }).catch((err: unknown) => {
      if (this.session.isEnded) return
      this.onDiagnostic({
        hook: '',
        point: 'beforeToolExecute',
        kind: 'internal',
        message: `hookd did not record the outcome of decision ${settled.decisionId} (${settled.outcome}, via ${settled.via}): ${err instanceof Error ? err.message : String(err)}`,
      })
    })
  }
}
