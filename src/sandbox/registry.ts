/**
 * The hook registry: the hook folders under one root, each `<root>/<name>/index.js` with an optional
 * `hook.json`. Every hook is compiled and evaluated in a throwaway isolate before it is served; one that
 * fails to load is reported as a `load` diagnostic and skipped, never a crash. Versions are content
 * hashes of the hook's files.
 */
import { createHash } from 'node:crypto'
import { readdir, readFile, stat } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { z } from 'zod'
import type { Diagnostic } from '../protocol/diagnostic.js'
import { HookdError } from '../protocol/status.js'
import { type PointName, isPointName } from '../protocol/points.js'
import type { HookInfoData, HookStatus } from '../protocol/wire.js'
import type { Limits } from './worker/protocol.js'
import type { WorkerPool } from './worker/supervisor.js'

/** `hook.json`, beside `index.js`. */
export const hookJsonSchema = z.strictObject({
  /** The hook's own configuration, visible as `ctx.config`. */
  config: z.unknown().optional(),
  description: z.string().optional(),
})

/** A hook version that loaded and can be served. */
export interface LoadedHook {
  name: string
  version: string
  /** Relative to the root, for diagnostics and stack traces: "guard/index.js". */
  filename: string
  source: string
  config: unknown
  /** The points it handles, in catalog order of its exports. */
  points: ReadonlySet<PointName>
  /** Exported functions whose names are not points. */
  unknownExports: readonly string[]
  loadedAtMs: number
}

interface Entry {
  name: string
  served?: LoadedHook
  lastError?: Diagnostic
  status: HookStatus
}

const HOOK_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/

export class Registry {
  readonly root: string
  private entries = new Map<string, Entry>()

  constructor(
    root: string,
    private readonly pool: WorkerPool,
    private readonly limits: Limits,
  ) {
    this.root = resolve(root)
  }

  /** Loads every hook folder under the root. Returns the load diagnostics. */
  async loadAll(): Promise<Diagnostic[]> {
    let names: string[]
    try {
      const dirents = await readdir(this.root, { withFileTypes: true })
      names = dirents
        .filter((d) => (d.isDirectory() || d.isSymbolicLink()) && HOOK_NAME.test(d.name))
        .map((d) => d.name)
        .sort()
    } catch (err) {
      throw new HookdError('not-found', `cannot read the hooks folder ${this.root}: ${(err as Error).message}; pass --hooks DIR with a folder of hooks`)
    }
    const diagnostics: Diagnostic[] = []
    await Promise.all(
      names.map(async (name) => {
        const d = await this.loadOne(name)
        if (d) diagnostics.push(d)
      }),
    )
    return diagnostics.sort((a, b) => a.hook.localeCompare(b.hook))
  }

  /** Loads (or reloads) one hook folder. Returns a diagnostic when it failed to load. */
  async loadOne(name: string): Promise<Diagnostic | undefined> {
    const dir = join(this.root, name)
    const filename = `${name}/index.js`
    const fail = (message: string, file = filename, line?: number): Diagnostic => {
      const entry = this.entries.get(name) ?? { name, status: 'broken' as HookStatus }
      const d: Diagnostic = { hook: name, point: '', kind: 'load', message, file }
      if (line !== undefined) d.line = line
      if (entry.served) d.version = entry.served.version
      entry.lastError = d
      entry.status = entry.served ? 'stale' : 'broken'
      this.entries.set(name, entry)
      return d
    }
    try {
      if (!(await stat(dir)).isDirectory()) return undefined
    } catch {
      return undefined
    }
    let source: string
    try {
      source = await readFile(join(dir, 'index.js'), 'utf8')
    } catch {
      return fail(`hook '${name}' has no index.js; create ${filename} exporting its points`)
    }
    let configText: string | undefined
    try {
      configText = await readFile(join(dir, 'hook.json'), 'utf8')
    } catch {
      configText = undefined
    }
    let config: unknown
    if (configText !== undefined) {
      let json: unknown
      try {
        json = JSON.parse(configText)
      } catch (err) {
        return fail(`hook.json is not valid JSON: ${(err as Error).message}`, `${name}/hook.json`)
      }
      const parsed = hookJsonSchema.safeParse(json)
      if (!parsed.success) {
        const issue = parsed.error.issues[0]
        const where = issue?.path.length ? ` at ${issue.path.join('.')}` : ''
        return fail(`hook.json is invalid${where}: ${issue?.message ?? 'unknown problem'}`, `${name}/hook.json`)
      }
      config = parsed.data.config
    }
    const version = createHash('sha256')
      .update(source)
      .update('\0')
      .update(configText ?? '')
      .digest('hex')
      .slice(0, 12)
    const outcome = await this.pool.load({ name, version, filename, source }, this.limits)
    if (!outcome.ok) return fail(outcome.message, filename, outcome.line)
    const points = new Set<PointName>()
    const unknownExports: string[] = []
    for (const exported of outcome.exports) {
      if (isPointName(exported)) points.add(exported)
      else unknownExports.push(exported)
    }
    const loaded: LoadedHook = {
      name,
      version,
      filename,
      source,
      config: config ?? {},
      points,
      unknownExports,
      loadedAtMs: Date.now(),
    }
    this.entries.set(name, { name, served: loaded, status: 'ready' })
    return undefined
  }

  /** The version served now, or undefined when the hook does not exist or never loaded. */
  get(name: string): LoadedHook | undefined {
    return this.entries.get(name)?.served
  }

  /** True when a folder by that name exists, loaded or not. */
  has(name: string): boolean {
    return this.entries.has(name)
  }

  lastError(name: string): Diagnostic | undefined {
    return this.entries.get(name)?.lastError
  }

  list(): HookInfoData[] {
    return [...this.entries.values()]
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((e) => {
        const info: HookInfoData = {
          name: e.name,
          version: e.served?.version ?? '',
          points: e.served ? [...e.served.points] : [],
          status: e.status,
          loadedAtMs: e.served?.loadedAtMs ?? 0,
        }
        if (e.lastError) info.lastError = e.lastError
        return info
      })
  }
}
