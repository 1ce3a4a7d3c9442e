/**
 * The TypeScript host library: connect to a hookd sidecar, open a session per agent run, call points
 * with typed payloads and results, and serve the capabilities hooks ask for.
 */
import { existsSync } from 'node:fs'
import * as grpc from '@grpc/grpc-js'
import { formatAddress, parseAddress } from '../protocol/address.js'
import type { PointName, PointPayload } from '../protocol/points/points.js'
import { HookdError } from '../protocol/status.js'
import { type HookInfoData, hookExecutorService, invokeResponseWire, listHooksResponseWire } from '../protocol/wire.js'
import { type InvokeResult, decodeResult, fromServiceError, readJson } from './results.js'
import { type SessionOptions, openMessage } from './session-options.js'
import { HostSession } from './session.js'

export type { InvokeResult, PointCallResult } from './results.js'
export type { SessionOptions } from './session-options.js'

interface RawClient extends grpc.Client {
  Session(metadata?: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<unknown, unknown>
  Invoke(req: unknown, metadata: grpc.Metadata, options: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res?: unknown) => void): void
  ListHooks(req: unknown, metadata: grpc.Metadata, options: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res?: unknown) => void): void
}

export interface ConnectOptions {
  /** Bearer token for multi-tenant sidecars. */
  token?: string
  /**
   * TLS for a TCP address (a sidecar started with --tls-cert/--tls-key). `ca`: the PEM certificate(s)
   * to trust instead of the system's, e.g. a self-signed sidecar certificate; `serverName`: the name
   * the certificate must carry, when it is not the address's host.
   */
  tls?: boolean | { ca?: Buffer | string; serverName?: string }
  /** How long to wait for the sidecar to accept the connection. Default 5000 ms. */
  connectTimeoutMs?: number
}

const Constructor = grpc.makeGenericClientConstructor(hookExecutorService(), 'HookExecutor') as unknown as new (
  address: string,
  credentials: grpc.ChannelCredentials,
  options?: grpc.ClientOptions,
) => RawClient

export class HookdClient {
  private constructor(
    private readonly raw: RawClient,
    readonly address: string,
    private readonly token: string | undefined,
  ) {}

  /** Connects and waits until the sidecar accepts the connection. */
  static async connect(address: string, options: ConnectOptions = {}): Promise<HookdClient> {
    const parsed = parseAddress(address)
    if (parsed.kind === 'unix' && !existsSync(parsed.path)) {
      throw new HookdError('unavailable', `cannot reach hookd at ${address}: no socket at ${parsed.path}; is 'hookd serve' running there?`)
    }
    const target = formatAddress(parsed)
    const tls = options.tls
    const ca = typeof tls === 'object' && tls.ca !== undefined ? Buffer.from(tls.ca) : null
    const credentials = tls ? grpc.credentials.createSsl(ca) : grpc.credentials.createInsecure()
    const raw = new Constructor(target, credentials, {
      'grpc.max_receive_message_length': 8 * 1024 * 1024,
      ...(typeof tls === 'object' && tls.serverName ? { 'grpc.ssl_target_name_override': tls.serverName } : {}),
    })
    const deadline = Date.now() + (options.connectTimeoutMs ?? 5000)
    await new Promise<void>((resolve, reject) =>
      raw.waitForReady(deadline, (err) =>
        err
          ? reject(new HookdError('unavailable', `cannot reach hookd at ${address}: ${err.message}; is 'hookd serve' running there?`))
          : resolve(),
      ),
    ).catch((err: unknown) => {
      raw.close()
      throw err
    })
    return new HookdClient(raw, address, options.token)
  }

  metadata(): grpc.Metadata {
    const md = new grpc.Metadata()
    if (this.token) md.set('authorization', `Bearer ${this.token}`)
    return md
  }

  /** Opens a session (one agent run). Fails with a HookdError when the sidecar refuses it. */
  openSession(options: SessionOptions): Promise<HostSession> {
    return HostSession.open(this.raw.Session(this.metadata()), options, openMessage(options))
  }

  /** One point, one chain, no interactive capabilities. */
  async invoke<N extends PointName>(options: SessionOptions, point: N, payload: PointPayload<N>): Promise<InvokeResult<N>> {
    const request = { session: openMessage(options), point, payload: Buffer.from(JSON.stringify(payload)) }
    const raw = await new Promise<unknown>((resolve, reject) =>
      this.raw.Invoke(request, this.metadata(), {}, (err, res) => (err ? reject(fromServiceError(err)) : resolve(res))),
    )
    const parsed = invokeResponseWire.parse(raw)
    if (!parsed.result) throw new HookdError('internal', 'the sidecar answered Invoke without a result')
    return {
      ...decodeResult<N>(parsed.result),
      logs: parsed.logs,
      notifications: parsed.notifications.map((b) => readJson(b, 'a notification')),
    }
  }

  async listHooks(): Promise<HookInfoData[]> {
    const raw = await new Promise<unknown>((resolve, reject) =>
      this.raw.ListHooks({}, this.metadata(), {}, (err, res) => (err ? reject(fromServiceError(err)) : resolve(res))),
    )
    return listHooksResponseWire.parse(raw).hooks
  }

  close(): void {
    this.raw.close()
  }
}
