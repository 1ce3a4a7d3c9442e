/**
 * Cline's hook scripts (one file per event in a hooks folder: `.cline/hooks/PreToolUse`, ...), read and
 * answered as Cline CLI 3.0.65 does, measured with the real CLI (test/agents/real-clis/cline-opencode-hookd.test.ts,
 * test/agents/contracts/cline-contract.test.ts) and read in its shipped code (@cline/core's hook files).
 * Each script gets the event's JSON on stdin; the event names itself in `hookName` (tool_call, ...).
 * Cline waits for the answer only at PreToolUse and PostToolUse: the other scripts run detached, their
 * output unread, so they observe.
 *
 *   TaskStart, TaskResume      open the run (beforeRun); detached
 *   UserPromptSubmit           opens the run; detached, so no context reaches the model
 *   PreToolUse                 beforeToolExecute: a refusal -> `{"cancel": true, "errorMessage": reason}`,
 *                              which stops the whole task (Cline has no refusal of one call in its hook
 *                              files); rewritten arguments -> `overrideInput`; ctx.confirm cannot be put
 *                              (Cline's hooks cannot ask) and refuses
 *   PostToolUse                afterToolExecute on the result, observed: Cline takes no rewritten result
 *                              (only `cancel` and context), so a rewrite is said as context
 *   TaskComplete               afterRun end_turn; TaskError afterRun error; TaskCancel and
 *                              SessionShutdown afterRun interrupted
 *   a subagent's TaskStart     subagent:start, and its TaskComplete subagent:stop, observed (detached);
 *                              its TaskError, TaskCancel and SessionShutdown are not the run's end
 *
 * Not mapped: PreCompact, whose file Cline 3.0.65 lists but never runs (its event has no hook name).
 * A subagent's calls (spawn_agent) name it: `parent_agent_id` is set and `agent_id` is the subagent's;
 * they belong to the run of the root session (`sessionContext.rootSessionId`).
 */
import * as z from 'zod'
import { fieldOf, idField, nameField, parseEvent, pathField, shortField, textOf } from '../event-fields.js'
import { type Dialect, type DialectAnswer, type HookEvent, type NativeToolEvent, type ParsedEvent, type ResultVerdict, type ToolVerdict, eventsFor } from '../hook-event.js'
import { CLINE, CLINE_TOOLS } from './tools.js'

/** Cline's hook names (`hookName`) and the hook file each is run from. */
const FILES = {
  agent_start: 'TaskStart',
  agent_resume: 'TaskResume',
  agent_abort: 'TaskCancel',
  agent_end: 'TaskComplete',
  agent_error: 'TaskError',
  tool_call: 'PreToolUse',
  tool_result: 'PostToolUse',
  prompt_submit: 'UserPromptSubmit',
  session_shutdown: 'SessionShutdown',
} as const

type HookName = keyof typeof FILES

const EVENTS = ['TaskStart', 'TaskResume', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'TaskComplete', 'TaskError', 'TaskCancel', 'SessionShutdown'] as const

const base = z.looseObject({
  hookName: shortField,
  taskId: idField,
  workspaceRoots: z.array(pathField).min(1, 'names no folder').max(64),
  sessionContext: z.looseObject({ rootSessionId: idField.optional() }).optional(),
  agent_id: idField.optional(),
  parent_agent_id: idField.nullable().optional(),
})
const call = z.looseObject({ id: shortField, name: nameField, input: z.unknown() })
const toolCall = base.extend({ tool_call: call })
const toolResult = base.extend({
  tool_result: call.extend({ output: z.unknown().optional(), error: z.string().nullable().optional() }),
})
const prompt = base.extend({ userPromptSubmit: z.looseObject({ prompt: z.string() }) })

export interface ClineEvent {
  hookName: string
}

const isItem = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

function cancel(reason: string): DialectAnswer {
  return { cancel: true, errorMessage: reason }
}

/** The call as hooks see it: its input (an object, or none), and the subagent that makes it. */
function nativeCall(e: z.infer<typeof toolCall>['tool_call'], b: z.infer<typeof base>): NativeToolEvent {
  const subagent = b.parent_agent_id && b.agent_id ? { subagent: { id: b.agent_id } } : {}
  const input = isItem(e.input) ? e.input : {}
  const unreadable = isItem(e.input) ? {} : { unreadable: `Cline's tool_call.input for '${e.name}' is not an object` }
  return { id: e.id, tool: e.name, input, ...unreadable, ...subagent }
}

function read(body: unknown): ParsedEvent<ClineEvent> {
  const b = parseEvent(base, body, 'the hook event', 'Cline')
  const name = Object.hasOwn(FILES, b.hookName) ? FILES[b.hookName as HookName] : undefined
  let event: HookEvent = { kind: 'other' }
  // A subagent's own start and end are its points, never the run's (the run is the root session's).
  const sub = b.parent_agent_id && b.agent_id ? { id: b.agent_id } : undefined
  switch (b.hookName) {
    case 'agent_start':
    case 'agent_resume':
      event = sub ? { kind: 'point', point: 'subagent:start', payload: { subagent: sub } } : { kind: 'start' }
      break
    case 'prompt_submit':
      event = { kind: 'prompt', prompt: parseEvent(prompt, body, 'the UserPromptSubmit event', 'Cline').userPromptSubmit.prompt }
      break
    case 'tool_call': {
      const e = parseEvent(toolCall, body, 'the PreToolUse event', 'Cline')
      event = { kind: 'beforeTool', call: nativeCall(e.tool_call, b) }
      break
    }
    case 'tool_result': {
      const e = parseEvent(toolResult, body, 'the PostToolUse event', 'Cline')
      const error = e.tool_result.error
      event = { kind: 'afterTool', call: nativeCall(e.tool_result, b), text: textOf(e.tool_result.output), isError: typeof error === 'string' && error !== '' }
      break
    }
    case 'agent_end':
      event = sub ? { kind: 'point', point: 'subagent:stop', payload: { subagent: sub, lastMessage: '' } } : { kind: 'end', reason: 'end_turn' }
      break
    case 'agent_error':
      if (!sub) event = { kind: 'end', reason: 'error' }
      break
    case 'agent_abort':
    case 'session_shutdown':
      if (!sub) event = { kind: 'end', reason: 'interrupted' }
      break
  }
  const sessionId = b.sessionContext?.rootSessionId ?? b.taskId
  return { session: { sessionId, cwd: b.workspaceRoots[0] as string }, event, ...(name ? { name } : {}), native: { hookName: b.hookName } }
}

export const CLINE_DIALECT: Dialect<ClineEvent> = {
  agent: CLINE,
  title: 'Cline',
  tools: CLINE_TOOLS,
  canAsk: false,
  cwdField: 'workspaceRoots[0]',
  // Cline reads an empty output as no opinion.
  quiet: undefined,
  events: EVENTS,
  parse: read,
  isGate: (body) => fieldOf(body, 'hookName') === 'tool_call',
  refuse: (_body, reason) => cancel(reason),
  putsAsk: () => false,
  tool(_event, verdict: ToolVerdict) {
    switch (verdict.kind) {
      case 'allow':
        return undefined
      case 'deny':
        return cancel(verdict.reason)
      case 'rewrite':
        return { overrideInput: verdict.input }
      case 'ask':
      case 'defer':
        return cancel(`this call needs a person's yes, and Cline cannot ask for one from a hook: ${verdict.reason}`)
    }
  },
  result(_event, verdict: ResultVerdict) {
    if (verdict.kind === 'keep') return undefined
    // Cline keeps the tool's own result; the hooks' text reaches the model as context after it.
    return { contextModification: `hookd's hooks replaced this tool's result; read this instead:\n${verdict.text === '' ? '(no output)' : verdict.text}` }
  },
  // Cline runs its subagents' TaskStart and TaskComplete detached: the points observe, and what a hook changes is dropped.
  answer: (_event, _point, changes) => ({ answer: undefined, ...(Object.keys(changes.fields).length ? { dropped: Object.keys(changes.fields) } : {}) }),
  eventsForPoints: (points) =>
    eventsFor(
      points,
      {
        open: ['TaskStart', 'TaskResume', 'UserPromptSubmit'],
        context: [],
        beforeTool: ['PreToolUse'],
        afterTool: ['PostToolUse'],
        end: ['TaskComplete', 'TaskError', 'TaskCancel', 'SessionShutdown'],
        points: { 'subagent:start': ['TaskStart', 'TaskResume'], 'subagent:stop': ['TaskComplete'] },
      },
      EVENTS,
    ),
}
