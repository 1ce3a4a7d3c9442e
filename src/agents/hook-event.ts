/**
 * What every agent's hook events come down to, and what a dialect must say back. Claude Code posts its
 * JSON itself (or through the shim), Codex, Gemini CLI, Copilot CLI and Cursor through the shim
 * (bin/hookd-hook); a dialect (claude-code/claude-code-dialect.ts, codex/codex-dialect.ts, ...) reads
 * it into one of these events and renders hookd's verdict in the agent's own answer. The adapter that
 * runs the points (agent-adapter.ts) sees only this file.
 */
import { AGENT_POINT_NAMES, type AgentPointName } from '../protocol/points/points.js'
import type { AskFollowing, AskOutcome, RunEndReason } from './agent-run.js'
import type { ToolTable } from './tool-mapping.js'

/** The session an event belongs to, as the agent names it. */
export interface EventSession {
  sessionId: string
  /** The folder the agent runs in: the run's workdir (absolute, checked when the run opens). */
  cwd: string
  model?: string
  permissionMode?: string
}

/** A tool call as the agent reports it: its own name and input. */
export interface NativeToolEvent {
  id: string
  tool: string
  input: Record<string, unknown>
  /**
   * Why hookd could not read the call's arguments (a JSON string past the depth limit, or not an
   * object); `input` then holds nothing of them. The gate refuses such a call; elsewhere hooks see it
   * under its own name with `input`.
   */
  unreadable?: string
  /** The subagent that makes the call, where the agent says (hooks see it as the call's `subagent`). */
  subagent?: Subagent
}

/** A subagent as the agent names it: its id and, where given, its type (Claude Code's agent_type). */
export interface Subagent {
  id: string
  type?: string
}

/** An agent event, by what hookd does with it. */
export type HookEvent =
  /** Opens the session's run (beforeRun), nothing else. */
  | { kind: 'start' }
  /** A prompt: opens the run if none is open; beforeModelRequest when the agent can take context. */
  | { kind: 'prompt'; prompt: string }
  /** beforeToolExecute. */
  | { kind: 'beforeTool'; call: NativeToolEvent }
  /** afterToolExecute on the text the model is about to read. */
  | { kind: 'afterTool'; call: NativeToolEvent; text: string; isError: boolean }
  /** afterRun, and the run ends (nothing when no run is open). */
  | { kind: 'end'; reason: RunEndReason }
  /**
   * No point: the agent says what became of calls whose gate was an ask (Claude Code's PostToolBatch
   * and PermissionDenied). Settles the run's asks for these calls, if a run is open; opens none.
   */
  | { kind: 'outcome'; outcome: AskOutcome; calls: ReadonlyArray<Pick<NativeToolEvent, 'id' | 'tool' | 'input'>> }
  /**
   * One of the agent's own moments (agent-points.ts: a permission dialog, a subagent, a compaction,
   * ...): the point runs on `payload`, and the dialect says the changed fields (`answer`). With `call`
   * (a permission dialog about a tool call), hooks see the canonical call merged into the payload, and
   * rewritten arguments come back in the agent's own input.
   */
  | { kind: 'point'; point: AgentPointName; payload: Record<string, unknown>; call?: NativeToolEvent }
  /** An event hookd has no point for: no opinion, and no run is opened. */
  | { kind: 'other' }

/** What the hooks decided about a tool call, before the agent's dialect says it. */
export type ToolVerdict =
  | { kind: 'allow' }
  | { kind: 'deny'; reason: string }
  /** The hooks rewrote the arguments: `input` is the agent's whole native input, rewritten. */
  | { kind: 'rewrite'; input: Record<string, unknown> }
  /** A hook's ctx.confirm, left to the agent's own prompt (only for dialects that can ask). */
  | { kind: 'ask'; reason: string; input?: Record<string, unknown> }
  /**
   * A hook deferred the call (beforeToolExecute's `defer`): the agent's own "decide later" where it has
   * one (Dialect.canDefer); elsewhere hookd puts it as an ask where the agent can ask, else refuses it.
   */
  | { kind: 'defer'; reason: string }

/** What the hooks did to a tool's result. */
export type ResultVerdict = { kind: 'keep' } | { kind: 'replace'; text: string; isError: boolean }

/**
 * What the hooks changed at one of the agent's own points (HookEvent kind 'point'): the point's changed
 * fields, and for a permission dialog's rewrite, the agent's whole native input rewritten.
 */
export interface PointChanges {
  fields: Record<string, unknown>
  input?: Record<string, unknown>
}

/** An agent's answer to a hook command: its JSON, or undefined for no opinion (the shim prints nothing). */
export type DialectAnswer = Record<string, unknown> | undefined

export interface ParsedEvent<E> {
  session: EventSession
  event: HookEvent
  /**
   * The event's own name, where the dialect gives it (Claude Code's `hook_event_name`): what the log
   * says told hookd an ask's outcome. Without it, the route's `?event=` name, else the event's kind.
   */
  name?: string
  /** The agent's event as parsed, for the dialect's own answers. */
  native: E
}

/** One agent's hook JSON, both ways: its events in, its answers out, its tools, and what follows an ask. */
export interface Dialect<E> {
  /** The agent's id (ctx.agent.id, beforeRun's agentId) and the first segment of its routes. */
  readonly agent: string
  /** The agent's name for people, in messages. */
  readonly title: string
  readonly tools: ToolTable
  /**
   * Whether the agent can put a hook's question (ctx.confirm) to its person. When it cannot, a
   * confirm is answered no at once and the hook's own refusal reaches the agent.
   */
  readonly canAsk: boolean
  /**
   * Whether the agent's later events say what became of an ask (`follow`: its after-tool event comes
   * for every call that ran, matched by the call's id or its tool and arguments), or not (`not
   * followed`: the ask's outcome is recorded unknown). Only for dialects that can ask.
   */
  readonly asks?: AskFollowing
  /** The event field the session's folder comes from, for messages (`cwd`, `workspace_roots[0]`). */
  readonly cwdField: string
  /** The answer for no opinion: nothing (undefined: the shim prints nothing), or `{}` where the agent wants JSON. */
  readonly quiet: DialectAnswer
  /**
   * Reads an event; a HookdError (invalid-argument) saying what is wrong with it otherwise. `name` is
   * the event's name from the route's `?event=` (Copilot's events do not name themselves).
   */
  parse(body: unknown, name?: string): ParsedEvent<E>
  /** True when the event is one where a refusal stops something: errors there refuse. */
  isGate(body: unknown, name?: string): boolean
  /** The refusal for a gate event that hookd could not check (the body may not even parse). */
  refuse(body: unknown, reason: string): DialectAnswer
  tool(event: E, verdict: ToolVerdict): DialectAnswer
  /**
   * Whether `tool` puts this ask to the agent's person; false where it has to refuse the call instead
   * (an event that takes no ask, an ask with a rewrite the agent cannot carry), and hookd then records
   * the ask denied at once (`cannot ask`). Absent: every ask is put.
   */
  putsAsk?(event: E, verdict: Extract<ToolVerdict, { kind: 'ask' }>): boolean
  result(event: E, verdict: ResultVerdict): DialectAnswer
  /**
   * Whether the agent has its own "decide later" for a tool call (Claude Code's `defer`); without it a
   * deferred call is an ask where the agent can ask, else a refusal.
   */
  readonly canDefer?: boolean
  /**
   * The answer at one of the agent's own points (HookEvent kind 'point'), from the fields the hooks
   * changed; fields the agent cannot carry are left out, and named in `dropped` for the operator's log.
   */
  answer?(event: E, point: AgentPointName, changes: PointChanges): { answer: DialectAnswer; dropped?: string[] }
  /** Text the hooks add for the model at a prompt; undefined when the agent cannot take any. */
  promptContext?(event: E, context: string): DialectAnswer
  /**
   * The agent's events to register for hooks that serve `points` (what `hookd setup` writes); with
   * `mayAsk` (a hook may call ctx.confirm at the gate), also those that say what became of an ask.
   */
  eventsForPoints(points: ReadonlySet<string>, options?: EventOptions): string[]
  /** Every event the dialect maps, in the order setup lists them. */
  readonly events: readonly string[]
}

/** The points an agent's events reach (`hookd setup --events all` registers the events of all of them). */
export const AGENT_POINTS: ReadonlySet<string> = new Set(['beforeRun', 'afterRun', 'beforeModelRequest', 'beforeToolExecute', 'afterToolExecute', ...AGENT_POINT_NAMES])

/** Which of an agent's events serve which of hookd's points: what `eventsFor` registers. */
export interface EventRoles {
  /** Events that open a run (a prompt): registered for beforeRun and afterRun. */
  open: readonly string[]
  /** Events whose answer can add context for the model: registered for beforeModelRequest. */
  context: readonly string[]
  beforeTool: readonly string[]
  afterTool: readonly string[]
  /** Events that end a run: registered for beforeRun and afterRun. */
  end: readonly string[]
  /** The agent's own points (agent-points.ts) and the events that carry each: registered when a hook serves the point. */
  points?: Readonly<Partial<Record<AgentPointName, readonly string[]>>>
}

/** What else decides the events a route registers. */
export interface EventOptions {
  /**
   * Some hook that serves the gate may call ctx.confirm (may-ask.ts): the events that say what became
   * of an ask are registered too (the after-tool events, and the end events that settle the rest).
   */
  mayAsk?: boolean
}

/**
 * The events, in `order`, that hooks serving `points` need. A guard alone needs only the tool gates;
 * one that may ask, with `follow` (the dialect follows asks), also the after-tool and end events.
 */
export function eventsFor(points: ReadonlySet<string>, roles: EventRoles, order: readonly string[], options: EventOptions & { follow?: boolean } = {}): string[] {
  const wanted = new Set<string>()
  const add = (events: readonly string[]): void => events.forEach((e) => wanted.add(e))
  if (points.has('beforeRun') || points.has('afterRun')) {
    add(roles.open)
    add(roles.end)
  }
  if (options.follow && options.mayAsk && points.has('beforeToolExecute')) {
    add(roles.afterTool)
    add(roles.end)
  }
  if (points.has('beforeModelRequest')) add(roles.context)
  if (points.has('beforeToolExecute')) add(roles.beforeTool)
  if (points.has('afterToolExecute')) add(roles.afterTool)
  for (const [point, events] of Object.entries(roles.points ?? {})) if (points.has(point) && events) add(events)
  return order.filter((e) => wanted.has(e))
}
