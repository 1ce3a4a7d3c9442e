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
import { type CapabilityArgs, type CapabilityName, policyClassOf, quoted } from '../../protocol/capabilities.js'
import { HookdError } from '../../protocol/status.js'
import { inert } from '../../protocol/text.js'
import type { WatchOptions } from '../hooks/hook-watcher.js'
import type { Floor } from '../floor.js'
import { Registry } from '../hooks/registry.js'
import { Admission as Pinning } from '../pinning/admission.js'
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
  /** The operator's floor (src/sidecar/floor.ts): its hooks run first in every project's sessions. */
  floor?: Floor
  /** Every project's hooks must declare their permissions (`hookd serve --require-permissions`). */
  requirePermissions?: boolean
}

/** A project as an event names it, checked (http/project-ref.ts): its real folder and its hooks folder. */
export interface ProjectRef {
  root: string
  hooks: string
}

/** One project while it is served: the `Tenant` its calls run as. */
class ProjectTenant implements Tenant {
  readonly onError = 'default' as const
  readonly layer = 'project' as const
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
    readonly floor: Floor | undefined,
  ) {
    this.audit = audit
    this.who = `project ${id}`
  }

  get runner(): WorkerPool {
    return this.pool
  }

  /**
   * The project's floor: its profiles come from the repository, so whatever origins they list, its
   * hooks get no network (they could send the user's files anywhere); files and the rest as the
   * session's policy says.
   */
  refusal<N extends CapabilityName>(capability: N, args: CapabilityArgs<N>): string | undefined {
    if (policyClassOf(capability) !== 'network') return undefined
    const url: unknown = args[0]
    return `ctx.${capability}(${quoted(String(url))}) refused: the user's hookd gives a repository's hooks no network, whatever its profiles list (a repository cannot grant its own hooks the network); serve hooks you trust with 'hookd serve --hooks DIR --http PORT' instead`
  }

  /** None of the user's environment: a repository's profile cannot hand its hooks the user's variables. */
  env(): Record<string, string> {
    return {}
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

/** A project while served: its tenant (once opened), when its last event came, and its calls now. */
interface Served {
  readonly root: string
  readonly opening: Promise<ProjectTenant>
  /** When its last event came or went (for the idle reaper), and in which order (for least recently used). */
  used: number
  order: number
  inFlight: number
}

/** A project's tenant for one request; `release` (idempotent) once its answer is sent. */
export interface ProjectLease {
  tenant: Tenant
  release(): void
}

/** Hooks folders one project may have served at once (its entries may name several). */
export const MAX_HOOKS_FOLDERS_PER_PROJECT = 4

export class Projects implements Tenancy {
  private readonly served = new Map<string, Served>()
  private readonly retiring = new Set<(id: string) => void>()
  /** Projects being retired: close() waits for them. */
  private readonly closing = new Set<Promise<void>>()
  private readonly report: (line: string) => void
  private readonly reaper: NodeJS.Timeout
  private closed = false
  private uses = 0

  constructor(private readonly options: ProjectsOptions) {
    this.report = options.report ?? ((line) => void process.stderr.write(`hookd: ${inert(line)}\n`))
    const idle = options.idleMs ?? 30 * 60_000
    this.reaper = setInterval(() => this.reap(idle), Math.max(10, Math.min(idle / 2, 60_000)))
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

  /**
   * The project's tenant for one request, opened (its hooks loaded on workers of its own) on first use.
   * Every choice is made before anything is awaited: the agents post several events at once, and each
   * first event of a project must find the one opening, never open a second; a new project past the cap
   * retires the least recently used one with no call in flight, or is refused when every one has a call.
   */
  async project(ref: ProjectRef): Promise<ProjectLease> {
    if (this.closed) throw new HookdError('unavailable', 'hookd is shutting down')
    // A project is its hooks folder: two entries naming different folders of one repository are two.
    const id = ref.hooks
    let entry = this.served.get(id)
    if (!entry) {
      this.makeRoom(ref)
      const opening = this.open(id, ref)
      const made: Served = { root: ref.root, opening, used: Date.now(), order: 0, inFlight: 0 }
      entry = made
      this.served.set(id, made)
      opening.catch(() => {
        if (this.served.get(id) === made) this.served.delete(id)
      })
    }
    const served = entry
    served.used = Date.now()
    served.order = ++this.uses
    served.inFlight += 1
    let released = false
    const release = (): void => {
      if (released) return
      released = true
      served.inFlight -= 1
      served.used = Date.now()
      served.order = ++this.uses
    }
    try {
      return { tenant: await served.opening, release }
    } catch (err) {
      release()
      throw err
    }
  }

  /** The projects served now. */
  ids(): string[] {
    return [...this.served.keys()]
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    clearInterval(this.reaper)
    for (const id of [...this.served.keys()]) this.retire(id, 'hookd is shutting down')
    await Promise.all([...this.closing])
    await this.options.audit?.close()
  }

  private async open(id: string, ref: ProjectRef): Promise<ProjectTenant> {
    const pool = new WorkerPool({ ...this.options.pool, size: this.options.workers ?? 1 })
    let registry: Registry | undefined
    try {
      await pool.start()
      pool.onBroken((reason) => this.report(`project ${id}: ${reason}; its hooks cannot run until hookd restarts`))
      // The project's hookd.lock, when it has one, is read as a sidecar's is: a version whose permissions
      // ask for more than its locked (or serving) version's is held for hookd trust.
      const admission = await Pinning.open(ref.hooks, {})
      registry = new Registry(ref.hooks, { loader: pool, runner: pool, limits: this.options.limits, requirePermissions: this.options.requirePermissions === true, admission, report: (line) => this.report(`project ${id}: ${line}`) })
      for (const d of await registry.loadAll()) this.report(`project ${id}: hook '${d.hook}' failed to load (${d.file}${d.line ? `:${d.line}` : ''}): ${d.message}`)
      if (this.options.watch !== false) await registry.watch(this.options.watch)
      if (this.options.observer) this.options.observer.served({ tenant: id, registry, pool })
      else registry.subscribe((event) => this.report(`project ${id}: ${event.diagnostic.message}`))
      this.report(`serving project ${id} (hooks: ${registry.list().map((h) => h.name).join(', ') || 'none'})`)
      return new ProjectTenant(id, registry, pool, this.options.limits, this.options.waits, this.options.audit, this.options.floor)
    } catch (err) {
      await registry?.close()
      await pool.close()
      throw err
    }
  }

  /** Stops serving `id` now (its next event opens it again); its workers stop in the background. */
  private retire(id: string, why: string): void {
    const entry = this.served.get(id)
    if (!entry) return
    this.served.delete(id)
    for (const listener of this.retiring) listener(id)
    const done = entry.opening.then(
      (tenant) => tenant.retire(why),
      () => undefined,
    )
    this.closing.add(done)
    void done.finally(() => this.closing.delete(done))
  }

  /**
   * Makes room for the new project `ref`: at most MAX_HOOKS_FOLDERS_PER_PROJECT of its hooks folders,
   * and past the cap the least recently used project with no call in flight is retired. Refuses when
   * neither can be, saying what to do.
   */
  private makeRoom(ref: ProjectRef): void {
    // One repository's entries cannot take the others' room: past its own share it makes room among its own.
    const own = [...this.served].filter(([, e]) => e.root === ref.root)
    if (own.length >= MAX_HOOKS_FOLDERS_PER_PROJECT) {
      const victim = leastRecent(own)
      if (!victim) {
        throw new HookdError(
          'resource-exhausted',
          `project ${ref.root} has ${own.length} hooks folders served with calls in flight, the most one project may have; retry when one has finished (its entries, from hookd init, should name one hooks folder)`,
        )
      }
      this.report(`project ${victim} retired to make room: project ${ref.root} may have ${MAX_HOOKS_FOLDERS_PER_PROJECT} hooks folders served at once`)
      this.retire(victim, `project ${ref.root} may have ${MAX_HOOKS_FOLDERS_PER_PROJECT} hooks folders served at once, and another of them retired this one; its next event opens it again`)
      return
    }
    const max = this.options.maxProjects ?? 16
    if (this.served.size < max) return
    const victim = leastRecent([...this.served])
    if (!victim) {
      throw new HookdError('resource-exhausted', `hookd serves at most ${max} project${max === 1 ? '' : 's'} at once, and each has a call in flight; retry when one has finished`)
    }
    this.report(`project ${victim} retired to make room: ${max} projects are served`)
    this.retire(victim, `hookd serves at most ${max} projects at once and retired this one; its next event opens it again`)
  }

  private reap(idleMs: number): void {
    const now = Date.now()
    for (const [id, e] of [...this.served]) {
      if (e.inFlight === 0 && now - e.used >= idleMs) {
        this.report(`project ${id} retired: no event for ${Math.round(idleMs / 60_000)} min`)
        this.retire(id, 'no event for a while; the next event opens the project again')
      }
    }
  }
}

/** The id of the least recently used of `entries` with no call in flight, if any. */
function leastRecent(entries: ReadonlyArray<[string, Served]>): string | undefined {
  let oldest: [string, Served] | undefined
  for (const entry of entries) if (entry[1].inFlight === 0 && (!oldest || entry[1].order < oldest[1].order)) oldest = entry
  return oldest?.[0]
}
