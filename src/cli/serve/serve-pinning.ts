/**
 * The flags of `hookd serve` that pin what it serves (docs/operations.md, "Pinning, signing and
 * bundles"): --locked and --lock-file (hookd.lock), --trusted-keys and --require-signed (signatures),
 * and --hooks-from with its poll, size and state flags (bundles). Kept here so that serve.ts only
 * wires them in.
 */
import { resolve } from 'node:path'
import type { SidecarOptions } from '../../sidecar/sidecar.js'
import { BUNDLE_MAX_BYTES } from '../../sidecar/bundles/bundle-format.js'
import { sourceProblem } from '../../sidecar/bundles/bundle-fetch.js'
import { readTrustedKeys } from '../../sidecar/pinning/signing.js'
import { PROJECT_STATE_DIR } from '../../sidecar/state/state-folder.js'
import { UsageError, positiveInt } from '../common/args.js'

export const PINNING_HELP = `  --locked                 serve only hooks whose files match hookd.lock (hookd lock writes it): a
                           changed hook keeps its locked version serving (a new one does not load)
                           until 'hookd trust HOOK' approves it; reported once on stderr and by
                           'hookd check'. A version asking for more permissions than its locked one
                           is held even without --locked
  --lock-file FILE         the lock file (default: hookd.lock beside the hooks folder)
  --trusted-keys FILE      ed25519 public keys (PEM, as 'hookd keygen' writes to KEY.pub) whose
                           signatures are trusted
  --require-signed         with --trusted-keys: serve only hooks signed by a trusted key (hook.sig,
                           or a signed hookd.lock that pins them); the load error says unsigned,
                           signed by an untrusted key (its fingerprint), or changed after signing
  --hooks-from URL         serve the hooks of a signed bundle ('hookd bundle') fetched from URL
                           (https://, or http:// on loopback) instead of --hooks: polled by ETag,
                           verified (signature with --trusted-keys, every digest), swapped in whole
                           between calls; on any failure the last good bundle keeps serving, and it is
                           kept on disk for a restart
  --poll-ms N              with --hooks-from: how often to ask for a new revision (default: 30000)
  --bundle-max-bytes N     with --hooks-from: the largest bundle taken (default: ${BUNDLE_MAX_BYTES})
  --bundle-state DIR       with --hooks-from: where the last good bundles are kept (default:
                           ${PROJECT_STATE_DIR}/bundles)`

export const PINNING_FLAGS = {
  locked: { type: 'boolean', default: false },
  'lock-file': { type: 'string' },
  'trusted-keys': { type: 'string' },
  'require-signed': { type: 'boolean', default: false },
  'hooks-from': { type: 'string' },
  'poll-ms': { type: 'string' },
  'bundle-max-bytes': { type: 'string' },
  'bundle-state': { type: 'string' },
} as const

export interface PinningValues {
  hooks?: string | undefined
  tenants?: string | undefined
  projects?: boolean | undefined
  locked?: boolean | undefined
  'lock-file'?: string | undefined
  'trusted-keys'?: string | undefined
  'require-signed'?: boolean | undefined
  'hooks-from'?: string | undefined
  'poll-ms'?: string | undefined
  'bundle-max-bytes'?: string | undefined
  'bundle-state'?: string | undefined
}

/** The sidecar's pinning options from the flags; a UsageError for a combination that cannot be. */
export async function pinningSettings(values: PinningValues, cwd: string): Promise<Pick<SidecarOptions, 'pinning' | 'hooksFrom'>> {
  const given = (['locked', 'lock-file', 'trusted-keys', 'require-signed', 'hooks-from'] as const).filter((f) => values[f] !== undefined && values[f] !== false)
  if (values.tenants !== undefined && given.length) {
    throw new UsageError(`--${given[0]} is for a sidecar without tenants; with --tenants, each tenant sets "locked", "requireSigned" and "trustedKeys" in the tenants file (docs/tenants.md)`)
  }
  if (values.projects && given.length) throw new UsageError(`--${given[0]} does not apply with --projects`)
  if (values['require-signed'] && values['trusted-keys'] === undefined) throw new UsageError('--require-signed needs --trusted-keys FILE: the public keys whose signatures are trusted')
  const url = values['hooks-from']
  for (const flag of ['poll-ms', 'bundle-max-bytes', 'bundle-state'] as const) {
    if (values[flag] !== undefined && url === undefined) throw new UsageError(`--${flag} is for --hooks-from URL`)
  }
  const urlProblem = url !== undefined ? sourceProblem(url) : undefined
  if (urlProblem) throw new UsageError(`--hooks-from: ${urlProblem}`)
  const trustedKeys = values['trusted-keys'] !== undefined ? await readTrustedKeys(resolve(cwd, values['trusted-keys'])) : undefined
  const out: Pick<SidecarOptions, 'pinning' | 'hooksFrom'> = {}
  if (url !== undefined) {
    if (values.hooks !== undefined) throw new UsageError('--hooks-from serves the hooks of a bundle: give it or --hooks DIR, not both')
    if (values.locked || values['lock-file'] !== undefined) throw new UsageError("--hooks-from serves exactly what the bundle's own lock pins: --locked and --lock-file do not apply")
    if (!trustedKeys) throw new UsageError('--hooks-from needs --trusted-keys FILE: a bundle is served only when a trusted key signed it')
    const pollMs = positiveInt('poll-ms', values['poll-ms'])
    const maxBytes = positiveInt('bundle-max-bytes', values['bundle-max-bytes'])
    out.hooksFrom = {
      url,
      trustedKeys,
      stateDir: resolve(cwd, values['bundle-state'] ?? `${PROJECT_STATE_DIR}/bundles`),
      ...(pollMs !== undefined ? { pollMs } : {}),
      ...(maxBytes !== undefined ? { maxBytes } : {}),
    }
    return out
  }
  out.pinning = {
    locked: values.locked === true,
    requireSigned: values['require-signed'] === true,
    ...(values['lock-file'] !== undefined ? { lockFile: resolve(cwd, values['lock-file']) } : {}),
    ...(trustedKeys ? { trustedKeys } : {}),
  }
  return out
}
