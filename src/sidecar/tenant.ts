/**
 * Who a call runs as. A sidecar without tenants has one implicit tenant (`SingleTenant`) and asks for no
 * credential; a sidecar with a tenants file picks the tenant by bearer token (`Tenants`, tenants.ts).
 */
import type * as grpc from '@grpc/grpc-js'
import type { HookdError } from '../protocol/status.js'
import type { SessionDeps } from './session/session.js'

/** What a call runs as. */
export interface Tenant {
  /** Undefined for the implicit tenant of a sidecar without tenants. */
  readonly id: string | undefined
  readonly deps: SessionDeps
  /**
   * Registers a stream to end when the tenant's credential is revoked (or its hooks folder moves).
   * Returns the function that unregisters it.
   */
  track(end: (err: HookdError) => void): () => void
}

export interface Tenancy {
  /** The tenant the call's metadata names. Throws UNAUTHENTICATED. */
  identify(metadata: grpc.Metadata): Tenant
  /** Stops watching (hooks and tenants file) and closes the audit log. */
  close(): Promise<void>
}

/** A sidecar without tenants: every call runs as the one implicit tenant, with no credential. */
export class SingleTenant implements Tenancy, Tenant {
  readonly id = undefined
  constructor(readonly deps: SessionDeps) {}
  identify(): Tenant {
    return this
  }
  track(): () => void {
    return () => {}
  }
  async close(): Promise<void> {
    await this.deps.registry.close()
    await this.deps.audit?.close()
  }
}
