/**
 * Hot reload: watches a registry's root with chokidar and hands the registry settled snapshots of the
 * hook folders that changed.
 *
 * Editors save in several ways (write in place, truncate then write, write a temp file and rename it
 * over, delete then create), and chokidar may coalesce or drop events that come close together. So an
 * event only says "look at this hook folder soon"; what is loaded is decided by reading the files:
 *
 * 1. debounce: wait until the folder has had no event for `debounceMs`;
 * 2. read index.js and hook.json; if they are what is already applied, stop;
 * 3. settle: wait `settleMs` and read again; only if both reads agree (and no event came meanwhile) is
 *    the snapshot applied: loaded in a throwaway isolate and, if it loads, swapped in.
 *
 * A snapshot that still catches an edit half-way (a missing or empty index.js, a syntax error) fails to
 * load and the registry keeps the last good version serving; the next event reads again. Refreshes of
 * one hook never overlap. See docs/hot-reload.md.
 */
import { isAbsolute, relative, sep } from 'node:path'
import { type FSWatcher, watch } from 'chokidar'
import { HookdError } from '../../protocol/status.js'
import type { Registry } from './registry.js'

export interface WatchOptions {
  /** Quiet time after the last event in a hook folder before it is read. Default 100 ms. */
  debounceMs?: number
  /** Time between the two reads that must agree before a snapshot is loaded. Default 100 ms. */
  settleMs?: number
  /** A watcher error (say, out of inotify watches). Default: one line on stderr. */
  onError?(err: Error): void
}

export const DEFAULT_WATCH = { debounceMs: 100, settleMs: 100 }

/** The files whose content makes a hook version (see Registry.read). */
const HOOK_FILES = new Set(['index.js', 'hook.json'])

/** How long start waits for chokidar's first scan, and close for a reload in progress. */
const READY_TIMEOUT_MS = 10_000
const CLOSE_TIMEOUT_MS = 5_000

export class HookWatcher {
  private readonly timers = new Map<string, NodeJS.Timeout>()
  private readonly running = new Map<string, Promise<void>>()
  /** Hooks that had an event while a refresh ran: they are looked at again when it ends. */
  private readonly again = new Set<string>()
  private readonly debounceMs: number
  private readonly settleMs: number
  private readonly onError: (err: Error) => void
  private closed = false

  private constructor(
    private readonly registry: Registry,
    private readonly fsw: FSWatcher,
    options: WatchOptions,
  ) {
    this.debounceMs = options.debounceMs ?? DEFAULT_WATCH.debounceMs
    this.settleMs = options.settleMs ?? DEFAULT_WATCH.settleMs
    this.onError =
      options.onError ?? ((err) => process.stderr.write(`hookd: watching ${registry.root}: ${err.message}; edits may be missed until restart\n`))
  }

  /** Starts watching; resolves once chokidar has scanned the root. */
  static async start(registry: Registry, options: WatchOptions = {}): Promise<HookWatcher> {
    // depth 1: <root>/<name>/<file>. atomic is off: the settle below does that job for every pattern.
    const fsw = watch(registry.root, { ignoreInitial: true, depth: 1, atomic: false, ignorePermissionErrors: true })
    const watcher = new HookWatcher(registry, fsw, options)
    const failure = await new Promise<string | undefined>((resolve) => {
      const onError = (err: unknown): void => done(err instanceof Error ? err.message : String(err))
      const onReady = (): void => done(undefined)
      const timer = setTimeout(() => done(`no answer within ${READY_TIMEOUT_MS} ms`), READY_TIMEOUT_MS)
      const done = (why: string | undefined): void => {
        clearTimeout(timer)
        fsw.off('ready', onReady)
        fsw.off('error', onError)
        resolve(why)
      }
      fsw.once('ready', onReady)
      fsw.once('error', onError)
    })
    if (failure !== undefined) {
      await fsw.close()
      throw new HookdError('unavailable', `cannot watch the hooks folder ${registry.root} for edits: ${failure}; check that it exists and that the system allows more file watches`)
    }
    fsw.on('all', (_event, path) => watcher.onEvent(path))
    fsw.on('error', (err) => watcher.onError(err instanceof Error ? err : new Error(String(err))))
    // Anything that changed between the registry's first load and the watcher's scan is caught here.
    const names = new Set([...(await registry.names().catch(() => [])), ...registry.list().map((h) => h.name)])
    for (const name of names) watcher.schedule(name, 0)
    return watcher
  }

  /** Stops watching and waits (bounded) for a reload in progress to finish. */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    for (const timer of this.timers.values()) clearTimeout(timer)
    this.timers.clear()
    await this.fsw.close()
    await Promise.race([Promise.allSettled([...this.running.values()]), delay(CLOSE_TIMEOUT_MS)])
  }

  private onEvent(path: string): void {
    const rel = relative(this.registry.root, path)
    if (!rel || rel.startsWith('..') || isAbsolute(rel)) return
    // Only the folder itself and the files a hook is made of count: a file that keeps changing beside
    // them (a log, an editor's swap file) must not keep the folder from ever going quiet. Names the
    // registry does not accept as hooks read as absent, and so cost one stat.
    const [name, file, ...deeper] = rel.split(sep)
    if (!name || deeper.length || (file !== undefined && !HOOK_FILES.has(file))) return
    this.schedule(name, this.debounceMs)
  }

  private schedule(name: string, ms: number): void {
    if (this.closed) return
    clearTimeout(this.timers.get(name))
    const timer = setTimeout(() => {
      this.timers.delete(name)
      this.run(name)
    }, ms)
    timer.unref()
    this.timers.set(name, timer)
  }

  private run(name: string): void {
    if (this.closed) return
    if (this.running.has(name)) {
      this.again.add(name)
      return
    }
    const done = this.refresh(name)
      .catch((err: unknown) => this.onError(err instanceof Error ? err : new Error(String(err))))
      .finally(() => {
        this.running.delete(name)
        if (this.again.delete(name)) this.schedule(name, 0)
      })
    this.running.set(name, done)
  }

  private async refresh(name: string): Promise<void> {
    const first = await this.registry.read(name)
    if (first.digest === this.registry.digestOf(name)) return
    await delay(this.settleMs)
    // A newer event is pending: its own refresh reads again after the folder goes quiet.
    if (this.closed || this.timers.has(name)) return
    const second = await this.registry.read(name)
    if (second.digest !== first.digest) {
      this.schedule(name, this.debounceMs)
      return
    }
    await this.registry.apply(second)
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref())
}
