/**
 * Gemini CLI's command hooks (`hooks` in settings.json), read and answered as Gemini CLI 0.61.0 does,
 * measured with the real CLI (test/agents/real-clis/command-clis-hookd.test.ts, test/agents/contracts/gemini-contract.test.ts):
 *
 *   SessionStart   opens the run (beforeRun)
 *   BeforeAgent    a prompt: opens the run; beforeModelRequest: added text -> additionalContext
 *   BeforeTool     beforeToolExecute: refusal -> decision "deny" with its reason (the model reads
 *                  `Tool execution blocked: <reason>`); rewritten arguments -> hookSpecificOutput.tool_input
 *                  holding the whole input (0.61.0 replaces the input with it, the docs say it merges:
 *                  the whole input is right either way). Headless Gemini CLI hangs on "ask", so
 *                  ctx.confirm is answered no
 *   AfterTool      afterToolExecute on `tool_response.llmContent`: a rewrite -> decision "deny" with
 *                  the new text, which replaces the result (as an error: 0.61.0 ignores `tool_output`)
 *   AfterAgent     afterRun end_turn; SessionEnd afterRun interrupted when no AfterAgent ended the run
 *   BeforeModel, AfterModel, BeforeToolSelection
 *                  model:request, model:response, tools:select (model-events.ts)
 *   PreCompress    compact:before {trigger}; Gemini CLI does not read the answer (it compresses
 *                  anyway), so a block is dropped, named in the operator's log
 *   Notification   notification {kind, message} (observed: Gemini CLI notifies, it does not ask)
 *
 * Gemini CLI's subagents (`invoke_agent`) make their tool calls through the same BeforeTool and
 * AfterTool events, which do not say which subagent makes them: hooks see them as the session's calls.
 */
import * as z from 'zod'
import type { AgentPointName } from '../../protocol/points/points.js'
import { type Dialect, type DialectAnswer, type HookEvent, type ParsedEvent, type PointChanges, type ResultVerdict, type ToolVerdict, eventsFor } from '../hook-event.js'
import { fieldOf, idField, nameField, objectField, parseEvent, pathField, shortField, textOf } from '../event-fields.js'
import { answerModelEvent, readModelEvent } from './model-events.js'
import { GEMINI, GEMINI_TOOLS } from './tools.js'

const base = z.looseObject({ hook_event_name: shortField, session_id: idField, cwd: pathField })
const beforeTool = base.extend({ tool_name: nameField, tool_input: objectField })
const afterTool = beforeTool.extend({
  tool_response: z.looseObject({ llmContent: z.unknown().optional(), error: z.unknown().optional() }).optional(),
})
const beforeAgent = base.extend({ prompt: z.string() })
const preCompress = base.extend({ trigger: z.enum(['manual', 'auto']) })
const notification = base.extend({ notification_type: shortField, message: z.string().max(100_000) })

type GeminiEvent = z.infer<typeof base>

const EVENTS = ['SessionStart', 'BeforeAgent', 'BeforeModel', 'BeforeToolSelection', 'AfterModel', 'BeforeTool', 'AfterTool', 'PreCompress', 'Notification', 'AfterAgent', 'SessionEnd'] as const

/** The event points and the Gemini CLI events that carry them (setup registers each only for hooks that serve it). */
const POINT_EVENTS = {
  'model:request': ['BeforeModel'],
  'model:response': ['AfterModel'],
  'tools:select': ['BeforeToolSelection'],
  'compact:before': ['PreCompress'],
  notification: ['Notification'],
} as const satisfies Partial<Record<AgentPointName, readonly string[]>>

/** The text of `llmContent`: a string, or parts whose text is joined. */
function llmText(content: unknown): string {
  if (Array.isArray(content)) {
    return content.map((part: unknown) => (typeof part === 'string' ? part : textOf(fieldOf(part, 'text')))).join('')
  }
  return textOf(content)
}

function deny(reason: string): DialectAnswer {
  return { decision: 'deny', reason }
}

function read(body: unknown): ParsedEvent<GeminiEvent> {
  const native = parseEvent(base, body, 'the hook event', 'Gemini CLI')
  let event: HookEvent
  switch (native.hook_event_name) {
    case 'SessionStart':
      event = { kind: 'start' }
      break
    case 'BeforeAgent':
      event = { kind: 'prompt', prompt: parseEvent(beforeAgent, body, 'the BeforeAgent event', 'Gemini CLI').prompt }
      break
    case 'BeforeTool': {
      const e = parseEvent(beforeTool, body, 'the BeforeTool event', 'Gemini CLI')
      event = { kind: 'beforeTool', call: { id: '', tool: e.tool_name, input: e.tool_input } }
      break
    }
    case 'AfterTool': {
      const e = parseEvent(afterTool, body, 'the AfterTool event', 'Gemini CLI')
      const error = e.tool_response?.error
      event = {
        kind: 'afterTool',
        call: { id: '', tool: e.tool_name, input: e.tool_input },
        text: llmText(e.tool_response?.llmContent),
        isError: error !== undefined && error !== null,
      }
      break
    }
    case 'AfterAgent':
      event = { kind: 'end', reason: 'end_turn' }
      break
    case 'SessionEnd':
      event = { kind: 'end', reason: 'interrupted' }
      break
    case 'PreCompress':
      event = { kind: 'point', point: 'compact:before', payload: { trigger: parseEvent(preCompress, body, 'the PreCompress event', 'Gemini CLI').trigger } }
      break
    case 'Notification': {
      const e = parseEvent(notification, body, 'the Notification event', 'Gemini CLI')
      event = { kind: 'point', point: 'notification', payload: { kind: e.notification_type, message: e.message } }
      break
    }
    default:
      event = readModelEvent(native.hook_event_name, body) ?? { kind: 'other' }
  }
  return { session: { sessionId: native.session_id, cwd: native.cwd }, event, native }
}

export const GEMINI_DIALECT: Dialect<GeminiEvent> = {
  agent: GEMINI,
  title: 'Gemini CLI',
  tools: GEMINI_TOOLS,
  canAsk: false,
  cwdField: 'cwd',
  quiet: undefined,
  events: EVENTS,
  parse: read,
  isGate: (body) => fieldOf(body, 'hook_event_name') === 'BeforeTool',
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
        return { hookSpecificOutput: { hookEventName: 'BeforeTool', tool_input: verdict.input } }
      case 'ask':
        return deny(`this call needs a person's yes, and Gemini CLI cannot ask for one from a hook: ${verdict.reason}`)
      case 'defer':
        // The adapter turns a deferral into a refusal for Gemini CLI (it can neither defer nor ask); never allowed here.
        return deny(verdict.reason)
    }
  },
  result(_event, verdict: ResultVerdict) {
    if (verdict.kind === 'keep') return undefined
    return deny(verdict.text === '' ? '(no output)' : verdict.text)
  },
  answer(event, point: AgentPointName, changes: PointChanges) {
    return answerModelEvent(event, point, changes) ?? { answer: undefined, dropped: Object.keys(changes.fields) }
  },
  promptContext: (_event, context) => ({ hookSpecificOutput: { hookEventName: 'BeforeAgent', additionalContext: context } }),
  eventsForPoints: (points) =>
    eventsFor(points, { open: ['BeforeAgent'], context: ['BeforeAgent'], beforeTool: ['BeforeTool'], afterTool: ['AfterTool'], end: ['AfterAgent', 'SessionEnd'], points: POINT_EVENTS }, EVENTS),
}
