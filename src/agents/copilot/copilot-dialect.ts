/**
 * Copilot CLI's command hooks (`.github/hooks/*.json`, camelCase events), read and answered as Copilot
 * CLI 1.0.102 does, measured with the real CLI (test/agents/command-clis-hookd.test.ts,
 * test/agents/copilot-contract.test.ts). Copilot's camelCase events do not carry their own name, so the route says it:
 * `hookd setup copilot` posts each event to `.../copilot/HOOKS?event=<name>`.
 *
 *   sessionStart          opens the run (beforeRun)
 *   userPromptSubmitted   opens the run (Copilot reads no answer there)
 *   preToolUse            beforeToolExecute: refusal -> permissionDecision "deny" with its reason (the
 *                         model reads `Denied by preToolUse hook: <reason>`); rewritten arguments ->
 *                         "allow" + modifiedArgs; ctx.confirm -> "ask" with the hooks' questions (in
 *                         `copilot -p`, where nobody can answer, Copilot denies it)
 *   postToolUse           afterToolExecute on toolResult.textResultForLlm: a rewrite -> modifiedResult
 *   agentStop             afterRun end_turn; sessionEnd afterRun interrupted when no agentStop ended the run
 *
 * Copilot's PascalCase events (`PreToolUse`, ...) send Claude Code's JSON instead: post them to the
 * /claude-code/ route, or let setup register the camelCase ones.
 */
import * as z from 'zod'
import { parseJson } from '../../protocol/bounded-json.js'
import { HookdError } from '../../protocol/status.js'
import { type Dialect, type DialectAnswer, type HookEvent, type ParsedEvent, type ResultVerdict, type ToolVerdict, eventsFor } from '../hook-event.js'
import { idField, nameField, objectField, parseEvent, pathField, shortField } from '../event-fields.js'
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

/** toolArgs as an input object: an object as it is, a JSON object string parsed, other text as {command}. */
function toolInput(args: Record<string, unknown> | string | undefined): { input: Record<string, unknown>; stringArgs: boolean } {
  if (args === undefined) return { input: {}, stringArgs: false }
  if (typeof args !== 'string') return { input: args, stringArgs: false }
  if (args.trimStart().startsWith('{')) {
    const json = parseJson(args, 'the event toolArgs')
    if (json.ok && json.value !== null && typeof json.value === 'object' && !Array.isArray(json.value)) {
      return { input: json.value as Record<string, unknown>, stringArgs: false }
    }
  }
  return { input: { command: args }, stringArgs: true }
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
      const { input, stringArgs } = toolInput(e.toolArgs)
      native.stringArgs = stringArgs
      event = { kind: 'beforeTool', call: { id: '', tool: e.toolName, input } }
      break
    }
    case 'postToolUse': {
      const e = parseEvent(postToolUse, body, 'the postToolUse event', 'Copilot CLI')
      const resultType = e.toolResult?.resultType ?? 'success'
      if (e.toolResult?.resultType !== undefined) native.resultType = resultType
      event = { kind: 'afterTool', call: { id: '', tool: e.toolName, input: toolInput(e.toolArgs).input }, text: e.toolResult?.textResultForLlm ?? '', isError: resultType !== 'success' }
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
  eventsForPoints: (points) =>
    eventsFor(points, { open: ['userPromptSubmitted'], context: [], beforeTool: ['preToolUse'], afterTool: ['postToolUse'], end: ['agentStop', 'sessionEnd'] }, EVENTS),
}
