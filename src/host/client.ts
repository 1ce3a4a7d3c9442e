/**
 * The TypeScript host library: connect to a hookd sidecar, open a session per agent run, call points
 * with typed payloads and results, and serve the capabilities hooks ask for.
 */
import { existsSync } from 'node:fs'
import * as grpc from '@grpc/grpc-js'
import { formatAddress, parseAddress } from '../protocol/address.js'
import type { Diagnostic } from '../protocol/diagnostic.js'
import type { PointName, PointOutput, PointPayload } from '../protocol/points.js'
import { HookdError } from '../protocol/status.js'
import { PROTOCOL_VERSION } from '../protocol/version.js'
import {
  type FileAccess,
  type HookInfoData,
  type HookTrace,
  type LogLineData,
  fileAccessToWire,
  hookExecutorService,
  invokeResponseWire,
  listHooksResponseWire,
} from '../protocol/wire.js'
import type { CapabilityHandlers } from './capabilities.js'
import { HostSession } from './session.js'

/** What a host declares when a run starts. */
export interface SessionOptions {
  sessionId: string
  agentId?: string
  modelId?: string
  /** The hooks this run uses, in execution order. */
  hooks: readonly string[]
  /** Default: process.cwd(). */
  workdir?: string
  /** True when a human can answer ctx.confirm. Default false. */
  interactive?: boolean
  /** How ctx.confirm is answered when not interactive. Default false. */
  autoApprove?: boolean
  policy?: {
    /** Default 'read-write' (always confined to the workdir). */
    file?: FileAccess
    /** Origins ctx.http.fetch may reach. Default none. */
    httpOrigins?: readonly string[]
    /** Environment variable names visible in ctx.env. Default none. */
    env?: readonly string[]
    /** Default true. */
    confirm?: boolean
  }
  /** Values for the allowlisted env names. Default: taken from process.env. */
  env?: Record<string, string>
  /** Capability handlers; anything left out gets the defaults in capabilities.ts. */
  capabilities?: CapabilityHandlers
}

/** The chained answer to one point call. */
export interface PointCallResult<N extends PointName> {
  result: PointOutput<N>
  diagnostics: Diagnostic[]
  trace: HookTrace[]
  durationUs: number
  /**
   * The sidecar's id for this result: the `decisionId` of its line in the sidecar's audit log. Absent
   * when the host made the result up (a failure policy answering for an absent sidecar).
   */
  decisionId?: string
}

export interface InvokeResult<N extends PointName> extends PointCallResult<N> {
  logs: LogLineData[]
  notifications: unknown[]
}

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
      notifications: parsed.notifications.map((b) => JSON.parse(b.toString('utf8')) as unknown),
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

export function fromServiceError(err: grpc.ServiceError): HookdError {
  return HookdError.fromGrpc(err.code, err.details || err.message)
}

export function decodeResult<N extends PointName>(wire: {
  result: Buffer
  diagnostics: Diagnostic[]
  trace: HookTrace[]
  durationUs: number
  decisionId?: string
}): PointCallResult<N> {
  const out: PointCallResult<N> = {
    result: JSON.parse(wire.result.toString('utf8')) as PointOutput<N>,
    diagnostics: wire.diagnostics,
    trace: wire.trace,
    durationUs: wire.durationUs,
  }
  if (wire.decisionId) out.decisionId = wire.decisionId
  return out
}

function openMessage(options: SessionOptions): Record<string, unknown> {
  const policy = options.policy ?? {}
  const envNames = policy.env ?? []
  const env: Record<string, string> = {}
  for (const name of envNames) {
    const value = options.env ? options.env[name] : process.env[name]
    if (value !== undefined) env[name] = value
  }
  return {
    protocolVersion: PROTOCOL_VERSION,
    sessionId: options.sessionId,
    agentId: options.agentId ?? '',
    modelId: options.modelId ?? '',
    hooks: [...options.hooks],
    workdir: options.workdir ?? process.cwd(),
    interactive: options.interactive ?? false,
    autoApprove: options.autoApprove ?? false,
    policy: {
      file: fileAccessToWire(policy.file ?? 'read-write'),
      httpOrigins: [...(policy.httpOrigins ?? [])],
      env: [...envNames],
      denyConfirm: policy.confirm === false,
    },
    env,
  }
}
