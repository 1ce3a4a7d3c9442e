/**
 * Diagnostics: the one shape in which hookd reports a problem with a hook. Hook failures are never
 * fatal; they become a diagnostic and the chain goes on. The kinds are a closed set: there are no
 * user-defined kinds. Their wire form is the proto enum `hookd.v1.DiagnosticKind`.
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

/** `invalid-result` -> `INVALID_RESULT`, the proto enum's value name. */
export function kindToWire(kind: DiagnosticKind): string {
  return kind.toUpperCase().replace(/-/g, '_')
}

/** The proto enum's value name back to a kind; unknown names (a newer sidecar) read as `internal`. */
export function kindFromWire(name: string): DiagnosticKind {
  const kind = name.toLowerCase().replace(/_/g, '-')
  return (DIAGNOSTIC_KINDS as readonly string[]).includes(kind) ? (kind as DiagnosticKind) : 'internal'
}
