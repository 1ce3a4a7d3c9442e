/**
 * Claude Code's hook events as hookd reads them: the JSON an `http` hook is POSTed (and an Agent SDK
 * hook callback is given), measured with Claude Code 2.1.328 (test/agents/contracts/claude-code-contract.test.ts, docs/agents.md).
 * Only the fields hookd uses are declared; the rest pass through untouched. Every string is bounded:
 * the body is untrusted, and the bounded-JSON parser has already capped its size and depth.
 */
import * as z from 'zod'

/**
 * The events hookd maps onto points (docs/agents.md has the table), and the two that only say what
 * became of an ask: PostToolBatch (once per batch of tool calls, those refused included, after their
 * PostToolUse; measured with 2.1.328, command and http hooks alike) and PermissionDenied (sent only
 * when auto mode's classifier refuses a call).
 */
export const MAPPED_EVENTS = [
  'SessionStart',
  'UserPromptSubmit',
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'PostToolBatch',
  'PermissionDenied',
  'Stop',
  'StopFailure',
  'SessionEnd',
] as const
export type MappedEvent = (typeof MAPPED_EVENTS)[number]

export function isMappedEvent(name: string): name is MappedEvent {
  return (MAPPED_EVENTS as readonly string[]).includes(name)
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
 * the shim); the adapter takes it when it is registered by hand (`hookd setup --events`).
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
  return MAPPED_EVENTS.filter((e) => events.has(e))
}
