/**
 * Codex CLI's command hooks (`hooks.json`), read and answered as Codex 0.169.0 does, measured with the
 * real CLI (test/agents/command-clis-hookd.test.ts, test/agents/contracts/codex-contract.test.ts):
 *
 *   SessionStart        opens the run (beforeRun)
 *   UserPromptSubmit    opens the run; beforeModelRequest: added text -> additionalContext (a developer message)
 *   PreToolUse          beforeToolExecute: refusal -> permissionDecision "deny" with its reason (the
 *                       model reads `Command blocked by PreToolUse hook: <reason>`); rewritten arguments
 *                       -> "allow" + updatedInput (Codex takes a rewrite only with "allow"); Codex has
 *                       no "ask", so ctx.confirm is answered no
 *   PostToolUse         afterToolExecute on `tool_response` (the text the model reads): a rewrite ->
 *                       decision "block" with the new text as reason, which replaces the result
 *                       (0.169.0 rejects `updatedToolOutput`)
 *   Stop                afterRun end_turn; SessionEnd afterRun interrupted when no Stop ended the run
 *
 * Codex parses answers strictly: one unknown field and the whole answer is ignored, which would let
 * the call through. Every answer here uses only fields measured to work.
 */
import * as z from 'zod'
import { type Dialect, type DialectAnswer, type HookEvent, type ParsedEvent, type ResultVerdict, type ToolVerdict, eventsFor } from '../hook-event.js'
import { fieldOf, idField, nameField, objectField, parseEvent, pathField, shortField, textOf } from '../event-fields.js'
import { CODEX, CODEX_TOOLS } from './tools.js'

const base = z.looseObject({
  hook_event_name: shortField,
  session_id: idField,
  cwd: pathField,
  model: shortField.optional(),
  permission_mode: shortField.optional(),
})
const preToolUse = base.extend({ tool_name: nameField, tool_input: objectField, tool_use_id: shortField.optional() })
const postToolUse = preToolUse.extend({ tool_response: z.unknown().optional() })
const userPromptSubmit = base.extend({ prompt: z.string() })

type CodexEvent = z.infer<typeof base>

const EVENTS = ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop', 'SessionEnd'] as const

function deny(reason: string): DialectAnswer {
  return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } }
}

function read(body: unknown): ParsedEvent<CodexEvent> {
  const native = parseEvent(base, body, 'the hook event', 'Codex')
  const session = {
    sessionId: native.session_id,
    cwd: native.cwd,
    ...(native.model !== undefined ? { model: native.model } : {}),
    ...(native.permission_mode !== undefined ? { permissionMode: native.permission_mode } : {}),
  }
  let event: HookEvent
  switch (native.hook_event_name) {
    case 'SessionStart':
      event = { kind: 'start' }
      break
    case 'UserPromptSubmit':
      event = { kind: 'prompt', prompt: parseEvent(userPromptSubmit, body, 'the UserPromptSubmit event', 'Codex').prompt }
      break
    case 'PreToolUse': {
      const e = parseEvent(preToolUse, body, 'the PreToolUse event', 'Codex')
      event = { kind: 'beforeTool', call: { id: e.tool_use_id ?? '', tool: e.tool_name, input: e.tool_input } }
      break
    }
    case 'PostToolUse': {
      const e = parseEvent(postToolUse, body, 'the PostToolUse event', 'Codex')
      event = { kind: 'afterTool', call: { id: e.tool_use_id ?? '', tool: e.tool_name, input: e.tool_input }, text: textOf(e.tool_response), isError: false }
      break
    }
    case 'Stop':
      event = { kind: 'end', reason: 'end_turn' }
      break
    case 'SessionEnd':
      event = { kind: 'end', reason: 'interrupted' }
      break
    default:
      event = { kind: 'other' }
  }
  return { session, event, native }
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
  isGate: (body) => fieldOf(body, 'hook_event_name') === 'PreToolUse',
  refuse: (_body, reason) => deny(reason),
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
    }
  },
  result(_event, verdict: ResultVerdict) {
    if (verdict.kind === 'keep') return undefined
    // Codex reads a block's reason as the whole result; an empty reason would not count.
    return { decision: 'block', reason: verdict.text === '' ? '(no output)' : verdict.text }
  },
  promptContext: (_event, context) => ({ hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: context } }),
  eventsForPoints: (points) =>
    eventsFor(points, { open: ['UserPromptSubmit'], context: ['UserPromptSubmit'], beforeTool: ['PreToolUse'], afterTool: ['PostToolUse'], end: ['Stop', 'SessionEnd'] }, EVENTS),
}
