/**
 * The diagnostics listener (`hookd serve --metrics HOST:PORT`): plain HTTP on its own port, apart from
 * the hook service and the agents' front door, for Prometheus and for probes.
 *
 *   GET /metrics   Prometheus text (metrics.ts)
 *   GET /healthz   200 while hookd is live, 503 once its workers cannot start (restart it)
 *   GET /readyz    200 while it is ready to serve hooks; 503 while the first loads run, once it drains,
 *                  or when not live; the body says why
 *
 * It needs no token and serves nothing a caller could change: anyone who reaches it learns hook names,
 * tenant ids and counts. Bind it where only the scraper and the kubelet reach (a pod IP, loopback), or
 * keep it behind a network policy. A web page cannot read it through a DNS name it rebinds to this
 * address: a request whose Host is not loopback, the listener's own host or the address it arrived at
 * is refused (421, host-check.ts) before anything else. It is bound before the hooks load, so that liveness is answered (and
 * readiness says "loading") during a long first load, and closes after the drain.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { parseAddress } from '../../protocol/address.js'
import { HookdError } from '../../protocol/status.js'
import { hostRefusal } from './host-check.js'
import type { Readiness } from './readiness.js'

export interface MetricsSource {
  scrape(): Promise<{ text: string; contentType: string }>
}

/** HOST:PORT for --metrics. Throws an `invalid-argument` HookdError that says what to write. */
export function parseMetricsAddress(text: string): { host: string; port: number } {
  let address
  try {
    address = parseAddress(text)
  } catch (err) {
    throw new HookdError('invalid-argument', `--metrics: ${(err as Error).message.replace('write unix:PATH or HOST:PORT', 'write HOST:PORT')}`)
  }
  if (address.kind !== 'tcp') throw new HookdError('invalid-argument', `--metrics takes HOST:PORT (e.g. 0.0.0.0:9464) for Prometheus to scrape; ${text} is a Unix socket`)
  return { host: address.host, port: address.port }
}

export class MetricsListener {
  private constructor(private readonly server: Server) {}

  /** Binds `text` (HOST:PORT; port 0 picks one). */
  static async listen(text: string, metrics: MetricsSource | undefined, readiness: Readiness): Promise<MetricsListener> {
    const { host, port } = parseMetricsAddress(text)
    const server = createServer({ requestTimeout: 10_000, headersTimeout: 5000, maxHeaderSize: 8 * 1024 })
    server.maxConnections = 64
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      answer(req, res, host, metrics, readiness).catch(() => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' })
        res.end('hookd could not collect its metrics\n')
      })
    })
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err) => reject(new HookdError('unavailable', `cannot serve metrics on ${text}: ${err.message}`)))
      server.listen(port, host, () => resolve())
    })
    return new MetricsListener(server)
  }

  /** `http://HOST:PORT` as bound. */
  get url(): string {
    const { address, port } = this.server.address() as AddressInfo
    return `http://${address.includes(':') ? `[${address}]` : address}:${port}`
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()))
    this.server.closeAllConnections()
    await closed
  }
}

async function answer(req: IncomingMessage, res: ServerResponse, host: string, metrics: MetricsSource | undefined, readiness: Readiness): Promise<void> {
  const misdirected = hostRefusal(req, host)
  if (misdirected) {
    res.writeHead(421, { 'content-type': 'application/json', 'cache-control': 'no-store' })
    res.end(`${JSON.stringify({ error: misdirected })}\n`)
    return
  }
  const path = (req.url ?? '/').split('?', 1)[0]
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' })
    res.end(`${req.method ?? '?'} is not served here; GET /metrics, /healthz or /readyz\n`)
    return
  }
  if (path === '/healthz' || path === '/readyz') {
    const ok = path === '/healthz' ? readiness.live : readiness.ready
    const why = ok ? undefined : readiness.reason()
    res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json', 'cache-control': 'no-store' })
    const revision = readiness.revision !== undefined ? { revision: readiness.revision } : {}
    res.end(`${JSON.stringify(ok ? { status: path === '/healthz' ? 'live' : 'ready', ...revision } : { status: path === '/healthz' ? 'not live' : 'not ready', reason: why, ...revision })}\n`)
    return
  }
  if (path === '/metrics' && metrics) {
    const { text, contentType } = await metrics.scrape()
    res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' })
    res.end(text)
    return
  }
  res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
  res.end(`no such endpoint: ${path}; this listener serves GET /metrics, /healthz and /readyz\n`)
}
