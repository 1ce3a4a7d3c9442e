/**
 * Addresses hookd listens on and connects to: `unix:PATH` (relative paths resolve against the working
 * directory) or `HOST:PORT` (IPv6 as `[::1]:PORT`). The default is a Unix socket under `.hookd/`.
 */
import { isAbsolute, resolve } from 'node:path'
import { HookdError } from './status.js'

export const DEFAULT_ADDRESS = 'unix:.hookd/hookd.sock'

export type Address = { kind: 'unix'; path: string } | { kind: 'tcp'; host: string; port: number }

export function parseAddress(text: string, cwd = process.cwd()): Address {
  if (text.startsWith('unix:')) {
    const raw = text.slice('unix:'.length).replace(/^\/\/(?=\/)/, '')
    if (!raw) throw new HookdError('invalid-argument', `address '${text}' has no path; write unix:PATH`)
    return { kind: 'unix', path: isAbsolute(raw) ? raw : resolve(cwd, raw) }
  }
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:\s[\]]+):(\d{1,5})$/.exec(text)
  if (!m && looksLikePath(text)) {
    throw new HookdError('invalid-argument', `address '${text}' has no scheme; for a Unix socket write unix:${text}`)
  }
  if (!m) {
    throw new HookdError(
      'invalid-argument',
      `address '${text}' is not understood; write unix:PATH or HOST:PORT (e.g. unix:.hookd/hookd.sock or 127.0.0.1:7777)`,
    )
  }
  const port = Number(m[2])
  if (port > 65535) throw new HookdError('invalid-argument', `address '${text}': port ${port} is above 65535`)
  return { kind: 'tcp', host: (m[1] as string).replace(/^\[|\]$/g, ''), port }
}

/** A socket path written without its `unix:` (`/tmp/x.sock`, `.hookd/hookd.sock`, `x.sock`). */
function looksLikePath(text: string): boolean {
  return !text.includes(':') && (text.includes('/') || text.endsWith('.sock'))
}

/** The gRPC target for an address: `unix:/abs/path` or `host:port`. */
export function formatAddress(address: Address): string {
  if (address.kind === 'unix') return `unix:${address.path}`
  return address.host.includes(':') ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`
}
