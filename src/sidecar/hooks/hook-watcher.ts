/**
 * Hot reload: watches a registry's root and hands the registry settled snapshots of the hook folders
 * that changed (settled-watcher.ts says how a snapshot settles). A snapshot that still catches an edit
 * half-way (a missing or empty index.js, a syntax error) fails to load and the registry keeps the last
 * good version serving; the next event reads again. See docs/hot-reload.md.
 */
import { sep } from 'node:path'
import type { HookFiles } from './hook-folder.js'
import { type SettleOptions, SettledWatcher } from './settled-watcher.js'
import { inert } from '../../protocol/text.js'

export interface WatchOptions extends SettleOptions {
  /** A watcher error (say, out of inotify watches). Default: one line on stderr. */
  onError?(err: Error): void
}

/** The files whose content makes a hook version (see hook-folder.ts). */
const HOOK_FILES = new Set(['index.js', 'hook.json'])

/** What the watcher needs of the registry it feeds. */
export interface WatchedRegistry {
  readonly root: string
  names(): Promise<string[]>
  list(): ReadonlyArray<{ name: string }>
  read(name: string): Promise<HookFiles>
  digestOf(name: string): string
  apply(files: HookFiles): Promise<unknown>
}

export class HookWatcher {
  private constructor(private readonly watcher: SettledWatcher<HookFiles>) {}

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
        // <root>/<name>/<file>
        depth: 1,
        // Only the folder itself and the files a hook is made of count: a file that keeps changing beside
        // them (a log, an editor's swap file) must not keep the folder from ever going quiet. Names the
        // registry does not accept as hooks read as absent, and so cost one stat.
        keyOf: (rel) => {
          const [name, file, ...deeper] = rel.split(sep)
          if (!name || deeper.length || (file !== undefined && !HOOK_FILES.has(file))) return undefined
          return name
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
    return new HookWatcher(watcher)
  }

  /** Stops watching and waits (bounded) for a reload in progress to finish. */
  close(): Promise<void> {
    return this.watcher.close()
  }
}
