/**
 * When an agent's tool gate must refuse although no hook said no: a declared hook could not decide.
 *
 * hookd's chain skips a failing hook and goes on (the seed's rule: hook errors are non-fatal). For a
 * throw or an invalid answer that stays so: the hook ran and its code is wrong. But a hook that never
 * finished (stopped by a limit, its worker lost, its answer unreadable) or that is not there (never
 * loaded, removed) did not get to say no, and a guard that cannot answer must not let the call
 * through: the adapters refuse the tool call then. A chain that already refuses (the containment
 * work's own fail-closed gates, a quota) is left as it is.
 */
import type { Diagnostic, DiagnosticKind } from '../protocol/diagnostic.js'

/** Kinds that mean the hook did not get to decide. */
export const UNDECIDED_KINDS: ReadonlySet<DiagnosticKind> = new Set<DiagnosticKind>([
  'timeout',
  'cpu',
  'memory',
  'worker-crash',
  'result-too-large',
  'limit',
  'unavailable',
  'cancelled',
  'internal',
  'load',
  'hook-removed',
])

/** The refusal's reason when some hook could not decide the gate, or undefined. */
export function gateFailure(diagnostics: readonly Diagnostic[]): string | undefined {
  const lost = diagnostics.filter((d) => UNDECIDED_KINDS.has(d.kind))
  if (!lost.length) return undefined
  const what = lost.map((d) => `hook '${d.hook}' could not decide (${d.kind}: ${d.message})`).join('; ')
  return `hookd refused this call: ${what}. A guard that cannot answer does not let a call through; fix the hook (hookd check) or raise its limits`
}
