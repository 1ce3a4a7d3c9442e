/**
 * Which servers a tenant's remote hooks may name: the tenants file's `remoteHooks` (docs/tenants.md).
 * A tenant who can write its hooks folder could otherwise make the sidecar connect to any address, so
 * a tenant's registry refuses every remote hook whose address no entry matches, before contacting it.
 * A sidecar without tenants has no such list: its hooks folder is the operator's own.
 *
 * An entry is `unix:PATH` (a relative PATH is resolved against the tenants file's folder) or
 * `HOST:PORT`. `*` stands for any characters except `/` in a path or `:` in a host, and for any port
 * as a whole port. Addresses are compared as text, after resolving paths (remote-address.ts makes a hook's
 * unix path absolute, without `.` or `..`): no DNS lookups, no symbolic links followed.
 */
import { isAbsolute, resolve } from 'node:path'
import { HookdError } from '../../../protocol/status.js'
import type { RemoteAddress } from './remote-address.js'

/** Why a remote hook's address is refused, or undefined when it is allowed. */
export type RemoteAllow = (address: RemoteAddress) => string | undefined

const TCP_PATTERN = /^(\[[0-9a-fA-F:.*]+\]|[^:\s[\]/]+):(\d{1,5}|\*)$/

const EXAMPLE = 'e.g. "unix:/run/acme/*.sock" or "127.0.0.1:9000"'

/**
 * Checks one `remoteHooks` entry and returns it normalised (a unix path made absolute against `base`,
 * a port without leading zeros). Throws a HookdError (invalid-argument) saying what is wrong.
 */
export function remotePattern(text: string, base: string): string {
  if (text.startsWith('unix:')) {
    const raw = text.slice('unix:'.length).replace(/^\/\/(?=\/)/, '')
    if (!raw) throw new HookdError('invalid-argument', `'${text}' has no path; write unix:PATH, ${EXAMPLE}`)
    return `unix:${isAbsolute(raw) ? resolve(raw) : resolve(base, raw)}`
  }
  const m = TCP_PATTERN.exec(text)
  if (!m) {
    throw new HookdError(
      'invalid-argument',
      `'${text}' is not an address; write unix:PATH or HOST:PORT, where * stands for any characters of a path segment or host name, or for any port (${EXAMPLE})`,
    )
  }
  const port = m[2] as string
  if (port !== '*' && Number(port) > 65535) throw new HookdError('invalid-argument', `'${text}': port ${port} is above 65535`)
  return `${m[1] as string}:${port === '*' ? '*' : String(Number(port))}`
}

function patternRegExp(pattern: string): RegExp {
  const escape = (s: string): string => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')
  if (pattern.startsWith('unix:')) return new RegExp(`^${escape(pattern).replace(/\*/g, '[^/]*')}$`)
  const colon = pattern.lastIndexOf(':')
  const host = escape(pattern.slice(0, colon)).replace(/\*/g, '[^:/\\s]*')
  const port = pattern.slice(colon + 1)
  return new RegExp(`^${host}:${port === '*' ? '\\d+' : port}$`, 'i')
}

/** The allow check of one tenant's registry: `patterns` are its normalised `remoteHooks`. */
export function tenantRemoteAllow(tenantId: string, patterns: readonly string[]): RemoteAllow {
  const compiled = patterns.map(patternRegExp)
  return (address) => {
    if (compiled.some((re) => re.test(address.target))) return undefined
    const named = address.text === address.target ? address.target : `${address.target} (written "${address.text}")`
    const allowed = patterns.length
      ? `its "remoteHooks" allow only ${patterns.join(', ')}`
      : 'its entry in the tenants file has no "remoteHooks", so it allows none'
    const pattern = address.target.startsWith('unix:') ? ` (or a pattern such as "${address.target.replace(/[^/]*$/, '*.sock')}")` : ''
    return (
      `tenant '${tenantId}' does not allow remote hooks at ${named}: ${allowed}. ` +
      `Point "remote" at an allowed address, or have the operator add "${address.target}"${pattern} to the tenant's "remoteHooks" in the tenants file`
    )
  }
}
