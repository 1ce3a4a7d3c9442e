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

/** The request's body, at most `maxBytes`; a HookdError (413-worthy `resource-exhausted`) past that. */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'])
    const tooLarge = (): HookdError => new HookdError('resource-exhausted', `the request body is over the limit of ${maxBytes} bytes`)
    if (Number.isFinite(declared) && declared > maxBytes) {
      req.resume()
      reject(tooLarge())
      return
    }
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > maxBytes) {
        req.removeAllListeners('data')
        req.resume()
        reject(tooLarge())
        return
      }
      chunks.push(chunk)
    })
    req.on('end', () => resolve(Buffer.concat(chunks)))
    req.on('error', (err) => reject(new HookdError('cancelled', `the request broke off: ${err.message}`)))
  })
}

/** Headers that prove an answer (door-auth.ts), made from its status and exact body. */
export type Prove = (status: number, body: string) => Record<string, string>

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}, prove?: Prove): void {
  if (res.headersSent) return
  const text = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers, ...prove?.(status, text) })
  res.end(text)
}

/** An answer with no body (no opinion), proved like any other. */
export function sendEmpty(res: ServerResponse, status: number, prove?: Prove): void {
  if (res.headersSent) return
  res.writeHead(status, { ...prove?.(status, '') })
  res.end()
}

/** An error answer: the status for its code, and `{error}` saying what was wrong and what to do. */
export function sendError(res: ServerResponse, err: HookdError, tooLarge = false, prove?: Prove): void {
  const status = tooLarge ? 413 : httpStatus(err)
  sendJson(res, status, { error: err.message }, status === 401 ? { 'www-authenticate': 'Bearer' } : {}, prove)
}
