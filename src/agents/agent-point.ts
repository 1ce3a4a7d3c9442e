/**
 * One of the agent's own moments through the hooks (src/protocol/points/agent-points.ts): a permission
 * dialog, a subagent starting or stopping, a compaction, a settings change, a notice, a file change.
 * The point runs on the event's payload (a permission dialog's with the canonical call merged in, read
 * as the tool gate reads it), and the agent's dialect says the fields the hooks changed in its own JSON.
 * What the dialect cannot carry is named in a line for the operator, never silently lost.
 */
import type { AgentRun } from './agent-run.js'
import type { Dialect, DialectAnswer, HookEvent, PointChanges } from './hook-event.js'
import { askReason, isObject, readCall, unreadableReason, withSubagent } from './tool-gate.js'

type PointEvent = Extract<HookEvent, { kind: 'point' }>

export async function agentPoint<E>(
  run: AgentRun,
  d: Dialect<E>,
  native: E,
  event: PointEvent,
  workdir: string,
  report: (line: string) => void,
  signal?: AbortSignal,
): Promise<DialectAnswer> {
  if (!run.serves(event.point)) return undefined
  let payload = event.payload
  const read = event.call ? readCall(d.tools, event.call, workdir) : undefined
  if (event.call && read) {
    if (read.unreadable !== undefined) {
      // No hook could judge a call hookd cannot read: a dialog about it is denied, saying why.
      const reason = unreadableReason(read.unreadable)
      report(`${event.call.tool} call ${read.call.id}: ${reason}`)
      return say(d, native, event, { fields: { decision: 'deny', reason } }, report)
    }
    payload = { ...event.payload, ...withSubagent(read.call, event.call), tool: event.call.tool }
  }
  const answer = await run.call(event.point, payload, signal)
  const fields: Record<string, unknown> = isObject(answer.result) ? { ...answer.result } : {}
  const changes: PointChanges = { fields }
  if (read && isObject(fields.arguments)) {
    const rewrite = d.tools.toNative(read.call, fields.arguments, workdir)
    delete fields.arguments
    if (rewrite && !rewrite.ok) {
      fields.decision = 'deny'
      fields.reason = `hookd refused this call: ${rewrite.message}, so ${d.title}'s ${read.call.native.name} cannot take them; fix the hook that rewrites ${read.call.name}`
    } else if (rewrite) changes.input = rewrite.input
  }
  // A hook's ctx.confirm at a dialog, with no decision of its own: the dialog opens with its question.
  if (answer.asks.length && fields.decision === undefined) {
    fields.decision = 'ask'
    fields.reason = askReason(answer.asks)
  }
  if (!Object.keys(fields).length && changes.input === undefined) return undefined
  return say(d, native, event, changes, report)
}

function say<E>(d: Dialect<E>, native: E, event: PointEvent, changes: PointChanges, report: (line: string) => void): DialectAnswer {
  if (!d.answer) {
    report(`${d.title} cannot carry what the hooks changed at ${event.point} (${Object.keys(changes.fields).join(', ')}); dropped`)
    return undefined
  }
  const { answer, dropped } = d.answer(native, event.point, changes)
  if (dropped?.length) report(`${d.title} cannot carry ${dropped.map((f) => `'${f}'`).join(', ')} at ${event.point}; dropped`)
  return answer
}
