/**
 * A second listener that serves only the standard gRPC health service (`hookd serve --health-listen
 * HOST:PORT`). Kubernetes' gRPC probes reach a container over TCP only, while a sidecar per agent pod
 * listens on a Unix socket in a shared emptyDir; this gives the probes a port without giving anyone a
 * way to run hooks: no HookExecutor, no reflection, and nothing that needs a token.
 *
 * It shares the sidecar's HealthImplementation, so it reports exactly what the main listener reports:
 * SERVING, then NOT_SERVING once the sidecar drains or its worker pool gave up.
 */
import * as grpc from '@grpc/grpc-js'
import type { HealthImplementation } from 'grpc-health-check'
import { type Address, formatAddress, parseAddress } from '../../protocol/address.js'
import { HookdError } from '../../protocol/status.js'

export interface HealthListener {
  /** The bound address, with the real port for `HOST:0`. */
  readonly address: string
  /** Stops answering at once: health checks are short, so there is nothing to drain. */
  close(): Promise<void>
}

/** The address `--health-listen` takes: HOST:PORT. Throws an `invalid-argument` HookdError that says why not. */
export function parseHealthAddress(text: string): Extract<Address, { kind: 'tcp' }> {
  let address: Address
  try {
    address = parseAddress(text)
  } catch (err) {
    throw new HookdError('invalid-argument', `--health-listen: ${(err as Error).message}`)
  }
  if (address.kind !== 'tcp') {
    throw new HookdError(
      'invalid-argument',
      `--health-listen takes HOST:PORT (e.g. 0.0.0.0:8081), for probes that reach the sidecar over TCP; ${text} is a Unix socket, and the main listener already serves the health service there`,
    )
  }
  return address
}

/** Binds `text` (HOST:PORT, plaintext: probes speak no TLS) and serves `health` on it. */
export async function listenHealth(health: HealthImplementation, text: string): Promise<HealthListener> {
  const address = parseHealthAddress(text)
  const server = new grpc.Server()
  health.addToServer(server)
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(formatAddress(address), grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(new HookdError('unavailable', `cannot listen for health checks on ${text}: ${err.message}`)) : resolve(p),
    ),
  )
  return {
    address: formatAddress({ ...address, port }),
    close: async () => server.forceShutdown(),
  }
}
