/**
 * Claude Code's events through hookd's points, answered in Claude Code's JSON: the one agent adapter
 * (../agent-adapter.ts) with Claude Code's dialect (claude-code-dialect.ts), under the name the Claude
 * Agent SDK's callbacks use (claude-agent-sdk/index.ts). The front door reaches the same adapter
 * through the registry (../registry.ts).
 */
import { AgentAdapter } from '../agent-adapter.js'
import type { Peer } from '../agent-run.js'
import type { AgentRuns } from '../agent-runs.js'
import { CLAUDE_CODE_DIALECT, type ClaudeCodeEvent } from './claude-code-dialect.js'

/** Claude Code's hook answer: `{}` for no opinion, or `hookSpecificOutput` for the event. */
export type ClaudeCodeAnswer = { hookSpecificOutput?: Record<string, unknown> }

export interface ClaudeCodeAdapterOptions {
  /** Lines for the operator: dropped fields, diagnostics of end events. Default: none. */
  report?(line: string): void
}

export class ClaudeCodeAdapter {
  private readonly adapter: AgentAdapter<ClaudeCodeEvent>

  constructor(runs: AgentRuns, options: ClaudeCodeAdapterOptions = {}) {
    this.adapter = new AgentAdapter(CLAUDE_CODE_DIALECT, runs, options)
  }

  /**
   * Answers one event (its JSON already parsed within size and depth limits). A problem with the event,
   * or a run that cannot open (an unknown hook), is a HookdError; at PreToolUse it is a refusal instead,
   * so the model and the person read why the tool did not run. `channel` keeps apart the runs of
   * different hook entries, `options.peer` those of different users (see RunKey). When `options.signal`
   * aborts (the agent went away), the event's point call is cancelled (AgentRuns.with).
   */
  async handle(body: unknown, channel?: string, options: { peer?: Peer | undefined; signal?: AbortSignal | undefined } = {}): Promise<ClaudeCodeAnswer> {
    // The dialect's quiet answer is `{}`: an answer is always there.
    return ((await this.adapter.handle(body, channel, undefined, options)) ?? {}) as ClaudeCodeAnswer
  }
}
