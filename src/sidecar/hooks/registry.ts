/**
 * The hook registry: the hook folders under one root, each `<root>/<name>/index.js` (a sandboxed hook) or
 * a `hook.json` naming a server (a remote hook), with an optional `hook.json` configuration. Every version
 * of a hook is loaded before it is served: a sandboxed hook is compiled and evaluated in a throwaway
 * isolate, a remote hook is asked what it serves (Describe). One that fails to load is reported as a
 * `load` diagnostic and never served. Versions are content hashes of the hook's files.
 *
 * Each served hook carries the `HookRunner` that runs it, so a session runs a hook without knowing
 * which kind it is. The kinds are behind one interface (kinds/hook-kind.ts): the registry reads the
 * folder and its hook.json, asks its kinds in turn which one claims it, and has that one load it.
 * What the registry knows of each hook is one record (hook-record.ts).
 *
 * Hot reload (hook-watcher.ts, docs/hot-reload.md) feeds the registry settled snapshots of a folder
 * (`read` then `apply`). A new version replaces the served one in a single assignment, so a point call
 * that already resolved its hooks keeps the version it started with. A version that fails to load leaves
 * the last good one serving (status `stale`). Whatever changes is announced to subscribers, which the
 * sessions turn into diagnostics pushed to their hosts.
 */
import { resolve } from 'node:path'
import type { Diagnostic } from '../../protocol/diagnostic.js'
import type { HookInfoData, OnError } from '../../protocol/wire.js'
import { ENTRY_FILES } from './bundle-plan.js'
import { ABSENT, type HookFiles, hookFolderNames } from './hook-folder.js'
import { checkHookJson, exportLine, mappedExport } from './hook-files.js'
import { HookRecord, type RegistryEvent } from './hook-record.js'
import { HookSources } from './hook-source.js'
import { HookWatcher, type WatchOptions } from './hook-watcher.js'
import { readSettings } from './kinds/hook-settings.js'
import { type HookKind, type LoadResult, type LoadedHook } from './kinds/hook-kind.js'
import { type RemoteOptions, RemoteKind } from './kinds/remote-kind.js'
import { type SandboxedOptions, SandboxedKind } from './kinds/sandboxed-kind.js'
import { Semaphore } from '../semaphore.js'
import type { Admission } from '../pinning/admission.js'

export type { LoadedHook } from './kinds/hook-kind.js'
export type { HookLoader } from './kinds/sandboxed-kind.js'
export type { RegistryEvent } from './hook-record.js'

/**
 * The files of a hook folder whose change may change the hook: its entry, hook.json, and what decides
 * its packages (package.json, the lock files npm and yarn write on every install).
 */
const HOOK_FILES = new Set<string>([
  ...ENTRY_FILES,
  'hook.json',
  // A signature that comes, goes or changes changes whether the hook may serve (--require-signed).
  'hook.sig',
  'package.json',
  'package-lock.json',
  'npm-shrinkwrap.json',
  'yarn.lock',
  'node_modules/.package-lock.json',
  'node_modules/.yarn-integrity',
])

/** Files a bundle may be made from: in a bundled folder, a new one may change what an import finds. */
const BUNDLED_SOURCE = /\.(?:[cm]?[jt]sx?|json|txt)$/

const NO_FOLDERS: ReadonlySet<string> = new Set()

export type RegistryListener = (event: RegistryEvent) => void

export interface RegistryOptions extends SandboxedOptions, RemoteOptions {
  /**
   * Follow symbolic links in hook folders (a development setup that links hooks in; hook-folder.ts).
   * Default false. Never with tenants: a tenant's link could read another tenant's files.
   */
  followSymlinks?: boolean
  /**
   * What is pinned (pinning/admission.ts): hookd.lock, --locked, --require-signed. A version it holds is
   * a load failure, so the last version it let through keeps serving. Absent: every version that loads serves.
   */
  admission?: Admission
  /** Where the registry's own news goes that is not a hook's (the lock file cannot be read). Default stderr. */
  report?: (line: string) => void
  /**
   * Every hook must declare its permissions (hook.json "permissions"; `hookd serve
   * --require-permissions`, a tenant's `requirePermissions`): one without them does not load.
   */
  requirePermissions?: boolean
}

export class Registry {
  /** The hooks folder; a bundle swap (`replaceRoot`) moves it to the new revision's folder. */
  private rootDir: string
  /** The revision of the bundle served (hookd serve --hooks-from), when the hooks come from one. */
  revision: string | undefined
  /** One record per hook name the registry has met, while it holds anything (hook-record.ts). */
  private readonly records = new Map<string, HookRecord>()
  /** Applies so far: each apply's generation, so that a load finishing after a newer apply is dropped. */
  private applies = 0
  private readonly listeners = new Set<RegistryListener>()
  private watcher: HookWatcher | undefined
  /** Reads hook folders, bundling those that need it. */
  private sources: HookSources
  /** The hook kinds, asked in this order which one a folder is (the last claims every folder). */
  private readonly kinds: readonly HookKind[]
  private readonly admission: Admission | undefined
  private readonly requirePermissions: boolean
  private readonly followSymlinks: boolean
  private readonly report: (line: string) => void
  /** Stops watching the lock file. */
  private unwatchLock: (() => void) | undefined
  /** What else closes with the registry (the bundle source that feeds it). */
  private readonly owned: Array<() => Promise<void>> = []

  constructor(root: string, options: RegistryOptions) {
    this.rootDir = resolve(root)
    this.admission = options.admission
    this.requirePermissions = options.requirePermissions === true
    this.report = options.report ?? ((line) => void process.stderr.write(`hookd: ${line}\n`))
    this.sources = new HookSources(this.root, { followSymlinks: options.followSymlinks === true })
    const reload = (name: string): Promise<unknown> => this.read(name).then((files) => this.apply(files, true))
    this.followSymlinks = options.followSymlinks === true
    this.kinds = [new RemoteKind(() => this.root, options, reload), new SandboxedKind(options, (name, version) => this.records.get(name)?.sourceMap(version))]
  }

  get root(): string {
    return this.rootDir
  }

  /**
   * Serves the hooks of another folder at once (a verified bundle, bundles/bundle-source.ts): every
   * hook of `root` is read and loaded first, each read's content digest must be `digests`' entry
   * (the bundle's lock), and only when all of them loaded are they served, in one synchronous step,
   * with the hooks `root` lacks removed: a point call sees the old revision or the new one, never a
   * mix. Anything that fails leaves the old revision serving; the diagnostics say what failed.
   */
  async replaceRoot(root: string, revision: string, digests: ReadonlyMap<string, string>): Promise<Diagnostic[]> {
    const dir = resolve(root)
    const sources = new HookSources(dir, { followSymlinks: this.followSymlinks })
    const names = await hookFolderNames(dir)
    const reads = new Semaphore(4)
    const problems: Diagnostic[] = []
    const ready: Array<{ files: HookFiles; loaded: Extract<LoadResult, { ok: true }> }> = []
    await Promise.all(
      names.map((name) =>
        reads.run(async () => {
          const files = await sources.read(name)
          const fail = (message: string, file = `${name}/hook.json`): void => void problems.push({ hook: name, point: '', kind: 'load', message, file })
          if (files.content?.digest !== digests.get(name)) return fail(`hook '${name}' of revision ${revision} is not what its lock pins (read ${files.content?.digest ?? 'nothing'}, locked ${digests.get(name) ?? 'nothing'})`)
          const result = await this.load(files)
          if (!result.ok) return fail(`hook '${name}' of revision ${revision} does not load: ${result.message}`, result.file)
          ready.push({ files, loaded: result })
        }),
      ),
    )
    for (const name of digests.keys()) if (!names.includes(name)) problems.push({ hook: name, point: '', kind: 'load', message: `hook '${name}' of revision ${revision} is in its lock but not in the bundle`, file: `${name}/hook.json` })
    if (problems.length) return problems.sort((a, b) => a.hook.localeCompare(b.hook))
    // From here on, synchronous: no call starts between the first hook swapped and the last.
    this.rootDir = dir
    this.sources = sources
    this.revision = revision
    for (const { files, loaded } of ready) {
      const record = this.recordOf(files.name)
      record.generation = ++this.applies
      record.bundledAs(files)
      for (const kind of this.kinds) kind.forget(files.name)
      this.emit(record.serve(loaded.hook, files.digest, loaded.map))
    }
    for (const record of [...this.records.values()]) {
      if (names.includes(record.name)) continue
      record.generation = ++this.applies
      const removed = record.remove(dir)
      if (record.empty) this.records.delete(record.name)
      if (removed) this.emit(removed)
    }
    return []
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
    return (
      HOOK_FILES.has(file) ||
      this.sources.inputsOf(name).includes(file) ||
      (this.records.get(name)?.bundled === true && BUNDLED_SOURCE.test(file) && !/^(?:node_modules|tests)\//.test(file))
    )
  }

  /** The folders below a bundled hook's folder that hold files of its last bundle ('lib', 'lib/rules'). */
  watchedFolders(name: string): ReadonlySet<string> {
    return this.records.get(name)?.bundleFolders ?? NO_FOLDERS
  }

  /** The 1-based line of `needle` (an export's name) in the author's source of a served hook. */
  lineOf(hook: LoadedHook, needle: string): { file: string; line: number } | undefined {
    if (!hook.sourceMap) {
      const line = exportLine(hook.source, needle)
      return line === undefined ? undefined : { file: hook.filename, line }
    }
    const map = this.records.get(hook.name)?.sourceMap(hook.version)
    return map ? mappedExport(map, hook.name, hook.source, needle) : undefined
  }

  /** The digest of the files last applied for a hook; that of an absent folder when there is none. */
  digestOf(name: string): string {
    return this.records.get(name)?.digest ?? ABSENT
  }

  /**
   * Applies a snapshot: loads it and, if it loads, serves it (one assignment). A snapshot of a missing
   * folder removes the hook. `force`: a remote hook's retry, which must describe it again although its
   * files are the same. Returns the diagnostic when it failed to load.
   */
  async apply(files: HookFiles, force = false, recheck = false): Promise<Diagnostic | undefined> {
    const { name } = files
    const record = this.recordOf(name)
    const generation = ++this.applies
    record.generation = generation
    const folders = record.bundledAs(files)
    if (folders) this.watcher?.follow(name, folders)
    if (!files.present) {
      for (const kind of this.kinds) kind.forget(name)
      const removed = record.remove(this.root)
      if (record.empty) this.records.delete(name)
      if (removed) this.emit(removed)
      return undefined
    }
    if (!force) {
      if (record.digest === files.digest && !recheck) return record.lastError
      for (const kind of this.kinds) kind.forget(name)
    }
    const result = await this.load(files)
    // A newer snapshot (or a removal) was applied while this one loaded: it wins.
    const now = this.records.get(name)
    if (now?.generation !== generation) return undefined
    if (result.ok) {
      this.emit(now.serve(result.hook, files.digest, result.map))
      return undefined
    }
    if (result.repeat && now.lastError) return now.lastError
    const failed = now.fail(files.digest, result.message, result.file, result.line, result.remedy, result.onError ?? now.onError)
    this.emit(failed)
    return failed.diagnostic
  }

  /**
   * Judges every hook again, its files read anew (the lock file changed: a held version may now be
   * approved, a served one no longer pinned). Versions that are judged as before are not announced again.
   */
  async recheck(): Promise<void> {
    const names = [...this.records.values()].filter((r) => r.present).map((r) => r.name)
    const reads = new Semaphore(4)
    await Promise.all(names.map((name) => reads.run(async () => this.apply(await this.read(name), false, true))))
  }

  /** The version served now, or undefined when the hook does not exist or never loaded. */
  get(name: string): LoadedHook | undefined {
    return this.records.get(name)?.served
  }

  /** True when a folder by that name exists, loaded or not. */
  has(name: string): boolean {
    return this.records.get(name)?.present === true
  }

  /** hook.json "onError" of a hook, served or not ('default' when there is no such hook). */
  onErrorOf(name: string): OnError {
    return this.records.get(name)?.onError ?? 'default'
  }

  /** The last version a hook served before its folder was removed (undefined once it is back). */
  removed(name: string): LoadedHook | undefined {
    return this.records.get(name)?.removed
  }

  list(): HookInfoData[] {
    return [...this.records.values()]
      .filter((r) => r.present)
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((r) => r.info())
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
    this.unwatchLock ??= this.admission?.watch(
      () => void this.recheck(),
      (message) => this.report(`the lock file cannot be read, the last one read still holds: ${message}`),
    )
  }

  /** Retires the registry: stops watching and closes what its kinds hold (the clients of its remote hooks). */
  async close(): Promise<void> {
    for (const close of this.owned.splice(0)) await close()
    await this.unwatch()
    for (const kind of this.kinds) kind.close()
  }

  /** Closes `close` with the registry (a bundle source that feeds it: bundles/bundle-source.ts). */
  adopt(close: () => Promise<void>): void {
    this.owned.push(close)
  }

  /** Stops watching; waits (bounded) for a reload in progress. */
  async unwatch(): Promise<void> {
    const watcher = this.watcher
    this.watcher = undefined
    this.unwatchLock?.()
    this.unwatchLock = undefined
    await watcher?.close()
  }

  /** The record of `name`, made when there is none yet. */
  private recordOf(name: string): HookRecord {
    let record = this.records.get(name)
    if (!record) {
      record = new HookRecord(name)
      this.records.set(name, record)
    }
    return record
  }

  /**
   * Loads a snapshot of a present folder: checks what every kind relies on (the folder readable,
   * hook.json valid), then has the kind that claims the folder load it, and attaches hook.json's
   * "onError", "mode", "description" and "tools" to what it made (a failure keeps "onError" too).
   */
  private async load(files: HookFiles): Promise<LoadResult> {
    const { name } = files
    const read = readSettings(files, this.requirePermissions)
    if (!read.ok) return read.failure
    const { settings, written } = read
    const served = this.records.get(name)?.served
    const held = this.admission?.judge({ files, permissions: written, served: served !== undefined, servedPermissions: served?.writtenPermissions })
    if (held) return { ok: false, message: held.message, file: held.file, remedy: held.remedy, repeat: held.repeat, onError: settings.onError }
    const kind = this.kinds.find((k) => k.claims(files, settings)) as HookKind
    const result = await kind.load(files, settings)
    if (!result.ok) return { ...result, onError: settings.onError }
    const { description, tools } = settings
    const pinned = { ...(files.content ? { digest: files.content.digest } : {}), ...(written !== undefined ? { writtenPermissions: written } : {}) }
    const declared = settings.permissions !== undefined ? { permissions: settings.permissions } : {}
    return { ...result, hook: { ...result.hook, onError: settings.onError, mode: settings.mode, ...(description !== undefined ? { description } : {}), ...declared, ...pinned, ...(tools !== undefined ? { tools: new Set(tools) } : {}) } }
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
