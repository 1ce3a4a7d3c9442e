/**
 * The user's own sidecar (`hookd up`, `hookd serve --projects`): one hookd for every project of the
 * user, each guarded by the hooks folder its repository commits. The agents' entries (`hookd init`)
 * name the project and its hooks folder; the shim sends both with each event. Each project is served
 * like a tenant: a registry of its own hooks folder (watched), and sandbox workers of its own, so
 * that one repository's hooks never share a process with another's. Projects are opened on their
 * first event, retired after `idleMs` without one, and at most `maxProjects` are served at once (the
 * least recently used makes room).
 *
 * What a project may be is checked where requests arrive (http/project-ref.ts).
 */
import type { CapabilityArgs, CapabilityName } from '../../protocol/capabilities.js'
import { HookdError } from '../../protocol/status.js'
import { inert } from '../../protocol/text.js'
import type { WatchOptions } from '../hooks/hook-watcher.js'
import { Registry } from '../hooks/registry.js'
import type { HostWaits, Limits } from '../limits.js'
import type { Observer } from '../observability/observer.js'
import type { AuditLog } from '../session/audit.js'
import type { Admission, Tenancy, Tenant } from '../tenant.js'
import { type PoolOptions, WorkerPool } from '../worker/pool/worker-pool.js'

export interface ProjectsOptions {
  pool: Omit<PoolOptions, 'size'>
  /** Sandbox workers per project. Default 1. */
  workers?: number
  limits: Limits
  waits: HostWaits
  watch: false | WatchOptions
  audit?: AuditLog
  observer?: Observer
  /** Projects served at once. Default 16. */
  maxProjects?: number
  /** A project with no event for this long is retired (its workers stop). Default 30 minutes. */
  idleMs?: number
  /** News for the operator. Default: stderr. */
  report?(line: string): void
}

/** A project as an event names it, checked (http/project-ref.ts): its real folder and its hooks folder. */
export interface ProjectRef {
  root: string
  hooks: string
}

/** One project while it is served: the `Tenant` its calls run as. */
class ProjectTenant implements Tenant {
  readonly onError = 'default' as const
  readonly audit: AuditLog | undefined
  readonly who: string
  private readonly ends = new Set<(err: HookdError) => void>()

  constructor(
    readonly id: string,
    readonly registry: Registry,
    readonly pool: WorkerPool,
    readonly limits: Limits,
    readonly waits: HostWaits,
    audit: AuditLog | undefined,
  ) {
    this.audit = audit
    this.who = `project ${id}`
  }

  get runner(): WorkerPool {
    return this.pool
  }

  refusal<N extends CapabilityName>(_capability: N, _args: CapabilityArgs<N>): undefined {
    return undefined
  }

  env(offered: Readonly<Record<string, string>>): Record<string, string> {
    return { ...offered }
  }

  admit(): Admission {
    return { ok: true, release: () => {} }
  }

  track(end: (err: HookdError) => void): () => void {
    this.ends.add(end)
    return () => this.ends.delete(end)
  }

  async retire(why: string): Promise<void> {
    for (const end of [...this.ends]) end(new HookdError('unavailable', why))
    await this.registry.close()
    await this.pool.close()
  }
}

export class Projects implements Tenancy {
  private readonly served = new Map<string, Promise<ProjectTenant>>()
  /** When each served project's last event came (known at once, even while it opens). */
  private readonly used = new Map<string, number>()
  private readonly retiring = new Set<(id: string) => void>()
  private readonly report: (line: string) => void
  private readonly reaper: NodeJS.Timeout
  private closed = false

  constructor(private readonly options: ProjectsOptions) {
    this.report = options.report ?? ((line) => void process.stderr.write(`hookd: ${inert(line)}\n`))
    const idle = options.idleMs ?? 30 * 60_000
    this.reaper = setInterval(() => void this.reap(idle), Math.max(10, Math.min(idle / 2, 60_000)))
    this.reaper.unref()
  }

  /** Calls are made for a project, never for the sidecar as a whole. */
  identify(): Tenant {
    throw new HookdError('failed-precondition', "this hookd serves the user's projects: each request names its project (hookd-hook does, from the entry 'hookd init' writes)")
  }

  /** Says when a project is retired, so that what holds its sessions lets them go. Returns the unsubscribe. */
  onRetire(listener: (id: string) => void): () => void {
    this.retiring.add(listener)
    return () => this.retiring.delete(listener)
  }

  /** The project's tenant, opened (its hooks loaded on workers of its own) on first use. */
  async project(ref: ProjectRef): Promise<Tenant> {
    if (this.closed) throw new HookdError('unavailable', 'hookd is shutting down')
    // A project is its hooks folder: two entries naming different folders of one repository are two.
    const id = ref.hooks
    this.used.set(id, Date.now())
    let entry = this.served.get(id)
    if (!entry) {
      // Set before anything is awaited: the agents post several events at once, and each first event
      // of a project must find the one opening, never open a second (whose workers nobody would stop).
      // makeRoom runs once the entry is in `served` (a later turn), so it counts this project too.
      const opening = Promise.resolve().then(() => this.makeRoom(id)).then(() => this.open(id, ref))
      entry = opening
      this.served.set(id, opening)
      opening.catch(() => {
        if (this.served.get(id) === opening) {
          this.served.delete(id)
          this.used.delete(id)
        }
      })
    }
    return entry
  }

  /** The projects served now. */
  ids(): string[] {
    return [...this.served.keys()]
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    clearInterval(this.reaper)
    const all = await Promise.allSettled([...this.served.values()])
    this.served.clear()
    await Promise.all(all.map((r) => (r.status === 'fulfilled' ? r.value.retire('hookd is shutting down') : undefined)))
    await this.options.audit?.close()
  }

  private async open(id: string, ref: ProjectRef): Promise<ProjectTenant> {
    const pool = new WorkerPool({ ...this.options.pool, size: this.options.workers ?? 1 })
    let registry: Registry | undefined
    try {
      await pool.start()
      pool.onBroken((reason) => this.report(`project ${id}: ${reason}; its hooks cannot run until hookd restarts`))
      registry = new Registry(ref.hooks, { loader: pool, runner: pool, limits: this.options.limits })
      for (const d of await registry.loadAll()) this.report(`project ${id}: hook '${d.hook}' failed to load (${d.file}${d.line ? `:${d.line}` : ''}): ${d.message}`)
      if (this.options.watch !== false) await registry.watch(this.options.watch)
      if (this.options.observer) this.options.observer.served({ tenant: id, registry, pool })
      else registry.subscribe((event) => this.report(`project ${id}: ${event.diagnostic.message}`))
      this.report(`serving project ${id} (hooks: ${registry.list().map((h) => h.name).join(', ') || 'none'})`)
      return new ProjectTenant(id, registry, pool, this.options.limits, this.options.waits, this.options.audit)
    } catch (err) {
      await registry?.close()
      await pool.close()
      throw err
    }
  }

  private async retire(id: string, why: string): Promise<void> {
    const entry = this.served.get(id)
    if (!entry) return
    this.served.delete(id)
    this.used.delete(id)
    for (const listener of this.retiring) listener(id)
    const tenant = await entry.catch(() => undefined)
    await tenant?.retire(why)
  }

  /** Past the cap, the least recently used project other than `opening` is retired to make room for it. */
  private async makeRoom(opening: string): Promise<void> {
    const max = this.options.maxProjects ?? 16
    while (this.served.size > max) {
      let oldest: { id: string; at: number } | undefined
      for (const [id, at] of this.used) if (id !== opening && this.served.has(id) && (!oldest || at < oldest.at)) oldest = { id, at }
      if (!oldest) return
      this.report(`project ${oldest.id} retired to make room: ${max} projects are served`)
      await this.retire(oldest.id, `hookd serves at most ${max} projects at once and retired this one; its next event opens it again`)
    }
  }

  private async reap(idleMs: number): Promise<void> {
    const now = Date.now()
    for (const [id, at] of [...this.used]) {
      if (now - at >= idleMs) {
        this.report(`project ${id} retired: no event for ${Math.round(idleMs / 60_000)} min`)
        await this.retire(id, 'no event for a while; the next event opens the project again')
      }
    }
  }
}
