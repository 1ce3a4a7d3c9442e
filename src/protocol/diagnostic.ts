/**
 * Diagnostics: the one shape in which hookd reports a problem with a hook. Hook failures are never
 * fatal; they become a diagnostic and the chain goes on. The kinds are a closed set: there are no
 * user-defined kinds. Their wire form is the proto enum `hookd.v1.DiagnosticKind` (wire.ts reads and
 * writes it: `invalid-result` is INVALID_RESULT, and a name it does not know reads as `internal`).
 */

export const DIAGNOSTIC_KINDS = [
  'load',
  'throw',
  'timeout',
  'cpu',
  'memory',
  'invalid-result',
  'ignored-field',
  'result-too-large',
  'capability-denied',
  'limit',
  'worker-crash',
  'hook-removed',
  'cancelled',
  'reload',
  'internal',
  'unavailable',
  /** A multi-tenant sidecar answered without running any hook: the tenant is over a quota. */
  'quota',
  /**
   * A change the hook's hook.json "permissions" do not let it make (src/protocol/hook-permissions.ts):
   * dropped, or (a shell command rewritten at a gate where a person can be asked) put to the person.
   */
  'not-permitted',
] as const

export type DiagnosticKind = (typeof DIAGNOSTIC_KINDS)[number]

export interface Diagnostic {
  /** The hook concerned; '' when the problem is not one hook's. */
  hook: string
  /** The point concerned; '' when none. */
  point: string
  kind: DiagnosticKind
  message: string
  /** Source location in the hook, when known. */
  file?: string
  line?: number
  /** The hook version concerned, when known. */
  version?: string
}
