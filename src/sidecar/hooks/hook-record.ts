/**
 * Everything the registry (registry.ts) knows of one hook name, in one record: its folder as last
 * applied (the digest of those files, the status, the version served, which is the last good one when
 * the latest edit failed, and that edit's load error, hook.json's "onError"), the version it served
 * before its folder was removed, the source maps of the versions that may still have calls in flight,
 * the folders of its last bundle (the only ones watched below it), and the generation of the latest
 * apply. Its changes (serve, fail, remove) are whole-record steps that say what to announce.
 */
import { join } from 'node:path'
import type { Diagnostic } from '../../protocol/diagnostic.js'
import { describePermissions } from '../../protocol/hook-permissions.js'
import type { HookInfoData, HookStatus, OnError } from '../../protocol/wire.js'
import type { HookFiles } from './hook-folder.js'
import type { LoadedHook, Remedy } from './kinds/hook-kind.js'
import type { SourceMap } from './source-map.js'

/** What changed, for the sessions that use the hook. Each carries the diagnostic to push. */
export type RegistryEvent =
  | { type: 'loaded'; name: string; hook: LoadedHook; previous?: LoadedHook; diagnostic: Diagnostic }
  | { type: 'failed'; name: string; served?: LoadedHook; diagnostic: Diagnostic }
  | { type: 'removed'; name: string; last?: LoadedHook; diagnostic: Diagnostic }

/** The folder as last applied, while it is there. */
interface Folder {
  /** Digest of the files last applied, good or bad: the same files are not loaded twice. */
  digest: string
  status: HookStatus
  /** The version served: the last that loaded (`status` stale when a later edit failed). */
  served?: LoadedHook
  /** Why the latest edit failed to load. */
  lastError?: Diagnostic
  /** hook.json "onError" as last read (a hook that did not load may still ask to refuse gates). */
  onError: OnError
}

const NO_FOLDERS: ReadonlySet<string> = new Set()

export class HookRecord {
  /** The apply this record's state comes from: a load that finishes after a newer apply started is dropped. */
  generation = 0
  private folder: Folder | undefined
  /** The last version served before the folder was removed, for sessions that still declare it. */
  private tombstone: LoadedHook | undefined
  /** Source maps of bundled versions: the one served and the one before it (calls still in flight). */
  private maps = new Map<string, SourceMap>()
  /**
   * Set when the folder is bundled (any source file in it, outside node_modules, may change the hook):
   * the folders below it that hold files of its last good bundle.
   */
  private bundle: ReadonlySet<string> | undefined

  constructor(readonly name: string) {}

  /** True while its folder is there, loaded or not. */
  get present(): boolean {
    return this.folder !== undefined
  }

  get served(): LoadedHook | undefined {
    return this.folder?.served
  }

  /** The last version served before the folder was removed (undefined while it is there). */
  get removed(): LoadedHook | undefined {
    return this.folder ? undefined : this.tombstone
  }

  /** The digest of the files last applied; undefined when the folder is not there. */
  get digest(): string | undefined {
    return this.folder?.digest
  }

  get lastError(): Diagnostic | undefined {
    return this.folder?.lastError
  }

  get onError(): OnError {
    return this.folder?.onError ?? 'default'
  }

  get bundled(): boolean {
    return this.bundle !== undefined
  }

  /** The folders below it that hold files of its last bundle ('lib', 'lib/rules'). */
  get bundleFolders(): ReadonlySet<string> {
    return this.bundle ?? NO_FOLDERS
  }

  /** True when it holds nothing worth keeping: no folder, no tombstone. */
  get empty(): boolean {
    return this.folder === undefined && this.tombstone === undefined
  }

  sourceMap(version: string): SourceMap | undefined {
    return this.maps.get(version)
  }

  /** What `hookd list` and the session open show of it (while its folder is there). */
  info(): HookInfoData {
    const served = this.folder?.served
    const info: HookInfoData = {
      name: this.name,
      version: served?.version ?? '',
      points: served ? [...served.points] : [],
      status: this.folder?.status ?? 'broken',
      loadedAtMs: served?.loadedAtMs ?? 0,
    }
    if (served?.description) info.description = served.description
    if (served?.digest) info.digest = served.digest
    if (served?.permissions) info.permissions = describePermissions(served.permissions)
    if (this.folder?.lastError) info.lastError = this.folder.lastError
    return info
  }

  /**
   * Takes in how a snapshot was bundled: returns the folders to watch when it has a bundle. A folder
   * whose bundle failed stays bundled (with the folders of its last good bundle, if any).
   */
  bundledAs(files: HookFiles): ReadonlySet<string> | undefined {
    if (files.bundle !== undefined) {
      this.bundle = foldersOf(files.bundle.inputs)
      return this.bundle
    }
    if (files.bundleError !== undefined) this.bundle ??= new Set()
    else this.bundle = undefined
    return undefined
  }

  /** Serves a version that loaded (one assignment): the event announcing it. */
  serve(loaded: LoadedHook, digest: string, map: SourceMap | undefined): RegistryEvent {
    const { name, version, filename } = loaded
    const previous = this.folder?.served
    const kept = new Map<string, SourceMap>()
    const previousMap = previous ? this.maps.get(previous.version) : undefined
    if (previous && previousMap) kept.set(previous.version, previousMap)
    if (map) kept.set(version, map)
    this.maps = kept
    this.folder = { served: loaded, status: 'ready', digest, onError: loaded.onError }
    this.tombstone = undefined
    const message = !previous
      ? `hook '${name}' loaded version ${version}`
      : previous.version === version
        ? `hook '${name}' loads again: serving version ${version}`
        : `hook '${name}' reloaded: now serving version ${version} (was ${previous.version})`
    const diagnostic: Diagnostic = { hook: name, point: '', kind: 'reload', message, file: filename, version }
    return previous ? { type: 'loaded', name, hook: loaded, previous, diagnostic } : { type: 'loaded', name, hook: loaded, diagnostic }
  }

  /** Records a load failure of the files with `digest`; the last good version, if any, keeps serving. `remedy` absent: the error says what to do. */
  fail(digest: string, error: string, file: string, line: number | undefined, remedy: Remedy | undefined, onError: OnError): RegistryEvent & { type: 'failed' } {
    const { name } = this
    const served = this.folder?.served
    const where = `${file}${line !== undefined ? `:${line}` : ''}`
    const message = served
      ? `hook '${name}' failed to reload: ${where}: ${error}. Still serving version ${served.version} (loaded ${new Date(served.loadedAtMs).toISOString()})${remedy ? `; ${remedy.stale}` : ''}`
      : `${error}. The hook is skipped until it loads${remedy ? `; ${remedy.skipped}` : ''}`
    const d: Diagnostic = { hook: name, point: '', kind: 'load', message, file }
    if (line !== undefined) d.line = line
    if (served) d.version = served.version
    this.folder = { lastError: d, status: served ? 'stale' : 'broken', digest, onError, ...(served ? { served } : {}) }
    this.tombstone = undefined
    return served ? { type: 'failed', name, served, diagnostic: d } : { type: 'failed', name, diagnostic: d }
  }

  /** Its folder under `root` is gone: the event announcing it, or undefined when it was not there. */
  remove(root: string): RegistryEvent | undefined {
    if (!this.folder) return undefined
    const { name } = this
    const served = this.folder.served
    this.folder = undefined
    if (served) this.tombstone = served
    const diagnostic: Diagnostic = {
      hook: name,
      point: '',
      kind: 'hook-removed',
      message: `hook '${name}' was removed (its folder ${join(root, name)} is gone); sessions that declared it skip it from now on, and new sessions cannot declare it. Restore the folder to serve it again`,
    }
    if (served) diagnostic.version = served.version
    return served ? { type: 'removed', name, last: served, diagnostic } : { type: 'removed', name, diagnostic }
  }
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
