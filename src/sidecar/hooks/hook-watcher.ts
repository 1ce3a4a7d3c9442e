/**
 * Hot reload: watches a registry's root and hands the registry settled snapshots of the hook folders
 * that changed (settled-watcher.ts says how a snapshot settles). A bundled hook is rebuilt when any
 * file it was made from changes, or its package.json, or npm's lock files (an install). A snapshot that still catches an edit
 * half-way (a missing or empty index.js, a syntax error) fails to load and the registry keeps the last
 * good version serving; the next event reads again. See docs/hot-reload.md.
 */
import { join, sep } from 'node:path'
import type { HookFiles } from './hook-folder.js'
import { type SettleOptions, SettledWatcher } from './settled-watcher.js'
import { inert } from '../../protocol/text.js'

export interface WatchOptions extends SettleOptions {
  /** A watcher error (say, out of inotify watches). Default: one line on stderr. */
  onError?(err: Error): void
}

/**
 * How deep below a hook's folder its files are watched: a bundled hook imports its own files from
 * folders of its own (lib/, rules/...); its packages are watched through npm's lock files instead
 * of file by file (node_modules may hold thousands of folders, each of which would cost a watch).
 */
const DEPTH = 8

/** In a hook's node_modules, the files npm and yarn rewrite on every install: the only ones watched there. */
const INSTALL_MARKS = new Set(['.package-lock.json', '.yarn-integrity'])

/** What the watcher needs of the registry it feeds. */
export interface WatchedRegistry {
  readonly root: string
  /** Whether a change to `file` (relative to the hook's folder, '/'-separated) may change the hook. */
  watches(name: string, file: string): boolean
  /** The folders below a hook's folder ('lib', 'lib/rules') that hold files of its last bundle. */
  watchedFolders(name: string): ReadonlySet<string>
  names(): Promise<string[]>
  list(): ReadonlyArray<{ name: string }>
  read(name: string): Promise<HookFiles>
  digestOf(name: string): string
  apply(files: HookFiles): Promise<unknown>
}

export class HookWatcher {
  /** The folders `follow` added, by hook. */
  private readonly followed = new Map<string, Set<string>>()

  private constructor(
    private readonly watcher: SettledWatcher<HookFiles>,
    private readonly root: string,
  ) {}

  /** Starts watching; resolves once the root has been scanned. */
  static async start(registry: WatchedRegistry, options: WatchOptions = {}): Promise<HookWatcher> {
    const onError =
      options.onError ?? ((err: Error) => process.stderr.write(`hookd: ${inert(`watching ${registry.root}: ${err.message}; edits may be missed until restart`)}\n`))
    // Anything that changed between the registry's first load and the watcher's scan is caught too.
    const initial = new Set([...(await registry.names().catch(() => [])), ...registry.list().map((h) => h.name)])
    const watcher = await SettledWatcher.start<HookFiles>(
      `the hooks folder ${registry.root}`,
      {
        folder: registry.root,
        // <root>/<name>/<file>, and a bundled hook's files in folders below it.
        depth: DEPTH,
        ignore: (rel, isFolder) => ignored(registry, rel.split(sep), isFolder),
        // Only the folder itself and the files a hook is made of count (registry.watches): a file that
        // keeps changing beside them (a log, an editor's swap file) must not keep the folder from ever
        // going quiet. Names the registry does not accept as hooks read as absent, and so cost one stat.
        keyOf: (rel) => {
          const [name, ...file] = rel.split(sep)
          if (!name) return undefined
          if (file.length === 0 || registry.watches(name, file.join('/'))) return name
          return undefined
        },
        read: (name) => registry.read(name),
        same: (a, b) => a.digest === b.digest,
        applied: (name, files) => files.digest === registry.digestOf(name),
        apply: async (_name, files) => {
          await registry.apply(files)
        },
        onError,
      },
      options,
      initial,
    )
    return new HookWatcher(watcher, registry.root)
  }

  /**
   * Watches the folders of a hook's new bundle that were not watched yet (a folder only becomes worth a
   * watch once a bundle holds a file of it).
   */
  follow(name: string, folders: ReadonlySet<string>): void {
    const seen = this.followed.get(name) ?? new Set<string>()
    const added = [...folders].filter((f) => !seen.has(f))
    if (!added.length) return
    for (const f of added) seen.add(f)
    this.followed.set(name, seen)
    this.watcher.add(added.map((f) => join(this.root, name, ...f.split('/'))))
  }

  /** Stops watching and waits (bounded) for a reload in progress to finish. */
  close(): Promise<void> {
    return this.watcher.close()
  }
}

/**
 * What the watcher leaves alone, by path below the root (`parts`, its segments): .git; in a hook's
 * node_modules, everything but npm's and yarn's install marks; and below a hook's folder, any folder
 * that holds no file of its last bundle (none of a plain hook), with what is in it. So a plain hook costs one watch, and a
 * bundled one a watch per folder of its own sources, however many folders its author (or a tenant)
 * creates beside them.
 */
function ignored(registry: WatchedRegistry, parts: string[], isFolder: boolean | undefined): boolean {
  if (parts.includes('.git')) return true
  const [name, ...inner] = parts
  if (name === undefined || inner.length === 0) return false
  if (inner[0] === 'node_modules') return inner.length > 2 || (inner.length === 2 && !INSTALL_MARKS.has(inner[1] as string))
  const folders = registry.watchedFolders(name)
  const within = inner.slice(0, -1).join('/')
  if (within !== '' && !folders.has(within)) return true
  // A folder is watched only when a bundle file is in it (or below it).
  return isFolder === true && !folders.has(inner.join('/'))
}
