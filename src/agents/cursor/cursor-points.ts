/**
 * Cursor's events beyond the tool gates, read from its hook engine as @cursor/sdk 1.0.32 ships it
 * (its local agent runtime, which validates each event's answer; the agent itself cannot run here:
 * test/agents/contracts/cursor-contract.test.ts says why), and the one rewrite Cursor takes:
 *
 *   subagentStart {subagent_id, subagent_type, task, parent_conversation_id, tool_call_id}
 *                         subagent:start: context -> additional_context
 *   subagentStop {subagent_id, subagent_type, status, summary, ...}
 *                         subagent:stop (lastMessage: its summary): keepWorking -> followup_message,
 *                         the reason, which sends the subagent on
 *   preCompact {trigger, context_usage_percent, ...}   compact:before, observed: Cursor takes only a
 *                         user_message there, so a block is dropped with a line for the operator
 *   preToolUse's updated_input: Cursor applies only some fields of each tool's input (Shell's command
 *                         and cwd, the path of Read, Write, Delete and List, Grep's pattern and path,
 *                         Fetch's url, any MCP argument), so a rewrite of any other field (Write's
 *                         content) is refused, saying what the hooks would run, rather than silently
 *                         run as it was
 */
import * as z from 'zod'
import type { AgentPointName } from '../../protocol/points/points.js'
import { idField, parseEvent, shortField } from '../event-fields.js'
import type { DialectAnswer, HookEvent, PointChanges } from '../hook-event.js'

const subagent = z.looseObject({
  subagent_id: idField.optional(),
  subagent_type: shortField.optional(),
  task: z.string().optional(),
  summary: z.string().optional(),
  status: shortField.optional(),
})
const compact = z.looseObject({ trigger: shortField.optional() })

export const POINTS_BY_EVENT: Readonly<Partial<Record<AgentPointName, readonly string[]>>> = {
  'subagent:start': ['subagentStart'],
  'subagent:stop': ['subagentStop'],
  'compact:before': ['preCompact'],
}

/** One of the events above as its point; undefined for any other event. */
export function pointEvent(name: string, body: unknown): Extract<HookEvent, { kind: 'point' }> | undefined {
  const what = `the ${name} event`
  switch (name) {
    case 'subagentStart':
    case 'subagentStop': {
      const e = parseEvent(subagent, body, what, 'Cursor')
      const payload = { subagent: { id: e.subagent_id ?? '', type: e.subagent_type ?? '' }, ...(e.task !== undefined ? { task: e.task } : {}) }
      if (name === 'subagentStart') return { kind: 'point', point: 'subagent:start', payload }
      return { kind: 'point', point: 'subagent:stop', payload: { ...payload, lastMessage: e.summary ?? '', ...(e.status !== undefined ? { status: e.status } : {}) } }
    }
    case 'preCompact':
      return { kind: 'point', point: 'compact:before', payload: { trigger: parseEvent(compact, body, what, 'Cursor').trigger ?? '', instructions: '' } }
    default:
      return undefined
  }
}

const text = (v: unknown): string => (typeof v === 'string' ? v : '')

/** What the hooks changed at a point, in Cursor's answer; what it cannot carry is named in `dropped`. */
export function answerPoint(point: AgentPointName, changes: PointChanges): { answer: DialectAnswer; dropped?: string[] } {
  const f = changes.fields
  const result = (answer: DialectAnswer, carried: readonly string[]): { answer: DialectAnswer; dropped?: string[] } => {
    const dropped = Object.keys(f).filter((k) => !carried.includes(k))
    return { answer, ...(dropped.length ? { dropped } : {}) }
  }
  switch (point) {
    case 'subagent:start':
      return result(typeof f.context === 'string' && f.context !== '' ? { additional_context: f.context } : undefined, ['context'])
    case 'subagent:stop':
      return result(f.keepWorking === true ? { followup_message: text(f.reason) || 'a hook asked the subagent to keep working' } : undefined, ['keepWorking', 'reason'])
    default:
      return result(undefined, [])
  }
}

/** The fields of each tool's input that Cursor's preToolUse applies from updated_input. */
export const APPLIED: Readonly<Record<string, readonly string[]>> = {
  Shell: ['command', 'cwd'],
  Read: ['file_path'],
  Write: ['file_path'],
  Delete: ['file_path'],
  List: ['file_path'],
  ReadLints: ['file_path'],
  Grep: ['pattern', 'file_path'],
  Fetch: ['url'],
}

/**
 * The updated_input for a rewrite of `tool`'s `before` input to `after`: the fields that changed, when
 * Cursor applies every one of them; undefined when it would not apply one (the call is then refused).
 */
export function updatedInput(tool: string, before: Record<string, unknown>, after: Record<string, unknown>): Record<string, unknown> | undefined {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)])
  const changed = [...keys].filter((k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]))
  // MCP arguments are merged in: a changed one is applied, a removed one is not.
  const applies = (k: string): boolean => (tool.startsWith('MCP:') ? Object.hasOwn(after, k) : (APPLIED[tool] ?? []).includes(k))
  if (!changed.every(applies)) return undefined
  return Object.fromEntries(changed.map((k) => [k, after[k]]))
}
