/**
 * Errors that end a call or a session, as data: a closed set of codes, each mapped to one gRPC status
 * here and nowhere else. Hook failures are not errors (they are diagnostics); these are for what a
 * host did wrong, or could not be served.
 */
import { status } from '@grpc/grpc-js'

export const ERROR_CODES = {
  'invalid-argument': status.INVALID_ARGUMENT,
  'not-found': status.NOT_FOUND,
  'failed-precondition': status.FAILED_PRECONDITION,
  'resource-exhausted': status.RESOURCE_EXHAUSTED,
  unauthenticated: status.UNAUTHENTICATED,
  unavailable: status.UNAVAILABLE,
  cancelled: status.CANCELLED,
  'deadline-exceeded': status.DEADLINE_EXCEEDED,
  internal: status.INTERNAL,
} as const

export type ErrorCode = keyof typeof ERROR_CODES

export class HookdError extends Error {
  override readonly name = 'HookdError'
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message)
  }

  get grpcStatus(): status {
    return ERROR_CODES[this.code]
  }

  /** `err` itself when it is a HookdError; anything else is hookd's own fault (INTERNAL). */
  static from(err: unknown): HookdError {
    if (err instanceof HookdError) return err
    return new HookdError('internal', `hookd failed: ${err instanceof Error ? err.message : String(err)}`)
  }

  static fromGrpc(grpcCode: number, message: string): HookdError {
    const entry = Object.entries(ERROR_CODES).find(([, v]) => v === grpcCode)
    return new HookdError((entry?.[0] as ErrorCode | undefined) ?? 'internal', message)
  }
}
