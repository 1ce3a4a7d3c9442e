/**
 * A sidecar in memory, for tests of the Session stream: a real registry over temporary hook folders
 * with the fake loader and runner (fakes.ts), the real single tenant (with an audit log when asked),
 * the real stream machine (src/sidecar/grpc/session-stream.ts) and the real host library
 * (src/host/session.ts), joined by the in-memory call of test/support/memory-session.ts. No socket, no
 * gRPC server, no worker process: a hook is a script of the fake runner.
 */
import { mkdtemp, realpath, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { HostSession, SessionOptions } from '../../../src/host/index.js'
import type { Registry } from '../../../src/sidecar/hooks/registry.js'
import { DEFAULT_LIMITS, DEFAULT_WAITS, type HostWaits, type Limits } from '../../../src/sidecar/limits.js'
import type { Observer } from '../../../src/sidecar/observability/observer.js'
import { AuditLog, type AuditOptions } from '../../../src/sidecar/session/audit.js'
import { SingleTenant } from '../../../src/sidecar/tenant.js'
import { MemorySidecar } from '../../support/memory-session.js'
import type { RawStream } from '../../support/raw-session.js'
import { sessionOptions } from '../../support/sidecar.js'
import { FakeLoader, FakeRunner, type FakeRunnerOptions, type HookFolder, type HooksRoot, hooksFolder, loadedRegistry } from '../fakes.js'

export interface StreamWorldOptions {
  waits?: Partial<HostWaits>
  limits?: Partial<Limits>
  /** An audit log, as `hookd serve --audit` opens it. */
  audit?: AuditOptions
  observer?: Observer
  runner?: FakeRunnerOptions
  /** Set up the loader before the folders load. */
  loader?: (loader: FakeLoader) => void
  onError?: 'default' | 'refuse'
}

export interface StreamWorld {
  folder: HooksRoot
  /** An empty folder of its own: the sessions' workdir unless they name another. */
  workdir: string
  loader: FakeLoader
  runner: FakeRunner
  registry: Registry
  tenant: SingleTenant
  sidecar: MemorySidecar
  /** Opens a HostSession declaring `hooks` (sessionOptions from test/support/sidecar.ts, with `extra`). */
  open(hooks: string[], extra?: Partial<SessionOptions>): Promise<HostSession>
  /** A stream for raw frames. */
  raw(): RawStream
}

const worlds: StreamWorld[] = []

/**
 * Closes every world made so far: their registries, runners and audit logs, and their folders. Each
 * test file calls it after each test (`afterEach(closeStreamWorlds)`): the suite's test processes
 * share modules between files (vitest.config.ts, isolate false), so a hook registered here would
 * serve only the first file that imported this one.
 */
export async function closeStreamWorlds(): Promise<void> {
  for (const w of worlds.splice(0)) {
    await w.tenant.close()
    await w.folder.dispose()
    await rm(w.workdir, { recursive: true, force: true })
  }
}

/** A world whose hook folders are `hooks`; each hook's invocations are scripted with `runner.script`. */
export async function streamWorld(hooks: Record<string, HookFolder>, options: StreamWorldOptions = {}): Promise<StreamWorld> {
  const folder = await hooksFolder(hooks)
  const workdir = await realpath(await mkdtemp(join(tmpdir(), 'hookd-unit-workdir-')))
  const loader = new FakeLoader()
  options.loader?.(loader)
  const runner = new FakeRunner(options.runner)
  const limits = { ...DEFAULT_LIMITS, ...options.limits }
  const registry = await loadedRegistry(folder.root, loader, runner, { limits })
  const audit = options.audit ? await AuditLog.open(options.audit) : undefined
  const tenant = new SingleTenant(registry, runner, limits, { ...DEFAULT_WAITS, ...options.waits }, audit, options.onError ?? 'default')
  const sidecar = new MemorySidecar(tenant, options.observer ? { observer: options.observer } : {})
  const world: StreamWorld = {
    folder,
    workdir,
    loader,
    runner,
    registry,
    tenant,
    sidecar,
    open: (declared, extra = {}) => sidecar.openSession(sessionOptions(declared, { workdir, ...extra })),
    raw: () => sidecar.raw(),
  }
  worlds.push(world)
  return world
}
