/**
 * One tenant of a multi-tenant sidecar while it is served: its configuration (replaced in place by a
 * tenants-file edit), its registry, its limits, quotas and fair-queue lane, and the streams to end when
 * its credential is revoked. It is both the `Tenant` a call runs as and the `TenantScope` its sessions see.
 */
import type { HookdError } from '../../protocol/status.js'
import type { AuditLog } from '../session/audit.js'
import type { FairQueue } from './fair-queue.js'
import type { SessionPolicy } from '../session/policy.js'
import { type Admission, Quota } from './quota.js'
import type { Registry } from '../hooks/registry.js'
import type { SessionDeps } from '../session/session.js'
import type { Tenant } from '../tenant.js'
import type { TenantScope } from './tenant-scope.js'
import { hashBytes } from './tenant-token.js'
import type { TenantConfig } from './tenants-file.js'
import type { WatchOptions } from '../hooks/hook-watcher.js'
import type { Limits } from '../worker/protocol.js'
import type { ChainRequest, ChainRun, InvocationReport, InvocationRequest, WorkerPool } from '../worker/pool/worker-pool.js'

/** What every tenant shares. */
export interface TenantBase {
  pool: WorkerPool
  /** The sidecar's limits: a tenant's own limits replace them field by field. */
  limits: Limits
  waits: SessionDeps['waits']
  audit?: AuditLog
  /** Hot reload of each tenant's hooks folder. */
  watch: false | WatchOptions
}

export class TenantState implements Tenant, TenantScope {
  readonly deps: SessionDeps
  readonly quota: Quota
  private readonly ends = new Set<(err: HookdError) => void>()

  constructor(
    public config: TenantConfig,
    public registry: Registry,
    /** Mutated in place on a limits edit: the registry and open sessions hold this object. */
    readonly limits: Limits,
    private readonly base: TenantBase,
    private readonly queue: FairQueue,
  ) {
    this.quota = new Quota(config.id, config.limits)
    const self = this
    this.deps = {
      get registry(): Registry {
        return self.registry
      },
      pool: base.pool,
      limits,
      waits: base.waits,
      tenant: this,
      ...(base.audit ? { audit: base.audit } : {}),
    }
  }

  get id(): string {
    return this.config.id
  }

  get hash(): Buffer {
    return hashBytes(this.config.tokenHash)
  }

  policy(): SessionPolicy {
    return this.config.policy
  }

  admit(): Admission {
    return this.quota.admit()
  }

  invoke(request: InvocationRequest): Promise<InvocationReport> {
    return this.queue.run<InvocationReport>(
      this.id,
      (slot) =>
        this.base.pool.invoke({
          ...request,
          onCapability: async (capability, args) => {
            slot.pause()
            try {
              return await request.onCapability(capability, args)
            } finally {
              slot.resume()
            }
          },
        }),
      request.signal,
      () => ({ outcome: { ok: false, kind: 'cancelled', message: 'the host cancelled the point call before the hook started' }, wallUs: 0, cpuUs: 0 }),
    )
  }

  /**
   * One slot of the fair queue for the whole chain: a chain of n hooks runs them back to back in one
   * worker, as n sequential invocations of one lane would (a lane's calls never run in parallel within
   * a point call), so fairness between lanes is kept at the granularity of a point call. The slot is
   * freed while a step waits on its host, as for a single invocation.
   */
  invokeChain(request: ChainRequest): ChainRun {
    let started: (run: ChainRun | undefined) => void = () => {}
    const ready = new Promise<ChainRun | undefined>((resolve) => {
      started = resolve
    })
    const done = this.queue.run<void>(
      this.id,
      (slot) => {
        const run = this.base.pool.invokeChain({
          ...request,
          steps: request.steps.map((step) => ({
            ...step,
            onCapability: async (capability, args) => {
              slot.pause()
              try {
                return await step.onCapability(capability, args)
              } finally {
                slot.resume()
              }
            },
          })),
        })
        started(run)
        return run.done
      },
      request.signal,
      () => started(undefined),
    )
    return {
      report: async (step) => {
        const run = await ready
        if (run) return run.report(step)
        return { outcome: { ok: false, kind: 'cancelled', message: 'the host cancelled the point call before the hook started' }, wallUs: 0, cpuUs: 0 }
      },
      done,
    }
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
