/**
 * Tenant credentials. A tenant's token is 32 random bytes (`hkd_` + base64url); the tenants file holds
 * only its SHA-256 (`sha256:<64 hex>`), never the token. A fast hash is the right one here: the token is
 * random and long, so there is nothing for a slow password hash (scrypt) to protect against a guesser,
 * and the sidecar hashes the presented token on every call. Matching compares the 32-byte digests with
 * `crypto.timingSafeEqual`, against every tenant, with no early exit.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

export const TOKEN_PREFIX = 'hkd_'
export const HASH_PATTERN = /^sha256:[0-9a-f]{64}$/

/** A new random token. Shown once, to the operator, by `hookd tenant token`. */
export function newToken(): string {
  return `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`
}

/** The form stored in the tenants file: `sha256:<hex>`. */
export function hashToken(token: string): string {
  return `sha256:${digest(token).toString('hex')}`
}

/** The raw digest of a stored `sha256:<hex>` hash. */
export function hashBytes(hash: string): Buffer {
  return Buffer.from(hash.slice('sha256:'.length), 'hex')
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest()
}

/**
 * The index of the candidate whose hash matches the token, or -1. Every candidate is compared, in
 * constant time each, whatever matched earlier.
 */
export function matchToken(token: string, candidates: readonly Buffer[]): number {
  const presented = digest(token)
  let found = -1
  for (let i = 0; i < candidates.length; i++) {
    const candidate = candidates[i] as Buffer
    const same = candidate.length === presented.length && timingSafeEqual(candidate, presented)
    if (same && found === -1) found = i
  }
  return found
}

/** The token in an `authorization` metadata value, or why there is none. */
export function bearerToken(values: readonly (string | Buffer)[]): { ok: true; token: string } | { ok: false; why: string } {
  if (values.length === 0) return { ok: false, why: 'no authorization metadata was sent' }
  if (values.length > 1) return { ok: false, why: 'authorization metadata was sent more than once' }
  const value = values[0]
  const text = typeof value === 'string' ? value : (value?.toString('utf8') ?? '')
  const m = /^Bearer\s+(\S+)\s*$/i.exec(text)
  if (!m) return { ok: false, why: "the authorization metadata is not of the form 'Bearer <token>'" }
  return { ok: true, token: m[1] as string }
}
