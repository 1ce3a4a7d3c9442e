/**
 * Claude Code's hook events in, Claude Code's hook answers out (hook-event.ts), as Claude Code 2.1.328
 * sends and reads them, measured (test/agents/contracts/claude-code-contract.test.ts; docs/agents.md keeps the
 * table for users). The same dialect serves Claude Code's `http` and command hooks at the front door
 * and the Claude Agent SDK's hook callbacks, which get the same event object (claude-code-adapter.ts).
 *
 *   SessionStart                 opens the run: beforeRun (Claude Code sends SessionStart only to command
 *                                hooks, so normally the first prompt opens it)
 *   UserPromptSubmit             opens the run (beforeRun) if none is open; beforeModelRequest, once per
 *                                prompt: text a hook adds to the system prompt -> additionalContext
 *   PreToolUse                   beforeToolExecute on the canonical call (with its subagent, where the
 *                                event names one): refusal -> deny + reason; rewritten arguments ->
 *                                updatedInput (Claude Code's own permission rules still apply);
 *                                ctx.confirm -> ask, with the hook's title and body (the decision is
 *                                recorded as asked; the events below give its outcome); a deferral ->
 *                                defer (in -p the turn ends with the call deferred; interactive
 *                                sessions ask instead, Claude Code's own rule)
 *   PermissionRequest ... FileChanged   the agents' own points (claude-code-points.ts)
 *   PostToolUse                  afterToolExecute: rewritten text -> updatedToolOutput in the tool's
 *                                shape, or additionalContext where the shape cannot carry it; an ask
 *                                for the same tool_use_id was allowed (the call ran)
 *   PostToolUseFailure           afterToolExecute with isError; a rewrite -> additionalContext; an ask
 *                                for the same tool_use_id was allowed
 *   PostToolBatch                no point: an ask for a call of the batch that got no PostToolUse was
 *                                denied (Claude Code sends it once per batch, after the PostToolUse
 *                                answers, refused calls included; measured with 2.1.328). Setup does
 *                                not register it (a hook call per batch): without it, an ask with no
 *                                PostToolUse by the end of the turn (Stop) was denied
 *   PermissionDenied             no point: an ask for the call was denied (auto mode's classifier only)
 *   Stop / StopFailure           afterRun end_turn / error, and the run ends
 *   SessionEnd                   afterRun interrupted, when no Stop ended the run first
 *
 * Anything else (events.ts UNMAPPED_EVENTS says why for each) is answered `{}`: no opinion.
 */
import type * as z from 'zod'
import { parseEvent } from '../event-fields.js'
import type { Dialect, DialectAnswer, HookEvent, NativeToolEvent, ParsedEvent, ResultVerdict, ToolVerdict } from '../hook-event.js'
import { isObject } from '../tool-gate.js'
import {
  MAPPED_EVENTS,
  type BaseEvent,
  baseEvent,
  eventsForPoints,
  permissionDeniedEvent,
  postToolBatchEvent,
  postToolUseEvent,
  postToolUseFailureEvent,
  preToolUseEvent,
  sessionEndEvent,
  userPromptSubmitEvent,
} from './events.js'
import { answerPoint, block, denyPermission, readPointEvent, subagentOf } from './claude-code-points.js'
import { CLAUDE_CODE, CLAUDE_CODE_TOOLS } from './tools.js'
import { outputText, withOutputText } from './tool-output.js'

/** What the answers need of the event: its name, and after a tool, what the tool returned. */
export interface ClaudeCodeEvent {
  name: string
  tool?: string
  response?: unknown
  /** The text hooks saw after the tool (its output, or its error), and whether it was an error. */
  text?: string
  isError?: boolean
}

function deny(reason: string): DialectAnswer {
  return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } }
}

/** The gates: where hookd refuses when it cannot check the event, each in the event's own refusal. */
const GATES: Readonly<Record<string, (reason: string) => DialectAnswer>> = {
  PreToolUse: deny,
  PermissionRequest: denyPermission,
  ConfigChange: block,
}

/** A tool event's call, with the subagent that makes it where the event names one. */
function callOf(e: BaseEvent & { tool_name: string; tool_input: Record<string, unknown>; tool_use_id?: string | undefined }): NativeToolEvent {
  const subagent = subagentOf(e)
  return { id: e.tool_use_id ?? '', tool: e.tool_name, input: e.tool_input, ...(subagent ? { subagent } : {}) }
}

function parse<T>(schema: z.ZodType<T>, body: unknown, what: string): T {
  return parseEvent(schema, body, what, 'Claude Code')
}

function read(body: unknown): ParsedEvent<ClaudeCodeEvent> {
  const base = parse(baseEvent, body, 'the hook event')
  const name = base.hook_event_name
  const native: ClaudeCodeEvent = { name }
  let event: HookEvent
  switch (name) {
    case 'SessionStart':
      event = { kind: 'start' }
      break
    case 'UserPromptSubmit':
      event = { kind: 'prompt', prompt: parse(userPromptSubmitEvent, body, 'the UserPromptSubmit event').prompt }
      break
    case 'PreToolUse': {
      const e = parse(preToolUseEvent, body, 'the PreToolUse event')
      event = { kind: 'beforeTool', call: callOf(e) }
      break
    }
    case 'PostToolUse': {
      const e = parse(postToolUseEvent, body, 'the PostToolUse event')
      const text = outputText(e.tool_name, e.tool_response)
      Object.assign(native, { tool: e.tool_name, response: e.tool_response, text, isError: false })
      event = { kind: 'afterTool', call: callOf(e), text, isError: false }
      break
    }
    case 'PostToolUseFailure': {
      const e = parse(postToolUseFailureEvent, body, 'the PostToolUseFailure event')
      Object.assign(native, { tool: e.tool_name, response: e.tool_response, text: e.error, isError: true })
      event = { kind: 'afterTool', call: callOf(e), text: e.error, isError: true }
      break
    }
    case 'PostToolBatch': {
      const e = parse(postToolBatchEvent, body, 'the PostToolBatch event')
      event = { kind: 'outcome', outcome: 'denied', calls: e.tool_calls.map((c) => ({ id: c.tool_use_id ?? '', tool: c.tool_name, input: c.tool_input })) }
      break
    }
    case 'PermissionDenied': {
      const e = parse(permissionDeniedEvent, body, 'the PermissionDenied event')
      event = { kind: 'outcome', outcome: 'denied', calls: [{ id: e.tool_use_id ?? '', tool: e.tool_name, input: e.tool_input }] }
      break
    }
    case 'Stop':
      event = { kind: 'end', reason: 'end_turn' }
      break
    case 'StopFailure':
      event = { kind: 'end', reason: 'error' }
      break
    case 'SessionEnd':
      parse(sessionEndEvent, body, 'the SessionEnd event')
      event = { kind: 'end', reason: 'interrupted' }
      break
    default:
      event = readPointEvent(name, body) ?? { kind: 'other' }
  }
  const session = {
    sessionId: base.session_id,
    cwd: base.cwd,
    ...(base.model !== undefined ? { model: base.model } : {}),
    ...(base.permission_mode !== undefined ? { permissionMode: base.permission_mode } : {}),
  }
  return { session, event, native, name }
}

/** The hooks' new result as Claude Code reads it: in the tool's own shape where it can carry the text, else as context. */
function result(event: ClaudeCodeEvent, verdict: ResultVerdict): DialectAnswer {
  if (verdict.kind === 'keep') return undefined
  const { text: newText, isError: newError } = verdict
  const isError = event.isError === true
  if (!isError && !newError) {
    const shaped = withOutputText(event.tool ?? '', event.response, newText)
    if (shaped !== undefined) return { hookSpecificOutput: { hookEventName: event.name, updatedToolOutput: shaped } }
  }
  const notes: string[] = []
  if (newError !== isError) notes.push(newError ? "hookd's hooks mark the result of this tool call as an error." : "hookd's hooks mark the result of this tool call as a success.")
  if (newText !== event.text) notes.push(`hookd's hooks rewrote the result of this tool call; read it as:\n${newText}`)
  return { hookSpecificOutput: { hookEventName: event.name, additionalContext: notes.join('\n') } }
}

export const CLAUDE_CODE_DIALECT: Dialect<ClaudeCodeEvent> = {
  agent: CLAUDE_CODE,
  title: 'Claude Code',
  tools: CLAUDE_CODE_TOOLS,
  canAsk: true,
  // A call that ran gets its PostToolUse (or PostToolUseFailure) under the same tool_use_id; one whose
  // ask was denied gets none by the end of the turn (measured with 2.1.328).
  asks: 'follow',
  cwdField: 'cwd',
  // Claude Code reads `{}` as no opinion.
  quiet: {},
  events: MAPPED_EVENTS,
  parse: read,
  isGate: (body) => isObject(body) && typeof body.hook_event_name === 'string' && Object.hasOwn(GATES, body.hook_event_name),
  refuse: (body, reason) => (GATES[isObject(body) && typeof body.hook_event_name === 'string' ? body.hook_event_name : ''] ?? deny)(reason),
  // PreToolUse's `defer` (in -p the turn ends and the call waits for the session to be resumed).
  canDefer: true,
  tool(_event, verdict: ToolVerdict) {
    switch (verdict.kind) {
      case 'allow':
        return undefined
      case 'deny':
        return deny(verdict.reason)
      // No permissionDecision with a rewrite alone: `allow` would also skip Claude Code's own permission
      // check, and a hook that fixes a URL has not approved the call.
      case 'rewrite':
        return { hookSpecificOutput: { hookEventName: 'PreToolUse', updatedInput: verdict.input } }
      case 'ask':
        return {
          hookSpecificOutput: {
            hookEventName: 'PreToolUse',
            permissionDecision: 'ask',
            permissionDecisionReason: verdict.reason,
            ...(verdict.input ? { updatedInput: verdict.input } : {}),
          },
        }
      case 'defer':
        return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'defer', permissionDecisionReason: verdict.reason } }
    }
  },
  result,
  answer: (_event, point, changes) => answerPoint(point, changes),
  // Claude Code places the text in the system text.
  promptContext: (_event, context) => ({ hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: context } }),
  eventsForPoints: (points, options) => eventsForPoints(points, options),
}
