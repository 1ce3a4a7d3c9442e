/**
 * The `Host` check of every HTTP listener a browser can reach (the agents' front door, the metrics
 * listener). A web page cannot read a loopback port's answers across origins, but it can rebind a DNS
 * name of its own to 127.0.0.1 (or to a pod's address) and read them as its own origin; the one thing
 * it cannot change is the `Host` header, which names its domain. So a request is answered only when its
 * Host is a loopback name or address (`localhost`, `*.localhost`, 127.0.0.0/8, ::1), the listener's
 * own configured host, or the address the connection arrived at (what Prometheus and the kubelet send
 * for a listener bound to 0.0.0.0: the pod's IP), with the port the connection arrived at.
 *
 * A request without a Host (HTTP/1.0 tools) is not a browser's, and passes. The gRPC health listener
 * needs no check: browsers cannot speak HTTP/2 without TLS, nor gRPC's framing.
 */
import type { IncomingMessage } from 'node:http'
import { isIP } from 'node:net'
import { quoted } from '../../protocol/text.js'

/**
 * Undefined when `req`'s Host may be answered; otherwise the refusal (for a 421), saying what to use.
 * `listenHost` is the host the listener was told to bind (a name, an address, or 0.0.0.0 / ::);
 * `names` are further names (or addresses) the operator said clients use.
 */
export function hostRefusal(req: IncomingMessage, listenHost: string, names: readonly string[] = []): string | undefined {
  const header = req.headers.host
  if (header === undefined) return undefined
  const local = unmapped(req.socket.localAddress ?? '')
  const port = req.socket.localPort ?? 0
  const parsed = parseHost(header)
  if (parsed && parsed.port === port && (allowedName(parsed.name, listenHost, local) || names.includes(parsed.name))) return undefined
  const own = `${bracketed(listenHost)}:${port}`
  return (
    `the request's Host ${quoted(header, 100)} names neither a loopback address nor this listener's own (${own}); hookd answers only requests ` +
    `addressed to it, so that a web page cannot reach it through a DNS name of its own: address it as http://${bracketed(local || listenHost)}:${port}/`
  )
}

/** `name[:port]` or `[v6][:port]`, the name lowercased; undefined when it is neither. Port 80 when none is given. */
export function parseHost(header: string): { name: string; port: number } | undefined {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+))(?::(\d{1,5}))?$/.exec(header.trim())
  if (!match) return undefined
  const name = (match[1] ?? match[2] ?? '').toLowerCase()
  const port = match[3] === undefined ? 80 : Number(match[3])
  if (match[1] !== undefined && isIP(name) !== 6) return undefined
  return port <= 0xffff ? { name, port } : undefined
}

function allowedName(name: string, listenHost: string, local: string): boolean {
  if (name === 'localhost' || name.endsWith('.localhost')) return true
  const address = unmapped(name)
  if (isIP(address) === 4 && address.startsWith('127.')) return true
  if (address === '::1') return true
  if (address !== '' && address === local) return true
  const own = unmapped(listenHost.toLowerCase())
  return own !== '0.0.0.0' && own !== '::' && address === own
}

/** An IPv4 address as a dual-stack socket writes it (`::ffff:a.b.c.d`), as itself. */
function unmapped(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  return mapped ? (mapped[1] as string) : address
}

function bracketed(host: string): string {
  return host.includes(':') ? `[${host}]` : host
}
