/** Where a remote hook's server is: hook.json's "remote", parsed and made absolute. */
import { dirname, resolve } from 'node:path'
import { formatAddress, parseAddress } from '../../../protocol/address.js'
import { HookdError } from '../../../protocol/status.js'

/** A remote hook's address: `text` as written in hook.json, `target` as gRPC dials it. */
export interface RemoteAddress {
  text: string
  target: string
}

/**
 * Parses hook.json's "remote". A relative `unix:` path is resolved against the hook's folder, so a
 * folder can carry its own socket path; every path is made absolute without `.` or `..` segments, so
 * that a tenant's allowlist (remote-allow.ts) sees the path hookd connects to. Throws a HookdError
 * (invalid-argument) saying what is wrong.
 */
export function remoteAddress(text: string, hookJsonPath: string): RemoteAddress {
  try {
    const address = parseAddress(text, dirname(hookJsonPath))
    return { text, target: formatAddress(address.kind === 'unix' ? { kind: 'unix', path: resolve(address.path) } : address) }
  } catch (err) {
    const why = err instanceof HookdError ? err.message : String(err)
    throw new HookdError('invalid-argument', `hook.json "remote": ${why}`)
  }
}

