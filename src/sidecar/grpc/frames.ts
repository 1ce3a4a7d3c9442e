/**
 * Request frames as they arrive: frames protobuf could not decode, and HostMessages that decoded but do
 * not fit the protocol, each turned into an INVALID_ARGUMENT message that names what was wrong.
 */
import type * as grpc from '@grpc/grpc-js'
import { issueText } from '../../protocol/issue-text.js'

/**
 * A request frame that protobuf could not decode. grpc-js would end the call with INTERNAL ("Error
 * deserializing request"); hookd answers INVALID_ARGUMENT saying what was wrong, since the fault is the
 * client's.
 */
export class UndecodableFrame {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {}
  describe(): string {
    return `a frame sent to ${this.path} is not a valid protobuf message of the request type (${this.reason}); send frames encoded from proto/hookd/v1/hookd.proto`
  }
}

/** The service with request decoding that yields an UndecodableFrame instead of failing the call. */
export function withTolerantDecoding(service: grpc.ServiceDefinition): grpc.ServiceDefinition {
  const out: Record<string, grpc.MethodDefinition<unknown, unknown>> = {}
  for (const [name, method] of Object.entries(service)) {
    out[name] = {
      ...method,
      requestDeserialize: (bytes: Buffer): unknown => {
        try {
          return method.requestDeserialize(bytes)
        } catch (err) {
          return new UndecodableFrame(method.path, err instanceof Error ? err.message : String(err))
        }
      },
    }
  }
  return out
}

const HOST_MESSAGE_KINDS = ['open', 'call', 'capabilityResult', 'cancel', 'close', 'outcome']

/** What was wrong with a decoded HostMessage, naming the field. */
export function hostMessageProblem(raw: unknown, error: { issues: ReadonlyArray<{ path: PropertyKey[]; message: string }> }): string {
  const kind = raw !== null && typeof raw === 'object' ? (raw as { kind?: unknown }).kind : undefined
  if (typeof kind !== 'string' || !HOST_MESSAGE_KINDS.includes(kind)) {
    return 'a HostMessage must set exactly one of open, call, capability_result, cancel, close, outcome'
  }
  return issueText(error, 'HostMessage')
}
