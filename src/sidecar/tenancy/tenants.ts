/**
 * A multi-tenant sidecar (docs/tenants.md): `Tenants` reads the tenants file, picks a call's tenant by
 * the bearer token in its `authorization` metadata, and gives each tenant its own registry (hooks folder,
 * watcher, and the remote-hook addresses it allows), its own sandbox worker processes (so that a hook
 * escaping its isolate finds only its own tenant's data), capability-policy ceiling, limits, quotas and
 * fair-queue lane (tenant-state.ts).
 *
 * The tenants file is watched. An edit is validated and every new hooks folder is loaded before
 * anything changes; a broken edit changes nothing and says why. A tenant removed, or whose tokenHash
 * changed, has its open streams ended with UNAUTHENTICATED; one whose hooks folder moved, or whose
 * `remoteHooks` or `workers` changed, gets a new registry and workers and its open streams are ended with
 * UNAVAILABLE (its hosts reconnect and open on the new one). Policy and limit edits apply to open sessions at their next call.
 */
import { readdir } from 'node:fs/promises'
import type { Diagnostic } from '../../protocol/diagnostic.js'
import { HookdError } from '../../protocol/status.js'
import { FairQueue } from './fair-queue.js'
import type { Floor } from '../floor.js'
import { Registry } from '../hooks/registry.js'
import { Admission } from '../pinning/admission.js'
import { readTrustedKeys } from '../pinning/signing.js'
import { tenantRemoteAllow } from '../runners/remote/remote-allow.js'
import type { Tenancy, Tenant } from '../tenant.js'
import { type Served, TenantState } from './tenant-state.js'
import { bearerToken, matchToken } from './tenant-token.js'
import { type TenantConfig, parseTenants, readTenants } from './tenants-file.js'
import { TenantsFileWatcher, type TenantsWatchOptions } from './tenants-file-watcher.js'
import type { HostWaits, Limits } from '../limits.js'
import type { AuditLog } from '../session/audit.js'
import type { WatchOptions } from '../hooks/hook-watcher.js'
import { availableParallelism } from 'node:os'
import { type PoolOptions, WorkerPool } from '../worker/pool/worker-pool.js'
import { FairLane } from './fair-lane.js'
import { inert } from '../../protocol/text.js'
import type { Observer } from '../observability/observer.js'


export interface TenantsOptions {
  /** The tenants file. */
  file: string
  /** Apply edits of the tenants file while running. Default true. */
  watch?: boolean | TenantsWatchOptions
  /**
   * Hook invocations that run at once across all tenants; past that they wait in per-tenant lanes,
   * served in turn. Default: one per CPU (hooks are CPU-bound while they hold a slot; see
   * fair-queue.ts and bench/tenants.ts).
   */
  slots?: number
  /** News for the operator: reloads, broken edits, revocations, hook load failures. Default: stderr. */
  report?(line: string): void
}

/** What every tenant shares. */
export interface TenantsDeps {
  /** How each tenant's worker pool is made (its size is the tenant's `workers`). */
  pool: Omit<PoolOptions, 'size'>
  /** The sidecar's limits: a tenant's own limits replace them field by field. */
  limits: Limits
  waits: HostWaits
  audit?: AuditLog
  /** Hot reload of each tenant's hooks folder. */
  watch: false | WatchOptions
  /** `hookd serve --require-permissions`: every tenant's hooks must declare their permissions, whatever its own setting. */
  requirePermissions?: boolean
  /** Told of each tenant's registry and workers once loaded; it then reports their reloads (instead of `report`). */
  observer?: Observer
  /**
   * Marks a tenant of the first tenants file as loading (readiness); returns what marks it loaded. Not
   * called for tenants added later: they are not served before their hooks have loaded anyway.
   */
  firstLoad?: (tenant: string) => () => void
  /** The operator's floor (src/sidecar/floor.ts): its hooks run first in every tenant's sessions. */
  floor?: Floor
}

const defaultReport = (line: string): void => {
  process.stderr.write(`hookd: ${inert(line)}\n`)
}

export class Tenants implements Tenancy {
  private tenants: TenantState[] = []
  private watcher: TenantsFileWatcher | undefined
  private readonly report: (line: string) => void
  private readonly queue: FairQueue
  private closed = false
  /** The first load's readiness tickets, by tenant (empty once it is over). */
  private readonly firstLoads = new Map<string, () => void>()

  private constructor(
    private readonly options: TenantsOptions,
    private readonly base: TenantsDeps,
  ) {
    this.report = options.report ?? defaultReport
    this.queue = new FairQueue(options.slots ?? availableParallelism())
  }

  /** Reads the tenants file and loads every tenant's hooks. A bad file fails the start, saying why. */
  static async start(options: TenantsOptions, base: TenantsDeps): Promise<Tenants> {
    const tenants = new Tenants(options, base)
    const { text, tenants: configs } = await readTenants(options.file)
    // Every tenant is pending from the start (they load one after another), each ready once its own load is done.
    for (const config of configs) if (base.firstLoad) tenants.firstLoads.set(config.id, base.firstLoad(config.id))
    try {
      await tenants.apply(configs)
    } finally {
      for (const done of tenants.firstLoads.values()) done()
      tenants.firstLoads.clear()
    }
    if (options.watch !== false) {
      try {
        tenants.watcher = await TenantsFileWatcher.start(
          options.file,
          text,
          (next) => tenants.reload(next),
          (message) => tenants.report(message),
          options.watch === true || options.watch === undefined ? {} : options.watch,
        )
      } catch (err) {
        await tenants.close()
        throw err
      }
    }
    return tenants
  }

  /** The tenants served now, in file order. */
  ids(): string[] {
    return this.tenants.map((t) => t.id)
  }

  /** A tenant's registry, for tests and status output. */
  registryOf(id: string): Registry | undefined {
    return this.tenants.find((t) => t.id === id)?.registry
  }

  /** A tenant's worker pool, for tests and status output. */
  poolOf(id: string): WorkerPool | undefined {
    return this.tenants.find((t) => t.id === id)?.served.pool
  }

  identify(authorization: ReadonlyArray<string | Buffer>): Tenant {
    const bearer = bearerToken(authorization)
    if (!bearer.ok) {
      throw new HookdError('unauthenticated', `${bearer.why}; this sidecar serves several tenants: send your tenant's token as 'authorization: Bearer <token>' metadata`)
    }
    const tenants = this.tenants
    const index = matchToken(
      bearer.token,
      tenants.map((t) => t.hash),
    )
    const tenant = tenants[index]
    if (!tenant) throw new HookdError('unauthenticated', 'the bearer token matches no tenant of this sidecar; check the token, or ask the operator whether it was revoked')
    return tenant
  }

  identifyByDigest(matches: (digest: Buffer) => boolean): { tenant: Tenant; digest: Buffer } | undefined {
    let found: { tenant: Tenant; digest: Buffer } | undefined
    for (const tenant of this.tenants) {
      if (matches(tenant.hash) && !found) found = { tenant, digest: tenant.hash }
    }
    return found
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.watcher?.close()
    await Promise.all(this.tenants.map((t) => retire(t.served)))
    await this.base.audit?.close()
  }

  /** A settled edit of the tenants file. A broken one changes nothing and is reported. */
  private async reload(text: string): Promise<void> {
    if (this.closed) return
    try {
      const summary = await this.apply(parseTenants(text, this.options.file))
      this.report(`tenants file ${this.options.file} reloaded: ${summary.length ? summary.join('; ') : 'nothing changed'}`)
    } catch (err) {
      const served = this.ids()
      const message = err instanceof Error ? err.message : String(err)
      this.report(`${message}; still serving the last good tenants (${served.length ? served.join(', ') : 'none'})`)
    }
  }

  /**
   * Makes `configs` the tenants served. Every new hooks folder is loaded first; if one cannot be, nothing
   * changes and the error says which tenant. Then the switch happens at once. Returns what changed.
   */
  private async apply(configs: TenantConfig[]): Promise<string[]> {
    const current = new Map(this.tenants.map((t) => [t.id, t]))
    const prepared = new Map<string, Served>()
    try {
      for (const [i, config] of configs.entries()) {
        const existing = current.get(config.id)
        if (existing && sameServed(existing.config, config)) continue
        prepared.set(config.id, await this.serve(i, config, existing?.limits ?? this.limitsFor(config)))
      }
    } catch (err) {
      await Promise.all([...prepared.values()].map(retire))
      throw err
    }
    if (this.closed) {
      await Promise.all([...prepared.values()].map(retire))
      return []
    }

    const summary: string[] = []
    const retired: Served[] = []
    const next: TenantState[] = []
    for (const config of configs) {
      const existing = current.get(config.id)
      current.delete(config.id)
      const served = prepared.get(config.id)
      if (!existing) {
        next.push(new TenantState(config, served as Served, this.limitsFor(config), this.base.waits, this.base.audit, this.base.floor))
        summary.push(`added '${config.id}'`)
        continue
      }
      const changes: string[] = []
      const previous = existing.config
      existing.config = config
      Object.assign(existing.limits, this.limitsFor(config))
      existing.quota.configure(config.limits)
      if (JSON.stringify(previous.policy) !== JSON.stringify(config.policy)) changes.push('policy')
      if (JSON.stringify(previous.limits) !== JSON.stringify(config.limits)) changes.push('limits')
      if (previous.onError !== config.onError) changes.push('onError')
      if (previous.tokenHash !== config.tokenHash) {
        const ended = existing.end(
          new HookdError('unauthenticated', `tenant '${config.id}''s token was revoked (its tokenHash changed in the tenants file); connect again with the new token`),
        )
        changes.push(`token (${ended} open stream${ended === 1 ? '' : 's'} ended)`)
      }
      if (served) {
        retired.push(existing.served)
        existing.served = served
        const what = [
          previous.hooks !== config.hooks ? ['hooks folder', 'hooks folder'] : undefined,
          !sameList(previous.remoteHooks, config.remoteHooks) ? ['remote hooks', 'allowed remote hook addresses ("remoteHooks")'] : undefined,
          previous.workers !== config.workers ? ['workers', 'worker processes ("workers")'] : undefined,
          previous.requirePermissions !== config.requirePermissions ? ['requirePermissions', 'required permissions ("requirePermissions")'] : undefined,
        ].filter((w) => w !== undefined)
        const long = what.map(([, words]) => words)
        const verb = long.length === 1 && long[0] === 'hooks folder' ? 'was' : 'were'
        const ended = existing.end(new HookdError('unavailable', `tenant '${config.id}''s ${long.join(' and ')} ${verb} changed by the operator; open the session again`))
        changes.push(`${what.map(([short]) => short).join(', ')} (${ended} open stream${ended === 1 ? '' : 's'} ended)`)
      }
      next.push(existing)
      if (changes.length) summary.push(`changed '${config.id}': ${changes.join(', ')}`)
    }
    for (const gone of current.values()) {
      const ended = gone.end(new HookdError('unauthenticated', `tenant '${gone.id}' was removed from this sidecar's tenants; its token is no longer accepted`))
      retired.push(gone.served)
      this.queue.forget(gone.id)
      summary.push(`removed '${gone.id}' (${ended} open stream${ended === 1 ? '' : 's'} ended)`)
    }
    this.tenants = next
    await Promise.all(retired.map(retire))
    return summary
  }

  private limitsFor(config: TenantConfig): Limits {
    return { ...this.base.limits, ...config.limits.invocation }
  }

  /**
   * Starts the tenant's own workers, its lane in front of them, and loads its hooks folder on them.
   * Anything that fails is undone, and the error names the tenant.
   */
  private async serve(index: number, config: TenantConfig, limits: Limits): Promise<Served> {
    const where = `tenants file ${this.options.file}: tenants[${index}].hooks`
    try {
      await readdir(config.hooks)
    } catch (err) {
      throw new HookdError('not-found', `${where}: cannot read the hooks folder ${config.hooks} of tenant '${config.id}' (${(err as Error).message}); create it or fix the path`)
    }
    const pool = new WorkerPool({ ...this.base.pool, size: config.workers })
    let registry: Registry | undefined
    try {
      await pool.start()
      pool.onBroken((reason) => this.report(`tenant '${config.id}': ${reason}; its hooks cannot run until the sidecar restarts`))
      const lane = new FairLane(this.queue, config.id, pool)
      // The tenant's own pinning: its lock (always read: permissions that widen are held), "locked", "requireSigned".
      const trustedKeys = config.trustedKeys !== undefined ? await readTrustedKeys(config.trustedKeys) : undefined
      const admission = await Admission.open(config.hooks, { locked: config.locked, requireSigned: config.requireSigned, ...(trustedKeys ? { trustedKeys } : {}) })
      registry = new Registry(config.hooks, { loader: pool, runner: lane, limits, allowRemote: tenantRemoteAllow(config.id, config.remoteHooks), admission, requirePermissions: this.base.requirePermissions === true || config.requirePermissions, report: (line) => this.report(`tenant '${config.id}': ${line}`) })
      const failed: Diagnostic[] = await registry.loadAll()
      for (const d of failed) this.report(`tenant '${config.id}': hook '${d.hook}' failed to load (${d.file}${d.line ? `:${d.line}` : ''}): ${d.message}`)
      if (this.base.watch !== false) await registry.watch(this.base.watch)
      if (this.base.observer) this.base.observer.served({ tenant: config.id, registry, pool })
      else registry.subscribe((event) => this.report(`tenant '${config.id}': ${event.diagnostic.message}`))
      this.firstLoads.get(config.id)?.()
      return { registry, lane, pool }
    } catch (err) {
      await registry?.close()
      await pool.close()
      if (err instanceof HookdError && !err.message.includes(`'${config.id}'`)) throw new HookdError(err.code, `tenant '${config.id}': ${err.message}`)
      throw err
    }
  }
}

/** Stops a tenant's hooks, then its workers. */
async function retire(served: Served): Promise<void> {
  await served.registry.close()
  await served.pool.close()
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((p, i) => p === b[i])
}

/**
 * True when a tenant's registry and workers can stay: same hooks folder, same allowed remote addresses
 * and the same requirePermissions (a registry checks them as it loads each folder, so a change needs a
 * fresh load), same workers.
 */
function sameServed(a: TenantConfig, b: TenantConfig): boolean {
  return a.hooks === b.hooks && sameList(a.remoteHooks, b.remoteHooks) && a.workers === b.workers && a.requirePermissions === b.requirePermissions
}
