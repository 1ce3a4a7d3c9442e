/**
 * The one adapter for every agent (registry.ts): an agent's event arrives (Claude Code's `http` hooks
 * post it, the shim bin/hookd-hook posts the others', the Claude Agent SDK hands it to a callback), its
 * dialect reads it (hook-event.ts), and this runs hookd's points on the session's run and has the
 * dialect answer in the agent's JSON.
 *
 * One agent session (in one folder, through one hook entry) is one hookd session (agent-runs.ts):
 * opened at its first event, beforeRun first; ended by the agent's end events, or when idle. Where a
 * refusal can stop something (a dialect's gates), a problem with the event or the run (an unknown
 * hook, a cwd that cannot be a workdir) is a refusal the model reads, not an error the agent might
 * shrug off.
 */
import { HookdError } from '../protocol/status.js'
import type { Peer, RunKey, RunStart } from './agent-run.js'
import type { AgentRuns } from './agent-runs.js'
import type { Dialect, DialectAnswer, ToolVerdict } from './hook-event.js'
import { agentPoint } from './agent-point.js'
import { callKey, filterResult, gateTool } from './tool-gate.js'
import { workdirPath } from './workdir.js'

export interface AgentAdapterOptions {
  /** Lines for the operator. Default: none. */
  report?(line: string): void
}

export class AgentAdapter<E> {
  private readonly report: (line: string) => void

  constructor(
    readonly dialect: Dialect<E>,
    private readonly runs: AgentRuns,
    options: AgentAdapterOptions = {},
  ) {
    this.report = options.report ?? (() => {})
  }

  /**
   * Answers one event (already parsed within size and depth limits). `channel` and `options.peer` key
   * the runs (RunKey); `name` is the event's name when the route gives it (`?event=`). When
   * `options.signal` aborts (the agent went away), the event's point call is cancelled (AgentRuns.with).
   */
  async handle(body: unknown, channel?: string, name?: string, options: { peer?: Peer | undefined; signal?: AbortSignal | undefined } = {}): Promise<DialectAnswer> {
    try {
      return (await this.dispatch(body, channel, name, options.peer, options.signal)) ?? this.dialect.quiet
    } catch (err) {
      if (!this.dialect.isGate(body, name)) throw err
      const reason = `hookd could not check this call, so it is refused: ${HookdError.from(err).message}`
      this.report(reason)
      return this.dialect.refuse(body, reason)
    }
  }

  private async dispatch(body: unknown, channel: string | undefined, name: string | undefined, peer: Peer | undefined, signal: AbortSignal | undefined): Promise<DialectAnswer> {
    const d = this.dialect
    const { session, event, native, name: own } = d.parse(body, name)
    if (event.kind === 'other') return undefined
    const workdir = workdirPath(session.cwd, d.cwdField)
    const key: RunKey = { sessionId: session.sessionId, workdir, ...(channel !== undefined ? { channel } : {}), ...(peer ? { peer } : {}) }
    const start: RunStart = {
      key,
      agentId: d.agent,
      modelId: session.model ?? '',
      canAsk: d.canAsk,
      ...(session.permissionMode !== undefined ? { permissionMode: session.permissionMode } : {}),
    }
    switch (event.kind) {
      case 'start':
        return this.runs.with(start, async () => undefined, signal)
      case 'prompt':
        return this.runs.with(start, async (run) => {
          if (!d.promptContext || !run.serves('beforeModelRequest')) return undefined
          // The agent's system prompt is not the hooks' to see or replace: they get an empty one, and
          // what they add to it reaches the model as context, where the agent takes any.
          const answer = await run.call('beforeModelRequest', { system: '', model: session.model ?? '', messages: [{ role: 'user', text: event.prompt }] })
          const system = (answer.result as { system?: unknown }).system
          return typeof system === 'string' && system.trim() !== '' ? d.promptContext(native, system.trim()) : undefined
        }, signal)
      case 'beforeTool':
        return this.runs.with(start, async (run) => {
          const putsAsk = (ask: Extract<ToolVerdict, { kind: 'ask' }>): boolean => d.putsAsk?.(native, ask) ?? true
          return d.tool(native, this.deferral(await gateTool(run, d.tools, d.title, event.call, workdir, this.report, d.asks, putsAsk), putsAsk))
        }, signal)
      case 'point':
        return this.runs.with(start, (run) => agentPoint(run, d, native, event, workdir, this.report, signal), signal)
      case 'afterTool':
        return this.runs.with(start, async (run) => {
          // The call ran: an ask waiting for it was allowed (Copilot names no call: its tool and arguments do).
          if (d.asks === 'follow' && run.awaitsOutcomes?.()) {
            const via = own ?? (name !== undefined && d.events.includes(name) ? name : 'afterTool')
            run.outcome?.(callKey(event.call.tool, event.call.id, event.call.input), 'allowed', via)
          }
          return d.result(native, await filterResult(run, d.tools, event.call, workdir, event.text, event.isError))
        }, signal)
      case 'outcome':
        // Only settles asks: with no run open, no ask of it waits (and no run is opened for it).
        if (!this.runs.isOpen(key)) return undefined
        return this.runs.with(start, async (run) => {
          if (!run.awaitsOutcomes?.()) return undefined
          for (const c of event.calls) run.outcome?.(callKey(c.tool, c.id, c.input), event.outcome, own ?? 'outcome')
          return undefined
        }, signal)
      case 'end':
        await this.runs.end(key, event.reason)
        return undefined
    }
  }

  /**
   * A deferred call, for an agent with no "decide later" of its own: its person is asked where the
   * agent can put the ask, and otherwise the call is refused, saying it was deferred.
   */
  private deferral(verdict: ToolVerdict, putsAsk: (ask: Extract<ToolVerdict, { kind: 'ask' }>) => boolean): ToolVerdict {
    if (verdict.kind !== 'defer' || this.dialect.canDefer) return verdict
    const ask = { kind: 'ask' as const, reason: `${verdict.reason} (a hook deferred this call; ${this.dialect.title} cannot defer, so it asks)` }
    if (this.dialect.canAsk && putsAsk(ask)) return ask
    return { kind: 'deny', reason: `${verdict.reason} (a hook deferred this call; ${this.dialect.title} cannot defer or ask, so hookd refuses it)` }
  }
}
