/**
 * One call of the standard gRPC health service (`grpc.health.v1.Health/Check`) on a hookd sidecar:
 * its main listener, or the health-only one of `hookd serve --health-listen`. `hookd health` and
 * container health checks use it; any gRPC health client (Kubernetes' gRPC probes, grpc_health_probe)
 * asks the same question.
 */
import { existsSync } from 'node:fs'
import * as grpc from '@grpc/grpc-js'
import { service as healthService } from 'grpc-health-check'
import { formatAddress, parseAddress } from '../protocol/address.js'
import { HookdError } from '../protocol/status.js'
import type { ConnectOptions } from './client.js'

/** What a sidecar answers: SERVING, or NOT_SERVING while it drains or when its worker pool gave up. */
export type HealthStatus = 'SERVING' | 'NOT_SERVING' | 'UNKNOWN'

export interface HealthCheckOptions extends Pick<ConnectOptions, 'token' | 'tls'> {
  /** The service asked about: '' (the default) is the whole sidecar; 'hookd.v1.HookExecutor' its hook service. */
  service?: string
  /** The deadline of the whole call, connecting included. Default 5000 ms. */
  timeoutMs?: number
}

interface HealthClient extends grpc.Client {
  check(
    request: { service: string },
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: (err: grpc.ServiceError | null, response?: { status?: unknown }) => void,
  ): void
}

const Client = grpc.makeGenericClientConstructor(healthService as grpc.ServiceDefinition, 'Health') as unknown as new (
  address: string,
  credentials: grpc.ChannelCredentials,
  options?: grpc.ClientOptions,
) => HealthClient

/**
 * Asks the sidecar at `address` for its status. Resolves with the status it reported; rejects with a
 * HookdError that says why there was no answer: `unavailable` (nothing reachable there, or not a gRPC
 * health server), `deadline-exceeded`, `not-found` (a service name it does not report on).
 */
export async function checkHealth(address: string, options: HealthCheckOptions = {}): Promise<HealthStatus> {
  const parsed = parseAddress(address)
  const service = options.service ?? ''
  const timeoutMs = options.timeoutMs ?? 5000
  if (parsed.kind === 'unix' && !existsSync(parsed.path)) {
    throw new HookdError('unavailable', `cannot reach hookd at ${address}: no socket at ${parsed.path}; is 'hookd serve' running there?`)
  }
  const tls = options.tls
  const ca = typeof tls === 'object' && tls.ca !== undefined ? Buffer.from(tls.ca) : null
  const client = new Client(formatAddress(parsed), tls ? grpc.credentials.createSsl(ca) : grpc.credentials.createInsecure(), {
    ...(typeof tls === 'object' && tls.serverName ? { 'grpc.ssl_target_name_override': tls.serverName } : {}),
  })
  const metadata = new grpc.Metadata()
  // The health service asks for no token; a proxy in front of the sidecar may.
  if (options.token) metadata.set('authorization', `Bearer ${options.token}`)
  try {
    const response = await new Promise<{ status?: unknown }>((resolve, reject) =>
      client.check({ service }, metadata, { deadline: Date.now() + timeoutMs }, (err, res) => (err ? reject(err) : resolve(res ?? {}))),
    )
    const status = response.status
    return status === 'SERVING' || status === 'NOT_SERVING' ? status : 'UNKNOWN'
  } catch (err) {
    throw failure(err as grpc.ServiceError, address, service, timeoutMs)
  } finally {
    client.close()
  }
}

function failure(err: grpc.ServiceError, address: string, service: string, timeoutMs: number): HookdError {
  switch (err.code) {
    case grpc.status.DEADLINE_EXCEEDED:
      return new HookdError('deadline-exceeded', `hookd at ${address} did not answer the health check within ${timeoutMs} ms`)
    case grpc.status.NOT_FOUND:
      return new HookdError(
        'not-found',
        `hookd at ${address} does not report on service '${service}'; ask about '' (the whole sidecar, the default) or 'hookd.v1.HookExecutor'`,
      )
    case grpc.status.UNIMPLEMENTED:
      return new HookdError('unavailable', `${address} does not serve the gRPC health service (grpc.health.v1.Health); is it a hookd sidecar?`)
    case grpc.status.UNAVAILABLE:
      return new HookdError('unavailable', `cannot reach hookd at ${address}: ${err.details}; is 'hookd serve' running there?`)
    default:
      return HookdError.fromGrpc(err.code, `the health check of hookd at ${address} failed: ${err.details}`)
  }
}
