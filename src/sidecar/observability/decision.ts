/**
 * What a point result says, in the terms metrics, traces and logs share: the call's outcome, who
 * refused it, and whether a hook's failure decided it (fail closed) or was let through (fail open).
 * Worked out once per result, from the result alone (the same data the host and the audit log get).
 *
 * A gate the chain let through while a hook's ctx.confirm was deferred to the agent's own prompt is
 * `asked`, never `allowed`: the agent's person decides, and what they decided is recorded later, as
 * the decision's outcome (session.ts `outcome`).
 */
import type { DiagnosticKind } from '../../protocol/diagnostic.js'
import { getPoint, isGate } from '../../protocol/points/points.js'
import { couldNotDecide } from '../chain/chain.js'
import { gateDecision } from '../session/audit.js'
import type { AskedQuestion, DecidedResult } from './observer.js'

/**
 * A gate's calls are allowed, refused, or asked (left to the agent's prompt); other points' calls
 * changed something or nothing.
 */
export type CallOutcome = 'allowed' | 'refused' | 'asked' | 'changed' | 'unchanged'

export interface DecisionFacts {
  gate: boolean
  outcome: CallOutcome
  /** A refused gate: the hook that refused it, or 'hookd' (a hook that could not decide, a quota, a cancel). */
  refusedBy?: string
  /** An asked gate: the questions put to the agent's person, in the order asked. */
  asked?: readonly AskedQuestion[]
  /**
   * A gate at which a hook failed: `closed` when hookd refused the call because of that failure, `open`
   * when the call went through without that hook's opinion (its failure was skipped).
   */
  failure?: { mode: 'closed' | 'open'; kind: DiagnosticKind; hook: string }
  /** Answered without running a hook: the tenant was over a quota. */
  quota: boolean
  /** The first failed hook's diagnostic kind, by hook (for spans and log lines). */
  failedKinds: ReadonlyMap<string, DiagnosticKind>
}

/** Diagnostic kinds that are not a hook failing: news, notes and the sidecar's own answers. */
const NOT_FAILURES: ReadonlySet<DiagnosticKind> = new Set(['ignored-field', 'reload', 'quota', 'not-permitted'])

export function decisionFacts(result: DecidedResult): DecisionFacts {
  const spec = getPoint(result.point)
  const gate = spec !== undefined && isGate(spec)
  const failed: Array<{ hook: string; kind: DiagnosticKind }> = []
  const failedKinds = new Map<string, DiagnosticKind>()
  let quota = false
  // A shadow hook decides nothing: its failure neither closes nor opens a gate.
  const shadows = new Set(result.trace.filter((t) => t.would !== undefined).map((t) => t.hook))
  for (const d of result.diagnostics) {
    if (d.kind === 'quota') quota = true
    if (!d.hook || NOT_FAILURES.has(d.kind) || shadows.has(d.hook)) continue
    failed.push({ hook: d.hook, kind: d.kind })
    if (!failedKinds.has(d.hook)) failedKinds.set(d.hook, d.kind)
  }
  if (!gate) {
    const outcome = result.trace.some((t) => t.outcome === 'changed') ? 'changed' : 'unchanged'
    return { gate, outcome, quota, failedKinds }
  }
  const decision = gateDecision(result.point, result.result)
  const allowed = decision?.allow !== false
  const asked = allowed && result.asked?.length ? result.asked : undefined
  const facts: DecisionFacts = { gate, outcome: asked ? 'asked' : allowed ? 'allowed' : 'refused', quota, failedKinds }
  if (asked) facts.asked = asked
  if (!allowed) facts.refusedBy = decision?.by ?? result.trace.find((t) => t.outcome === 'refused')?.hook ?? 'hookd'
  const cause = allowed ? undefined : failed.findLast((f) => decision?.reason === couldNotDecide(f.hook, f.kind))
  if (cause) facts.failure = { mode: 'closed', ...cause }
  else if (allowed && failed[0]) facts.failure = { mode: 'open', ...failed[0] }
  return facts
}
