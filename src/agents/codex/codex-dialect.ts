/**
 * Codex CLI's command hooks (`hooks.json`), read and answered as Codex 0.169.0 does, measured with the
 * real CLI (test/agents/real-clis/command-clis-hookd.test.ts, test/agents/real-clis/codex-gemini-events.test.ts,
 * test/agents/contracts/codex-contract.test.ts) and checked against the JSON schemas its binary holds
 * (test/agents/contracts/codex-schema-contract.test.ts):
 *
 *   SessionStart        opens the run (beforeRun)
 *   UserPromptSubmit    opens the run; beforeModelRequest: added text -> additionalContext (a developer message)
 *   PreToolUse          beforeToolExecute: refusal -> permissionDecision "deny" with its reason (the
 *                       model reads `Command blocked by PreToolUse hook: <reason>`); rewritten arguments
 *                       -> "allow" + updatedInput (Codex takes a rewrite only with "allow"); Codex has
 *                       no "ask" here, so ctx.confirm is answered no
 *   PermissionRequest   permission:request (Codex is about to have the call reviewed: by its person, or
 *                       by its automatic reviewer): allow -> behavior "allow", deny -> behavior "deny"
 *                       with the reason as message; ask and defer -> no answer, Codex's own review goes
 *                       on; rewritten arguments -> deny (Codex fails closed on updatedInput here)
 *   PostToolUse         afterToolExecute on `tool_response` (the text the model reads): a rewrite ->
 *                       decision "block" with the new text as reason, which replaces the result
 *                       (0.169.0 rejects `updatedToolOutput`)
 *   SubagentStart       subagent:start: context -> additionalContext for the subagent
 *   SubagentStop        subagent:stop: keepWorking -> decision "block" with the reason, the subagent goes on
 *   PreCompact          compact:before: block -> continue false with the reason (Codex stops the turn)
 *   PostCompact         compact:after (observed)
 *   Stop                afterRun end_turn; SessionEnd, and Interrupt (the person stopped the turn),
 *                       afterRun interrupted when no Stop ended the run
 *
 * Tool events a subagent sends carry its `agent_id` and `agent_type`: hooks see them as call.subagent.
 * PreModelRequest and PostModelRequest carry no request or response (only the model, the turn and,
 * after, token counts), so no point of hookd's has anything to judge there: they are not mapped.
 *
 * Codex parses answers strictly: one unknown field and the whole answer is ignored, which would let
 * the call through. Every answer here uses only fields measured to work.
 */
import * as z from 'zod'
import type { AgentPointName } from '../../protocol/points/points.js'
import { type Dialect, type DialectAnswer, type HookEvent, type NativeToolEvent, type ParsedEvent, type PointChanges, type ResultVerdict, type ToolVerdict, eventsFor } from '../hook-event.js'
import { fieldOf, idField, nameField, objectField, parseEvent, pathField, shortField, textOf } from '../event-fields.js'
import { CODEX, CODEX_TOOLS } from './tools.js'

const base = z.looseObject({
  hook_event_name: shortField,
  session_id: idField,
  cwd: pathField,
  model: shortField.optional(),
  permission_mode: shortField.optional(),
})
/** The subagent an event is sent for (Codex's SubagentCommandInputFields), where one is. */
const subagentFields = { agent_id: idField.optional(), agent_type: shortField.optional() }
const preToolUse = base.extend({ tool_name: nameField, tool_input: objectField, tool_use_id: shortField.optional(), ...subagentFields })
const postToolUse = preToolUse.extend({ tool_response: z.unknown().optional() })
const permissionRequest = base.extend({ tool_name: nameField, tool_input: objectField, ...subagentFields })
const userPromptSubmit = base.extend({ prompt: z.string() })
const subagentStart = base.extend({ agent_id: idField, agent_type: shortField.optional() })
const subagentStop = subagentStart.extend({ last_assistant_message: z.string().max(100_000).nullable().optional() })
const compact = base.extend({ trigger: z.enum(['manual', 'auto']), ...subagentFields })

type CodexEvent = z.infer<typeof base>

const EVENTS = ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PermissionRequest', 'PostToolUse', 'SubagentStart', 'SubagentStop', 'PreCompact', 'PostCompact', 'Stop', 'Interrupt', 'SessionEnd'] as const

/** The event points and the Codex events that carry them (setup registers each only for hooks that serve it). */
const POINT_EVENTS = {
  'permission:request': ['PermissionRequest'],
  'subagent:start': ['SubagentStart'],
  'subagent:stop': ['SubagentStop'],
  'compact:before': ['PreCompact'],
  'compact:after': ['PostCompact'],
} as const satisfies Partial<Record<AgentPointName, readonly string[]>>

function deny(reason: string): DialectAnswer {
  return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } }
}

function permission(decision: { behavior: 'allow' } | { behavior: 'deny'; message: string }): DialectAnswer {
  return { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision } }
}

function subagentOf(e: { agent_id?: string | undefined; agent_type?: string | undefined }): Pick<NativeToolEvent, 'subagent'> {
  if (e.agent_id === undefined) return {}
  return { subagent: { id: e.agent_id, ...(e.agent_type !== undefined ? { type: e.agent_type } : {}) } }
}

function toolCall(e: z.infer<typeof permissionRequest> & { tool_use_id?: string | undefined }): NativeToolEvent {
  return { id: e.tool_use_id ?? '', tool: e.tool_name, input: e.tool_input, ...subagentOf(e) }
}

function read(body: unknown): ParsedEvent<CodexEvent> {
  const native = parseEvent(base, body, 'the hook event', 'Codex')
  const session = {
    sessionId: native.session_id,
    cwd: native.cwd,
    ...(native.model !== undefined ? { model: native.model } : {}),
    ...(native.permission_mode !== undefined ? { permissionMode: native.permission_mode } : {}),
  }
  const of = <T>(schema: z.ZodType<T>): T => parseEvent(schema, body, `the ${native.hook_event_name} event`, 'Codex')
  let event: HookEvent
  switch (native.hook_event_name) {
    case 'SessionStart':
      event = { kind: 'start' }
      break
    case 'UserPromptSubmit':
      event = { kind: 'prompt', prompt: of(userPromptSubmit).prompt }
      break
    case 'PreToolUse':
      event = { kind: 'beforeTool', call: toolCall(of(preToolUse)) }
      break
    case 'PermissionRequest':
      event = { kind: 'point', point: 'permission:request', payload: {}, call: toolCall(of(permissionRequest)) }
      break
    case 'PostToolUse': {
      const e = of(postToolUse)
      event = { kind: 'afterTool', call: toolCall(e), text: textOf(e.tool_response), isError: false }
      break
    }
    case 'SubagentStart': {
      const e = of(subagentStart)
      event = { kind: 'point', point: 'subagent:start', payload: { ...subagentOf(e) } }
      break
    }
    case 'SubagentStop': {
      const e = of(subagentStop)
      event = { kind: 'point', point: 'subagent:stop', payload: { ...subagentOf(e), lastMessage: e.last_assistant_message ?? '' } }
      break
    }
    case 'PreCompact':
    case 'PostCompact': {
      const e = of(compact)
      event = { kind: 'point', point: native.hook_event_name === 'PreCompact' ? 'compact:before' : 'compact:after', payload: { trigger: e.trigger, ...subagentOf(e) } }
      break
    }
    case 'Stop':
      event = { kind: 'end', reason: 'end_turn' }
      break
    case 'Interrupt':
    case 'SessionEnd':
      event = { kind: 'end', reason: 'interrupted' }
      break
    default:
      event = { kind: 'other' }
  }
  return { session, event, native }
}

/** The answer at one of Codex's own events, from the fields the hooks changed; what it cannot carry is named. */
function answer(_event: CodexEvent, point: AgentPointName, changes: PointChanges): { answer: DialectAnswer; dropped?: string[] } {
  const f = changes.fields
  const reason = typeof f.reason === 'string' && f.reason.trim() !== '' ? f.reason : undefined
  switch (point) {
    case 'permission:request':
      // A rewrite Codex cannot carry must not become an allow of the call as it was.
      if (changes.input !== undefined) {
        return { answer: permission({ behavior: 'deny', message: `hookd refused this call: a hook rewrote its arguments at Codex's permission request, which Codex cannot take there${reason ? ` (${reason})` : ''}` }), dropped: ['arguments'] }
      }
      if (f.decision === 'allow') return { answer: permission({ behavior: 'allow' }) }
      if (f.decision === 'deny') return { answer: permission({ behavior: 'deny', message: reason ?? 'refused by a hook' }) }
      // ask: Codex's own review goes on, as with no answer; Codex has no "decide later" of its own.
      return { answer: undefined, ...(f.decision === 'defer' ? { dropped: ['decision defer (Codex reviews the call itself)'] } : {}) }
    case 'subagent:start':
      if (typeof f.context !== 'string' || f.context === '') return { answer: undefined }
      return { answer: { hookSpecificOutput: { hookEventName: 'SubagentStart', additionalContext: f.context } } }
    case 'subagent:stop':
      // Codex needs a reason to send the subagent back: it is what the subagent reads next.
      if (f.keepWorking !== true) return { answer: undefined }
      return { answer: { decision: 'block', reason: reason ?? 'a hook asks you to keep working' } }
    case 'compact:before':
      if (f.block !== true) return { answer: undefined }
      return { answer: { continue: false, stopReason: reason ?? 'a hook stopped the compaction' } }
    default:
      return { answer: undefined, dropped: Object.keys(f) }
  }
}

export const CODEX_DIALECT: Dialect<CodexEvent> = {
  agent: CODEX,
  title: 'Codex',
  tools: CODEX_TOOLS,
  canAsk: false,
  cwdField: 'cwd',
  quiet: undefined,
  events: EVENTS,
  parse: read,
  isGate: (body) => fieldOf(body, 'hook_event_name') === 'PreToolUse' || fieldOf(body, 'hook_event_name') === 'PermissionRequest',
  refuse: (body, reason) => (fieldOf(body, 'hook_event_name') === 'PermissionRequest' ? permission({ behavior: 'deny', message: reason }) : deny(reason)),
  // Every ask becomes a refusal: the agent has no person to put it to from a hook.
  putsAsk: () => false,
  tool(_event, verdict: ToolVerdict) {
    switch (verdict.kind) {
      case 'allow':
        return undefined
      case 'deny':
        return deny(verdict.reason)
      case 'rewrite':
        return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', updatedInput: verdict.input } }
      case 'ask':
        return deny(`this call needs a person's yes, and Codex cannot ask for one: ${verdict.reason}`)
      case 'defer':
        // The adapter turns a deferral into a refusal for Codex (it can neither defer nor ask); never allowed here.
        return deny(verdict.reason)
    }
  },
  result(_event, verdict: ResultVerdict) {
    if (verdict.kind === 'keep') return undefined
    // Codex reads a block's reason as the whole result; an empty reason would not count.
    return { decision: 'block', reason: verdict.text === '' ? '(no output)' : verdict.text }
  },
  answer,
  promptContext: (_event, context) => ({ hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: context } }),
  eventsForPoints: (points) =>
    eventsFor(points, { open: ['UserPromptSubmit'], context: ['UserPromptSubmit'], beforeTool: ['PreToolUse'], afterTool: ['PostToolUse'], end: ['Stop', 'Interrupt', 'SessionEnd'], points: POINT_EVENTS }, EVENTS),
}
