/**
 * What a hook's change to one field decides, read from the point's catalog entry (PointSpec.decides),
 * and whether a hook's declared permissions (hook.json "permissions".decide, hook-permissions.ts) let
 * it decide that. The chain (src/sidecar/chain/chain.ts) asks this for every field a hook with a
 * permissions block changes; nothing else maps fields to decisions.
 */
import { sameJson } from '../json.js'
import { type DecisionName, type HookDecisions, mayRewrite } from '../hook-permissions.js'
import type { AnyPoint } from './points.js'

/** A change's decision: its name, the tool for a rewrite of arguments. */
export interface MadeDecision {
  decision: DecisionName
  /** The tool whose arguments the change rewrites (`rewriteArguments`). */
  tool?: string
}

/**
 * The decision a change of `field` to `value` makes at `point` in `state`. A `context` field's change
 * that keeps what is there and only adds after it (text appended to the system prompt, messages
 * appended to the conversation) adds context; any other change rewrites the model's text.
 */
export function decisionOf(point: AnyPoint, state: unknown, field: string, value: unknown): MadeDecision {
  const made = Object.hasOwn(point.decides, field) ? point.decides[field] : undefined
  // A field without a decision is no field of the point's: the chain has dropped it already.
  if (made === undefined) return { decision: 'rewriteModelText' }
  // A permission dialog's decision: `allow` approves what the agent would ask its person; deny, ask and
  // defer withhold the call, which is a refusal.
  if (made === 'permission') return { decision: value === 'allow' ? 'approve' : 'refuse' }
  if (made === 'context') return { decision: appends(currentValue(point, state, field), value) ? 'addContext' : 'rewriteModelText' }
  if (made === 'rewriteArguments') return { decision: made, tool: point.tool?.(state) ?? '' }
  return { decision: made }
}

/** True when `decide` lets a hook make `made`. Rewriting the model's text includes adding to it. */
export function decisionPermitted(decide: HookDecisions, made: MadeDecision): boolean {
  switch (made.decision) {
    case 'refuse':
      return decide.refuse
    case 'approve':
      return decide.approve
    case 'rewriteArguments':
      return mayRewrite(decide, made.tool ?? '')
    case 'rewriteResults':
      return decide.rewriteResults
    case 'rewriteModelText':
      return decide.rewriteModelText
    case 'addContext':
      return decide.addContext || decide.rewriteModelText
  }
}

/** What a decision is, in a diagnostic's words ("rewrote the arguments of shell"), and what to add for it. */
export function decisionWords(made: MadeDecision): { did: string; add: string } {
  switch (made.decision) {
    case 'refuse':
      return { did: 'refused the call', add: 'set "decide": {"refuse": true}' }
    case 'approve':
      return { did: 'approved the call for the person', add: 'set "decide": {"approve": true}' }
    case 'rewriteArguments': {
      const tool = JSON.stringify(made.tool ?? '')
      return { did: `rewrote the arguments of ${made.tool}`, add: `add ${tool} to "decide": {"rewriteArguments": [...]}` }
    }
    case 'rewriteResults':
      return { did: "rewrote the tool's result", add: 'set "decide": {"rewriteResults": true}' }
    case 'rewriteModelText':
      return { did: "rewrote the model's text", add: 'set "decide": {"rewriteModelText": true}' }
    case 'addContext':
      return { did: "added context to the model's text", add: 'set "decide": {"addContext": true}' }
  }
}

/** The field's value in the chain's state before the change: the point's result (step points), the event's field (event points). */
function currentValue(point: AnyPoint, state: unknown, field: string): unknown {
  const from = point.family === 'event' ? (state as { current?: unknown }).current : point.result(state)
  return from !== null && typeof from === 'object' ? (from as Record<string, unknown>)[field] : undefined
}

function appends(before: unknown, after: unknown): boolean {
  // Nothing there yet (a subagent's first context): any text or messages only add to it.
  if ((before === undefined || before === null) && (typeof after === 'string' || Array.isArray(after))) return true
  if (typeof before === 'string' && typeof after === 'string') return after.length > before.length && after.startsWith(before)
  if (Array.isArray(before) && Array.isArray(after)) return after.length > before.length && sameJson(after.slice(0, before.length), before)
  return false
}
