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

  it('from: a HookdError stays itself; anything else is internal, saying what failed and keeping it as the cause', () => {
    const own = new HookdError('not-found', 'no such hook')
    expect(HookdError.from(own)).toBe(own)
    const thrown = new TypeError("Cannot read properties of undefined (reading 'x')")
    const wrapped = HookdError.from(thrown)
    expect(wrapped).toMatchObject({ code: 'internal', message: "hookd failed: Cannot read properties of undefined (reading 'x')" })
    expect(wrapped.cause).toBe(thrown)
    expect(HookdError.from('a string').cause).toBe('a string')
    const fromStatus = HookdError.fromGrpc(status.NOT_FOUND, 'gone', thrown)
    expect(fromStatus).toMatchObject({ code: 'not-found', message: 'gone' })
    expect(fromStatus.cause).toBe(thrown)
    expect(HookdError.fromGrpc(status.NOT_FOUND, 'gone').cause).toBeUndefined()
  })
})
