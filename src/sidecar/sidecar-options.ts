/**
 * What a sidecar is made of (sidecar.ts `Sidecar.create`): its hooks (a folder, tenants, projects or
 * bundles), limits, workers, pinning, the floor, observability, and how it stops what it started when
 * a later part fails.
 */
import type { PinningOptions } from './pinning/admission.js'
import type { HooksFromOptions } from './bundles/bundle-source.js'
import type { StreamTap } from './grpc/session-stream.js'
import type { WatchOptions } from './hooks/hook-watcher.js'
import type { HostWaits, Limits } from './limits.js'
import type { Observer } from './observability/observer.js'
import type { Readiness } from './observability/readiness.js'
import type { ProjectsOptions } from './projects/projects.js'
import type { AuditOptions } from './session/audit.js'
import type { TenantsOptions } from './tenancy/tenants.js'
import type { PoolOptions } from './worker/pool/worker-pool.js'

export interface SidecarOptions {
  /** The hooks folder. Required without `tenants` (or `hooksFrom`); with them, each tenant names its own. */
  hooks?: string
  /** What is pinned (hookd.lock, --locked, --require-signed: pinning/admission.ts). The lock beside `hooks` is always read. */
  pinning?: PinningOptions
  /** Serve the hooks of signed bundles fetched from a URL instead of a folder (bundles/bundle-source.ts). */
  hooksFrom?: HooksFromOptions
  /** The sidecar's own news of pinning and bundles, one line each. Default: `hookd: ...` on stderr. */
  report?: (line: string) => void
  /**
   * Serve several tenants (docs/tenants.md): the tenants file, or its options. Every call must then
   * carry a tenant's bearer token.
   */
  tenants?: string | TenantsOptions
  /** Record every point result as a JSON line (docs/tenants.md#audit-log). */
  audit?: AuditOptions
  limits?: Partial<Limits>
  waits?: Partial<HostWaits>
  /** Sandbox worker processes; default: one per core. With tenants, each has its own (its `workers`). */
  workers?: number
  /** The rest of the worker pool's settings (start-failure cap, timeouts, ...). */
  pool?: PoolOptions
  /**
   * Follow symbolic links in hook folders (`hookd serve --allow-symlinks`): for a development setup that
   * links hooks in. Refused with tenants.
   */
  followSymlinks?: boolean
  /** How long a shutdown waits for in-flight calls before closing them. */
  graceMs?: number
  /** Hot reload of edited hook folders (docs/hot-reload.md): on by default; false turns it off. */
  watch?: boolean | WatchOptions
  /**
   * Without tenants: `refuse` makes every session fail closed at gates (chain.ts OnError), whatever a
   * session or a hook asks (`hookd serve --fail-closed`). With tenants, each tenant's "onError" says it.
   */
  onError?: 'default' | 'refuse'
  /**
   * Every hook must declare its permissions (hook.json "permissions", `hookd serve
   * --require-permissions`): one without them does not load. With tenants, for every tenant (each may
   * also require them itself, "requirePermissions").
   */
  requirePermissions?: boolean
  /** Metrics, traces and the operator log (observability/observability.ts). Default: none. */
  observer?: Observer
  /**
   * Liveness and readiness, shared with whoever answers probes before the sidecar exists (the metrics
   * listener of `hookd serve --metrics`). Default: the sidecar's own.
   */
  readiness?: Readiness
  /**
   * Given every message of every session stream, both ways, for one stream per call (`hookd serve
   * --capture DIR`: testing/capture-tap.ts). Not with tenants: it would see every tenant's payloads.
   */
  tap?: () => StreamTap
  /**
   * Serve the user's projects (`hookd serve --projects`, projects.ts) instead of one hooks folder or
   * tenants: each front-door request names its project, whose own hooks folder it runs. Only the HTTP
   * front door serves them.
   */
  projects?: Omit<ProjectsOptions, 'pool' | 'limits' | 'waits' | 'watch' | 'audit' | 'observer' | 'floor'>
  /**
   * The operator's floor (`hookd serve --floor DIR`, src/sidecar/floor.ts): a hooks folder whose hooks run
   * first in every session of every tenant and project, and that nothing below can remove, reorder,
   * shadow or skip.
   */
  floor?: string
  /** The floor's news (its hooks' loads and reloads). Default: `hookd: floor: ...` lines on stderr. */
  floorReport?(line: string): void
}

/** How long a drain waits for open sessions by default (`hookd serve --grace-ms`). */
export const DEFAULT_GRACE_MS = 5000

/** Stops what was started so far, last first, when a later step fails. */
export class Started {
  private readonly stops: Array<() => Promise<unknown>> = []
  add<T>(thing: T, stop: (t: T) => Promise<unknown>): T {
    this.stops.push(() => stop(thing))
    return thing
  }
  async undo(): Promise<void> {
    for (const stop of this.stops.reverse()) await stop().catch(() => {})
  }
}
