/**
 * Claude Code's hook events as hookd reads them: the JSON an `http` hook is POSTed (and an Agent SDK
 * hook callback is given), measured with Claude Code 2.1.328 (test/agents/contracts/claude-code-contract.test.ts, docs/agents.md).
 * Only the fields hookd uses are declared; the rest pass through untouched. Every string is bounded:
 * the body is untrusted, and the bounded-JSON parser has already capped its size and depth.
 */
import * as z from 'zod'
import type { AgentPointName } from '../../protocol/points/points.js'

/**
 * The events hookd maps onto points (docs/agents.md has the table), and the two that only say what
 * became of an ask: PostToolBatch (once per batch of tool calls, those refused included, after their
 * PostToolUse; measured with 2.1.328, command and http hooks alike) and PermissionDenied (sent only
 * when auto mode's classifier refuses a call). The rest of the pinned CLI's 33 events (Setup,
 * UserPromptExpansion, PreModelSwitch, TaskCreated, WorktreeCreate, MessageDisplay, ...) are answered
 * `{}`; UNMAPPED_EVENTS says why for each.
 */
export const MAPPED_EVENTS = [
  'SessionStart',
  'UserPromptSubmit',
  'PreToolUse',
  'PermissionRequest',
  'PostToolUse',
  'PostToolUseFailure',
  'PostToolBatch',
  'PermissionDenied',
  'SubagentStart',
  'SubagentStop',
  'PreCompact',
  'PostCompact',
  'ConfigChange',
  'Notification',
  'FileChanged',
  'Stop',
  'StopFailure',
  'SessionEnd',
] as const
export type MappedEvent = (typeof MAPPED_EVENTS)[number]

export function isMappedEvent(name: string): name is MappedEvent {
  return (MAPPED_EVENTS as readonly string[]).includes(name)
}

/**
 * The pinned CLI's events hookd does not map, each with why (docs/agents.md's table says the same;
 * test/agents/contracts/claude-code-contract.test.ts checks the two lists cover the binary's list).
 */
export const UNMAPPED_EVENTS: Readonly<Record<string, string>> = {
  Setup: 'runs for `claude --init` and maintenance, before any session or run: no point carries it',
  UserPromptExpansion: 'a slash command the person typed, expanded; the prompt it becomes reaches hookd as UserPromptSubmit (beforeModelRequest)',
  PreModelSwitch: 'the person switches models (/model): no point carries a model switch',
  PostModelSwitch: 'the model changed: no point carries a model switch',
  TeammateIdle: "an agent team's teammate goes idle: teammates are not subagents (no agent_id), and no point carries them",
  TaskCreated: "an agent team's task list: no point carries tasks",
  TaskCompleted: "an agent team's task list: no point carries tasks",
  Elicitation: "an MCP server asks the person for input: no point carries an MCP server's question",
  ElicitationResult: "the person's answer to an MCP server: no point carries it",
  InstructionsLoaded: 'a CLAUDE.md or rule file was read (observe-only): no point carries it',
  CwdChanged: "the session's folder changed: the next events carry the new cwd, which hookd confines the hooks' files to",
  WorktreeCreate: "the hook must create the worktree itself and print its path: hookd's hooks run in a sandbox with no such power",
  WorktreeRemove: "the hook must remove the worktree itself: hookd's hooks run in a sandbox with no such power",
  DirectoryAdded: 'a folder added with /add-dir: no point carries it',
  MessageDisplay: 'replaces streamed text on the screen only (the model and the transcript keep the original), once per flush of lines: no point has that meaning',
}

const id = z.string().min(1, 'is empty').max(256, 'is longer than 256 characters')
const path = z.string().min(1, 'is empty').max(4096, 'is longer than 4096 characters')
const object = z.record(z.string(), z.unknown())

/** What every event carries. */
export const baseEvent = z.looseObject({
  hook_event_name: z.string().max(64),
  session_id: id,
  cwd: path,
  permission_mode: z.string().max(64).optional(),
  /** SessionStart carries the model; other events do not. */
  model: z.string().max(256).optional(),
  /** The subagent the event fires in (absent on the main thread, even with --agent). */
  agent_id: z.string().min(1).max(256).optional(),
  /** The subagent's type (`general-purpose`, ...); on the main thread of an --agent session too. */
  agent_type: z.string().max(256).optional(),
})
export type BaseEvent = z.infer<typeof baseEvent>

export const preToolUseEvent = baseEvent.extend({
  tool_name: z.string().min(1).max(256),
  tool_input: object,
  tool_use_id: z.string().max(256).optional(),
})

export const postToolUseEvent = preToolUseEvent.extend({ tool_response: z.unknown().optional() })

export const postToolUseFailureEvent = preToolUseEvent.extend({
  error: z.string().default(''),
  is_interrupt: z.boolean().optional(),
})

/** The batch's calls: only their ids (and tools and inputs, for a call without an id) are read. */
export const postToolBatchEvent = baseEvent.extend({
  tool_calls: z
    .array(z.looseObject({ tool_name: z.string().max(256).default(''), tool_input: object.default({}), tool_use_id: z.string().max(256).optional() }))
    .max(1024, 'lists more than 1024 calls'),
})

/** Auto mode refused a call (Claude Code sends it for its classifier's refusals only). */
export const permissionDeniedEvent = preToolUseEvent.extend({ reason: z.string().optional() })

/** A permission dialog is about to open for a tool call (no tool_use_id: Claude Code sends none). */
export const permissionRequestEvent = baseEvent.extend({
  tool_name: z.string().min(1).max(256),
  tool_input: object,
  permission_suggestions: z.array(z.unknown()).max(256).optional(),
})

const words = z.string().max(100_000)

export const subagentStartEvent = baseEvent.extend({ agent_id: id, agent_type: z.string().max(256).default('') })
export const subagentStopEvent = subagentStartEvent.extend({ last_assistant_message: words.optional(), stop_hook_active: z.boolean().optional() })
export const preCompactEvent = baseEvent.extend({ trigger: z.string().max(64), custom_instructions: words.nullable().optional() })
export const postCompactEvent = baseEvent.extend({ trigger: z.string().max(64), compact_summary: words.default('') })
export const configChangeEvent = baseEvent.extend({ source: z.string().max(64), file_path: path.optional() })
export const notificationEvent = baseEvent.extend({ message: words, title: z.string().max(1000).optional(), notification_type: z.string().max(64).default('') })
export const fileChangedEvent = baseEvent.extend({ file_path: path, event: z.string().max(64) })

export const userPromptSubmitEvent = baseEvent.extend({ prompt: z.string() })

export const sessionEndEvent = baseEvent.extend({ reason: z.string().max(64).optional() })

export type PreToolUseEvent = z.infer<typeof preToolUseEvent>
export type PostToolUseEvent = z.infer<typeof postToolUseEvent>
export type PostToolUseFailureEvent = z.infer<typeof postToolUseFailureEvent>
export type UserPromptSubmitEvent = z.infer<typeof userPromptSubmitEvent>
export type PostToolBatchEvent = z.infer<typeof postToolBatchEvent>

/**
 * The events Claude Code must send for hooks that serve `points` (step points, directly or through
 * an alias): what `hookd setup claude-code` registers. A run is delimited by the prompt and Stop, so
 * hooks with beforeRun get the end events too, and hooks with afterRun get the prompt. With `mayAsk`
 * (a hook at the gate may call ctx.confirm, which becomes Claude Code's ask), also the events that say
 * what became of the call: PostToolUse and PostToolUseFailure (it ran), PermissionDenied (auto mode
 * refused it; sent for nothing else), and the end events (a turn that ends with neither, it did not).
 * Hooks that never ask get none of these. PostToolBatch would say it at the end of the call's batch
 * instead of the turn, but costs a hook call per batch (one more per tool call, measured: ~18 ms with
 * the shim); the adapter takes it when it is registered by hand (`hookd setup --events`). Each of the
 * agents' own points (agent-points.ts) gets the one event that carries it (POINT_EVENTS).
 */
export function eventsForPoints(points: ReadonlySet<string>, options: { mayAsk?: boolean } = {}): MappedEvent[] {
  const events = new Set<MappedEvent>()
  const run = points.has('beforeRun') || points.has('afterRun')
  if (run || points.has('beforeModelRequest')) events.add('UserPromptSubmit')
  if (points.has('beforeToolExecute')) events.add('PreToolUse')
  const asks = options.mayAsk === true && points.has('beforeToolExecute')
  if (points.has('afterToolExecute') || asks) {
    events.add('PostToolUse')
    events.add('PostToolUseFailure')
  }
  if (asks) events.add('PermissionDenied')
  if (run || asks) {
    events.add('Stop')
    events.add('StopFailure')
    events.add('SessionEnd')
  }
  for (const [point, event] of Object.entries(POINT_EVENTS)) if (points.has(point)) events.add(event)
  return MAPPED_EVENTS.filter((e) => events.has(e))
}

/** The event that carries each of the agents' own points at Claude Code. */
export const POINT_EVENTS: Readonly<Partial<Record<AgentPointName, MappedEvent>>> = {
  'permission:request': 'PermissionRequest',
  'subagent:start': 'SubagentStart',
  'subagent:stop': 'SubagentStop',
  'compact:before': 'PreCompact',
  'compact:after': 'PostCompact',
  'config:change': 'ConfigChange',
  notification: 'Notification',
  'file:changed': 'FileChanged',
}
