/**
 * Test support: the Session stream in memory. `sessionCall()` joins a host's end and the sidecar's end
 * of one hookd.v1.HookExecutor/Session call without a socket or a gRPC server, carrying what grpc-js
 * would: each frame is encoded with the service's own serializer and decoded on the other side with
 * its deserializer (the sidecar's tolerant one, frames.ts), so both ends get proto-loader's objects
 * (defaults filled in, bytes as Buffers, enums as names, `kind` naming the oneof), and a frame over
 * the 8 MiB both ends accept fails the call with RESOURCE_EXHAUSTED as grpc-js's decoder does.
 *
 * How it ends follows grpc-js: the sidecar's `end()` sends OK once its writes are out and
 * `emit('error', status)` that status instead; the host then gets 'end' (and, for any status but OK,
 * an 'error' carrying code, details and message), and 'status'; the sidecar's end is then
 * 'cancelled' (grpc-js tells a server handler so once its status is out). The host's `end()` is a
 * half-close ('end' on the sidecar's end); its `cancel()` ends the call with CANCELLED at once and the
 * sidecar's end is 'cancelled'. Frames still on their way when the call ends are lost.
 *
 * `MemorySidecar` serves such calls with the real stream machine (src/sidecar/grpc/session-stream.ts)
 * for one tenant, as hook-executor.ts does after identifying it, and opens HostSessions on them.
 */
import { Duplex } from 'node:stream'
import * as grpc from '@grpc/grpc-js'
import { HostSession } from '../../src/host/session.js'
import { type SessionOptions, openMessage } from '../../src/host/session-options.js'
import { hookExecutorService } from '../../src/protocol/wire.js'
import { withTolerantDecoding } from '../../src/sidecar/grpc/frames.js'
import { OpenStreams } from '../../src/sidecar/grpc/open-streams.js'
import { type StreamTap, serveSessionStream } from '../../src/sidecar/grpc/session-stream.js'
import type { Observer } from '../../src/sidecar/observability/observer.js'
import type { Tenant } from '../../src/sidecar/tenant.js'
import { RawStream } from './raw-session.js'

const SESSION = withTolerantDecoding(hookExecutorService()).Session as grpc.MethodDefinition<unknown, unknown>

/** The largest message either end takes: 'grpc.max_receive_message_length' in sidecar.ts and client.ts. */
export const MAX_MESSAGE_BYTES = 8 * 1024 * 1024

type Status = { code: grpc.status; details: string }

/** What grpc-js's client emits as 'error' for a status that is not OK (call.js, callErrorFromStatus). */
function serviceError(status: Status): grpc.ServiceError {
  return Object.assign(new Error(`${status.code} ${grpc.status[status.code]}: ${status.details}`), { ...status, metadata: new grpc.Metadata() })
}

/**
 * One direction of the call: frames arrive in order, each on a turn of the event loop of its own, as
 * grpc-js hands a server (or client) one decoded message at a time, so what the last one started
 * (a rejected promise, say) settles before the next one, or the half-close, arrives.
 */
class Direction {
  private readonly queue: Array<() => void> = []
  private scheduled = false
  private lost = false

  send(deliver: () => void): void {
    if (this.lost) return
    this.queue.push(deliver)
    this.schedule()
  }

  /** The call ended: what is still on its way never arrives. */
  cut(): void {
    this.lost = true
    this.queue.length = 0
  }

  private schedule(): void {
    if (this.scheduled || this.queue.length === 0) return
    this.scheduled = true
    setImmediate(() => {
      this.scheduled = false
      const next = this.queue.shift()
      if (next && !this.lost) next()
      this.schedule()
    })
  }
}

/** The two ends' shared state: the directions and how the call ended. */
class Call {
  readonly toSidecar = new Direction()
  readonly toHost = new Direction()
  /** Set once the call has a status: nothing more crosses. */
  status: Status | undefined
  host!: HostEnd
  sidecar!: SidecarEnd

  /** The sidecar sent its status (after its last frame): the host gets it, the sidecar's end is told it is over. */
  statusSent(status: Status): void {
    if (this.status) return
    this.status = status
    this.toSidecar.cut()
    this.toHost.send(() => this.host.receiveStatus(status))
    process.nextTick(() => this.sidecar.cancelled())
  }

  /**
   * The host's end gives up on the call (a cancel, a frame it cannot take): it has its status at once;
   * the sidecar's end sees the stream end ('end'), then 'cancelled', as grpc-js's server does on the
   * reset that follows.
   */
  abort(status: Status): void {
    if (this.status) return
    this.status = status
    this.toSidecar.cut()
    this.toHost.cut()
    process.nextTick(() => {
      this.host.receiveStatus(status)
      this.sidecar.push(null)
      setImmediate(() => this.sidecar.cancelled())
    })
  }

  /**
   * A frame encoded by one end, as the other end's decoder meets it, in its turn. One too big for the
   * sidecar ends the call with the sidecar's status (after what the sidecar sent before it); one too
   * big for the host is the host's own failure (grpc-js's client cancels the call).
   */
  carry(bytes: Buffer, to: 'sidecar' | 'host', deliver: () => void): void {
    const direction = to === 'sidecar' ? this.toSidecar : this.toHost
    if (bytes.length <= MAX_MESSAGE_BYTES) return direction.send(deliver)
    const status = { code: grpc.status.RESOURCE_EXHAUSTED, details: `Received message larger than max (${bytes.length} vs ${MAX_MESSAGE_BYTES})` }
    direction.send(() => (to === 'sidecar' ? this.statusSent(status) : this.abort(status)))
  }
}

/** The host's end: what HookdClient's `Session()` returns, in memory. Writes HostFrames, or raw frames as Buffers. */
export class HostEnd extends Duplex {
  constructor(private readonly call: Call) {
    super({ objectMode: true })
  }

  override _read(): void {}

  override _write(frame: unknown, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    done()
    if (this.call.status) return
    let bytes: Buffer
    try {
      bytes = Buffer.isBuffer(frame) ? frame : SESSION.requestSerialize(frame)
    } catch (err) {
      // grpc-js: the call fails with INTERNAL and the server is told it was cancelled.
      return this.call.abort({ code: grpc.status.INTERNAL, details: `Request message serialization failure: ${err instanceof Error ? err.message : String(err)}` })
    }
    this.call.carry(bytes, 'sidecar', () => this.call.sidecar.receive(SESSION.requestDeserialize(bytes)))
  }

  override _final(done: (err?: Error | null) => void): void {
    done()
    this.call.toSidecar.send(() => this.call.sidecar.push(null))
  }

  cancel(): void {
    this.call.abort({ code: grpc.status.CANCELLED, details: 'Cancelled on client' })
  }

  /** @internal The call's status: the end of what the host reads, an 'error' unless OK, then 'status'. */
  receiveStatus(status: Status): void {
    this.push(null)
    if (status.code !== grpc.status.OK) this.emit('error', serviceError(status))
    this.emit('status', { ...status, metadata: new grpc.Metadata() })
  }
}

/** The sidecar's end, as grpc-js's ServerDuplexStreamImpl behaves (server-call.js). */
export class SidecarEnd extends Duplex {
  /** True once the call is over for the handler (grpc-js's `call.cancelled`). */
  isCancelled = false
  private pendingStatus: Status = { code: grpc.status.OK, details: 'OK' }

  constructor(private readonly call: Call) {
    super({ objectMode: true })
    // grpc-js: an 'error' emitted on a server stream becomes its status, sent once the writes are out.
    this.on('error', (err: unknown) => {
      const status = err as Partial<Status> | null
      this.pendingStatus =
        typeof status?.code === 'number' && Number.isInteger(status.code)
          ? { code: status.code, details: typeof status.details === 'string' ? status.details : '' }
          : { code: grpc.status.UNKNOWN, details: err instanceof Error ? err.message : 'Unknown Error' }
      this.end()
    })
  }

  override _read(): void {}

  override _write(frame: unknown, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    // grpc-js never completes a write to a call that is over.
    if (this.call.status) return
    done()
    const bytes = SESSION.responseSerialize(frame)
    this.call.carry(bytes, 'host', () => this.call.host.push(SESSION.responseDeserialize(bytes)))
  }

  override _final(done: (err?: Error | null) => void): void {
    done()
    this.call.statusSent(this.pendingStatus)
  }

  /** @internal A frame from the host, decoded. */
  receive(message: unknown): void {
    if (!this.isCancelled) this.push(message)
  }

  /** @internal grpc-js's onCancel: 'cancelled', then the stream is destroyed. */
  cancelled(): void {
    if (this.isCancelled) return
    this.isCancelled = true
    this.emit('cancelled', 'cancelled')
    this.destroy()
  }
}

/** A new Session call: its host's end and its sidecar's end. */
export function sessionCall(): { host: HostEnd; sidecar: SidecarEnd } {
  const call = new Call()
  call.host = new HostEnd(call)
  call.sidecar = new SidecarEnd(call)
  return { host: call.host, sidecar: call.sidecar }
}

export interface MemorySidecarOptions {
  /** Metrics, traces and logs, as `hookd serve` gives them (observability/observability.ts). */
  observer?: Observer
  /** A tap per stream (`hookd serve --capture`). */
  tap?: () => StreamTap
}

/** One tenant's Session streams served in memory by the real stream machine. */
export class MemorySidecar {
  /** The open streams, as the sidecar tracks them (and drains them: open-streams.ts). */
  readonly streams = new OpenStreams()

  constructor(
    readonly tenant: Tenant,
    private readonly options: MemorySidecarOptions = {},
  ) {}

  /** A new Session call served by serveSessionStream, as hook-executor.ts serves one; the host's end. */
  call(): HostEnd {
    const { host, sidecar } = sessionCall()
    const observe = this.options.observer?.session({ tenant: this.tenant.id, transport: 'grpc-session' })
    serveSessionStream(sidecar, this.tenant, this.streams, observe, this.options.tap?.())
    return host
  }

  /** Opens a HostSession on a new call, as HookdClient.openSession does on a gRPC one. */
  openSession(options: SessionOptions): Promise<HostSession> {
    return HostSession.open(this.call(), options, openMessage(options))
  }

  /** A stream for raw frames (Buffers from raw-session.ts's encoders), read as proto-loader decodes them. */
  raw(): RawStream {
    return new RawStream(this.call())
  }

  /** Writes the frames, half-closes, and waits for the status. */
  exchange(frames: Buffer[]): ReturnType<RawStream['exchange']> {
    return this.raw().exchange(frames)
  }
}
