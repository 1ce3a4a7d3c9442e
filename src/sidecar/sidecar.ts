/**
 * The sidecar: a gRPC server for hookd.v1.HookExecutor (Session, Invoke, ListHooks) and the standard
 * grpc.health.v1.Health service, in front of the tenants it serves (one implicit tenant, or those of a
 * tenants file), each with its registry of hook folders and its own pool of sandbox workers.
 *
 * This file composes the parts and owns their lifetimes: `create` starts them (and stops what it
 * started when a later part fails), `listen` binds an address, `stop` drains and closes.
 */
import { chmod } from 'node:fs/promises'
import * as grpc from '@grpc/grpc-js'
import type { HealthImplementation } from 'grpc-health-check'
import { formatAddress, parseAddress } from '../protocol/address.js'
import type { Diagnostic } from '../protocol/diagnostic.js'
import { HookdError } from '../protocol/status.js'
import { type HealthListener, listenHealth } from './grpc/health-listener.js'
import { addHookExecutor } from './grpc/hook-executor.js'
import { FrontDoor, type FrontDoorOptions } from './http/front-door.js'
import { OpenStreams } from './grpc/open-streams.js'
import { addReflection } from './grpc/reflection.js'
import { prepareSocket } from './grpc/socket.js'
import type { StreamTap } from './grpc/session-stream.js'
import { type Floor, openFloor } from './floor.js'
import { Registry } from './hooks/registry.js'
import { inert } from '../protocol/text.js'
import { Admission } from './pinning/admission.js'
import { BundleSource } from './bundles/bundle-source.js'
import { DEFAULT_WAITS, type Limits, resolveLimits } from './limits.js'
import { healthFollowing } from './observability/health-status.js'
import { NO_OBSERVER, type Observer, type Served } from './observability/observer.js'
import { Readiness } from './observability/readiness.js'
import { AuditLog } from './session/audit.js'
import { SingleTenant, type Tenancy } from './tenant.js'
import { Tenants } from './tenancy/tenants.js'
import { Projects } from './projects/projects.js'
import { walls } from './worker/pool/walls.js'
import { type PoolOptions, WorkerPool } from './worker/pool/worker-pool.js'
import { fromSource } from './worker/pool/worker-spawn.js'
import { DEFAULT_GRACE_MS, type SidecarOptions, Started } from './sidecar-options.js'

export { DEFAULT_GRACE_MS, type SidecarOptions } from './sidecar-options.js'

export class Sidecar {
  private readonly server = new grpc.Server({ 'grpc.max_receive_message_length': 8 * 1024 * 1024 })
  private readonly health: HealthImplementation
  private readonly sessions = new OpenStreams()
  private readonly healthListeners: HealthListener[] = []
  /** The front door's listeners (a TCP port, the user's socket): each one its own FrontDoor. */
  private readonly frontDoors: FrontDoor[] = []
  private stopping: Promise<{ cut: number }> | undefined
  /** Where the hooks come from with `hooksFrom`: the bundle source (its revision, a poll now). */
  bundles: BundleSource | undefined

  private constructor(
    private readonly tenancy: Tenancy,
    /** The workers of a sidecar without tenants (with tenants, each tenant has its own). */
    private readonly workerPool: WorkerPool | undefined,
    readonly loadDiagnostics: readonly Diagnostic[],
    private readonly graceMs: number,
    private readonly poolOptions: PoolOptions,
    private readonly readiness: Readiness,
    private readonly observer: Observer,
    tap?: () => StreamTap,
    /** The operator's floor, and the workers that load its hooks when the sidecar has no pool of its own. */
    private readonly floorParts?: { floor: Floor; pool?: WorkerPool | undefined },
  ) {
    addHookExecutor(this.server, tenancy, this.sessions, observer, tap)
    this.health = healthFollowing(readiness)
    this.health.addToServer(this.server)
    addReflection(this.server)
    // A pool that gave up restarting workers answers every hook with worker-crash: say so to load
    // balancers and supervisors instead of looking healthy.
    workerPool?.onBroken((reason) => readiness.broken(`no sandbox worker can run hooks: ${reason}`))
    observer.attach(() => this.served())
  }

  /** Starts the workers and loads every hook; does not listen yet. */
  static async create(options: SidecarOptions): Promise<Sidecar> {
    let limits: Limits
    try {
      limits = resolveLimits(options.limits)
    } catch (err) {
      throw new HookdError('invalid-argument', (err as Error).message)
    }
    if (options.projects !== undefined && (options.tenants !== undefined || options.hooks !== undefined)) {
      throw new HookdError('invalid-argument', "a sidecar serving the user's projects runs each project's own hooks folder: no hooks folder or tenants file of its own")
    }
    if (options.tenants === undefined && options.hooks === undefined && options.projects === undefined && options.hooksFrom === undefined) {
      throw new HookdError('invalid-argument', 'a sidecar without tenants needs a hooks folder (SidecarOptions.hooks)')
    }
    if (options.tenants !== undefined && options.tap !== undefined) {
      throw new HookdError('invalid-argument', "session streams cannot be tapped with tenants: the tap would see every tenant's payloads")
    }
    if (options.tenants !== undefined && options.followSymlinks) {
      throw new HookdError('invalid-argument', "symbolic links in hook folders cannot be followed with tenants: one tenant's link could read another's files")
    }
    const waits = { ...DEFAULT_WAITS, ...options.waits }
    const graceMs = options.graceMs ?? DEFAULT_GRACE_MS
    const watch = options.watch === false ? false : options.watch === true || options.watch === undefined ? {} : options.watch
    const started = new Started()
    const readiness = options.readiness ?? new Readiness()
    const observer = options.observer ?? NO_OBSERVER
    try {
      const audit = options.audit ? started.add(await AuditLog.open(options.audit), (a) => a.close()) : undefined
      if (audit) observer.auditLog(() => audit.totalUnwritten)
      // The floor's hooks are loaded (checked) on workers of its own when no pool is the sidecar's; they
      // run on each tenant's.
      const floorFor = async (pool?: WorkerPool): Promise<{ floor: Floor; pool?: WorkerPool } | undefined> => {
        if (options.floor === undefined) return undefined
        const loaded = readiness.loading("the operator's floor")
        const own = pool ? undefined : started.add(new WorkerPool({ ...options.pool, size: 1 }), (p) => p.close())
        await own?.start()
        const floor = started.add(await openFloor(options.floor, { hooks: options.hooks, pool: (pool ?? own) as WorkerPool, limits, watch, report: options.floorReport }), (f) => f.close())
        loaded()
        return { floor, ...(own ? { pool: own } : {}) }
      }
      if (options.tenants !== undefined) {
        const floorParts = await floorFor()
        const tenantsOptions = typeof options.tenants === 'string' ? { file: options.tenants } : options.tenants
        // The file itself, then each tenant's hooks folder in its place (readiness names the tenants still loading).
        const loaded = readiness.loading('the tenants file')
        const tenants = await Tenants.start(tenantsOptions, {
          pool: options.pool ?? {},
          limits,
          waits,
          watch,
          ...(options.requirePermissions ? { requirePermissions: true } : {}),
          firstLoad: (tenant) => {
            const done = readiness.loading(`the hooks of tenant '${tenant}'`)
            loaded()
            return done
          },
          ...(audit ? { audit } : {}),
          ...(options.observer ? { observer } : {}),
          ...(floorParts ? { floor: floorParts.floor } : {}),
        })
        loaded()
        return new Sidecar(tenants, undefined, [], graceMs, options.pool ?? {}, readiness, observer, undefined, floorParts)
      }
      if (options.projects !== undefined) {
        const floorParts = await floorFor()
        const projects = new Projects({
          ...options.projects,
          pool: options.pool ?? {},
          limits,
          waits,
          watch,
          ...(options.requirePermissions ? { requirePermissions: true } : {}),
          ...(audit ? { audit } : {}),
          ...(options.observer ? { observer } : {}),
          ...(floorParts ? { floor: floorParts.floor } : {}),
        })
        return new Sidecar(projects, undefined, [], graceMs, options.pool ?? {}, readiness, observer, undefined, floorParts)
      }
      const loaded = readiness.loading(options.hooksFrom ? 'the hooks bundle' : 'hooks')
      const report = options.report ?? ((line: string) => void process.stderr.write(`hookd: ${inert(line)}\n`))
      const pool = started.add(new WorkerPool({ ...options.pool, ...(options.workers !== undefined ? { size: options.workers } : {}) }), (p) => p.close())
      await pool.start()
      const root = options.hooksFrom ? await BundleSource.emptyRoot(options.hooksFrom.stateDir) : (options.hooks as string)
      // The lock beside the hooks folder is always read: a version asking for more permissions than its locked one is held.
      const admission = options.hooksFrom ? undefined : await Admission.open(root, options.pinning ?? {})
      const registry = started.add(
        new Registry(root, { loader: pool, runner: pool, limits, followSymlinks: options.followSymlinks === true, report, requirePermissions: options.requirePermissions === true, ...(admission ? { admission } : {}) }),
        (r) => r.close(),
      )
      const diagnostics = await registry.loadAll()
      observer.served({ tenant: undefined, registry, pool })
      const floorParts = await floorFor(pool)
      let bundles: BundleSource | undefined
      if (options.hooksFrom) {
        const source = await BundleSource.start(registry, options.hooksFrom, report, (revision) => {
          readiness.serving(revision)
          loaded()
        })
        registry.adopt(() => source.close())
        bundles = source
      } else {
        if (watch !== false) await registry.watch(watch)
        loaded()
      }
      const tenant = new SingleTenant(registry, pool, limits, waits, audit, options.onError ?? 'default', floorParts?.floor)
      const sidecar = new Sidecar(tenant, pool, diagnostics, graceMs, options.pool ?? {}, readiness, observer, options.tap, floorParts)
      sidecar.bundles = bundles
      return sidecar
    } catch (err) {
      await started.undo()
      throw err
    }
  }

  /** The hooks registry of a sidecar without tenants (a tenant's: `tenants.registryOf(id)`). */
  get registry(): Registry {
    if (this.tenancy instanceof SingleTenant) return this.tenancy.registry
    throw new HookdError('failed-precondition', 'this sidecar serves tenants, each with its own registry; use sidecar.tenants.registryOf(id)')
  }

  /** The operator's floor, when the sidecar was started with one. */
  get floor(): Floor | undefined {
    return this.floorParts?.floor
  }

  /** The tenants, when the sidecar was started with a tenants file. */
  get tenants(): Tenants | undefined {
    return this.tenancy instanceof Tenants ? this.tenancy : undefined
  }

  /** What stands around the sandbox workers, one line per wall (walls.ts). */
  wallLines(): string[] {
    return walls({ fromSource, ...this.poolOptions.walls }).describe()
  }

  /** The workers of a sidecar without tenants (a tenant's: `tenants.poolOf(id)`). */
  get pool(): WorkerPool {
    if (this.workerPool) return this.workerPool
    throw new HookdError('failed-precondition', 'this sidecar serves tenants, each with its own workers; use sidecar.tenants.poolOf(id)')
  }

  /**
   * Binds the address; returns it in canonical form (with the real port for `HOST:0`). With `tls`
   * (PEM certificate chain and private key), a TCP address is served over TLS.
   */
  async listen(text: string, options: { tls?: { cert: Buffer | string; key: Buffer | string } } = {}): Promise<string> {
    const address = parseAddress(text)
    if (options.tls && address.kind === 'unix') {
      throw new HookdError('invalid-argument', `TLS is for TCP addresses; ${text} is a Unix socket (protected by its file permissions)`)
    }
    const credentials = options.tls
      ? grpc.ServerCredentials.createSsl(null, [{ cert_chain: Buffer.from(options.tls.cert), private_key: Buffer.from(options.tls.key) }], false)
      : grpc.ServerCredentials.createInsecure()
    if (address.kind === 'unix') await prepareSocket(address.path)
    const port = await new Promise<number>((resolve, reject) => {
      this.server.bindAsync(formatAddress(address), credentials, (err, p) =>
        err ? reject(new HookdError('unavailable', `cannot listen on ${text}: ${err.message}`)) : resolve(p),
      )
    })
    if (address.kind === 'unix') {
      await chmod(address.path, 0o600)
      return formatAddress(address)
    }
    return formatAddress({ ...address, port })
  }

  /**
   * Serves the health service alone on a second, TCP address (`--health-listen`), for probes that
   * cannot reach a Unix socket. It closes last in `stop`, so probes see NOT_SERVING during the drain.
   */
  async listenHealth(text: string): Promise<string> {
    const listener = await listenHealth(this.health, text)
    this.healthListeners.push(listener)
    return listener.address
  }

  /**
   * Serves the HTTP front door for the agents people use (docs/agents.md) on host:port, beside the gRPC
   * listener; returns its URL. Without tenants every request must carry `token`; with them, a tenant's.
   */
  async listenHttp(host: string, port: number, options: Omit<FrontDoorOptions, 'tenancy' | 'projects' | 'openRun'> & { socket?: string } = {}): Promise<string> {
    const own = this.tenancy instanceof SingleTenant || this.tenancy instanceof Projects
    if (own && options.token === undefined) throw new HookdError('invalid-argument', 'a sidecar without tenants needs a token for its HTTP front door (FrontDoorOptions.token)')
    const { token, ...rest } = options
    const door = await FrontDoor.listen(host, port, {
      observer: this.observer,
      ...rest,
      tenancy: this.tenancy,
      ...(own && token !== undefined ? { token } : {}),
      ...(this.tenancy instanceof Projects ? { projects: this.tenancy } : {}),
    })
    this.frontDoors.push(door)
    return door.url
  }

  /** The projects of a sidecar serving the user's projects. */
  get projects(): Projects | undefined {
    return this.tenancy instanceof Projects ? this.tenancy : undefined
  }

  /** Session streams open now (a drain waits for them). */
  get openSessions(): number {
    return this.sessions.size
  }

  /**
   * Drains, then stops (docs/operations.md). Health turns NOT_SERVING while the listener stays open,
   * so that probes read it (and a Unix socket stays where it is); new sessions and calls get
   * UNAVAILABLE saying hookd is draining; each open session ends with that status once it has no
   * point call running (an idle one at once), or closes normally if its host sends close. When every
   * session has ended, or the grace period is over (the rest are cut with UNAVAILABLE), the listener
   * closes (gRPC removes its socket file) and the workers stop. Resolves with how many sessions were
   * cut.
   */
  stop(cause?: string): Promise<{ cut: number }> {
    this.stopping ??= (async () => {
      const began = Date.now()
      this.readiness.drain()
      this.observer.draining({ sessions: this.sessions.size, graceMs: this.graceMs, ...(cause ? { cause } : {}) })
      const frontDoor = Promise.all(this.frontDoors.map((door) => door.close(this.graceMs)))
      const deadline = Date.now() + this.graceMs
      let graceTimer: NodeJS.Timeout | undefined
      const graceOver = new Promise<'over'>((resolve) => (graceTimer = setTimeout(() => resolve('over'), this.graceMs)))
      const drained = await Promise.race([this.sessions.drain().then(() => 'drained' as const), graceOver])
      clearTimeout(graceTimer)
      const cut = drained === 'over' ? this.sessions.size : 0
      if (cut > 0) this.sessions.abortAll()
      // Unary calls still running may finish within what is left of the grace period (a cut session's
      // status needs a moment to be sent).
      await new Promise<void>((resolve) => {
        const timer = setTimeout(
          () => {
            this.server.forceShutdown()
            resolve()
          },
          Math.max(1000, deadline - Date.now()),
        )
        this.server.tryShutdown(() => {
          clearTimeout(timer)
          resolve()
        })
      })
      await frontDoor
      await this.tenancy.close()
      await this.floorParts?.floor.close()
      await this.floorParts?.pool?.close()
      await this.workerPool?.close()
      this.observer.drained({ ms: Date.now() - began, cut })
      for (const listener of this.healthListeners) await listener.close()
      return { cut }
    })()
    return this.stopping
  }

  /** What the sidecar serves now: each tenant's registry and workers (the one implicit tenant's). */
  private served(): Served[] {
    const tenants = this.tenants
    if (!tenants) return this.workerPool ? [{ tenant: undefined, registry: this.registry, pool: this.workerPool }] : []
    return tenants.ids().flatMap((tenant) => {
      const registry = tenants.registryOf(tenant)
      const pool = tenants.poolOf(tenant)
      return registry && pool ? [{ tenant, registry, pool }] : []
    })
  }
}

