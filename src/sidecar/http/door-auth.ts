/**
 * Who a front-door request comes from, and the proof its answer carries back. Two schemes:
 *
 * - `authorization: Bearer <token>`: the sidecar's HTTP token (without tenants) or a tenant's token.
 *   Claude Code's own `http` hooks send this one.
 * - `authorization: hookd-hmac ts=...,nonce=...,mac=...` (request-proof.ts): hookd's shim proves it
 *   holds the token without sending it, and the answer carries `x-hookd-proof`, so the shim can tell
 *   hookd from whatever else listens on the port. The mac covers the body, so it is checked once the
 *   body is read (`verify`).
 */
import { timingSafeEqual } from 'node:crypto'
import { HookdError } from '../../protocol/status.js'
import type { Tenancy, Tenant } from '../tenant.js'
import { bearerToken } from '../tenancy/tenant-token.js'
import { sameToken } from './http-token.js'
import { type HmacAuth, NonceCache, answerProof, macMatches, parseHmacAuth, proofKey } from './request-proof.js'

/** A request's credentials as its headers give them; a hookd-hmac one's tenant is known once verified. */
export interface Presented {
  tenant?: Tenant
  /** A hookd-hmac request: what `verify` checks (with tenants, against every tenant's digest). */
  hmac?: { key: Buffer | undefined; auth: HmacAuth }
}

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

  /** The request's tenant, from its authorization header; a HookdError (401) saying what to send otherwise. */
  identify(header: string | undefined): Presented {
    const hmac = header === undefined ? undefined : parseHmacAuth(header)
    if (typeof hmac === 'string') throw new HookdError('unauthenticated', hmac)
    // With tenants, the key is some tenant's token digest: verify() tries each.
    if (hmac) return { hmac: { key: this.key, auth: hmac } }
    const values = header === undefined ? [] : [header]
    if (this.token === undefined) return { tenant: this.tenancy.identify(values) }
    const bearer = bearerToken(values)
    if (!bearer.ok) throw new HookdError('unauthenticated', `${bearer.why.replace('metadata', 'header')}; ${HOW_LOCAL}`)
    if (!sameToken(bearer.token, this.token)) throw new HookdError('unauthenticated', `the bearer token is not this sidecar's HTTP token; ${HOW_LOCAL}`)
    return {}
  }

  /**
   * For a hookd-hmac request, once its body is read: the mac must match (and, with tenants, names the
   * tenant), its time be near hookd's and its nonce new. Returns the credentials to serve it with; a
   * HookdError (401) otherwise.
   */
  verify(presented: Presented, method: string, path: string, body: Buffer): Credentials {
    const hmac = presented.hmac
    if (!hmac) return presented.tenant ? { tenant: presented.tenant } : {}
    let found: Credentials
    if (hmac.key) {
      if (!macMatches(hmac.key, hmac.auth, method, path, body)) {
        throw new HookdError('unauthenticated', "the request's hookd-hmac does not match this sidecar's HTTP token; check the --token-file the agent's entry names")
      }
      found = { hmac: { key: hmac.key, auth: hmac.auth } }
    } else {
      const match = this.tenancy.identifyByDigest?.((digest) => macMatches(digest, hmac.auth, method, path, body))
      if (!match) throw new HookdError('unauthenticated', "the request's hookd-hmac matches no tenant of this sidecar; check the token, or ask the operator whether it was revoked")
      found = { tenant: match.tenant, hmac: { key: match.digest, auth: hmac.auth } }
    }
    const why = this.nonces.admit(hmac.auth)
    if (why) throw new HookdError('unauthenticated', why)
    return found
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
