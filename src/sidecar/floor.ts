/**
 * The operator's floor (`hookd serve --floor DIR`; docs/operations.md, "Layers"): a hooks folder of the
 * operator's own, loaded and hot-reloaded like any other (a registry of its own), whose hooks run first
 * at every point they serve, in every session of every tenant and project, in the order of their folder
 * names. A session's hook list, a tenant's or a project's folder, a profile or a route cannot name,
 * drop, reorder or shadow them: the session's step planner (session/step-planner.ts) puts them ahead of
 * the declared hooks at each call, a declared name that is a floor hook's is the floor's (it runs once,
 * first), and a floor refusal ends the chain (chain.ts). A floor hook's failure at a gate refuses the
 * call unless its own hook.json says `"onError": "skip"`.
 *
 * The floor's sandboxed hooks run on the workers of the tenant (or project) whose call it is, never on
 * a pool shared between tenants; a remote floor hook runs on its own server's client.
 */
import { readdir } from 'node:fs/promises'
import { resolve } from 'node:path'
import { HookdError } from '../protocol/status.js'
import { inert } from '../protocol/text.js'
import type { HookInfoData } from '../protocol/wire.js'
import type { WatchOptions } from './hooks/hook-watcher.js'
import { Registry } from './hooks/registry.js'
import type { Limits } from './limits.js'
import type { WorkerPool } from './worker/pool/worker-pool.js'

export class Floor {
  constructor(readonly registry: Registry) {}

  /** The folder the floor's hooks are read from. */
  get root(): string {
    return this.registry.root
  }

  /** The floor's hooks now (loaded or not), in the order they run: by folder name. */
  hooks(): HookInfoData[] {
    return this.registry.list()
  }

  /** True when `name` is a floor hook's (its folder is there, loaded or not). */
  has(name: string): boolean {
    return this.registry.has(name)
  }

  close(): Promise<void> {
    return this.registry.close()
  }
}

export interface FloorOptions {
  /** The sidecar's own hooks folder, which the floor may not be. */
  hooks?: string | undefined
  /** The workers its hooks load on. */
  pool: WorkerPool
  limits: Limits
  watch: false | WatchOptions
  /** The floor's news. Default: `hookd: floor: ...` lines on stderr. */
  report?: ((line: string) => void) | undefined
}

/**
 * Opens the operator's floor: its folder must be there, and not the sidecar's own hooks folder (every
 * hook would run twice, once as the floor's). Its hooks load on `pool`; their load failures and
 * reloads are the floor's news.
 */
export async function openFloor(dir: string, options: FloorOptions): Promise<Floor> {
  const say = options.report ?? ((line: string) => void process.stderr.write(`hookd: floor: ${inert(line)}\n`))
  if (options.hooks !== undefined && resolve(options.hooks) === resolve(dir)) {
    throw new HookdError('invalid-argument', `the floor ${dir} is the hooks folder itself; give the floor a folder of its own (its hooks run first in every session, ahead of the hooks folder's)`)
  }
  try {
    await readdir(dir)
  } catch (err) {
    throw new HookdError('not-found', `cannot read the floor folder ${dir} (${(err as Error).message}); create it or fix the path`)
  }
  const registry = new Registry(dir, { loader: options.pool, runner: options.pool, limits: options.limits })
  try {
    for (const d of await registry.loadAll()) {
      say(`hook '${d.hook}' failed to load (${d.file}${d.line ? `:${d.line}` : ''}): ${d.message}; until it loads, every gate call is refused unless its hook.json says "onError": "skip"`)
    }
    if (options.watch !== false) await registry.watch(options.watch)
  } catch (err) {
    await registry.close()
    throw err
  }
  registry.subscribe((event) => say(event.diagnostic.message))
  const names = registry.list().map((h) => h.name)
  say(`serving ${names.length} floor hook(s) from ${registry.root}, first in every session: ${names.join(', ') || 'none yet'}`)
  return new Floor(registry)
}
