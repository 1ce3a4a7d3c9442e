/**
 * Fetches a hooks bundle over HTTP(S), bounded: one deadline for the whole exchange (connect, headers,
 * body), a size cap that refuses a declared Content-Length past it before reading a byte and stops a
 * body that grows past it, and the ETag of the last good fetch sent back (If-None-Match), so that an
 * unchanged bundle costs a 304. Plain HTTP is taken only from loopback (tests, a local mirror); any
 * other source must be HTTPS. What comes back is bytes nobody has checked yet: bundle-format.ts
 * verifies them.
 */
import { isLoopbackHost } from './loopback.js'

export interface FetchOptions {
  maxBytes: number
  timeoutMs: number
  /** The ETag of the last bundle taken. */
  etag?: string | undefined
}

export type Fetched = { kind: 'unchanged' } | { kind: 'bundle'; bytes: Buffer; etag: string | undefined } | { kind: 'failed'; message: string }

/** Why a URL cannot be a bundle source, or undefined when it can. */
export function sourceProblem(url: string): string | undefined {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return `'${url}' is not a URL; give https://HOST/PATH/bundle.json`
  }
  if (parsed.protocol === 'https:') return undefined
  if (parsed.protocol === 'http:' && isLoopbackHost(parsed.hostname)) return undefined
  if (parsed.protocol === 'http:') return `'${url}' is plain HTTP to another machine; serve bundles over https:// (plain http:// only from loopback)`
  return `'${url}' is not an http(s) URL`
}

export async function fetchBundle(url: string, options: FetchOptions): Promise<Fetched> {
  const signal = AbortSignal.timeout(options.timeoutMs)
  try {
    const res = await fetch(url, { signal, redirect: 'error', headers: options.etag ? { 'if-none-match': options.etag } : {} })
    if (res.status === 304) {
      await res.body?.cancel()
      return { kind: 'unchanged' }
    }
    if (res.status !== 200) {
      await res.body?.cancel()
      return { kind: 'failed', message: `${url} answered HTTP ${res.status}` }
    }
    const declared = Number(res.headers.get('content-length') ?? NaN)
    if (Number.isFinite(declared) && declared > options.maxBytes) {
      await res.body?.cancel()
      return { kind: 'failed', message: `${url} offers ${declared} bytes, over the ${options.maxBytes} bytes hookd takes (--bundle-max-bytes); nothing was read` }
    }
    const chunks: Buffer[] = []
    let size = 0
    const reader = res.body?.getReader()
    for (;;) {
      if (!reader) break
      const { done, value } = await reader.read()
      if (done) break
      size += value.byteLength
      if (size > options.maxBytes) {
        await reader.cancel()
        return { kind: 'failed', message: `${url} sent more than the ${options.maxBytes} bytes hookd takes (--bundle-max-bytes); the download was stopped` }
      }
      chunks.push(Buffer.from(value))
    }
    const bytes = Buffer.concat(chunks)
    if (Number.isFinite(declared) && bytes.length !== declared) return { kind: 'failed', message: `${url} sent ${bytes.length} of the ${declared} bytes it declared (a truncated download)` }
    return { kind: 'bundle', bytes, etag: res.headers.get('etag') ?? undefined }
  } catch (err) {
    if (signal.aborted) return { kind: 'failed', message: `${url} did not send the bundle within ${options.timeoutMs} ms` }
    const cause = (err as { cause?: { code?: string; message?: string } }).cause
    return { kind: 'failed', message: `cannot fetch ${url}: ${cause?.code ?? cause?.message ?? (err as Error).message} (a truncated download or a server that is down reads so)` }
  }
}
