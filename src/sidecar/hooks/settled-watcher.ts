/**
 * Watches a folder with chokidar and hands on settled snapshots of what changed: the one watcher behind
 * hot reload of hook folders (hook-watcher.ts) and of the tenants file (tenancy/tenants-file-watcher.ts).
 *
 * Editors save in several ways (write in place, truncate then write, write a temp file and rename it
 * over, delete then create), and chokidar may coalesce or drop events that come close together. So an
 * event only says "look at this key soon"; what is applied is decided by reading:
 *
 * 1. debounce: wait until the key has had no event for `debounceMs`;
 * 2. read it; if that is what is already applied, stop;
 * 3. settle: wait `settleMs` and read again; only if both reads agree (and no event came meanwhile) is
 *    the snapshot applied.
 *
 * Refreshes of one key never overlap: an event during a refresh looks again when it ends.
 */
import type { Stats } from 'node:fs'
import { isAbsolute, relative } from 'node:path'
import { type FSWatcher, watch } from 'chokidar'
import { HookdError } from '../../protocol/status.js'

export interface SettleOptions {
  /** Quiet time after the last event for a key before it is read. Default 100 ms. */
  debounceMs?: number
  /** Time between the two reads that must agree before a snapshot is applied. Default 100 ms. */
  settleMs?: number
}

export const DEFAULT_SETTLE = { debounceMs: 100, settleMs: 100 }

/** What is watched, and what a settled snapshot of one key does. */
export interface SettledSource<S> {
  /** The folder to watch. */
  folder: string
  /** How deep below it events count (0: its own entries). */
  depth: number
  /** Paths below the folder (relative to it) not to watch at all: each watched folder costs a watch. */
  ignore?(path: string, isFolder: boolean | undefined): boolean
  /** The key an event at `path` (relative to the folder) concerns, or undefined to ignore it. */
  keyOf(path: string): string | undefined
  /** Reads the key's snapshot now. A throw is reported (onError) and the next event reads again. */
  read(key: string): Promise<S>
  same(a: S, b: S): boolean
  /** True when the snapshot is what is already applied. */
  applied(key: string, snapshot: S): boolean
  apply(key: string, snapshot: S): Promise<void>
  /** A failed read or apply, or a watcher error. */
  onError(err: Error): void
}

/** How long start waits for chokidar's first scan, and close for a refresh in progress. */
const READY_TIMEOUT_MS = 10_000
const CLOSE_TIMEOUT_MS = 5_000

export class SettledWatcher<S> {
  private readonly timers = new Map<string, NodeJS.Timeout>()
  private readonly running = new Map<string, Promise<void>>()
  /** Keys that had an event while a refresh ran: they are looked at again when it ends. */
  private readonly again = new Set<string>()
  private readonly debounceMs: number
  private readonly settleMs: number
  private closed = false

  private constructor(
    private readonly source: SettledSource<S>,
    private readonly fsw: FSWatcher,
    options: SettleOptions,
  ) {
    this.debounceMs = options.debounceMs ?? DEFAULT_SETTLE.debounceMs
    this.settleMs = options.settleMs ?? DEFAULT_SETTLE.settleMs
  }

  /**
   * Starts watching; resolves once chokidar has scanned the folder, and then looks at `initial` (what
   * may have changed between the caller's first read and the scan). Fails with UNAVAILABLE, naming
   * `what`, when the folder cannot be watched.
   */
  static async start<S>(what: string, source: SettledSource<S>, options: SettleOptions, initial: Iterable<string>): Promise<SettledWatcher<S>> {
    // atomic is off: the settle does that job for every save pattern.
    const ignore = source.ignore
    const fsw = watch(source.folder, {
      ignoreInitial: true,
      depth: source.depth,
      atomic: false,
      ignorePermissionErrors: true,
      // chokidar asks before and after it stats a path: isFolder is undefined the first time.
      ...(ignore ? { ignored: (path: string, stats?: Stats) => ignore(relative(source.folder, path), stats?.isDirectory()) } : {}),
    })
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
      throw new HookdError('unavailable', `cannot watch ${what} for edits: ${failure}; check that it exists and that the system allows more file watches`)
    }
    const watcher = new SettledWatcher(source, fsw, options)
    fsw.on('all', (_event, path) => {
      const rel = relative(source.folder, path)
      if (!rel || rel.startsWith('..') || isAbsolute(rel)) return
      const key = source.keyOf(rel)
      if (key !== undefined) watcher.schedule(key, watcher.debounceMs)
    })
    fsw.on('error', (err) => source.onError(err instanceof Error ? err : new Error(String(err))))
    for (const key of initial) watcher.schedule(key, 0)
    return watcher
  }

  /** Watches `paths` (absolute) too: folders the source's `ignore` now lets through. */
  add(paths: string[]): void {
    if (!this.closed && paths.length) this.fsw.add(paths)
  }

  /** Stops watching and waits (bounded) for a refresh in progress to finish. */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    for (const timer of this.timers.values()) clearTimeout(timer)
    this.timers.clear()
    await this.fsw.close()
    await Promise.race([Promise.allSettled([...this.running.values()]), delay(CLOSE_TIMEOUT_MS)])
  }

  private schedule(key: string, ms: number): void {
    if (this.closed) return
    clearTimeout(this.timers.get(key))
    const timer = setTimeout(() => {
      this.timers.delete(key)
      this.run(key)
    }, ms)
    timer.unref()
    this.timers.set(key, timer)
  }

  private run(key: string): void {
    if (this.closed) return
    if (this.running.has(key)) {
      this.again.add(key)
      return
    }
    const done = this.refresh(key)
      .catch((err: unknown) => this.source.onError(err instanceof Error ? err : new Error(String(err))))
      .finally(() => {
        this.running.delete(key)
        if (this.again.delete(key)) this.schedule(key, 0)
      })
    this.running.set(key, done)
  }

  private async refresh(key: string): Promise<void> {
    const first = await this.source.read(key)
    if (this.source.applied(key, first)) return
    await delay(this.settleMs)
    // A newer event is pending: its own refresh reads again after the key goes quiet.
    if (this.closed || this.timers.has(key)) return
    const second = await this.source.read(key)
    if (!this.source.same(first, second)) {
      this.schedule(key, this.debounceMs)
      return
    }
    await this.source.apply(key, second)
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref())
}
