/**
 * The flags of `hookd serve` that decide who may call the sidecar and what is recorded: tenants, TCP
 * without them (--insecure), TLS, the audit log and the fair queue's slots. Kept here so that serve.ts
 * only wires them in.
 */
import { readFile } from 'node:fs/promises'
import { parseAddress } from '../../protocol/address.js'
import type { SidecarOptions } from '../../sidecar/sidecar.js'
import { readTenants } from '../../sidecar/tenancy/tenants-file.js'
import { UsageError, positiveInt } from '../common/args.js'

export const TENANCY_HELP = `  --tenants FILE           serve several tenants, each with its own token, hooks, policy, limits and
                           quotas (see docs/tenants.md; 'hookd tenant token' makes a token). Calls must
                           then carry 'authorization: Bearer <token>'. The file is watched for edits.
  --insecure               allow serving TCP without --tenants (anyone who reaches the port can run hooks)
  --tls-cert FILE          PEM certificate chain: serve TCP over TLS (with --tls-key)
  --tls-key FILE           PEM private key for --tls-cert
  --audit FILE|-           append one JSON line per point result to FILE, or to stdout with -
  --audit-payloads         also log each call's payload, result and diagnostic messages in the audit log
  --slots N                with --tenants: hook invocations run at once across tenants; the rest wait in
                           per-tenant queues served in turn (default: one per core)`

export const TENANCY_FLAGS = {
  tenants: { type: 'string' },
  insecure: { type: 'boolean', default: false },
  'tls-cert': { type: 'string' },
  'tls-key': { type: 'string' },
  audit: { type: 'string' },
  'audit-payloads': { type: 'boolean', default: false },
  slots: { type: 'string' },
} as const

export interface TenancyValues {
  hooks?: string | undefined
  listen: string
  tenants?: string | undefined
  insecure?: boolean | undefined
  'tls-cert'?: string | undefined
  'tls-key'?: string | undefined
  audit?: string | undefined
  'audit-payloads'?: boolean | undefined
  slots?: string | undefined
}

export interface TenancySettings {
  /** Merged into Sidecar.create's options. */
  sidecar: Pick<SidecarOptions, 'hooks' | 'tenants' | 'audit'>
  /** Passed to Sidecar.listen. */
  listen: { tls?: { cert: Buffer; key: Buffer } }
}

/** Checks the flags together; throws a UsageError that says what to change. */
export async function tenancySettings(values: TenancyValues): Promise<TenancySettings> {
  const address = parseAddress(values.listen)
  const tenantsFile = values.tenants
  if (tenantsFile !== undefined && values.hooks !== undefined) {
    throw new UsageError("--hooks cannot be combined with --tenants: each tenant's hooks folder is set in the tenants file ('hooks')")
  }
  if (address.kind === 'tcp' && tenantsFile === undefined && !values.insecure) {
    throw new UsageError(
      `refusing to serve TCP (${values.listen}) without tenants: anyone who can reach the port could run hooks and read what they return. ` +
        'Pass --tenants FILE to require a token per tenant, or --insecure if the network is trusted (or listen on a unix: socket)',
    )
  }
  const cert = values['tls-cert']
  const key = values['tls-key']
  if ((cert === undefined) !== (key === undefined)) throw new UsageError('--tls-cert and --tls-key go together; pass both (PEM files)')
  if (cert !== undefined && address.kind === 'unix') {
    throw new UsageError(`--tls-cert/--tls-key are for TCP addresses; ${values.listen} is a Unix socket, protected by its file permissions`)
  }
  if (values['audit-payloads'] && values.audit === undefined) throw new UsageError('--audit-payloads needs --audit FILE|-')
  const slots = positiveInt('slots', values.slots)
  if (slots !== undefined && tenantsFile === undefined) throw new UsageError('--slots applies to --tenants (the fair queue between tenants)')

  // A bad tenants file is reported before any worker starts.
  if (tenantsFile !== undefined) await readTenants(tenantsFile)
  const settings: TenancySettings = { sidecar: {}, listen: {} }
  if (tenantsFile !== undefined) settings.sidecar.tenants = { file: tenantsFile, ...(slots !== undefined ? { slots } : {}) }
  else settings.sidecar.hooks = values.hooks ?? 'hooks'
  if (values.audit !== undefined) settings.sidecar.audit = { to: values.audit, payloads: values['audit-payloads'] === true }
  if (cert !== undefined && key !== undefined) settings.listen.tls = { cert: await readPem('tls-cert', cert), key: await readPem('tls-key', key) }
  return settings
}

async function readPem(flag: string, file: string): Promise<Buffer> {
  try {
    return await readFile(file)
  } catch (err) {
    throw new UsageError(`--${flag}: cannot read ${file}: ${(err as Error).message}`)
  }
}
