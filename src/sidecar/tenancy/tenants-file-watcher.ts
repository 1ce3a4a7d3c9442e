/**
 * Watches the tenants file for edits. As with hooks (watch.ts), an event only says "look soon": the file
 * is read once it has been quiet for `debounceMs`, read again `settleMs` later, and handed on only when
 * both reads agree and differ from what was last handed on. The folder is watched rather than the file,
 * so that editors that save by renaming a temp file over it, or by deleting and re-creating it, are seen.
 * Refreshes never overlap.
 */
import { readFile } from 'node:fs/promises'
import { basename, dirname, resolve } from 'node:path'
import { type FSWatcher, watch } from 'chokidar'
import { HookdError } from '../../protocol/status.js'

export interface TenantsWatchOptions {
  debounceMs?: number
  settleMs?: number
}

const READY_TIMEOUT_MS = 10_000

export class TenantsFileWatcher {
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private again = false
  private closed = false
  private readonly debounceMs: number
  private readonly settleMs: number

  private constructor(
    private readonly file: string,
    private readonly fsw: FSWatcher,
    private lastText: string,
    /** A settled new text. */
    private readonly onText: (text: string) => Promise<void>,
    /** The file could not be read, or the watcher failed. */
    private readonly onProblem: (message: string) => void,
    options: TenantsWatchOptions,
  ) {
    this.debounceMs = options.debounceMs ?? 100
    this.settleMs = options.settleMs ?? 100
  }

  static async start(
    file: string,
    text: string,
    onText: (text: string) => Promise<void>,
    onProblem: (message: string) => void,
    options: TenantsWatchOptions = {},
  ): Promise<TenantsFileWatcher> {
    const path = resolve(file)
    const name = basename(path)
    const fsw = watch(dirname(path), { ignoreInitial: true, depth: 0, atomic: false, ignorePermissionErrors: true })
    const failure = await new Promise<string | undefined>((done) => {
      const timer = setTimeout(() => done(`no answer within ${READY_TIMEOUT_MS} ms`), READY_TIMEOUT_MS)
      fsw.once('ready', () => {
        clearTimeout(timer)
        done(undefined)
      })
      fsw.once('error', (err) => {
        clearTimeout(timer)
        done(err instanceof Error ? err.message : String(err))
      })
    })
    if (failure !== undefined) {
      await fsw.close()
      throw new HookdError('unavailable', `cannot watch the tenants file ${file} for edits: ${failure}`)
    }
    const watcher = new TenantsFileWatcher(file, fsw, text, onText, onProblem, options)
    fsw.on('all', (_event, changed) => {
      if (basename(changed) === name) watcher.schedule(watcher.debounceMs)
    })
    fsw.on('error', (err) => onProblem(`watching the tenants file ${file}: ${err instanceof Error ? err.message : String(err)}; edits may be missed until restart`))
    // An edit between the first read and the watcher's scan.
    watcher.schedule(0)
    return watcher
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    clearTimeout(this.timer)
    await this.fsw.close()
    await this.running?.catch(() => {})
  }

  private schedule(ms: number): void {
    if (this.closed) return
    clearTimeout(this.timer)
    this.timer = setTimeout(() => {
      this.timer = undefined
      this.run()
    }, ms)
    this.timer.unref()
  }

  private run(): void {
    if (this.closed) return
    if (this.running) {
      this.again = true
      return
    }
    this.running = this.refresh()
      .catch((err: unknown) => this.onProblem(err instanceof Error ? err.message : String(err)))
      .finally(() => {
        this.running = undefined
        if (this.again) {
          this.again = false
          this.schedule(0)
        }
      })
  }

  private async refresh(): Promise<void> {
    let first = await this.read()
    // A save that deletes and re-creates the file: it is missing for a moment.
    if (typeof first !== 'string') {
      await delay(this.settleMs)
      if (this.closed || this.timer) return
      first = await this.read()
      if (typeof first !== 'string') {
        this.onProblem(`cannot read the tenants file ${this.file}: ${first.error}`)
        return
      }
    }
    if (first === this.lastText) return
    await delay(this.settleMs)
    if (this.closed || this.timer) return
    const second = await this.read()
    if (second !== first) {
      this.schedule(this.debounceMs)
      return
    }
    this.lastText = second
    await this.onText(second)
  }

  private async read(): Promise<string | { error: string }> {
    try {
      return await readFile(this.file, 'utf8')
    } catch (err) {
      return { error: (err as Error).message }
    }
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref())
}
