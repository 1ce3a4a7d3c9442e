/**
 * How hookd's shim and the front door tell each other apart from a stranger on the port, without the
 * token ever crossing the connection (docs/agents.md, "The command shim"). Both hold the token; the key
 * of both proofs below is its SHA-256 (so that a sidecar with tenants, which keeps only the hashes of
 * their tokens, can prove itself too).
 *
 * - The request: `authorization: hookd-hmac ts=<unix seconds>,nonce=<32 hex>,body=<64 hex>,mac=<64 hex>`
 *   with body = hex(SHA-256(body)) and
 *   mac = HMAC-SHA256(key, "hookd-request/1\n" ts "\n" nonce "\n" method "\n" path "\n" body).
 *   The front door takes it in place of `Bearer <token>`, within 120 s of its clock, once per nonce,
 *   and not from before it started (its nonces of an earlier run are gone). The mac covers the body's
 *   hash, which the header gives, so the request is authenticated before its body is read (a stranger's
 *   made-up proof holds no byte of anyone's budget); the body must then hash to it. Whatever else
 *   listens on the port while hookd is down learns nothing it could use.
 * - The answer: for a hookd-hmac request, with the nonce of its authorization, `x-hookd-proof: <64 hex>` with
 *   HMAC-SHA256(key, "hookd-answer/1\n" nonce "\n" status "\n" hex(SHA-256(body))). The shim refuses
 *   the agent's call when an answer does not carry the proof: a 204 or an `{}` from a stranger is not
 *   hookd's "no opinion".
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto'

/** How far a request's time may be from the front door's. */
export const MAX_SKEW_S = 120
const NONCE = /^[0-9a-f]{32,64}$/

/** The key of both proofs for `token`. */
export function proofKey(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest()
}

function hex(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex')
}

function mac(key: Buffer, text: string): Buffer {
  return createHmac('sha256', key).update(text, 'utf8').digest()
}

export interface HmacAuth {
  ts: number
  nonce: string
  /** hex(SHA-256(body)), as the request says. */
  body: string
  mac: Buffer
}

/**
 * A `hookd-hmac` authorization value's parts; undefined when the value is of another scheme; an
 * error string when it is this scheme but malformed.
 */
export function parseHmacAuth(value: string): HmacAuth | string | undefined {
  const m = /^hookd-hmac\s+(.*)$/i.exec(value.trim())
  if (!m) return undefined
  const fields = new Map<string, string>()
  for (const part of (m[1] as string).split(',')) {
    const eq = part.indexOf('=')
    if (eq > 0) fields.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).trim())
  }
  const ts = Number(fields.get('ts'))
  const nonce = fields.get('nonce') ?? ''
  const digest = fields.get('mac') ?? ''
  const body = fields.get('body') ?? ''
  if (!Number.isSafeInteger(ts) || !NONCE.test(nonce) || !HEX64.test(digest) || !HEX64.test(body)) {
    const how = fields.has('body') ? '' : " (an older hookd-hook sends no body=: run 'hookd up' or 'hookd setup' again to install this version's)"
    return `the authorization is not of the form 'hookd-hmac ts=<seconds>,nonce=<hex>,body=<hex>,mac=<hex>'${how}`
  }
  return { ts, nonce, body, mac: Buffer.from(digest, 'hex') }
}

const HEX64 = /^[0-9a-f]{64}$/

/** hex(SHA-256(body)), as a request's hookd-hmac gives it. */
export function bodyHash(body: Buffer | string): string {
  return hex(body)
}

/** The mac of a request, as the shim makes it (`body`: the body's hash, bodyHash). */
export function requestMac(key: Buffer, ts: number, nonce: string, method: string, path: string, body: string): Buffer {
  return mac(key, `hookd-request/1\n${ts}\n${nonce}\n${method}\n${path}\n${body}`)
}

/** The proof of an answer, as the front door makes it. */
export function answerProof(key: Buffer, nonce: string, status: number, body: Buffer | string): string {
  return mac(key, `hookd-answer/1\n${nonce}\n${status}\n${hex(body)}`).toString('hex')
}

/** A nonce a client may send beside a Bearer token, to get a proof of the answer. */
export function validNonce(value: unknown): value is string {
  return typeof value === 'string' && NONCE.test(value)
}

/**
 * The nonces seen within the time window, so that a request captured while hookd was down cannot be
 * played to it later. Bounded: past `max` entries the oldest are forgotten (a request that old has
 * left the window by then at any rate a single agent sends).
 */
export class NonceCache {
  private readonly seen = new Map<string, number>()

  /**
   * `sinceS`: when this front door started. A request made before it cannot be told from one captured
   * earlier and played now (the nonces of the run before are gone), so it is refused.
   */
  constructor(
    private readonly sinceS = Math.floor(Date.now() / 1000),
    private readonly max = 65_536,
  ) {}

  /** Why the request is not taken (too old, too new, seen before), or undefined when it is, recorded. */
  admit(auth: HmacAuth, nowS = Math.floor(Date.now() / 1000)): string | undefined {
    if (Math.abs(nowS - auth.ts) > MAX_SKEW_S) return `the request's time is ${auth.ts - nowS} s from hookd's; the two clocks must agree within ${MAX_SKEW_S} s`
    if (auth.ts < this.sinceS) {
      return `the request was made ${this.sinceS - auth.ts} s before this hookd started, so it may be one captured earlier and played now; send it again (a new request is taken)`
    }
    for (const [nonce, ts] of this.seen) {
      if (this.seen.size <= this.max && ts >= nowS - MAX_SKEW_S) break
      this.seen.delete(nonce)
    }
    if (this.seen.has(auth.nonce)) return 'this request was sent before (its nonce was used): each request needs a new one'
    this.seen.set(auth.nonce, auth.ts)
    return undefined
  }
}

/** Whether `auth` is the mac of this request's head (its body's hash as the header gives it) under `key`. */
export function macMatches(key: Buffer, auth: HmacAuth, method: string, path: string): boolean {
  const expected = requestMac(key, auth.ts, auth.nonce, method, path, auth.body)
  return expected.length === auth.mac.length && timingSafeEqual(expected, auth.mac)
}

/** Whether `body` is the body the request's mac covers. */
export function bodyMatches(auth: HmacAuth, body: Buffer): boolean {
  const got = Buffer.from(hex(body), 'hex')
  const want = Buffer.from(auth.body, 'hex')
  return got.length === want.length && timingSafeEqual(got, want)
}
