/**
 * The HTTP plumbing of the front door: reading a bounded body, answering JSON, and the one table from
 * hookd's error codes to HTTP statuses.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { type ErrorCode, HookdError } from '../../protocol/status.js'

const STATUS: Record<ErrorCode, number> = {
  'invalid-argument': 400,
  unauthenticated: 401,
  'not-found': 404,
  'failed-precondition': 409,
  'resource-exhausted': 429,
  cancelled: 499,
  internal: 500,
  unavailable: 503,
  'deadline-exceeded': 504,
}

export function httpStatus(err: HookdError): number {
  return STATUS[err.code]
}

/**
 * Where a body's bytes are counted while the request holds them (byte-budget.ts): `add` takes more
 * bytes, or answers the HookdError that refuses them.
 */
export interface BodyCounter {
  add(bytes: number): HookdError | undefined
}

/**
 * Why a body was not read: too large (413), or over a byte budget (the counter's error). Either way
 * the rest of the body is not read: answer with `connection: close`.
 */
export class BodyRefused extends Error {
  constructor(
    readonly error: HookdError,
    readonly tooLarge: boolean,
  ) {
    super(error.message)
  }
}

/**
 * The request's body, at most `maxBytes`, each byte counted by `counter` as it arrives (a declared
 * Content-Length is counted before the first byte is read, so a body over a budget is refused
 * without reading it). Rejects with BodyRefused past either, with a HookdError (`cancelled`) when the
 * request breaks off. The body is read into one buffer when its length is declared, and the chunks
 * are dropped once joined otherwise: nothing but the returned buffer holds its bytes.
 */
export function readBody(req: IncomingMessage, maxBytes: number, counter?: BodyCounter): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'])
    const tooLarge = (): BodyRefused => new BodyRefused(new HookdError('resource-exhausted', `the request body is over the limit of ${maxBytes} bytes`), true)
    const known = req.headers['content-length'] !== undefined && Number.isSafeInteger(declared) && declared >= 0
    if (known && declared > maxBytes) return reject(tooLarge())
    const refused = known ? counter?.add(declared) : undefined
    if (refused) return reject(new BodyRefused(refused, false))
    let whole: Buffer | undefined = known ? Buffer.allocUnsafe(declared) : undefined
    let chunks: Buffer[] = []
    let size = 0
    // The listeners go as soon as the body is read or refused: the request outlives the read, and
    // listeners left on it would keep this promise, and so the body, alive while the call waits.
    const done = (): void => {
      req.removeListener('data', onData)
      req.removeListener('end', onEnd)
      req.removeListener('error', onError)
      whole = undefined
      chunks = []
    }
    const stop = (err: Error): void => {
      done()
      reject(err)
    }
    const onData = (chunk: Buffer): void => {
      if (size + chunk.length > maxBytes || (whole && size + chunk.length > whole.length)) return stop(tooLarge())
      if (whole) chunk.copy(whole, size)
      else {
        const over = counter?.add(chunk.length)
        if (over) return stop(new BodyRefused(over, false))
        chunks.push(chunk)
      }
      size += chunk.length
    }
    const onEnd = (): void => {
      const body = whole ? whole.subarray(0, size) : Buffer.concat(chunks, size)
      done()
      resolve(body)
    }
    const onError = (err: Error): void => stop(new HookdError('cancelled', `the request broke off: ${err.message}`))
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('error', onError)
  })
}

/** Headers that prove an answer (door-auth.ts), made from its status and exact body. */
export type Prove = (status: number, body: string) => Record<string, string>

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}, prove?: Prove): void {
  if (res.headersSent || res.destroyed) return
  const text = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers, ...prove?.(status, text) })
  res.end(text)
}

/** An answer with no body (no opinion), proved like any other. */
export function sendEmpty(res: ServerResponse, status: number, prove?: Prove): void {
  if (res.headersSent || res.destroyed) return
  res.writeHead(status, { ...prove?.(status, '') })
  res.end()
}

/**
 * An error answer: the status for its code (or `status`: 413, 421), and `{error}` saying what was wrong
 * and what to do. `close` ends the connection after it (a body left unread); `prove` signs it for a
 * caller that asked for proof (door-auth.ts).
 */
export function sendError(res: ServerResponse, err: HookdError, options: { status?: number; close?: boolean; prove?: Prove | undefined } = {}): void {
  const status = options.status ?? httpStatus(err)
  const headers: Record<string, string> = {}
  if (status === 401) headers['www-authenticate'] = 'Bearer'
  if (status === 429 || status === 503) headers['retry-after'] = '1'
  if (options.close) headers.connection = 'close'
  sendJson(res, status, { error: err.message }, headers, options.prove)
}
