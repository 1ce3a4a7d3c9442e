/**
 * The codes a capability error carries into the hook (as `err.code`): hookd's own closed set, and the
 * codes a host passes on (a file capability's system error, ENOENT, EISDIR, ...). Every reply the
 * sidecar, a worker or the host library makes is typed with `CapabilityCode`, so a misspelt code is a
 * compile error; a code that arrives from outside (a host's answer, a helper's message) becomes one
 * through `passOn`. types/hook.d.ts declares the same set for hook authors (test/types/hook-types.test.ts
 * holds the two together) and docs/capabilities.md's error table lists it (test/unit/capability-records.test.ts).
 */

/** hookd's own capability error codes, each with what it means. */
export const CAPABILITY_ERROR_CODES = {
  /** The session's policy or the hook's declared permissions (sidecar), or the host, refused the call. Uncaught: `capability-denied`. */
  denied: 'denied',
  /** A per-invocation or per-call limit was hit. Uncaught: `limit`. */
  limit: 'limit',
  /** The arguments do not fit the capability. */
  invalid: 'invalid',
  /** The host tried and failed (network error, a handler that threw). */
  failed: 'failed',
  /** The host did not answer within the sidecar's ceiling. */
  timeout: 'timeout',
  /** The host cancelled the point call while the capability waited. */
  cancelled: 'cancelled',
  /** No host can serve the capability (unary Invoke, or the host disconnected). */
  unavailable: 'unavailable',
} as const
export type CapabilityErrorCode = (typeof CAPABILITY_ERROR_CODES)[keyof typeof CAPABILITY_ERROR_CODES]

/** A system error's code as the host's system names it: ENOENT, EISDIR, ENOTDIR, EACCES, ERR_... */
export type SystemErrorCode = `E${Uppercase<string>}`

declare const passedOn: unique symbol
/** Any other code that came from outside (the proto lets a host answer with its own), made only by `passOn`. */
export type PassedOnCode = string & { readonly [passedOn]: true }

/** What a failed capability call's `code` may be. */
export type CapabilityCode = CapabilityErrorCode | SystemErrorCode | PassedOnCode

export function isCapabilityErrorCode(code: string): code is CapabilityErrorCode {
  return Object.hasOwn(CAPABILITY_ERROR_CODES, code)
}

/** A code from outside, passed on as it came; `failed` when there is none. */
export function passOn(code: string | undefined): CapabilityCode {
  if (!code) return 'failed'
  if (isCapabilityErrorCode(code)) return code
  // A brand: the one place a string becomes a code without being one of the names above.
  return code as PassedOnCode
}
