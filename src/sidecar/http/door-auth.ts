/**
 * Who a front-door request comes from, and the proof its answer carries back. Two schemes:
 *
 * - `authorization: Bearer <token>`: the sidecar's HTTP token (without tenants) or a tenant's token.
 *   Claude Code's own `http` hooks send this one.
 * - `authorization: hookd-hmac ts=...,nonce=...,mac=...` (request-proof.ts): hookd's shim proves it
 *   holds the token without sending it, and the answer carries `x-hookd-proof`, so the shim can tell
 *   hookd from whatever else listens on the port. The mac covers the body's hash, which the header
 *   carries: the request is authenticated before its body is read, and the body checked after.
 */
import { timingSafeEqual } from 'node:crypto'
import { HookdError } from '../../protocol/status.js'
import type { Tenancy, Tenant } from '../tenant.js'
import { bearerToken } from '../tenancy/tenant-token.js'
import { sameToken } from './http-token.js'
import { type HmacAuth, NonceCache, answerProof, bodyMatches, macMatches, parseHmacAuth, proofKey } from './request-proof.js'

/**
 * A request's verified credentials. `tenant` is undefined for the sidecar's own token (a sidecar
 * without tenants), whose requests the front door gives its one tenant, or the project they name.
 */
export interface Credentials {
  tenant?: Tenant
  /** A hookd-hmac request: the key its answer is proved with, and its nonce. */
  hmac?: { key: Buffer; auth: HmacAuth }
}

const HOW_LOCAL = "send 'authorization: Bearer <token>' with the token in the sidecar's HTTP token file (.hookd/http-token by default; 'hookd setup' points the agent at it)"

export class DoorAuth {
  private readonly nonces = new NonceCache()
  private readonly key: Buffer | undefined

  constructor(
    private readonly tenancy: Tenancy,
    /** Without tenants: the token every request must carry (or prove). */
    private readonly token: string | undefined,
  ) {
    this.key = token === undefined ? undefined : proofKey(token)
  }

  /**
   * The request's credentials, from its authorization header, checked before its body is read: a
   * Bearer token must be the sidecar's (or, with tenants, a tenant's); a hookd-hmac proof must match
   * (with tenants, some tenant's digest, which names the tenant), be near hookd's time, new and not from
   * before this front door started. A HookdError (401) saying what to send otherwise. `checkBody` then
   * checks the body a hookd-hmac proof covers. `matched` learns a hookd-hmac request's credentials as
   * soon as its mac matches, so that a refusal for its time or nonce is proved too (a proved refusal
   * only ever refuses).
   */
  authenticate(header: string | undefined, method: string, path: string, matched: (credentials: Credentials) => void = () => {}): Credentials {
    const hmac = header === undefined ? undefined : parseHmacAuth(header)
    if (typeof hmac === 'string') throw new HookdError('unauthenticated', hmac)
    if (hmac) {
      let found: Credentials
      if (this.key) {
        if (!macMatches(this.key, hmac, method, path)) {
          throw new HookdError('unauthenticated', "the request's hookd-hmac does not match this sidecar's HTTP token; check the --token-file the agent's entry names")
        }
        found = { hmac: { key: this.key, auth: hmac } }
      } else {
        const match = this.tenancy.identifyByDigest?.((digest) => macMatches(digest, hmac, method, path))
        if (!match) throw new HookdError('unauthenticated', "the request's hookd-hmac matches no tenant of this sidecar; check the token, or ask the operator whether it was revoked")
        found = { tenant: match.tenant, hmac: { key: match.digest, auth: hmac } }
      }
      matched(found)
      const why = this.nonces.admit(hmac)
      if (why) throw new HookdError('unauthenticated', why)
      return found
    }
    const values = header === undefined ? [] : [header]
    if (this.token === undefined) return { tenant: this.tenancy.identify(values) }
    const bearer = bearerToken(values)
    if (!bearer.ok) throw new HookdError('unauthenticated', `${bearer.why.replace('metadata', 'header')}; ${HOW_LOCAL}`)
    if (!sameToken(bearer.token, this.token)) throw new HookdError('unauthenticated', `the bearer token is not this sidecar's HTTP token; ${HOW_LOCAL}`)
    return {}
  }

  /** For a hookd-hmac request, once its body is read: the body must be the one its mac covers. */
  checkBody(credentials: Credentials, body: Buffer): void {
    if (credentials.hmac && !bodyMatches(credentials.hmac.auth, body)) {
      throw new HookdError('unauthenticated', "the request's body is not the one its hookd-hmac covers (its SHA-256 differs from the header's body=)")
    }
  }

  /** The headers that prove an answer to a hookd-hmac request (none for other requests). */
  prove(credentials: Credentials | undefined, status: number, body: Buffer | string): Record<string, string> {
    const hmac = credentials?.hmac
    if (!hmac) return {}
    return { 'x-hookd-proof': answerProof(hmac.key, hmac.auth.nonce, status, body) }
  }
}

/** Compares two proofs in constant time (for clients and tests). */
export function sameProof(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex')
  const y = Buffer.from(b, 'hex')
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y)
}
