/**
 * Who a call runs as, and what its sessions may do. A sidecar without a tenants file has one implicit
 * tenant (`SingleTenant`, below) and asks for no credential; a sidecar with one picks the tenant by the
 * bearer token its calls carry (tenancy/tenants.ts). A session receives its `Tenant` and never asks
 * which kind it holds.
 */
import type { CapabilityArgs, CapabilityName } from '../protocol/capabilities.js'
import type { HookdError } from '../protocol/status.js'
import type { Floor } from './floor.js'
import type { Registry } from './hooks/registry.js'
import type { HostWaits, Limits } from './limits.js'
import type { HookRunner } from './runners/hook-runner.js'
import type { AuditLog } from './session/audit.js'

/** A point call counted against a tenant's quotas, or the quota it is over. */
export type Admission = { ok: true; release(): void } | { ok: false; message: string }

export interface Tenant {
  /** The tenant's id; undefined for the one implicit tenant of a sidecar without tenants. */
  readonly id: string | undefined
  /** How refusals name it, when not `tenant 'ID'` (a project of the user's hookd: `project PATH`). */
  readonly who?: string
  /** Its hooks. Read it at each use: a tenants-file edit may give the tenant a new registry. */
  readonly registry: Registry
  /**
   * The operator's floor (`hookd serve --floor`, src/sidecar/floor.ts): hooks that run first in every session,
   * ahead of the registry's. Absent: none.
   */
  readonly floor?: Floor | undefined
  /**
   * The layer its registry's hooks are of, in decision records (chain/layer.ts). Absent: `tenant` for
   * a tenant with an id, `session` for the one implicit tenant.
   */
  readonly layer?: 'tenant' | 'project' | undefined
  /** Per-invocation limits of its hooks (edited in place when the tenants file changes). */
  readonly limits: Limits
  readonly waits: HostWaits
  /** What runs its sandboxed hooks (its registry gives this runner to each of them). */
  readonly runner: HookRunner
  /** Where every point result is recorded, when `hookd serve --audit` asked for it. */
  readonly audit: AuditLog | undefined
  /**
   * The operator's floor for what a hook's failure does at a gate (chain.ts OnError): `refuse` makes
   * every session of the tenant fail closed, whatever the session or the hook asks; `default` leaves
   * it to them.
   */
  readonly onError: 'default' | 'refuse'
  /**
   * Why the tenant's own policy refuses a capability call that the session's policy allowed, in the
   * session policy's words; undefined when it does not. The tenant's policy is a ceiling on every
   * session's, read at each call.
   */
  refusal<N extends CapabilityName>(capability: N, args: CapabilityArgs<N>): string | undefined
  /** The environment values the tenant's hooks may see, of those a session offers. */
  env(offered: Readonly<Record<string, string>>): Record<string, string>
  /** Counts a point call against the tenant's quotas, or says which one it is over. */
  admit(): Admission
  /**
   * Registers a stream to end when the tenant's credential is revoked (or its hooks folder moves).
   * Returns the function that unregisters it.
   */
  track(end: (err: HookdError) => void): () => void
}

/** Who may call the sidecar. */
export interface Tenancy {
  /**
   * The tenant a call's `authorization` values (gRPC metadata or HTTP headers) name. Throws a HookdError
   * (UNAUTHENTICATED) saying what was wrong.
   */
  identify(authorization: ReadonlyArray<string | Buffer>): Tenant
  /**
   * The tenant whose token's SHA-256 makes `matches` true (the front door's hookd-hmac requests, which
   * prove a token without sending it: request-proof.ts), and that digest; undefined when none does or the
   * tenancy holds no tokens. Every tenant is tried, whatever matched first.
   */
  identifyByDigest?(matches: (digest: Buffer) => boolean): { tenant: Tenant; digest: Buffer } | undefined
  /** Stops watching (hooks and tenants file), closes the tenants' runners and the audit log. */
  close(): Promise<void>
}

const ADMITTED: Admission = { ok: true, release: () => {} }

/** A sidecar without tenants: every call runs as the one implicit tenant, with no credential. */
export class SingleTenant implements Tenancy, Tenant {
  readonly id = undefined

  constructor(
    readonly registry: Registry,
    readonly runner: HookRunner & { close(): Promise<void> },
    readonly limits: Limits,
    readonly waits: HostWaits,
    readonly audit: AuditLog | undefined,
    readonly onError: 'default' | 'refuse' = 'default',
    readonly floor?: Floor,
  ) {}

  identify(): Tenant {
    return this
  }

  refusal(): undefined {
    return undefined
  }

  env(offered: Readonly<Record<string, string>>): Record<string, string> {
    return { ...offered }
  }

  admit(): Admission {
    return ADMITTED
  }

  track(): () => void {
    return () => {}
  }

  async close(): Promise<void> {
    await this.registry.close()
    await this.runner.close()
    await this.audit?.close()
  }
}
