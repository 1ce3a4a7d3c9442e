/**
 * One agent run as an adapter drives it: a hookd session whatever carries it. The HTTP front door
 * runs its sessions inside the sidecar (src/sidecar/http/sidecar-run.ts); the Claude Agent SDK
 * adapter runs them over gRPC through the host library (claude-agent-sdk/host-run.ts). Adapters only
 * see this seam, so one mapping serves both.
 */
import type { Diagnostic } from '../protocol/diagnostic.js'
import type { StepPointName } from '../protocol/points.js'
import type { CheckedWorkdir, Peer } from './workdir.js'

export type { Peer }

export type RunEndReason = 'end_turn' | 'interrupted' | 'error'

/**
 * A `ctx.confirm` a hook made during a gate, answered "yes" for the chain's sake and left to the
 * agent's own permission prompt (Claude Code's `ask`): the person's "no" there stops the call.
 */
export interface Ask {
  hook: string
  title: string
  body?: string
}

/** A point's chained answer, as an adapter needs it. */
export interface ChainAnswer {
  result: unknown
  diagnostics: Diagnostic[]
  /** The confirms left to the agent's prompt (only at gates, only when the run asks the agent). */
  asks: Ask[]
}

export interface AgentRun {
  /** True when some declared hook serves the point (directly or through an alias). */
  serves(point: StepPointName): boolean
  /**
   * Runs the point through the run's hooks. When `signal` aborts (the agent went away) the call is
   * cancelled: its chain stops, and a gate that could not decide comes back refused.
   */
  call(point: StepPointName, payload: unknown, signal?: AbortSignal): Promise<ChainAnswer>
  /** Runs afterRun with the reason and ends the session. */
  close(reason: RunEndReason): Promise<ChainAnswer | undefined>
  /** Ends the session at once, without afterRun (shutdown, or a run that failed to start). */
  abort(): void
}

/** Which run an event belongs to: one agent session in one folder, of one user. */
export interface RunKey {
  sessionId: string
  workdir: string
  /**
   * Who posted the events, when they came over a connection (the front door, src/sidecar/http/peer-user.ts):
   * the same session id and folder from two users is two runs, each checked for its own user.
   * Absent when the agent runs in this process (the Claude Agent SDK adapter).
   */
  peer?: Peer
  /**
   * Which hook entry the events came through (the front door's route, e.g. `guard,audit`): two
   * entries with different hooks are two runs, each with its own hooks.
   */
  channel?: string
}

/** What opening a run needs to know. */
export interface RunStart {
  key: RunKey
  /** `claude-code`, ... (ctx.agent.id and beforeRun's agentId). */
  agentId: string
  modelId: string
  /** The agent's permission mode when the event says (Claude Code: default, plan, dontAsk, bypassPermissions, ...). */
  permissionMode?: string
  /**
   * Whether the agent can put a hook's ctx.confirm to its person (Claude Code's `ask`). Default true;
   * false for agents with no such answer, where a confirm is answered no at once.
   */
  canAsk?: boolean
  /** The folder as checked when the run opened (workdir.ts); absent when it was not checked (tenants' agents). */
  checked?: CheckedWorkdir
}

export type OpenRun = (start: RunStart) => Promise<AgentRun>
