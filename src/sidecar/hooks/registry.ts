/**
 * The hook registry: the hook folders under one root, each `<root>/<name>/index.js` (a sandboxed hook) or
 * a `hook.json` naming a server (a remote hook), with an optional `hook.json` configuration. Every version
 * of a hook is loaded before it is served: a sandboxed hook is compiled and evaluated in a throwaway
 * isolate, a remote hook is asked what it serves (Describe). One that fails to load is reported as a
 * `load` diagnostic and never served. Versions are content hashes of the hook's files.
 *
 * Each served hook carries the `HookRunner` that runs it, so a session runs a hook without knowing
 * which kind it is.
 *
 * Hot reload (hook-watcher.ts, docs/hot-reload.md) feeds the registry settled snapshots of a folder
 * (`read` then `apply`). A new version replaces the served one in a single assignment, so a point call
 * that already resolved its hooks keeps the version it started with. A version that fails to load leaves
 * the last good one serving (status `stale`). Whatever changes is announced to subscribers, which the
 * sessions turn into diagnostics pushed to their hosts.
 */
import { join, resolve } from 'node:path'
import type { Diagnostic } from '../../protocol/diagnostic.js'
import { type PointName, isPointName } from '../../protocol/points.js'
import type { HookInfoData, HookStatus, OnError } from '../../protocol/wire.js'
import type { Limits } from '../limits.js'
import type { HookRunner, RunnableHook } from '../runners/hook-runner.js'
import { type RemoteAddress, remoteAddress } from '../runners/remote/remote-address.js'
import { RemoteHooks } from '../runners/remote/remote-hooks.js'
import type { RemoteAllow } from '../runners/remote/remote-allow.js'
import { Semaphore } from '../semaphore.js'
import type { LoadOutcome } from '../worker/protocol.js'
import { hintFor } from './author-hints.js'
import { AuthorRunner } from './author-runner.js'
import { ENTRY_FILES } from './bundle-plan.js'
import { ABSENT, type HookFiles, hookFolderNames } from './hook-folder.js'
import { checkHookJson, closestPoint, endOfFileLine, exportLine, exportLines, namesWithHints, versionOf } from './hook-files.js'
import { HookSources } from './hook-source.js'
import { HookWatcher, type WatchOptions } from './hook-watcher.js'
import { type SourceMap, mapPosition, parseSourceMap } from './source-map.js'

/**
 * The files of a hook folder whose change may change the hook: its entry, hook.json, and what decides
 * its packages (package.json, the lock files npm and yarn write on every install).
 */
const HOOK_FILES = new Set<string>([
  ...ENTRY_FILES,
  'hook.json',
  'package.json',
  'package-lock.json',
  'npm-shrinkwrap.json',
  'yarn.lock',
  'node_modules/.package-lock.json',
  'node_modules/.yarn-integrity',
])

/** Files a bundle may be made from: in a bundled folder, a new one may change what an import finds. */
const BUNDLED_SOURCE = /\.(?:[cm]?[jt]sx?|json|txt)$/

/** A hook version that loaded and can be served. */
export interface LoadedHook extends RunnableHook {
  config: unknown
  /** The points it handles, in catalog order of its exports. */
  points: ReadonlySet<PointName>
  /** Exported functions whose names are not points. */
  unknownExports: readonly string[]
  loadedAtMs: number
  /** What runs it: the sandbox's runner, or its remote server's client. */
  runner: HookRunner
  /** A remote hook's address as hook.json writes it (for `hookd check` and `hookd list`). */
  remote?: string
  /** hook.json "onError": what this hook's failure does at a gate (chain.ts). */
  onError: OnError
  /** One line about the hook: hook.json "description", else a remote hook's own (its Describe). */
  description?: string
  /** A bundled hook's source map (version 3, JSON text): `source` is then esbuild's bundle. */
  sourceMap?: string
}

/** Loads sandboxed hooks in a throwaway isolate (the worker pool). */
export interface HookLoader {
  load(hook: RunnableHook, limits: Limits): Promise<LoadOutcome>
}

/** What changed, for the sessions that use the hook. Each carries the diagnostic to push. */
export type RegistryEvent =
  | { type: 'loaded'; name: string; hook: LoadedHook; previous?: LoadedHook; diagnostic: Diagnostic }
  | { type: 'failed'; name: string; served?: LoadedHook; diagnostic: Diagnostic }
  | { type: 'removed'; name: string; last?: LoadedHook; diagnostic: Diagnostic }

export type RegistryListener = (event: RegistryEvent) => void

interface Entry {
  name: string
  served?: LoadedHook
  lastError?: Diagnostic
  status: HookStatus
  /** Digest of the files last applied, good or bad: the same files are not loaded twice. */
  digest: string
  /** hook.json "onError" as last read (a hook that did not load may still ask to refuse gates). */
  onError: OnError
}

export interface RegistryOptions {
  /** Loads sandboxed hooks (compiles and evaluates each version once before it serves). */
  loader: HookLoader
  /** Runs sandboxed hooks: given to each one the registry serves. */
  runner: HookRunner
  /** The limits a load runs under. */
  limits: Limits
  /**
   * Which remote-hook addresses this registry's folders may name (a tenant's `remoteHooks`,
   * remote-allow.ts). A refused address is a `load` failure and is never contacted. Absent: any.
   */
  allowRemote?: RemoteAllow
  /** Ask a remote hook that could not be described again later (1 s doubling to 30 s). Default true. */
  retryRemotes?: boolean
  /**
   * Sandboxed hooks loaded at once. A load's wall-time limit runs from when the worker starts it: loading
   * a whole folder at once on a busy machine would spend those limits waiting for each other. Default 2.
   */
  loadConcurrency?: number
  /**
   * Follow symbolic links in hook folders (a development setup that links hooks in; hook-folder.ts).
   * Default false. Never with tenants: a tenant's link could read another tenant's files.
   */
  followSymlinks?: boolean
}

/** What a load failure's message tells the reader to do; `stale` when an older version still serves. */
interface Remedy {
  skipped: string
  stale: string
}

/** A version loaded, or why not. */
type LoadResult =
  | { ok: true; hook: LoadedHook }
  | {
      ok: false
      message: string
      file: string
      line?: number | undefined
      /** Absent: the message itself says what to do. */
      remedy: Remedy | undefined
      /** The same failure as last time (a remote hook's retry): not announced again. */
      repeat?: boolean
      /** hook.json "onError", when hook.json could be read. */
      onError?: OnError
    }

export class Registry {
  readonly root: string
  private readonly entries = new Map<string, Entry>()
  /** The last version served by hooks whose folder was removed, for sessions that still declare them. */
  private readonly tombstones = new Map<string, LoadedHook>()
  /** Bumped by every apply: a load that finishes after a newer apply started is dropped. */
  private readonly generations = new Map<string, number>()
  private readonly listeners = new Set<RegistryListener>()
  private watcher: HookWatcher | undefined
  /** Clients of remote hooks and their Describe retries. */
  private readonly remotes: RemoteHooks
  private readonly loads: Semaphore
  /** Reads hook folders, bundling those that need it. */
  private readonly sources: HookSources
  /** What runs every sandboxed hook: the given runner, with failures mapped to the author's source. */
  private readonly runner: AuthorRunner
  /** Source maps of bundled versions, by hook: the served one and the one before (calls in flight). */
  private readonly sourceMaps = new Map<string, Map<string, SourceMap>>()
  /**
   * Hooks whose folder is bundled (any source file in it, outside node_modules, may change them), each
   * with the folders below it that hold files of its last good bundle: the only ones watched (a folder
   * of thousands of others must not cost the sidecar thousands of watches).
   */
  private readonly bundledFolders = new Map<string, ReadonlySet<string>>()

  constructor(
    root: string,
    private readonly options: RegistryOptions,
  ) {
    this.root = resolve(root)
    this.loads = new Semaphore(options.loadConcurrency ?? 2)
    this.sources = new HookSources(this.root, { followSymlinks: options.followSymlinks === true })
    this.runner = new AuthorRunner(options.runner, (name, version) => this.sourceMaps.get(name)?.get(version))
    const reload = (name: string): Promise<unknown> => this.read(name).then((files) => this.apply(files, true))
    this.remotes = new RemoteHooks(closestPoint, options.retryRemotes === false ? undefined : reload)
  }

  /** Loads every hook folder under the root. Returns the load diagnostics. */
  async loadAll(): Promise<Diagnostic[]> {
    const names = await this.names()
    const diagnostics: Diagnostic[] = []
    // Reads are bounded too: a folder of many (or huge) hooks is read a few folders at a time.
    const reads = new Semaphore(4)
    await Promise.all(
      names.map(async (name) => {
        const d = await reads.run(() => this.loadOne(name))
        if (d) diagnostics.push(d)
      }),
    )
    return diagnostics.sort((a, b) => a.hook.localeCompare(b.hook))
  }

  /** The hook folder names under the root, sorted. */
  names(): Promise<string[]> {
    return hookFolderNames(this.root)
  }

  /** Loads (or reloads) one hook folder now. Returns a diagnostic when it failed to load. */
  async loadOne(name: string): Promise<Diagnostic | undefined> {
    return this.apply(await this.read(name))
  }

  /** Reads a hook folder's files (and bundles them when the folder needs it), without loading them. */
  read(name: string): Promise<HookFiles> {
    return this.sources.read(name)
  }

  /**
   * Whether a change to `file` (relative to the hook's folder) may change the hook: its entry, hook.json
   * and package files, and every file its last bundle was made from (hot reload, hook-watcher.ts).
   */
  watches(name: string, file: string): boolean {
    return HOOK_FILES.has(file) || this.sources.inputsOf(name).includes(file) || (this.bundled(name) && BUNDLED_SOURCE.test(file) && !/^(?:node_modules|tests)\//.test(file))
  }

  /** The 1-based line of `needle` (an export's name) in the author's source of a served hook. */
  lineOf(hook: LoadedHook, needle: string): { file: string; line: number } | undefined {
    if (!hook.sourceMap) {
      const line = exportLine(hook.source, needle)
      return line === undefined ? undefined : { file: hook.filename, line }
    }
    const map = this.sourceMaps.get(hook.name)?.get(hook.version)
    return map ? mappedExport(map, hook.name, hook.source, needle) : undefined
  }

  /** The digest of the files last applied for a hook; that of an absent folder when there is none. */
  digestOf(name: string): string {
    return this.entries.get(name)?.digest ?? ABSENT
  }

  /**
   * Applies a snapshot: loads it and, if it loads, serves it (one assignment). A snapshot of a missing
   * folder removes the hook. `force`: a remote hook's retry, which must describe it again although its
   * files are the same. Returns the diagnostic when it failed to load.
   */
  async apply(files: HookFiles, force = false): Promise<Diagnostic | undefined> {
    const { name } = files
    const generation = (this.generations.get(name) ?? 0) + 1
    this.generations.set(name, generation)
    const current = this.entries.get(name)
    if (files.bundle !== undefined) {
      const folders = foldersOf(files.bundle.inputs)
      this.bundledFolders.set(name, folders)
      this.watcher?.follow(name, folders)
    } else if (files.bundleError !== undefined) {
      if (!this.bundledFolders.has(name)) this.bundledFolders.set(name, new Set())
    } else this.bundledFolders.delete(name)
    if (!files.present) {
      this.remotes.settled(name)
      if (current) this.remove(current)
      return undefined
    }
    if (!force) {
      if (current?.digest === files.digest) return current.lastError
      this.remotes.settled(name)
    }
    const result = await this.load(files)
    // A newer snapshot (or a removal) was applied while this one loaded: it wins.
    if (this.generations.get(name) !== generation) return undefined
    if (result.ok) return this.serve(result.hook, files.digest)
    if (result.repeat && current?.lastError) return current.lastError
    return this.fail(files, result.message, result.file, result.line, result.remedy, result.onError ?? current?.onError ?? 'default')
  }

  /** The version served now, or undefined when the hook does not exist or never loaded. */
  get(name: string): LoadedHook | undefined {
    return this.entries.get(name)?.served
  }

  /** True when a folder by that name exists, loaded or not. */
  has(name: string): boolean {
    return this.entries.has(name)
  }

  /** hook.json "onError" of a hook, served or not ('default' when there is no such hook). */
  onErrorOf(name: string): OnError {
    return this.entries.get(name)?.onError ?? 'default'
  }

  /** The last version a hook served before its folder was removed (undefined once it is back). */
  removed(name: string): LoadedHook | undefined {
    return this.entries.has(name) ? undefined : this.tombstones.get(name)
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
        if (e.served?.description) info.description = e.served.description
        if (e.lastError) info.lastError = e.lastError
        return info
      })
  }

  /** Calls `listener` for every change from now on. Returns the unsubscribe function. */
  subscribe(listener: RegistryListener): () => void {
    this.listeners.add(listener)
    return () => {
      this.listeners.delete(listener)
    }
  }

  /** Starts watching the root for edits (hot reload). Resolves once the watcher is ready. */
  async watch(options: WatchOptions = {}): Promise<void> {
    if (this.watcher) return
    this.watcher = await HookWatcher.start(this, options)
  }

  /** Retires the registry: stops watching and closes the clients of its remote hooks. */
  async close(): Promise<void> {
    await this.unwatch()
    this.remotes.close()
  }

  /** Stops watching; waits (bounded) for a reload in progress. */
  async unwatch(): Promise<void> {
    const watcher = this.watcher
    this.watcher = undefined
    await watcher?.close()
  }

  /** Loads a snapshot of a present folder: a remote hook if hook.json names a server, else a sandboxed one. */
  private async load(files: HookFiles): Promise<LoadResult> {
    const { name } = files
    const filename = `${name}/index.js`
    const jsonFile = `${name}/hook.json`
    const fail = (message: string, file = filename, line?: number): LoadResult => ({ ok: false, message, file, line, remedy: editRemedy(file) })

    if (files.sourceError !== undefined) return fail(files.sourceError)
    if (files.configError !== undefined) return fail(files.configError, jsonFile)
    // hook.json first: its "remote" makes a remote hook, which has no index.js.
    let config: unknown = {}
    let remote: RemoteAddress | undefined
    let onError: OnError = 'default'
    let description: string | undefined
    if (files.configText !== undefined) {
      const checked = checkHookJson(files.configText)
      if (!checked.ok) return fail(checked.message, jsonFile, checked.line)
      config = checked.config ?? {}
      onError = checked.onError ?? 'default'
      description = checked.description
      if (checked.remote !== undefined) {
        try {
          remote = remoteAddress(checked.remote, join(this.root, name, 'hook.json'))
        } catch (err) {
          return fail((err as Error).message, jsonFile, exportLine(files.configText, '"remote"'))
        }
      }
    }
    if (remote) {
      if (files.source !== undefined) {
        return fail(
          `hook.json declares a remote hook, and ${filename} exists too; a hook is either sandboxed (index.js) or remote (hook.json "remote"): remove one`,
          jsonFile,
        )
      }
      const refused = this.options.allowRemote?.(remote)
      // Refused before any connection: a tenant must not make the sidecar dial an address it chose.
      if (refused !== undefined) return { ok: false, message: refused, file: jsonFile, line: exportLine(files.configText ?? '', '"remote"'), remedy: undefined, onError }
      return withSettings(await this.loadRemote(files, remote, config), onError, description)
    }
    return withSettings(await this.loadSandboxed(files, config, fail), onError, description)
  }

  private async loadSandboxed(files: HookFiles, config: unknown, fail: (message: string, file?: string, line?: number) => LoadResult): Promise<LoadResult> {
    const { name } = files
    if (files.bundleError !== undefined) {
      const { message, file, line } = files.bundleError
      return fail(withHint(message), `${name}/${file}`, line)
    }
    const filename = `${name}/${files.bundle?.entry ?? 'index.js'}`
    if (files.source === undefined) {
      return fail(
        `hook '${name}' has no index.js; create ${name}/index.js (or index.ts, index.mjs) exporting its points, or make it a remote hook by naming its server in ${name}/hook.json ("remote": "unix:PATH" or "HOST:PORT")`,
        filename,
      )
    }
    if (files.source.trim() === '') {
      return fail(`${filename} is empty; it must export the points it handles, e.g. module.exports = { beforeToolExecute(ctx, call) {} }`, filename)
    }
    const source = files.source
    const sourceMap = files.bundle?.sourceMap
    const map = sourceMap !== undefined ? parseSourceMap(sourceMap) : undefined
    // A version names what runs: the script (a bundle's included) and hook.json.
    const version = versionOf(source, files.configText)
    const outcome = await this.loads.run(() => this.options.loader.load({ name, version, filename, source }, this.options.limits))
    if (!outcome.ok) {
      const at = this.authorPosition(name, filename, source, map, outcome.line)
      const message = at.pastEnd ? endOfFileMessage(outcome.message) : outcome.message
      return fail(withHint(message), at.file, at.line)
    }
    const points = new Set<PointName>()
    const unknownExports: string[] = []
    for (const exported of outcome.exports) {
      if (isPointName(exported)) points.add(exported)
      else unknownExports.push(exported)
    }
    if (points.size === 0) {
      // Serving it would silently switch the hook off (a typo in the only export name, say).
      const exported = unknownExports.length ? `; it exports ${namesWithHints(unknownExports)}` : ''
      const at = (map && mappedExport(map, name, source, unknownExports[0])) || this.authorPosition(name, filename, source, undefined, map ? undefined : exportLine(source, unknownExports[0]))
      const hint = hintFor({ exported: unknownExports[0] })
      return fail(
        `the hook exports no hook point${exported}; export at least one, e.g. module.exports = { beforeToolExecute(ctx, call) {} }${hint && unknownExports[0] === 'default' ? `; ${hint}` : ''}`,
        at.file,
        at.line,
      )
    }
    const hook: LoadedHook = { name, version, filename, source, config, points, unknownExports, loadedAtMs: Date.now(), runner: this.runner, onError: 'default' }
    if (sourceMap !== undefined) hook.sourceMap = sourceMap
    return { ok: true, hook }
  }

  /**
   * Where a line of the script the isolate ran is in the author's files: through the source map for a
   * bundle; kept inside the file for a plain script (a syntax error at its very end is reported by V8
   * on the line of hookd's wrapper after it, one past the author's last line).
   */
  private authorPosition(name: string, filename: string, source: string, map: SourceMap | undefined, line: number | undefined): { file: string; line?: number; pastEnd?: boolean } {
    if (line === undefined) return { file: filename }
    if (map) {
      const at = mapPosition(map, line)
      return at ? { file: `${name}/${at.file}`, line: at.line } : { file: filename }
    }
    const last = endOfFileLine(source)
    return line > last ? { file: filename, line: last, pastEnd: true } : { file: filename, line }
  }

  /** Loads a remote hook by asking its Describe; a failure is retried (remote-hooks.ts). */
  private async loadRemote(files: HookFiles, address: RemoteAddress, config: unknown): Promise<LoadResult> {
    const { name } = files
    const filename = `${name}/hook.json`
    const outcome = await this.remotes.describe(name, address)
    if (!outcome.ok) {
      const repeat = this.remotes.failed(name, outcome.message)
      // The message says what to do; a retry picks up a server that starts (or is fixed) later.
      const retry = 'hookd asks the server again after 1 s, then less often (up to every 30 s)'
      const line = exportLine(files.configText ?? '', '"remote"')
      return { ok: false, message: outcome.message, file: filename, line, remedy: this.remotes.retrying ? { skipped: retry, stale: retry } : undefined, repeat }
    }
    this.remotes.settled(name)
    const hook: LoadedHook = {
      name,
      version: versionOf(`remote\0${address.text}\0${outcome.version}\0${outcome.exports.join(',')}`, files.configText),
      filename,
      source: '',
      config,
      points: new Set(outcome.exports.filter(isPointName)),
      unknownExports: [],
      loadedAtMs: Date.now(),
      runner: this.remotes.hook(name, address),
      remote: address.text,
      onError: 'default',
      ...(outcome.description ? { description: outcome.description } : {}),
    }
    return { ok: true, hook }
  }

  /** Serves a version that loaded (one assignment) and announces it. */
  private serve(loaded: LoadedHook, digest: string): undefined {
    const { name, version, filename } = loaded
    const previous = this.entries.get(name)?.served
    this.rememberMap(loaded, previous)
    this.entries.set(name, { name, served: loaded, status: 'ready', digest, onError: loaded.onError })
    this.tombstones.delete(name)
    const message = !previous
      ? `hook '${name}' loaded version ${version}`
      : previous.version === version
        ? `hook '${name}' loads again: serving version ${version}`
        : `hook '${name}' reloaded: now serving version ${version} (was ${previous.version})`
    const diagnostic: Diagnostic = { hook: name, point: '', kind: 'reload', message, file: filename, version }
    this.emit(previous ? { type: 'loaded', name, hook: loaded, previous, diagnostic } : { type: 'loaded', name, hook: loaded, diagnostic })
    return undefined
  }

  /** Records a load failure. `remedy` absent: the error itself says what to do. */
  private fail(files: HookFiles, error: string, file: string, line: number | undefined, remedy: Remedy | undefined, onError: OnError = 'default'): Diagnostic {
    const { name } = files
    const served = this.entries.get(name)?.served
    const where = `${file}${line !== undefined ? `:${line}` : ''}`
    const message = served
      ? `hook '${name}' failed to reload: ${where}: ${error}. Still serving version ${served.version} (loaded ${new Date(served.loadedAtMs).toISOString()})${remedy ? `; ${remedy.stale}` : ''}`
      : `${error}. The hook is skipped until it loads${remedy ? `; ${remedy.skipped}` : ''}`
    const d: Diagnostic = { hook: name, point: '', kind: 'load', message, file }
    if (line !== undefined) d.line = line
    if (served) d.version = served.version
    const entry: Entry = { name, lastError: d, status: served ? 'stale' : 'broken', digest: files.digest, onError }
    if (served) entry.served = served
    this.entries.set(name, entry)
    this.tombstones.delete(name)
    this.emit(served ? { type: 'failed', name, served, diagnostic: d } : { type: 'failed', name, diagnostic: d })
    return d
  }

  /** Keeps the source maps of the version now served and of the one before it (calls still in flight). */
  private rememberMap(loaded: LoadedHook, previous: LoadedHook | undefined): void {
    const kept = new Map<string, SourceMap>()
    const old = this.sourceMaps.get(loaded.name)
    const previousMap = previous ? old?.get(previous.version) : undefined
    if (previous && previousMap) kept.set(previous.version, previousMap)
    const map = loaded.sourceMap !== undefined ? parseSourceMap(loaded.sourceMap) : undefined
    if (map) kept.set(loaded.version, map)
    if (kept.size) this.sourceMaps.set(loaded.name, kept)
    else this.sourceMaps.delete(loaded.name)
  }

  /** True when the hook's folder was bundled (or failed to be) when it was last applied. */
  private bundled(name: string): boolean {
    return this.bundledFolders.has(name)
  }

  /** The folders below a bundled hook's folder that hold files of its last bundle ('lib', 'lib/rules'). */
  watchedFolders(name: string): ReadonlySet<string> {
    return this.bundledFolders.get(name) ?? NO_FOLDERS
  }

  private remove(entry: Entry): void {
    const { name, served } = entry
    this.entries.delete(name)
    if (served) this.tombstones.set(name, served)
    const diagnostic: Diagnostic = {
      hook: name,
      point: '',
      kind: 'hook-removed',
      message: `hook '${name}' was removed (its folder ${join(this.root, name)} is gone); sessions that declared it skip it from now on, and new sessions cannot declare it. Restore the folder to serve it again`,
    }
    if (served) diagnostic.version = served.version
    this.emit(served ? { type: 'removed', name, last: served, diagnostic } : { type: 'removed', name, diagnostic })
  }

  private emit(event: RegistryEvent): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event)
      } catch {
        // A listener (a session's stream) that fails must not stop the others from hearing.
      }
    }
  }
}

/** A load's result with hook.json's "onError" attached (to the hook, or to the failure). */
/** A load's result with what hook.json says of the hook: its "onError", and its "description" when it has one. */
function withSettings(result: LoadResult, onError: OnError, description: string | undefined): LoadResult {
  if (!result.ok) return { ...result, onError }
  return { ok: true, hook: { ...result.hook, onError, ...(description !== undefined ? { description } : {}) } }
}

const NO_FOLDERS: ReadonlySet<string> = new Set()

/** Where an export of a bundle is in the author's files: its first place in the bundle that maps to one. */
function mappedExport(map: SourceMap, name: string, source: string, needle: string | undefined): { file: string; line: number } | undefined {
  for (const line of exportLines(source, needle)) {
    const at = mapPosition(map, line)
    if (at) return { file: `${name}/${at.file}`, line: at.line }
  }
  return undefined
}

/** The folders (relative, '/'-separated) that hold a bundle's inputs, its packages' left out. */
function foldersOf(inputs: readonly string[]): ReadonlySet<string> {
  const folders = new Set<string>()
  for (const input of inputs) {
    const parts = input.split('/')
    parts.pop()
    if (parts.includes('node_modules')) continue
    for (let i = 1; i <= parts.length; i++) folders.add(parts.slice(0, i).join('/'))
  }
  return folders
}

/** A load failure's text with the hint for it, when author-hints.ts has one. */
function withHint(message: string): string {
  const hint = hintFor({ kind: 'load', message })
  return hint === undefined ? message : `${message}; ${hint}`
}

/** V8's error at the wrapper after a file that ended too early ("Unexpected token ')'"), in the author's terms. */
function endOfFileMessage(message: string): string {
  const kind = /^(\w*Error):/.exec(message)?.[1] ?? 'SyntaxError'
  return `${kind}: the file ends before its code is complete: a {, ( or [ is never closed, or the last statement is cut off`
}

function editRemedy(file: string): Remedy {
  return { skipped: `fix ${file} and save it`, stale: `fix ${file} and save it again` }
}
