/**
 * An agent run over gRPC: a hookd Session stream opened through the host library, for an agent that
 * lives in this process (the Claude Agent SDK). The host library serves the hooks' capabilities here:
 * files confined to the run's workdir, fetch to the allowed origins, and `ctx.confirm` either by the
 * application's own `confirm` (a person answers while the hook waits) or, without one, by the agent's
 * permission flow: at a gate the confirm is answered yes for the chain and recorded, so the adapter
 * answers `ask` (the SDK then asks the application's `canUseTool`).
 *
 * Calls of one run go one at a time, so a confirm always belongs to the call in flight.
 *
 * Which points the run serves follows the sidecar's hot reloads (live-hooks.ts): a run that opened
 * before a guard gained its PreToolUse handler asks the chain from the next tool call on.
 */
import type { CallOrigin, CapabilityHandlers, Message } from '../../host/capabilities.js'
import type { HookdClient, SessionOptions } from '../../host/client.js'
import type { HostSession } from '../../host/session.js'
import type { Diagnostic } from '../../protocol/diagnostic.js'
import { type PointName, type StepPointName, getPoint, isGate } from '../../protocol/points.js'
import type { AgentRun, Ask, ChainAnswer, RunEndReason, RunStart } from '../agent-run.js'
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
}

export class HostRun implements AgentRun {
  /** The asks of the call in flight; undefined between calls. */
  private collecting: Ask[] | undefined
  private queue: Promise<unknown> = Promise.resolve()

  private constructor(
    private session: HostSession,
    private readonly live: LiveHooks,
    private readonly onDiagnostic: (d: Diagnostic) => void,
  ) {}

  static async open(client: HookdClient, start: RunStart, options: HostRunOptions): Promise<HostRun> {
    let run: HostRun | undefined
    let live: LiveHooks | undefined
    const early: Diagnostic[] = []
    const confirm = async (message: Message, origin: CallOrigin): Promise<boolean> => {
      if (options.confirm) return options.confirm(message, origin)
      const point = getPoint(origin.point)
      const collecting = run?.collecting
      if (!point || !isGate(point) || !collecting) return false
      collecting.push({ hook: origin.hook, title: message.title, ...(message.body !== undefined ? { body: message.body } : {}) })
      return true
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
    run = new HostRun(session, live, options.onDiagnostic)
    return run
  }

  /** What the sidecar serves now (live-hooks.ts), not what it served when the run opened. */
  serves(point: StepPointName): boolean {
    return this.live.serves(point)
  }

  call(point: StepPointName, payload: unknown): Promise<ChainAnswer> {
    const next = this.queue.then(async () => {
      const asks: Ask[] = []
      this.collecting = asks
      try {
        const result = await this.session.call(point as PointName, payload as never)
        for (const d of result.diagnostics) this.onDiagnostic(d)
        return { result: result.result, diagnostics: result.diagnostics, asks }
      } finally {
        this.collecting = undefined
      }
    })
    this.queue = next.catch(() => {})
    return next
  }

  async close(reason: RunEndReason): Promise<ChainAnswer> {
    await this.queue
    this.live.close()
    const result = await this.session.close(reason)
    for (const d of result.diagnostics) this.onDiagnostic(d)
    return { result: result.result, diagnostics: result.diagnostics, asks: [] }
  }

  abort(): void {
    this.live.close()
    this.session.abandon()
  }
}
