/**
 * Claude Code's events that carry the agents' own points (src/protocol/points/agent-points.ts), both
 * ways, as the pinned CLI 2.1.328 declares them (its hook input and hookSpecificOutput schemas, read
 * from the binary: test/agents/contracts/claude-code-contract.test.ts):
 *
 *   PermissionRequest   permission:request on the canonical call: allow -> decision.behavior allow
 *                       (rewritten arguments -> updatedInput), deny -> behavior deny with the reason as
 *                       its message; ask and defer leave the dialog to open (Claude Code's answer has
 *                       neither), so their reason and a defer are named as dropped
 *   SubagentStart       subagent:start {subagent}: context -> additionalContext, which the subagent reads
 *   SubagentStop        subagent:stop {subagent, lastMessage}: keepWorking -> decision block with the reason
 *   PreCompact          compact:before {trigger, instructions}: block -> decision block with the reason
 *   PostCompact         compact:after {trigger, summary}
 *   ConfigChange        config:change {source, path}: block -> decision block (the change is not applied)
 *   Notification        notification {kind, message, title}
 *   FileChanged         file:changed {path, change}
 *
 * The subagent a tool event fires in (`agent_id`, `agent_type`) is the call's subagent (subagentOf).
 */
import type * as z from 'zod'
import type { AgentPointName } from '../../protocol/points/points.js'
import type { DialectAnswer, HookEvent, PointChanges, Subagent } from '../hook-event.js'
import { parseEvent } from '../event-fields.js'
import {
  type BaseEvent,
  configChangeEvent,
  fileChangedEvent,
  notificationEvent,
  permissionRequestEvent,
  postCompactEvent,
  preCompactEvent,
  subagentStartEvent,
  subagentStopEvent,
} from './events.js'

type PointEvent = Extract<HookEvent, { kind: 'point' }>

/** The subagent an event fires in: its agent_id, with its agent_type; none on the main thread. */
export function subagentOf(base: Pick<BaseEvent, 'agent_id' | 'agent_type'>): Subagent | undefined {
  if (base.agent_id === undefined) return undefined
  return { id: base.agent_id, ...(base.agent_type ? { type: base.agent_type } : {}) }
}

const parse = <T>(schema: z.ZodType<T>, body: unknown, name: string): T => parseEvent(schema, body, `the ${name} event`, 'Claude Code')

/** The point event for one of these events, or undefined for any other event. */
export function readPointEvent(name: string, body: unknown): PointEvent | undefined {
  switch (name) {
    case 'PermissionRequest': {
      const e = parse(permissionRequestEvent, body, name)
      const subagent = subagentOf(e)
      return { kind: 'point', point: 'permission:request', payload: {}, call: { id: '', tool: e.tool_name, input: e.tool_input, ...(subagent ? { subagent } : {}) } }
    }
    case 'SubagentStart': {
      const e = parse(subagentStartEvent, body, name)
      return { kind: 'point', point: 'subagent:start', payload: { subagent: subagentOf(e) } }
    }
    case 'SubagentStop': {
      const e = parse(subagentStopEvent, body, name)
      return { kind: 'point', point: 'subagent:stop', payload: { subagent: subagentOf(e), lastMessage: e.last_assistant_message ?? '' } }
    }
    case 'PreCompact': {
      const e = parse(preCompactEvent, body, name)
      return { kind: 'point', point: 'compact:before', payload: { trigger: e.trigger, instructions: e.custom_instructions ?? '' } }
    }
    case 'PostCompact': {
      const e = parse(postCompactEvent, body, name)
      return { kind: 'point', point: 'compact:after', payload: { trigger: e.trigger, summary: e.compact_summary } }
    }
    case 'ConfigChange': {
      const e = parse(configChangeEvent, body, name)
      return { kind: 'point', point: 'config:change', payload: { source: e.source, path: e.file_path ?? '' } }
    }
    case 'Notification': {
      const e = parse(notificationEvent, body, name)
      return { kind: 'point', point: 'notification', payload: { kind: e.notification_type, message: e.message, title: e.title ?? '' } }
    }
    case 'FileChanged': {
      const e = parse(fileChangedEvent, body, name)
      return { kind: 'point', point: 'file:changed', payload: { path: e.file_path, change: e.event } }
    }
    default:
      return undefined
  }
}

/** Claude Code's answer that refuses at a permission dialog: the call is denied, the model reads why. */
export function denyPermission(reason: string): Record<string, unknown> {
  return { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: reason } } }
}

/** Claude Code's `decision: "block"` (SubagentStop, PreCompact, ConfigChange): the reason is shown. */
export function block(reason: string): Record<string, unknown> {
  return { decision: 'block', reason }
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value : undefined)

/** Claude Code's answer for what the hooks changed at `point`; what it cannot carry is named in `dropped`. */
export function answerPoint(point: AgentPointName, changes: PointChanges): { answer: DialectAnswer; dropped?: string[] } {
  const { fields, input } = changes
  const reason = text(fields.reason)
  const dropped: string[] = []
  let answer: DialectAnswer
  switch (point) {
    case 'permission:request': {
      const decision = fields.decision
      if (decision === 'allow') {
        answer = { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow', ...(input ? { updatedInput: input } : {}) } } }
        if (reason) dropped.push('reason')
      } else if (decision === 'deny') {
        answer = denyPermission(reason ?? 'refused by a hook')
        if (input) dropped.push('arguments')
      } else {
        // ask: the dialog opens as it would; defer: Claude Code's dialog has no "decide later", so it opens too.
        if (decision === 'defer') dropped.push('decision')
        if (reason) dropped.push('reason')
        if (input) dropped.push('arguments')
      }
      break
    }
    case 'subagent:start':
      if (text(fields.context)) answer = { hookSpecificOutput: { hookEventName: 'SubagentStart', additionalContext: fields.context } }
      break
    case 'subagent:stop':
      if (fields.keepWorking === true) answer = block(reason ?? "hookd's hooks ask this subagent to keep working")
      else if (reason) dropped.push('reason')
      break
    case 'compact:before':
      if (fields.block === true) answer = block(reason ?? "hookd's hooks refused this compaction")
      else if (reason) dropped.push('reason')
      break
    case 'config:change':
      if (fields.block === true) answer = block(reason ?? "hookd's hooks refused this settings change")
      else if (reason) dropped.push('reason')
      break
    default:
      // compact:after, notification, file:changed: observed; they have no field to change.
      dropped.push(...Object.keys(fields))
  }
  return { answer, ...(dropped.length ? { dropped } : {}) }
}
