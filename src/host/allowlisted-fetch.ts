/**
 * The default `ctx.http.fetch`: the platform's fetch to allowlisted origins only, no redirects
 * followed, bounded in time and body size.
 */
import { originOf, quoted } from '../protocol/capabilities.js'
import { type CapabilityHandlers, CapabilityError, MAX_REPLY_BYTES } from './capability-handlers.js'

/** How long the default fetch waits for a response; under the sidecar's 30 s capability ceiling. */
export const FETCH_TIMEOUT_MS = 20_000

export interface FetchOptions {
  /** Default FETCH_TIMEOUT_MS. */
  timeoutMs?: number
  /** The largest response body returned, in bytes. Default MAX_REPLY_BYTES. */
  maxBodyBytes?: number
}

/**
 * Fetch through the platform's fetch, re-checking the origin against the allowlist (origins are
 * normalised, so "http://127.0.0.1:8080/" allows "http://127.0.0.1:8080"). Redirects are not followed
 * (the hook sees the 3xx and its `location`), so an allowed origin cannot lead elsewhere. Bodies over
 * `maxBodyBytes` fail with code 'limit'; a response that takes longer than `timeoutMs`, 'timeout'.
 */
export function allowlistedFetch(origins: readonly string[], options: FetchOptions = {}): NonNullable<CapabilityHandlers['fetch']> {
  const allowed = new Set(origins.map((o) => originOf(o) ?? o))
  const timeoutMs = options.timeoutMs ?? FETCH_TIMEOUT_MS
  const maxBodyBytes = options.maxBodyBytes ?? MAX_REPLY_BYTES
  return async (url, init) => {
    const asked = `ctx.http.fetch(${quoted(url)})`
    const origin = originOf(url)
    if (!origin) throw new CapabilityError('denied', `${asked} refused: only absolute http:// and https:// URLs can be fetched`)
    if (!allowed.has(origin)) throw new CapabilityError('denied', `${asked} refused: origin ${origin} is not allowed by the host`)
    const signal = AbortSignal.timeout(timeoutMs)
    let response: Response
    try {
      response = await fetch(url, {
        method: init.method ?? 'GET',
        ...(init.headers ? { headers: init.headers } : {}),
        ...(init.body !== undefined ? { body: init.body } : {}),
        redirect: 'manual',
        signal,
      })
    } catch (err) {
      throw fetchError(asked, err, signal, timeoutMs)
    }
    const headers: Record<string, string> = {}
    response.headers.forEach((value, name) => {
      headers[name] = value
    })
    let body: string
    try {
      body = await readBody(response, maxBodyBytes)
    } catch (err) {
      if (err instanceof CapabilityError) throw new CapabilityError(err.code, `${asked} failed: ${err.message}`)
      throw fetchError(asked, err, signal, timeoutMs)
    }
    return { status: response.status, headers, body }
  }
}

function fetchError(asked: string, err: unknown, signal: AbortSignal, timeoutMs: number): CapabilityError {
  if (signal.aborted) return new CapabilityError('timeout', `${asked} failed: no response within ${timeoutMs} ms`)
  // undici reports "fetch failed" and puts the reason (ECONNREFUSED ...) in `cause`.
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : undefined
  const why = err instanceof Error ? err.message : String(err)
  return new CapabilityError('failed', `${asked} failed: ${cause ? `${why} (${cause})` : why}`)
}

async function readBody(response: Response, max: number): Promise<string> {
  if (!response.body) return ''
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > max) {
      await reader.cancel().catch(() => {})
      throw new CapabilityError('limit', `the response body is over the limit of ${max} bytes`)
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString('utf8')
}
