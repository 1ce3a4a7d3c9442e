/**
 * Copilot CLI's command hooks (`.github/hooks/*.json`, camelCase events), read and answered as Copilot
 * CLI 1.0.102 does, measured with the real CLI (test/agents/command-clis-hookd.test.ts,
 * test/agents/contracts/copilot-contract.test.ts). Copilot's camelCase events do not carry their own name, so the route says it:
 * `hookd setup copilot` posts each event to `.../copilot/HOOKS?event=<name>`.
 *
 *   sessionStart          opens the run (beforeRun)
 *   userPromptSubmitted   opens the run (Copilot reads no answer there)
 *   preToolUse            beforeToolExecute: refusal -> permissionDecision "deny" with its reason (the
 *                         model reads `Denied by preToolUse hook: <reason>`); rewritten arguments ->
 *                         "allow" + modifiedArgs; ctx.confirm -> "ask" with the hooks' questions (in
 *                         `copilot -p`, where nobody can answer, Copilot denies it); its outcome is the
 *                         later postToolUse of the same tool and arguments (the call ran), or none by
 *                         agentStop or sessionEnd (it did not)
 *   postToolUse           afterToolExecute on toolResult.textResultForLlm: a rewrite -> modifiedResult
 *   agentStop             afterRun end_turn; sessionEnd afterRun interrupted when no agentStop ended the run
 *
 * Copilot's PascalCase events (`PreToolUse`, ...) send Claude Code's JSON instead: post them to the
 * /claude-code/ route, or let setup register the camelCase ones.
 */
import * as z from 'zod'
import { HookdError } from '../../protocol/status.js'
import { type Dialect, type DialectAnswer, type HookEvent, type ParsedEvent, type ResultVerdict, type ToolVerdict, eventsFor } from '../hook-event.js'
import { idField, jsonArguments, nameField, objectField, parseEvent, pathField, shortField } from '../event-fields.js'
import { COPILOT, COPILOT_TOOLS } from './tools.js'

const base = z.looseObject({ sessionId: idField, cwd: pathField })
const preToolUse = base.extend({ toolName: nameField, toolArgs: z.union([objectField, z.string()]).optional() })
const postToolUse = preToolUse.extend({
  toolResult: z.looseObject({ resultType: shortField.optional(), textResultForLlm: z.string().optional() }).optional(),
})
const prompt = base.extend({ prompt: z.string() })

const EVENTS = ['sessionStart', 'userPromptSubmitted', 'preToolUse', 'postToolUse', 'agentStop', 'sessionEnd'] as const

interface CopilotEvent {
  name: string
  /** True when toolArgs came as a bare string (apply_patch's patch): it goes back as one. */
  stringArgs: boolean
  resultType?: string
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

function read(body: unknown, name?: string): ParsedEvent<CopilotEvent> {
  if (name === undefined) {
    throw new HookdError('invalid-argument', "Copilot's hook events do not name themselves: post each to its route with ?event=<name> (e.g. .../copilot/guard?event=preToolUse), as 'hookd setup copilot' writes")
  }
  const b = parseEvent(base, body, `the ${name} event`, 'Copilot CLI')
  let event: HookEvent = { kind: 'other' }
  const native: CopilotEvent = { name, stringArgs: false }
  switch (name) {
    case 'sessionStart':
      event = { kind: 'start' }
      break
    case 'userPromptSubmitted':
      event = { kind: 'prompt', prompt: parseEvent(prompt, body, 'the userPromptSubmitted event', 'Copilot CLI').prompt }
      break
    case 'preToolUse': {
      const e = parseEvent(preToolUse, body, 'the preToolUse event', 'Copilot CLI')
      const { input, stringArgs, unreadable } = toolInput(e.toolName, e.toolArgs)
      native.stringArgs = stringArgs
      event = { kind: 'beforeTool', call: { id: '', tool: e.toolName, input, ...(unreadable !== undefined ? { unreadable } : {}) } }
      break
    }
    case 'postToolUse': {
      const e = parseEvent(postToolUse, body, 'the postToolUse event', 'Copilot CLI')
      const resultType = e.toolResult?.resultType ?? 'success'
      if (e.toolResult?.resultType !== undefined) native.resultType = resultType
      const { input, unreadable } = toolInput(e.toolName, e.toolArgs)
      const call = { id: '', tool: e.toolName, input, ...(unreadable !== undefined ? { unreadable } : {}) }
      event = { kind: 'afterTool', call, text: e.toolResult?.textResultForLlm ?? '', isError: resultType !== 'success' }
      break
    }
    case 'agentStop':
      event = { kind: 'end', reason: 'end_turn' }
      break
    case 'sessionEnd':
      event = { kind: 'end', reason: 'interrupted' }
      break
  }
  return { session: { sessionId: b.sessionId, cwd: b.cwd }, event, native }
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
  isGate: (_body, name) => name === 'preToolUse',
  refuse: (_body, reason) => deny(reason),
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
    if (verdict.kind === 'keep') return undefined
    // A failure stays the kind of failure Copilot said it was (failure, rejected, denied).
    const failed = event.resultType !== undefined && event.resultType !== 'success' ? event.resultType : 'failure'
    return { modifiedResult: { resultType: verdict.isError ? failed : 'success', textResultForLlm: verdict.text } }
  },
  eventsForPoints: (points, options = {}) =>
    eventsFor(points, { open: ['userPromptSubmitted'], context: [], beforeTool: ['preToolUse'], afterTool: ['postToolUse'], end: ['agentStop', 'sessionEnd'] }, EVENTS, { ...options, follow: true }),
}
