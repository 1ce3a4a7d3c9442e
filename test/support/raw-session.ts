/**
 * Test support: a raw gRPC client for hookd.v1.HookExecutor that sends frames as bytes, so that tests
 * can send what the typed host library never would (undecodable protobuf, wrong types, oversized or
 * out-of-order messages). Frames are built with the service's own serializer from src/protocol/wire.ts.
 * A `RawStream` reads any Session call that delivers decoded SidecarMessages and a 'status': a gRPC
 * one (RawClient), or one in memory (memory-session.ts).
 */
import * as grpc from '@grpc/grpc-js'
import { formatAddress, parseAddress } from '../../src/protocol/address.js'
import { PROTOCOL_VERSION } from '../../src/protocol/version.js'
import { hookExecutorService } from '../../src/protocol/wire.js'

const service = hookExecutorService()
const SESSION = service.Session as grpc.MethodDefinition<unknown, unknown>
const INVOKE = service.Invoke as grpc.MethodDefinition<unknown, unknown>

/** A HostMessage as proto-loader takes it, e.g. { call: { seq: 1, point, payload } }. */
export function encodeHostMessage(message: Record<string, unknown>): Buffer {
  return SESSION.requestSerialize(message)
}

export function openFrame(open: Record<string, unknown> = {}): Buffer {
  return encodeHostMessage({
    open: {
      protocolVersion: PROTOCOL_VERSION,
      sessionId: 'raw',
      agentId: 'raw-agent',
      modelId: 'raw-model',
      hooks: [],
      workdir: '/nowhere',
      interactive: false,
      autoApprove: false,
      env: {},
      ...open,
    },
  })
}

export function callFrame(seq: number, point: string, payload: string | Buffer): Buffer {
  return encodeHostMessage({ call: { seq, point, payload: Buffer.isBuffer(payload) ? payload : Buffer.from(payload) } })
}

/** A SidecarMessage as proto-loader decodes it (kind names the oneof field that is set). */
export type RawSidecarMessage = Record<string, unknown> & { kind?: string }

export interface StreamEnd {
  code: grpc.status
  details: string
  messages: RawSidecarMessage[]
}

/** What a RawStream needs of its call: frames in as bytes, decoded messages out, then the status. */
export interface RawCall {
  write(frame: Buffer): unknown
  end(): unknown
  cancel(): void
  on(event: 'data', listener: (message: RawSidecarMessage) => void): unknown
  on(event: 'error', listener: () => void): unknown
  on(event: 'status', listener: (status: grpc.StatusObject) => void): unknown
}

export class RawStream {
  readonly messages: RawSidecarMessage[] = []
  readonly ended: Promise<StreamEnd>
  private watchers: Array<() => void> = []

  constructor(private readonly call: RawCall) {
    this.call.on('data', (message: RawSidecarMessage) => {
      this.messages.push(message)
      for (const wake of this.watchers.splice(0)) wake()
    })
    this.call.on('error', () => {
      // 'status' carries the code.
    })
    this.ended = new Promise((resolve) => {
      this.call.on('status', (s: grpc.StatusObject) => {
        resolve({ code: s.code, details: s.details, messages: this.messages })
        for (const wake of this.watchers.splice(0)) wake()
      })
    })
  }

  write(frame: Buffer): void {
    this.call.write(frame)
  }

  end(): void {
    this.call.end()
  }

  cancel(): void {
    this.call.cancel()
  }

  /** Writes the frames, half-closes, and waits for the status. */
  exchange(frames: Buffer[]): Promise<StreamEnd> {
    for (const frame of frames) this.write(frame)
    this.end()
    return this.ended
  }

  /** Waits for a message of this kind (or the end of the stream, then undefined). */
  async next(kind: string): Promise<RawSidecarMessage | undefined> {
    let ended = false
    void this.ended.then(() => {
      ended = true
    })
    for (let seen = 0; ; ) {
      for (; seen < this.messages.length; seen++) {
        const message = this.messages[seen]
        if (message?.kind === kind) {
          this.messages.splice(seen, 1)
          return message
        }
      }
      if (ended) return undefined
      await new Promise<void>((resolve) => {
        this.watchers.push(resolve)
        void this.ended.then(() => resolve())
      })
    }
  }
}

export class RawClient {
  private readonly client: grpc.Client

  constructor(address: string) {
    this.client = new grpc.Client(formatAddress(parseAddress(address)), grpc.credentials.createInsecure())
  }

  session(): RawStream {
    return new RawStream(
      this.client.makeBidiStreamRequest(
        SESSION.path,
        (frame: Buffer) => frame,
        (bytes: Buffer) => SESSION.responseDeserialize(bytes) as RawSidecarMessage,
      ),
    )
  }

  /** Writes the frames, half-closes, and waits for the status. */
  exchange(frames: Buffer[]): Promise<StreamEnd> {
    return this.session().exchange(frames)
  }

  /** A unary Invoke with a raw request frame. */
  invoke(frame: Buffer): Promise<{ code: grpc.status; details: string }> {
    return new Promise((resolve) => {
      this.client.makeUnaryRequest(
        INVOKE.path,
        (b: Buffer) => b,
        (b: Buffer) => b,
        frame,
        (err) => resolve(err ? { code: err.code, details: err.details } : { code: grpc.status.OK, details: '' }),
      )
    })
  }

  close(): void {
    this.client.close()
  }
}
