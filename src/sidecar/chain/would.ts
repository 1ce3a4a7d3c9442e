/**
 * What a shadow hook would have decided (hook.json "mode": "shadow", docs/writing-hooks.md): one word
 * of a closed set, for the audit line's `would`, the operator log and the metric
 * `hookd_shadow_decisions_total{hook,would}`. Worked out from the hook's validated answer against the
 * chain's value as the hook saw it, by the fields the answer changes:
 *
 *   refuse          the call would have been refused (allow: false, block: true) at a gate
 *   rewrite         what the agent sends or runs would change: a tool's arguments, the system prompt
 *                   (other than added text), the model's text, an event's inputs
 *   replace-result  what a tool returned would change (its text, isError, an event's result)
 *   context         only text would be added: to the end of the system prompt, or a reason given
 *                   without a refusal
 *   ask             it asked the human (ctx.confirm), which a shadow hook may not do (session.ts)
 *   failed          it failed (threw, timed out, ...): the diagnostic says how
 *   none            no opinion
 *
 * The order above is also the order of precedence when an answer does several things.
 */
import type { AnyPoint } from '../../protocol/points/points.js'

export const WOULDS = ['refuse', 'rewrite', 'replace-result', 'context', 'ask', 'failed', 'none'] as const
export type Would = (typeof WOULDS)[number]

/** Fields that are what a tool returned, at the points whose answers change one. */
const RESULT_FIELDS: ReadonlySet<string> = new Set(['result', 'isError', 'suppressError'])

/**
 * What the answer `changes` (validated, already in the point's own fields) would have done at `point`
 * to the chain's value `state`: `after` is the value with them applied.
 */
export function wouldOf(point: AnyPoint, state: unknown, after: unknown, changes: Record<string, unknown>): Would {
  if (point.refused && !point.refused(state) && point.refused(after)) return 'refuse'
  const fields = Object.keys(changes)
  if (fields.length === 0) return 'none'
  const seen = point.args(state)[0]
  const before = seen !== null && typeof seen === 'object' ? (seen as Record<string, unknown>) : {}
  let most: Would = 'none'
  for (const field of fields) {
    const kind = fieldWould(point, field, before[field], changes[field])
    if (WOULDS.indexOf(kind) < WOULDS.indexOf(most)) most = kind
  }
  return most
}

function fieldWould(point: AnyPoint, field: string, before: unknown, value: unknown): Would {
  if (field === 'allow') return value === false ? 'refuse' : 'none'
  if (field === 'block') return value === true ? 'refuse' : 'none'
  if (field === 'reason') return 'context'
  if (point.name === 'afterToolExecute' || RESULT_FIELDS.has(field)) return 'replace-result'
  if (field === 'system' && typeof before === 'string' && typeof value === 'string' && value.length > before.length && value.startsWith(before)) {
    return 'context'
  }
  return 'rewrite'
}
