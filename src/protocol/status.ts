/**
 * Errors that end a call or a session, as data: a closed set of codes, each mapped to one gRPC status
 * here and nowhere else. Hook failures are not errors (they are diagnostics); these are for what a
 * host did wrong, or could not be served.
 */
import type { status } from '@grpc/grpc-js'

/**
 * The numbers are gRPC's own status codes, fixed by its wire protocol (test/unit/status.test.ts holds
 * them to grpc-js's): written out so that what needs only HookdError, the sandbox worker among them,
 * does not load grpc-js and protobufjs (a third of a worker's start-up).
 */
export const ERROR_CODES = {
  'invalid-argument': 3 as status.INVALID_ARGUMENT,
  'not-found': 5 as status.NOT_FOUND,
  'failed-precondition': 9 as status.FAILED_PRECONDITION,
  'resource-exhausted': 8 as status.RESOURCE_EXHAUSTED,
  unauthenticated: 16 as status.UNAUTHENTICATED,
  unavailable: 14 as status.UNAVAILABLE,
  cancelled: 1 as status.CANCELLED,
  'deadline-exceeded': 4 as status.DEADLINE_EXCEEDED,
  internal: 13 as status.INTERNAL,
} as const

export type ErrorCode = keyof typeof ERROR_CODES

export class HookdError extends Error {
  override readonly name = 'HookdError'
  /** `options.cause`: the error this one wraps (kept for logs and debuggers; never sent to a peer). */
  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }

  get grpcStatus(): status {
    return ERROR_CODES[this.code]
  }

  /** `err` itself when it is a HookdError; anything else is hookd's own fault (INTERNAL), wrapping `err` as its cause. */
  static from(err: unknown): HookdError {
    if (err instanceof HookdError) return err
    return new HookdError('internal', `hookd failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err })
  }

  /** The error a gRPC status stands for (an unknown status is INTERNAL); `cause`, the error that carried it. */
  static fromGrpc(grpcCode: number, message: string, cause?: unknown): HookdError {
    const entry = Object.entries(ERROR_CODES).find(([, v]) => v === grpcCode)
    return new HookdError((entry?.[0] as ErrorCode | undefined) ?? 'internal', message, cause === undefined ? undefined : { cause })
  }
}
