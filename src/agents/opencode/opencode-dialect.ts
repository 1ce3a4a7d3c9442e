/**
 * OpenCode's events as hookd's plugin (plugin.ts) posts them, and the answers it applies, for OpenCode
 * 1.18.33, whose hooks are in-process plugins (measured with the real CLI:
 * test/agents/real-clis/cline-opencode-hookd.test.ts, test/agents/contracts/opencode-contract.test.ts). Each
 * body names its event (`event`: the plugin hook's name, or the bus event's type) and its session.
 *
 *   tool.execute.before       beforeToolExecute: a refusal -> `{"block": true, "reason"}` (the plugin
 *                             throws it, and the model reads the reason as the tool's error); rewritten
 *                             arguments -> `{"args"}` (the call's arguments replaced); ctx.confirm
 *                             cannot be put (a plugin cannot ask the person) and refuses
 *   tool.execute.after        afterToolExecute on the text the model reads: a rewrite -> `{"output"}`
 *   chat.message              opens the run (beforeRun), observed
 *   session.created           a root session opens the run; a child session (a subagent) is
 *                             subagent:start, observed (OpenCode takes no context for it)
 *   session.idle              a root session's afterRun end_turn; a child's subagent:stop, observed
 *   session.error             afterRun error
 *   experimental.session.compacting   compact:before, observed (the plugin cannot stop a compaction)
 *   session.compacted         compact:after
 *
 * A subagent's calls name it (`subagent`, the child session and its agent) and belong to the run of
 * the root session (`rootSessionID`). Not mapped (docs/agents.md lists why): chat.params,
 * chat.headers, the experimental transforms, command.execute.before, shell.env, tool.definition and
 * the other bus events.
 */
import * as z from 'zod'
import type { AgentPointName } from '../../protocol/points/points.js'
import { fieldOf, idField, nameField, objectField, parseEvent, pathField, shortField } from '../event-fields.js'
import { type Dialect, type DialectAnswer, type HookEvent, type ParsedEvent, type ResultVerdict, type ToolVerdict, eventsFor } from '../hook-event.js'
import { OPENCODE, OPENCODE_TOOLS } from './tools.js'

const EVENTS = [
  'chat.message',
  'session.created',
  'tool.execute.before',
  'tool.execute.after',
  'experimental.session.compacting',
  'session.compacted',
  'session.idle',
  'session.error',
] as const

const subagent = z.strictObject({ id: idField, type: shortField.optional() })
const base = z.looseObject({ event: shortField, sessionID: idField, rootSessionID: idField.optional(), subagent: subagent.optional(), directory: pathField })
const tool = base.extend({ tool: nameField, callID: shortField, args: objectField })
const after = tool.extend({ output: z.string() })
const message = base.extend({ prompt: z.string() })

export interface OpenCodeEvent {
  event: string
}

function block(reason: string): DialectAnswer {
  return { block: true, reason }
}

function read(body: unknown): ParsedEvent<OpenCodeEvent> {
  const b = parseEvent(base, body, 'the event', 'OpenCode (hookd plugin)')
  const sub = b.subagent && { id: b.subagent.id, ...(b.subagent.type !== undefined ? { type: b.subagent.type } : {}) }
  const point = (name: AgentPointName, payload: Record<string, unknown> = {}): HookEvent => ({ kind: 'point', point: name, payload: { ...payload, ...(sub ? { subagent: sub } : {}) } })
  let event: HookEvent = { kind: 'other' }
  switch (b.event) {
    case 'tool.execute.before':
    case 'tool.execute.after': {
      const e = b.event === 'tool.execute.before' ? parseEvent(tool, body, 'the tool.execute.before event', 'OpenCode') : parseEvent(after, body, 'the tool.execute.after event', 'OpenCode')
      const call = { id: e.callID, tool: e.tool, input: e.args, ...(sub ? { subagent: sub } : {}) }
      event = 'output' in e ? { kind: 'afterTool', call, text: e.output as string, isError: false } : { kind: 'beforeTool', call }
      break
    }
    case 'chat.message':
      event = sub ? { kind: 'other' } : { kind: 'prompt', prompt: parseEvent(message, body, 'the chat.message event', 'OpenCode').prompt }
      break
    case 'session.created':
      event = sub ? point('subagent:start') : { kind: 'start' }
      break
    case 'session.idle':
      event = sub ? point('subagent:stop', { lastMessage: '' }) : { kind: 'end', reason: 'end_turn' }
      break
    case 'session.error':
      event = sub ? { kind: 'other' } : { kind: 'end', reason: 'error' }
      break
    case 'experimental.session.compacting':
      event = point('compact:before', { trigger: 'auto' })
      break
    case 'session.compacted':
      event = point('compact:after', { trigger: 'auto' })
      break
  }
  return { session: { sessionId: b.rootSessionID ?? b.sessionID, cwd: b.directory }, event, name: b.event, native: { event: b.event } }
}

export const OPENCODE_DIALECT: Dialect<OpenCodeEvent> = {
  agent: OPENCODE,
  title: 'OpenCode',
  tools: OPENCODE_TOOLS,
  canAsk: false,
  cwdField: 'directory',
  quiet: undefined,
  events: EVENTS,
  parse: read,
  isGate: (body) => fieldOf(body, 'event') === 'tool.execute.before',
  refuse: (_body, reason) => block(reason),
  putsAsk: () => false,
  tool(_event, verdict: ToolVerdict) {
    switch (verdict.kind) {
      case 'allow':
        return undefined
      case 'deny':
        return block(verdict.reason)
      case 'rewrite':
        return { args: verdict.input }
      case 'ask':
      case 'defer':
        return block(`this call needs a person's yes, and OpenCode cannot ask for one from a plugin: ${verdict.reason}`)
    }
  },
  result(_event, verdict: ResultVerdict) {
    if (verdict.kind === 'keep') return undefined
    return { output: verdict.text }
  },
  // Every point OpenCode sends is observed: the plugin applies no answer there.
  answer: (_event, _point, changes) => ({ answer: undefined, ...(Object.keys(changes.fields).length ? { dropped: Object.keys(changes.fields) } : {}) }),
  eventsForPoints: (points) =>
    eventsFor(
      points,
      {
        open: ['chat.message', 'session.created'],
        context: [],
        beforeTool: ['tool.execute.before'],
        afterTool: ['tool.execute.after'],
        end: ['session.idle', 'session.error'],
        points: {
          'subagent:start': ['session.created'],
          'subagent:stop': ['session.idle'],
          'compact:before': ['experimental.session.compacting'],
          'compact:after': ['session.compacted'],
        },
      },
      EVENTS,
    ),
}
