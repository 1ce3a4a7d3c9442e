/**
 * One agent run as an adapter drives it: a hookd session whatever carries it. The HTTP front door
 * runs its sessions inside the sidecar (src/sidecar/http/sidecar-run.ts); the Claude Agent SDK
 * adapter runs them over gRPC through the host library (claude-agent-sdk/host-run.ts). Adapters only
 * see this seam, so one mapping serves both.
 */
import type { AskOutcome } from '../protocol/ask-outcomes.js'
import type { Diagnostic } from '../protocol/diagnostic.js'
import type { AgentPointName, StepPointName } from '../protocol/points/points.js'
import type { CheckedWorkdir, Peer } from './workdir.js'

export type { Peer }

/** The points an agent's events run: the loop's steps and the agents' own points (agent-points.ts). */
export type RunPoint = StepPointName | AgentPointName

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
  /** The result's id in the audit log (absent where the run has none to give). */
  decisionId?: string
}

/**
 * What became of a tool call whose gate was left to the agent's prompt (an ask): `allowed` (it ran),
 * `denied` (it did not), or `unknown` (hookd cannot tell).
 */
export type { AskOutcome }

/**
 * What told hookd the outcome: one of the agent's events (`PostToolUse`, `PostToolUseFailure`,
 * `PostToolBatch`, `PermissionDenied`, Copilot's `postToolUse`, ...), or hookd's own account: `run ended`
 * (the run ended with no such event), `expired` and `too many asks` (the bounds of pending-asks.ts),
 * `rewrite refused` (hookd refused the call after all: the hooks' rewrite did not fit the tool), `cannot
 * ask` (the agent's answer could not carry the ask, so it refused the call), `not followed` (an agent
 * whose events cannot say).
 */
export type OutcomeVia = string

/** An ask's outcome as the run records it: a second audit line keyed by the ask's decision id. */
export interface AskSettled {
  decisionId: string
  outcome: AskOutcome
  /** `agent` when one of the agent's events said it (or its end of the run), `hookd` when hookd concluded it. */
  by: 'agent' | 'hookd'
  via: OutcomeVia
}

/**
 * Whether an agent's later events say what became of an ask: `follow` (a missing report by the end of
 * the run means the call did not run), or `not followed` (hookd cannot tell: its outcome is recorded
 * `unknown` at once).
 */
export type AskFollowing = 'follow' | 'not followed'

/** Who ended a run: the agent's own end event, or hookd (idle, shutdown, room for another run). */
export type RunEndedBy = 'agent' | 'hookd'

export interface AgentRun {
  /** True when some declared hook serves the point (directly or through an alias). */
  serves(point: RunPoint): boolean
  /**
   * Runs the point through the run's hooks. When `signal` aborts (the agent went away) the call is
   * cancelled: its chain stops, and a gate that could not decide comes back refused.
   */
  call(point: RunPoint, payload: unknown, signal?: AbortSignal): Promise<ChainAnswer>
  /**
   * The gate's answer went to the agent as an ask (decision `decisionId`): what the agent later reports
   * about the call `key` (callKey in tool-gate.ts) is its outcome. Left out by runs that record no
   * outcomes (over gRPC, the host keeps its own records).
   */
  awaitOutcome?(key: string, decisionId: string): void
  /**
   * The agent reported what became of the call `key`: recorded for the oldest ask still waiting under
   * that key, if any (nothing otherwise). `by` defaults to `agent`.
   */
  outcome?(key: string, outcome: AskOutcome, via: OutcomeVia, by?: 'agent' | 'hookd'): void
  /** Whether any ask of this run still waits for its outcome (so an adapter skips work when none does). */
  awaitsOutcomes?(): boolean
  /**
   * Runs afterRun with the reason and ends the session. Asks still waiting are settled: `denied` when the
   * agent ended the run (`endedBy` agent, the default) and the events that would have said it ran are
   * ones the run's hooks have registered (hookd setup registers them when a hook may ask), else
   * `unknown`.
   */
  close(reason: RunEndReason, endedBy?: RunEndedBy): Promise<ChainAnswer | undefined>
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
