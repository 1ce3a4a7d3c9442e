/**
 * The flags with which `hookd list` and `hookd invoke --addr` reach a running sidecar: a tenant's token
 * (or HOOKD_TOKEN) and TLS, as the host library's ConnectOptions take them (src/host/client.ts).
 */
import { readFile } from 'node:fs/promises'
import type { ConnectOptions } from '../../host/client.js'
import { parseAddress } from '../../protocol/address.js'
import { HookdError } from '../../protocol/status.js'
import { UsageError } from './args.js'

export const TOKEN_ENV = 'HOOKD_TOKEN'

export const CONNECT_HELP = `  --token TOKEN          a tenant's token, for a sidecar started with --tenants (default: $${TOKEN_ENV})
  --tls                  connect over TLS (a sidecar started with --tls-cert/--tls-key), trusting the
                         system's certificate authorities
  --tls-ca FILE          connect over TLS, trusting the PEM certificate(s) in FILE instead (e.g. the
                         sidecar's own self-signed certificate)
  --tls-server-name NAME the name the sidecar's certificate carries, when it is not the address's host`

export const CONNECT_FLAGS = {
  token: { type: 'string' },
  tls: { type: 'boolean', default: false },
  'tls-ca': { type: 'string' },
  'tls-server-name': { type: 'string' },
} as const

export interface ConnectValues {
  token?: string | undefined
  tls?: boolean | undefined
  'tls-ca'?: string | undefined
  'tls-server-name'?: string | undefined
}

/** True when any of the flags was given (for commands where they do not apply). */
export function connectFlagsGiven(values: ConnectValues): boolean {
  return values.token !== undefined || values.tls === true || values['tls-ca'] !== undefined || values['tls-server-name'] !== undefined
}

/** The ConnectOptions for `address`; throws a UsageError that says what to change. */
export async function connectOptions(address: string, values: ConnectValues, env: NodeJS.ProcessEnv = process.env): Promise<ConnectOptions> {
  const options: ConnectOptions = {}
  if (values.token !== undefined) {
    if (values.token.trim() === '') throw new UsageError(`--token is empty; pass the tenant's token (or set ${TOKEN_ENV})`)
    options.token = values.token.trim()
  } else if (env[TOKEN_ENV]?.trim()) {
    options.token = env[TOKEN_ENV].trim()
  }
  const ca = values['tls-ca']
  const serverName = values['tls-server-name']
  if (!values.tls && ca === undefined && serverName === undefined) return options
  let kind: string
  try {
    kind = parseAddress(address).kind
  } catch (err) {
    throw new UsageError(err instanceof HookdError ? err.message : String(err))
  }
  if (kind === 'unix') {
    throw new UsageError(`--tls, --tls-ca and --tls-server-name are for TCP addresses; ${address} is a Unix socket, protected by its file permissions`)
  }
  const tls: { ca?: Buffer; serverName?: string } = {}
  if (ca !== undefined) {
    try {
      tls.ca = await readFile(ca)
    } catch (err) {
      throw new UsageError(`--tls-ca: cannot read ${ca}: ${(err as Error).message}; pass the PEM certificate the sidecar serves (its --tls-cert) or its CA's`)
    }
  }
  if (serverName !== undefined) tls.serverName = serverName
  options.tls = ca === undefined && serverName === undefined ? true : tls
  return options
}

/** The message for a failure to reach or use a sidecar, naming the flag that may be missing. */
export function connectHint(err: HookdError, address: string, options: ConnectOptions): string {
  const end = /[.?]$/.test(err.message) ? ' ' : '. '
  if (err.code === 'unauthenticated' && options.token === undefined) {
    return `${err.message}${end}Pass the tenant's token with --token TOKEN (or set ${TOKEN_ENV})`
  }
  if (err.code === 'unavailable' && options.tls === undefined && !address.startsWith('unix:')) {
    return `${err.message}${end}If it serves TLS (hookd serve --tls-cert), pass --tls, or --tls-ca FILE for a self-signed certificate`
  }
  return err.message
}
