/**
 * One tenant of a multi-tenant sidecar while it is served: its configuration (replaced in place by a
 * tenants-file edit), its registry, its own sandbox workers and its fair-queue lane in front of them, its
 * limits and quotas, and the streams to end when its credential is revoked. It is the `Tenant` its calls
 * run as.
 *
 * The tenant's capability policy is a ceiling on its sessions' policies: a call must pass both. It is
 * read at every call, so a tenants-file edit that narrows a policy applies to open sessions at once.
 */
import type { CapabilityArgs, CapabilityName } from '../../protocol/capabilities.js'
import type { HookdError } from '../../protocol/status.js'
import type { Floor } from '../floor.js'
import type { Registry } from '../hooks/registry.js'
import type { HostWaits, Limits } from '../limits.js'
import type { WorkerPool } from '../worker/pool/worker-pool.js'
import type { FairLane } from './fair-lane.js'
import type { AuditLog } from '../session/audit.js'
import { refusal } from '../session/policy.js'
import type { Admission, Tenant } from '../tenant.js'
import { Quota } from './quota.js'
import { hashBytes } from './tenant-token.js'
import type { TenantConfig } from './tenants-file.js'

/** What runs a tenant's hooks: its registry, on its fair-queue lane, on its own worker processes. */
export interface Served {
  registry: Registry
  lane: FairLane
  pool: WorkerPool
}

export class TenantState implements Tenant {
  readonly quota: Quota
  private readonly ends = new Set<(err: HookdError) => void>()

  constructor(
    public config: TenantConfig,
    /** The tenant's hooks, its workers and its lane: replaced together when the hooks or workers change. */
    public served: Served,
    /** Mutated in place on a limits edit: the registry and open sessions hold this object. */
    readonly limits: Limits,
    readonly waits: HostWaits,
    readonly audit: AuditLog | undefined,
    /** The operator's floor: its hooks run first in every session of the tenant. */
    readonly floor?: Floor,
  ) {
    this.quota = new Quota(config.id, config.limits)
  }

  get registry(): Registry {
    return this.served.registry
  }

  get runner(): FairLane {
    return this.served.lane
  }

  get id(): string {
    return this.config.id
  }

  get onError(): 'default' | 'refuse' {
    return this.config.onError
  }

  get hash(): Buffer {
    return hashBytes(this.config.tokenHash)
  }

  refusal<N extends CapabilityName>(capability: N, args: CapabilityArgs<N>): string | undefined {
    const why = refusal(this.config.policy, capability, args)
    if (!why) return undefined
    const who = `tenant '${this.id}'`
    return why.replace('this session', who).replace(' is not allowed (', ` is not allowed for ${who} (`)
  }

  env(offered: Readonly<Record<string, string>>): Record<string, string> {
    const allowed = this.config.policy.env
    return Object.fromEntries(Object.entries(offered).filter(([name]) => allowed.includes(name)))
  }

  admit(): Admission {
    return this.quota.admit()
  }

  track(end: (err: HookdError) => void): () => void {
    this.ends.add(end)
    return () => {
      this.ends.delete(end)
    }
  }

  /** Ends every stream of this tenant. */
  end(err: HookdError): number {
    const ends = [...this.ends]
    this.ends.clear()
    for (const end of ends) end(err)
    return ends.length
  }
}
