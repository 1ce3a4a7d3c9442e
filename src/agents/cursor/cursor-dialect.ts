/**
 * Cursor's command hooks (`.cursor/hooks.json`), read and answered from Cursor's contract: the agent
 * cannot run here (test/agents/contracts/cursor-contract.test.ts says why and checks every field).
 * Sources: cursor.com/docs/agent/hooks (the 1.7-2.0 page, as kept in pcomans/caruso
 * reference/cursor_hooks.md), and Cursor's hook engine as @cursor/sdk 1.0.32 ships it (the events it
 * sends, their fields, and the answers it validates and reads), for the events that page lags on.
 *
 *   beforeShellExecution {command, cwd}      beforeToolExecute on `Shell` (shell {command, cwd})
 *   beforeMCPExecution {tool_name, tool_input: "<json>"}   beforeToolExecute on `MCP:<tool_name>`
 *   beforeReadFile {file_path, content}      beforeToolExecute on `Read` (read_file {path})
 *       -> {permission: "deny" | "ask", user_message, agent_message} (agent_message is what the model
 *          reads); beforeReadFile takes {permission: "deny"} only. These take no rewritten call, so a
 *          rewrite is refused, telling the model the call the hooks would run instead
 *   preToolUse {tool_name, tool_input, tool_use_id, parent_tool_call_id}
 *                                            beforeToolExecute on the tool as named (Shell, Read, Write,
 *                                            Delete, Grep, MCP:<tool>, ...), the subagent named by the
 *                                            tool call that started it; a rewrite -> updated_input
 *                                            where Cursor applies the changed fields (cursor-points.ts)
 *   afterShellExecution {command, output}, afterMCPExecution {result_json}, afterFileEdit {file_path,
 *   edits}, postToolUse {tool_output}, postToolUseFailure {error_message}
 *                                            afterToolExecute, observe only: Cursor takes no new result
 *   beforeSubmitPrompt {prompt}              opens the run; beforeModelRequest: added text ->
 *                                            additional_context
 *   subagentStart, subagentStop, preCompact  agent points (cursor-points.ts)
 *   stop {status}                            afterRun: completed -> end_turn, aborted -> interrupted,
 *                                            error -> error; sessionStart / sessionEnd open / end
 *
 * The session is `conversation_id`; the workdir the first of `workspace_roots`. Cursor wants JSON
 * from every hook, so no opinion is `{}`, which is also the answer to every event not mapped here
 * (afterAgentResponse and afterAgentThought observe the model's text and take no answer;
 * beforeTabFileRead and afterTabFileEdit are Tab's completions, not the agent's; workspaceOpen opens
 * no session): it opens no run.
 */
import * as z from 'zod'
import { type Dialect, type DialectAnswer, type HookEvent, type ParsedEvent, type ResultVerdict, type ToolVerdict, eventsFor } from '../hook-event.js'
import { fieldOf, idField, jsonArguments, nameField, objectField, parseEvent, pathField, shortField, textOf } from '../event-fields.js'
import { POINTS_BY_EVENT, answerPoint, pointEvent, updatedInput } from './cursor-points.js'
import { CURSOR, CURSOR_TOOLS } from './tools.js'

const base = z.looseObject({
  hook_event_name: shortField,
  conversation_id: idField,
  model: shortField.optional(),
  workspace_roots: z.array(pathField).min(1, 'lists no folder').max(64),
})
const shell = base.extend({ command: z.string(), cwd: pathField.optional(), output: z.string().optional() })
const mcp = base.extend({ tool_name: nameField, tool_input: z.union([z.string(), objectField]).optional(), result_json: z.string().optional() })
const readFile = base.extend({ file_path: pathField, content: z.string().optional() })
const fileEdit = base.extend({ file_path: pathField, edits: z.array(z.looseObject({ old_string: z.string(), new_string: z.string() })).max(10_000) })
const toolUse = base.extend({
  tool_name: nameField,
  tool_input: objectField.optional(),
  tool_use_id: shortField.optional(),
  parent_tool_call_id: idField.optional(),
  error_message: z.string().optional(),
})
const prompt = base.extend({ prompt: z.string() })
const stop = base.extend({ status: shortField.optional() })

const EVENTS = [
  'sessionStart',
  'beforeSubmitPrompt',
  'beforeShellExecution',
  'beforeMCPExecution',
  'beforeReadFile',
  'preToolUse',
  'afterShellExecution',
  'afterMCPExecution',
  'afterFileEdit',
  'postToolUse',
  'postToolUseFailure',
  'subagentStart',
  'subagentStop',
  'preCompact',
  'stop',
  'sessionEnd',
] as const

/**
 * Cursor's events hookd does not map, and why (the engine's full list: cursor-contract.test.ts checks
 * that these and EVENTS are every event it sends). Each is answered `{}` and opens no run.
 */
export const CURSOR_UNMAPPED: Readonly<Record<string, string>> = {
  afterAgentResponse: "the model's answer, after the fact: Cursor takes no answer, so afterModelResponse's redact could not reach it",
  afterAgentThought: "the model's thinking, after the fact: Cursor takes no answer",
  beforeTabFileRead: "Tab's inline completions reading a file: not the agent's tool calls",
  afterTabFileEdit: "Tab's inline completions editing a file: not the agent's tool calls",
  workspaceOpen: 'the editor opening a folder: no conversation, so no session to run',
}

const GATES: ReadonlySet<string> = new Set(['beforeShellExecution', 'beforeMCPExecution', 'beforeReadFile', 'preToolUse'])
/**
 * The events after a tool that hookd maps. Cursor's other `after...` events (afterAgentResponse,
 * afterAgentThought, afterTabFileEdit) carry no tool call: no opinion, like any event not mapped.
 */
const AFTER_TOOL: ReadonlySet<string> = new Set(['afterShellExecution', 'afterMCPExecution', 'afterFileEdit', 'postToolUse', 'postToolUseFailure'])

interface CursorEvent {
  name: string
  /** preToolUse's tool and input as Cursor sent them: what a rewrite is told apart from. */
  tool?: string
  input?: Record<string, unknown>
}

/**
 * MCP parameters: documented as a JSON string; an object as it is. Text hookd cannot read as an
 * object (past the depth limit, not JSON) is no input: the gate refuses the call (NativeToolEvent.unreadable).
 */
function mcpInput(tool: string, input: string | Record<string, unknown> | undefined): { input: Record<string, unknown>; unreadable?: string } {
  if (input === undefined) return { input: {} }
  if (typeof input !== 'string') return { input }
  const json = jsonArguments(input, "Cursor's tool_input", tool)
  return json.ok ? { input: json.value } : { input: {}, unreadable: json.problem }
}

function toolEvent(name: string, body: unknown): HookEvent {
  const what = `the ${name} event`
  switch (name) {
    case 'beforeShellExecution':
    case 'afterShellExecution': {
      const e = parseEvent(shell, body, what, 'Cursor')
      const call = { id: '', tool: 'Shell', input: { command: e.command, ...(e.cwd !== undefined ? { cwd: e.cwd } : {}) } }
      return name === 'beforeShellExecution' ? { kind: 'beforeTool', call } : { kind: 'afterTool', call, text: e.output ?? '', isError: false }
    }
    case 'beforeMCPExecution':
    case 'afterMCPExecution': {
      const e = parseEvent(mcp, body, what, 'Cursor')
      const { input, unreadable } = mcpInput(e.tool_name, e.tool_input)
      const call = { id: '', tool: `MCP:${e.tool_name}`, input, ...(unreadable !== undefined ? { unreadable } : {}) }
      return name === 'beforeMCPExecution' ? { kind: 'beforeTool', call } : { kind: 'afterTool', call, text: e.result_json ?? '', isError: false }
    }
    case 'beforeReadFile': {
      const e = parseEvent(readFile, body, what, 'Cursor')
      return { kind: 'beforeTool', call: { id: '', tool: 'Read', input: { file_path: e.file_path, ...(e.content !== undefined ? { content: e.content } : {}) } } }
    }
    case 'afterFileEdit': {
      const e = parseEvent(fileEdit, body, what, 'Cursor')
      const one = e.edits.length === 1 ? e.edits[0] : undefined
      const input = one ? { file_path: e.file_path, old_string: one.old_string, new_string: one.new_string } : { file_path: e.file_path, edits: e.edits }
      return { kind: 'afterTool', call: { id: '', tool: 'Edit', input }, text: '', isError: false }
    }
    default: {
      const e = parseEvent(toolUse, body, what, 'Cursor')
      // A subagent's calls name the tool call that started it.
      const by = e.parent_tool_call_id !== undefined ? { subagent: { id: e.parent_tool_call_id } } : {}
      const call = { id: e.tool_use_id ?? '', tool: e.tool_name, input: e.tool_input ?? {}, ...by }
      if (name === 'preToolUse') return { kind: 'beforeTool', call }
      if (name === 'postToolUseFailure') return { kind: 'afterTool', call, text: e.error_message ?? '', isError: true }
      return { kind: 'afterTool', call, text: textOf(fieldOf(body, 'tool_output') ?? fieldOf(body, 'result')), isError: false }
    }
  }
}

function read(body: unknown): ParsedEvent<CursorEvent> {
  const native = parseEvent(base, body, 'the hook event', 'Cursor')
  const name = native.hook_event_name
  let event: HookEvent
  switch (name) {
    case 'sessionStart':
      event = { kind: 'start' }
      break
    case 'beforeSubmitPrompt':
      event = { kind: 'prompt', prompt: parseEvent(prompt, body, 'the beforeSubmitPrompt event', 'Cursor').prompt }
      break
    case 'stop': {
      const status = parseEvent(stop, body, 'the stop event', 'Cursor').status
      event = { kind: 'end', reason: status === 'aborted' ? 'interrupted' : status === 'error' ? 'error' : 'end_turn' }
      break
    }
    case 'sessionEnd':
      event = { kind: 'end', reason: 'interrupted' }
      break
    default:
      event = pointEvent(name, body) ?? (GATES.has(name) || AFTER_TOOL.has(name) ? toolEvent(name, body) : { kind: 'other' })
  }
  const session = { sessionId: native.conversation_id, cwd: native.workspace_roots[0] as string, ...(native.model ? { model: native.model } : {}) }
  const own: CursorEvent = { name }
  if (name === 'preToolUse' && event.kind === 'beforeTool') Object.assign(own, { tool: event.call.tool, input: event.call.input })
  return { session, event, native: own }
}

/**
 * A refusal in the fields Cursor documents for the event: beforeReadFile's answer is `permission`
 * alone (an agent that parses strictly, as Codex does, would ignore an answer with more, and let
 * the read through).
 */
function refusal(permission: 'deny' | 'ask', reason: string, event?: string): DialectAnswer {
  return event === 'beforeReadFile' ? { permission } : { permission, user_message: reason, agent_message: reason }
}

/** What the hooks would run instead: the command for a shell, the input as JSON otherwise. */
function rewritten(input: Record<string, unknown>): string {
  return typeof input.command === 'string' ? input.command : JSON.stringify(input)
}

/** beforeReadFile answers allow or deny only, and a rewrite cannot ride along with an ask. */
function putsAsk(event: CursorEvent, verdict: { input?: Record<string, unknown> }): boolean {
  return event.name !== 'beforeReadFile' && verdict.input === undefined
}

export const CURSOR_DIALECT: Dialect<CursorEvent> = {
  agent: CURSOR,
  title: 'Cursor',
  tools: CURSOR_TOOLS,
  canAsk: true,
  // Cursor's after events are not measured (the agent cannot run here), and beforeReadFile has none:
  // what became of an ask is recorded unknown.
  asks: 'not followed',
  cwdField: 'workspace_roots[0]',
  quiet: {},
  events: EVENTS,
  parse: read,
  isGate: (body) => GATES.has(String(fieldOf(body, 'hook_event_name'))),
  refuse: (body, reason) => refusal('deny', reason, String(fieldOf(body, 'hook_event_name'))),
  putsAsk,
  tool(event, verdict: ToolVerdict) {
    switch (verdict.kind) {
      case 'allow':
        return undefined
      case 'deny':
        return refusal('deny', verdict.reason, event.name)
      case 'rewrite': {
        const updated = event.tool !== undefined && event.input !== undefined ? updatedInput(event.tool, event.input, verdict.input) : undefined
        // No permission with it: Cursor applies updated_input whatever the permission, and its own approval still decides.
        if (updated) return { updated_input: updated }
        return refusal('deny', `hookd's hooks changed this call, and Cursor cannot run a changed call, so this one is refused; the hooks would allow: ${rewritten(verdict.input)}`, event.name)
      }
      case 'ask':
        // beforeReadFile answers allow or deny only; a rewrite cannot ride along with an ask either.
        if (!putsAsk(event, verdict)) return refusal('deny', `this call needs a person's yes, which Cursor cannot be asked for here: ${verdict.reason}`, event.name)
        return refusal('ask', verdict.reason)
    }
  },
  // Cursor reads no answer after a tool: the hooks see the result, and it reaches the model as it was.
  result: (_event, _verdict: ResultVerdict) => undefined,
  promptContext: (event, context) => (event.name === 'beforeSubmitPrompt' ? { additional_context: context } : undefined),
  answer: (_event, point, changes) => answerPoint(point, changes),
  eventsForPoints: (points) =>
    eventsFor(
      points,
      {
        open: ['beforeSubmitPrompt'],
        context: ['beforeSubmitPrompt'],
        beforeTool: ['beforeShellExecution', 'beforeMCPExecution', 'beforeReadFile'],
        afterTool: ['afterShellExecution', 'afterMCPExecution', 'afterFileEdit'],
        end: ['stop'],
        points: POINTS_BY_EVENT,
      },
      EVENTS,
    ),
}
