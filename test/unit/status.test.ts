/**
 * hookd's error codes map to gRPC status codes written out as numbers (src/protocol/status.ts), so that
 * the sandbox worker does not load grpc-js: they must be grpc-js's own, and each error code its own.
 */
import { status } from '@grpc/grpc-js'
import { describe, expect, it } from 'vitest'
import { ERROR_CODES, HookdError } from '../../src/protocol/status.js'

describe('ERROR_CODES', () => {
  it("are grpc-js's status codes of the same names", () => {
    expect(ERROR_CODES).toEqual({
      'invalid-argument': status.INVALID_ARGUMENT,
      'not-found': status.NOT_FOUND,
      'failed-precondition': status.FAILED_PRECONDITION,
      'resource-exhausted': status.RESOURCE_EXHAUSTED,
      unauthenticated: status.UNAUTHENTICATED,
      unavailable: status.UNAVAILABLE,
      cancelled: status.CANCELLED,
      'deadline-exceeded': status.DEADLINE_EXCEEDED,
      internal: status.INTERNAL,
    })
  })

  it('round-trip through a gRPC status, and an unknown status is internal', () => {
    for (const code of Object.keys(ERROR_CODES) as Array<keyof typeof ERROR_CODES>) {
      const back = HookdError.fromGrpc(new HookdError(code, 'x').grpcStatus, 'x')
      expect(back.code).toBe(code)
    }
    expect(HookdError.fromGrpc(status.DATA_LOSS, 'lost').code).toBe('internal')
  })
})
