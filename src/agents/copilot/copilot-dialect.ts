/**
 * Copilot CLI's command hooks (`.github/hooks/*.json`, camelCase events), read and answered as Copilot
 * CLI 1.0.102 does, measured with the real CLI (test/agents/real-clis/command-clis-hookd.test.ts,
 * test/agents/real-clis/copilot-hookd.test.ts, test/agents/contracts/copilot-contract.test.ts). Copilot's camelCase
 * events do not carry their own name, so the route says it: `hookd setup copilot` posts each event to
 * `.../copilot/HOOKS?event=<name>`.
 *
 *   sessionStart          opens the run (beforeRun)
 *   userPromptSubmitted   opens the run (Copilot drops a command or http hook's answer there)
 *   userPromptTransformed beforeModelRequest on the prompt: the hooks' added text is appended to the
 *                         model-facing content (modifiedTransformedPrompt, which replaces it whole)
 *   preToolUse            beforeToolExecute: refusal -> permissionDecision "deny" with its reason (the
 *                         model reads `Denied by preToolUse hook: <reason>`); rewritten arguments ->
 *                         "allow" + modifiedArgs; ctx.confirm -> "ask" with the hooks' questions (in
 *                         `copilot -p`, where nobody can answer, Copilot denies it); its outcome is the
 *                         later postToolUse or postToolUseFailure of the same tool and arguments (the
 *                         call ran), or none by agentStop or sessionEnd (it did not)
 *   postToolUse           afterToolExecute on toolResult.textResultForLlm: a rewrite -> modifiedResult
 *   postToolUseFailure    afterToolExecute on `error`, an error: observed (Copilot takes only
 *                         additionalContext there, so a rewrite is not carried)
 *   permissionRequest, subagentStart, subagentStop, preCompact, notification: agent points (copilot-points.ts)
 *   agentStop             afterRun end_turn (a subagent's own agentStop is no end: subagentStop is)
 *   sessionEnd            afterRun (`error` when Copilot says so, else interrupted) when no agentStop ended the run
 *   errorOccurred         not mapped: no point carries an error notice, and Copilot reads no answer
 *
 * A subagent's events carry its own id as `sessionId` and the id of the agent that started it as
 * `parentAgentId`: they belong to that agent's session, so the same run and hooks see the subagent's
 * calls, with the subagent named (`call.subagent`).
 *
 * Copilot's PascalCase events (`PreToolUse`, ...) send Claude Code's JSON instead: post them to the
 * /claude-code/ route, or let setup register the camelCase ones.
 */
import * as z from 'zod'
import { HookdError } from '../../protocol/status.js'
import { type Dialect, type DialectAnswer, type HookEvent, type NativeToolEvent, type ParsedEvent, type ResultVerdict, type ToolVerdict, eventsFor } from '../hook-event.js'
import { idField, jsonArguments, nameField, objectField, parseEvent, pathField, shortField } from '../event-fields.js'
import { POINTS_BY_EVENT, answerPoint, copilotDeny, pointEvent, subagentFields, subagentOf } from './copilot-points.js'
import { COPILOT, COPILOT_TOOLS } from './tools.js'

const base = z.looseObject({ sessionId: idField, cwd: pathField, ...subagentFields })
const preToolUse = base.extend({ toolName: nameField, toolArgs: z.union([objectField, z.string()]).optional() })
const postToolUse = preToolUse.extend({
  toolResult: z.looseObject({ resultType: shortField.optional(), textResultForLlm: z.string().optional() }).optional(),
})
const postToolUseFailure = preToolUse.extend({ error: z.string().optional() })
const prompt = base.extend({ prompt: z.string() })
const transformed = prompt.extend({ transformedPrompt: z.string() })
const sessionEnd = base.extend({ reason: shortField.optional() })

const EVENTS = [
  'sessionStart',
  'userPromptSubmitted',
  'userPromptTransformed',
  'preToolUse',
  'permissionRequest',
  'postToolUse',
  'postToolUseFailure',
  'subagentStart',
  'subagentStop',
  'preCompact',
  'notification',
  'agentStop',
  'sessionEnd',
] as const

/** The events where a refusal stops a tool call. */
const GATES: ReadonlySet<string> = new Set(['preToolUse', 'permissionRequest'])

interface CopilotEvent {
  name: string
  /** True when toolArgs came as a bare string (apply_patch's patch): it goes back as one. */
  stringArgs: boolean
  resultType?: string
  /** userPromptTransformed's model-facing content, which the hooks' context is appended to. */
  transformed?: string
}

/** Tools whose toolArgs Copilot sends as a bare string, not JSON: apply_patch's patch. */
const BARE_STRING_TOOLS: ReadonlySet<string> = new Set(['apply_patch'])

/**
 * toolArgs as an input object: an object as it is; for apply_patch a bare patch string as {command};
 * otherwise a JSON object string parsed. Any other text (past the depth limit, not JSON, not an
 * object) is no input at all: hookd cannot read it, and never shows it to hooks as if it were one
 * of the tool's fields.
 */
function toolInput(tool: string, args: Record<string, unknown> | string | undefined): { input: Record<string, unknown>; stringArgs: boolean; unreadable?: string } {
  if (args === undefined) return { input: {}, stringArgs: false }
  if (typeof args !== 'string') return { input: args, stringArgs: false }
  if (BARE_STRING_TOOLS.has(tool) && !args.trimStart().startsWith('{')) return { input: { command: args }, stringArgs: true }
  const json = jsonArguments(args, "Copilot CLI's toolArgs", tool)
  return json.ok ? { input: json.value, stringArgs: false } : { input: {}, stringArgs: false, unreadable: json.problem }
}

function deny(reason: string): DialectAnswer {
  return { permissionDecision: 'deny', permissionDecisionReason: reason }
}

/** A tool event's call: its tool and input, and the subagent that makes it, where Copilot names one. */
function toolCall(e: z.infer<typeof preToolUse>): { call: NativeToolEvent; stringArgs: boolean } {
  const { input, stringArgs, unreadable } = toolInput(e.toolName, e.toolArgs)
  const by = subagentOf(e)
  return { call: { id: '', tool: e.toolName, input, ...(unreadable !== undefined ? { unreadable } : {}), ...(by ? { subagent: by } : {}) }, stringArgs }
}

function read(body: unknown, name?: string): ParsedEvent<CopilotEvent> {
  if (name === undefined) {
    throw new HookdError('invalid-argument', "Copilot's hook events do not name themselves: post each to its route with ?event=<name> (e.g. .../copilot/guard?event=preToolUse), as 'hookd setup copilot' writes")
  }
  const what = `the ${name} event`
  const b = parseEvent(base, body, what, 'Copilot CLI')
  let event: HookEvent = { kind: 'other' }
  const native: CopilotEvent = { name, stringArgs: false }
  switch (name) {
    case 'sessionStart':
    case 'userPromptSubmitted':
      event = { kind: 'start' }
      break
    case 'userPromptTransformed': {
      const e = parseEvent(transformed, body, what, 'Copilot CLI')
      native.transformed = e.transformedPrompt
      event = { kind: 'prompt', prompt: e.prompt }
      break
    }
    case 'preToolUse': {
      const { call, stringArgs } = toolCall(parseEvent(preToolUse, body, what, 'Copilot CLI'))
      native.stringArgs = stringArgs
      event = { kind: 'beforeTool', call }
      break
    }
    case 'postToolUse': {
      const e = parseEvent(postToolUse, body, what, 'Copilot CLI')
      const resultType = e.toolResult?.resultType ?? 'success'
      if (e.toolResult?.resultType !== undefined) native.resultType = resultType
      event = { kind: 'afterTool', call: toolCall(e).call, text: e.toolResult?.textResultForLlm ?? '', isError: resultType !== 'success' }
      break
    }
    case 'postToolUseFailure': {
      const e = parseEvent(postToolUseFailure, body, what, 'Copilot CLI')
      native.resultType = 'failure'
      event = { kind: 'afterTool', call: toolCall(e).call, text: e.error ?? '', isError: true }
      break
    }
    case 'agentStop':
      // A subagent's own agentStop: its subagentStop follows, and the session's run goes on.
      event = b.agentId === undefined ? { kind: 'end', reason: 'end_turn' } : { kind: 'other' }
      break
    case 'sessionEnd':
      event = { kind: 'end', reason: parseEvent(sessionEnd, body, what, 'Copilot CLI').reason === 'error' ? 'error' : 'interrupted' }
      break
    default:
      event = pointEvent(name, body) ?? { kind: 'other' }
  }
  // A subagent's events belong to the session of the agent that started it.
  return { session: { sessionId: b.parentAgentId ?? b.sessionId, cwd: b.cwd }, event, native }
}

/** The rewritten input as Copilot takes it: a bare patch string where Copilot sent one. */
function args(event: CopilotEvent, input: Record<string, unknown>): unknown {
  return event.stringArgs && typeof input.command === 'string' ? input.command : input
}

export const COPILOT_DIALECT: Dialect<CopilotEvent> = {
  agent: COPILOT,
  title: 'Copilot CLI',
  tools: COPILOT_TOOLS,
  canAsk: true,
  // Measured with Copilot CLI 1.0.102 in -p: a call that ran gets its postToolUse (with the same
  // toolName and toolArgs, no call id); a call whose ask was denied gets none.
  asks: 'follow',
  cwdField: 'cwd',
  quiet: undefined,
  events: EVENTS,
  parse: read,
  isGate: (_body, name) => name !== undefined && GATES.has(name),
  // Both gates' forms at once: the refusal must hold whichever gate it answers.
  refuse: (_body, reason) => copilotDeny(reason),
  tool(event, verdict: ToolVerdict) {
    switch (verdict.kind) {
      case 'allow':
        return undefined
      case 'deny':
        return deny(verdict.reason)
      case 'rewrite':
        return { permissionDecision: 'allow', modifiedArgs: args(event, verdict.input) }
      case 'ask':
        return { permissionDecision: 'ask', permissionDecisionReason: verdict.reason, ...(verdict.input ? { modifiedArgs: args(event, verdict.input) } : {}) }
    }
  },
  result(event, verdict: ResultVerdict) {
    // After a failure Copilot takes only additionalContext: the hooks saw the error, and it reaches the model as it was.
    if (verdict.kind === 'keep' || event.name === 'postToolUseFailure') return undefined
    // A failure stays the kind of failure Copilot said it was (failure, rejected, denied).
    const failed = event.resultType !== undefined && event.resultType !== 'success' ? event.resultType : 'failure'
    return { modifiedResult: { resultType: verdict.isError ? failed : 'success', textResultForLlm: verdict.text } }
  },
  promptContext: (event, context) => (event.transformed === undefined ? undefined : { modifiedTransformedPrompt: `${event.transformed}\n\n${context}` }),
  answer: (_event, point, changes) => answerPoint(point, changes),
  eventsForPoints: (points, options = {}) =>
    eventsFor(
      points,
      {
        open: ['userPromptSubmitted'],
        context: ['userPromptTransformed'],
        beforeTool: ['preToolUse'],
        afterTool: ['postToolUse', 'postToolUseFailure'],
        end: ['agentStop', 'sessionEnd'],
        points: POINTS_BY_EVENT,
      },
      EVENTS,
      { ...options, follow: true },
    ),
}
