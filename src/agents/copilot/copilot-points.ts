/**
 * Copilot CLI's own moments as hookd's agent points (src/protocol/points/agent-points.ts), read and
 * answered as Copilot CLI 1.0.102 does, measured with the real CLI (test/agents/real-clis/copilot-hookd.test.ts,
 * test/agents/contracts/copilot-contract.test.ts):
 *
 *   permissionRequest {toolName, toolInput, permissionSuggestions}
 *                         permission:request on the call: allow -> {behavior: "allow"} (Copilot runs it
 *                         without its own permission check); deny -> {behavior: "deny", message} (the
 *                         model reads `Permission denied by a PermissionRequest hook: <message>`); ask
 *                         and defer -> no answer: Copilot's own permission flow decides (its prompt; in
 *                         -p, its rules); allow with rewritten arguments -> a deny saying what the hooks
 *                         would run (Copilot takes no arguments there: preToolUse's modifiedArgs does)
 *   subagentStart {agentName, agentId, agentType}   subagent:start: context -> additionalContext
 *                         (prepended to the subagent's prompt)
 *   subagentStop {agentId, agentType, agentName, response}
 *                         subagent:stop: keepWorking -> {decision: "block", reason} (the subagent goes on
 *                         with the reason as its prompt)
 *   preCompact {trigger, customInstructions}   compact:before, observed: Copilot reads no answer, so a
 *                         block is dropped with a line for the operator
 *   notification {notification_type, message, title}   notification, observed (Copilot runs it async)
 *
 * Events a subagent makes carry `agentId` (the subagent's id, also its events' `sessionId`),
 * `agentType` and `parentAgentId`: the subagent is named in the call hooks see (`call.subagent`).
 */
import * as z from 'zod'
import type { AgentPointName } from '../../protocol/points/points.js'
import { idField, nameField, objectField, parseEvent, shortField } from '../event-fields.js'
import type { DialectAnswer, HookEvent, PointChanges, Subagent } from '../hook-event.js'

/** The fields every event a subagent makes carries. */
export const subagentFields = {
  agentId: idField.optional(),
  agentType: shortField.optional(),
  parentAgentId: idField.optional(),
}

const permission = z.looseObject({ toolName: nameField, toolInput: objectField.optional(), ...subagentFields })
const subagent = z.looseObject({
  agentName: shortField.optional(),
  agentDisplayName: shortField.optional(),
  agentDescription: z.string().max(100_000).optional(),
  response: z.string().optional(),
  ...subagentFields,
})
const compact = z.looseObject({ trigger: shortField.optional(), customInstructions: z.string().optional() })
const notice = z.looseObject({ notification_type: shortField.optional(), message: z.string().optional(), title: z.string().optional() })

/** The events read here. */
export const POINT_EVENTS = ['permissionRequest', 'subagentStart', 'subagentStop', 'preCompact', 'notification'] as const

/** Which event carries each point (EventRoles.points). */
export const POINTS_BY_EVENT: Readonly<Partial<Record<AgentPointName, readonly string[]>>> = {
  'permission:request': ['permissionRequest'],
  'subagent:start': ['subagentStart'],
  'subagent:stop': ['subagentStop'],
  'compact:before': ['preCompact'],
  notification: ['notification'],
}

/** The subagent an event names, where it names one (agentId, and its agentType where given). */
export function subagentOf(e: { agentId?: string | undefined; agentType?: string | undefined }): Subagent | undefined {
  if (e.agentId === undefined) return undefined
  return { id: e.agentId, ...(e.agentType ? { type: e.agentType } : {}) }
}

/** One of the events above as its point; undefined for any other event. */
export function pointEvent(name: string, body: unknown): Extract<HookEvent, { kind: 'point' }> | undefined {
  const what = `the ${name} event`
  switch (name) {
    case 'permissionRequest': {
      const e = parseEvent(permission, body, what, 'Copilot CLI')
      const by = subagentOf(e)
      return { kind: 'point', point: 'permission:request', payload: {}, call: { id: '', tool: e.toolName, input: e.toolInput ?? {}, ...(by ? { subagent: by } : {}) } }
    }
    case 'subagentStart':
    case 'subagentStop': {
      const e = parseEvent(subagent, body, what, 'Copilot CLI')
      const payload: Record<string, unknown> = {
        subagent: { id: e.agentId ?? '', type: e.agentType ?? e.agentName ?? '' },
        ...(e.agentName !== undefined ? { name: e.agentName } : {}),
        ...(e.agentDescription !== undefined ? { description: e.agentDescription } : {}),
      }
      if (name === 'subagentStart') return { kind: 'point', point: 'subagent:start', payload }
      return { kind: 'point', point: 'subagent:stop', payload: { ...payload, lastMessage: e.response ?? '' } }
    }
    case 'preCompact': {
      const e = parseEvent(compact, body, what, 'Copilot CLI')
      return { kind: 'point', point: 'compact:before', payload: { trigger: e.trigger ?? '', instructions: e.customInstructions ?? '' } }
    }
    case 'notification': {
      const e = parseEvent(notice, body, what, 'Copilot CLI')
      return { kind: 'point', point: 'notification', payload: { kind: e.notification_type ?? '', message: e.message ?? '', ...(e.title !== undefined ? { title: e.title } : {}) } }
    }
    default:
      return undefined
  }
}

/** A refusal in both of Copilot's gates' forms: preToolUse reads permissionDecision, permissionRequest behavior. */
export function copilotDeny(reason: string): Record<string, unknown> {
  return { permissionDecision: 'deny', permissionDecisionReason: reason, behavior: 'deny', message: reason }
}

const text = (v: unknown): string => (typeof v === 'string' ? v : '')

/** What the hooks changed at a point, in Copilot's answer; what it cannot carry is named in `dropped`. */
export function answerPoint(point: AgentPointName, changes: PointChanges): { answer: DialectAnswer; dropped?: string[] } {
  const f = changes.fields
  const others = (carried: readonly string[]): string[] => Object.keys(f).filter((k) => !carried.includes(k))
  const result = (answer: DialectAnswer, carried: readonly string[], also: string[] = []): { answer: DialectAnswer; dropped?: string[] } => {
    const dropped = [...others(carried), ...also]
    return { answer, ...(dropped.length ? { dropped } : {}) }
  }
  switch (point) {
    case 'permission:request': {
      if (changes.input !== undefined && f.decision !== 'deny') {
        const reason = `hookd's hooks changed this call's arguments at Copilot's permission request, which cannot take changed arguments, so it is refused; the hooks would allow: ${JSON.stringify(changes.input)}`
        return result({ behavior: 'deny', message: reason }, ['decision', 'reason'])
      }
      if (f.decision === 'deny') return result({ behavior: 'deny', message: text(f.reason) || 'refused by a hook' }, ['decision', 'reason'])
      if (f.decision === 'allow') return result({ behavior: 'allow' }, ['decision'])
      // ask: Copilot's own permission flow (its prompt) decides; defer: Copilot has no "decide later", and the same flow decides.
      return result(undefined, ['reason', ...(f.decision === 'ask' ? ['decision'] : [])])
    }
    case 'subagent:start':
      return typeof f.context === 'string' && f.context !== '' ? result({ additionalContext: f.context }, ['context']) : result(undefined, ['context'])
    case 'subagent:stop':
      if (f.keepWorking === true) return result({ decision: 'block', reason: text(f.reason) || 'a hook asked the subagent to keep working' }, ['keepWorking', 'reason'])
      return result(undefined, ['keepWorking'])
    default:
      // compact:before (Copilot reads no answer at preCompact) and the points that only observe.
      return result(undefined, [])
  }
}
