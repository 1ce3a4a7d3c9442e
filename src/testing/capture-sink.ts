/**
 * Where `--capture DIR` writes its cases, bounded: a flood of calls or events cannot fill the disk or
 * the sidecar's memory. It writes at most `maxFiles` files and `maxBytes` bytes in all (per run of the
 * command), with at most `maxPending` writes under way; past any of these a case is counted, not
 * written, and the first time each bound is met, a line on stderr says so; `close` waits for the writes
 * under way and says how many cases were not written. A write that fails is said once, and counted too.
 *
 * Writing never reaches the caller: `write` returns at once, and nothing it does can throw into a
 * session stream or the front door.
 */
import { lstat, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { inert } from '../protocol/text.js'
import { CaseTooLarge, caseBase, caseText, writeCaseFile } from './capture.js'

export interface CaptureLimits {
  /** Case files written in all. Default 10,000. */
  maxFiles: number
  /** Bytes written in all. Default 256 MiB. */
  maxBytes: number
  /** Writes under way at once. Default 64. */
  maxPending: number
}

export const DEFAULT_CAPTURE_LIMITS: CaptureLimits = { maxFiles: 10_000, maxBytes: 256 * 1024 * 1024, maxPending: 64 }

type Refusal = 'files' | 'bytes' | 'pending' | 'failed' | 'too large'

export class CaptureSink {
  private files = 0
  private bytes = 0
  private pending = 0
  /** A case met the byte cap: the folder is full, and later cases are not even built. */
  private full = false
  private readonly writes = new Set<Promise<void>>()
  private readonly told = new Set<Refusal>()
  /** Cases not written, by why. */
  private readonly skipped = new Map<Refusal, number>()
  readonly limits: CaptureLimits

  constructor(
    /** The capture folder (created, 0700, when the first case is written). */
    readonly dir: string,
    /** One line for the operator (without the `hookd: ` prefix). */
    private readonly say: (line: string) => void,
    limits: Partial<CaptureLimits> = {},
  ) {
    this.limits = { ...DEFAULT_CAPTURE_LIMITS, ...limits }
  }

  /** Cases not written so far (over a bound, or failed). */
  get unwritten(): number {
    let n = 0
    for (const count of this.skipped.values()) n += count
    return n
  }

  /** False once the file or byte cap is met: nothing more will be written, so nothing need be kept. */
  get open(): boolean {
    return !this.full && this.files < this.limits.maxFiles && this.bytes < this.limits.maxBytes
  }

  /** Case files written so far. */
  get written(): number {
    return this.files
  }

  /**
   * Writes `make()`'s case as `sub/.../what-STAMP.json` under the folder, unless a bound is met; `make`
   * is not called then (building and redacting a case costs as much as writing it). `what` names the
   * case in messages ("a beforeToolExecute call").
   */
  write(sub: readonly string[], name: string, what: string, make: () => unknown, at = new Date()): void {
    if (this.files >= this.limits.maxFiles) return this.skip('files')
    if (this.full || this.bytes >= this.limits.maxBytes) return this.skip('bytes')
    if (this.pending >= this.limits.maxPending) return this.skip('pending')
    let body: string
    try {
      body = caseText(make(), what)
    } catch (err) {
      return this.skip(err instanceof CaseTooLarge ? 'too large' : 'failed', err)
    }
    const size = Buffer.byteLength(body)
    if (this.bytes + size > this.limits.maxBytes) {
      this.full = true
      return this.skip('bytes')
    }
    // Counted before the write: a burst that arrives while files are being written meets the bounds.
    this.files += 1
    this.bytes += size
    this.pending += 1
    const done = ownFolders(this.dir, sub).then((folder) => writeCaseFile(folder, caseBase(name, at), body)).then(
      () => {},
      (err: unknown) => {
        this.files -= 1
        this.bytes -= size
        this.skip('failed', err)
      },
    )
    const tracked = done.finally(() => {
      this.pending -= 1
      this.writes.delete(tracked)
    })
    this.writes.add(tracked)
  }

  /** Counts a case that could not be built (a redactor's bound), saying why once. */
  failed(err: unknown): void {
    this.skip('failed', err)
  }

  /** Waits for the writes under way; then, if any case was not written, says how many and why. */
  async close(): Promise<void> {
    await Promise.all([...this.writes])
    const n = this.unwritten
    if (n === 0) return
    const why = [...this.skipped].map(([reason, count]) => `${count} ${REASONS[reason]}`).join(', ')
    this.say(`capture: ${n} ${n === 1 ? 'case was' : 'cases were'} not written to ${this.dir} (${why}); ${this.files} written`)
  }

  private skip(reason: Refusal, err?: unknown): void {
    this.skipped.set(reason, (this.skipped.get(reason) ?? 0) + 1)
    if (this.told.has(reason)) return
    this.told.add(reason)
    const { maxFiles, maxBytes, maxPending } = this.limits
    const line: Record<Refusal, string> = {
      files: `wrote ${maxFiles} case files to ${this.dir}, its cap (--capture-max-files); later calls are counted, not written`,
      bytes: `wrote ${Math.round(this.bytes / 1024 / 1024)} MiB of cases to ${this.dir}, near its cap of ${Math.round(maxBytes / 1024 / 1024)} MiB (--capture-max-mb); later calls are counted, not written`,
      pending: `${maxPending} captured cases are still being written to ${this.dir}; calls past that are counted, not written, until the disk catches up`,
      failed: `cannot write a captured case to ${this.dir}: ${err instanceof Error ? err.message : String(err)}; calls are no longer all captured`,
      'too large': `${err instanceof Error ? err.message : String(err)}`,
    }
    this.say(inert(line[reason]))
  }
}

const REASONS: Record<Refusal, string> = {
  files: 'past the file cap',
  bytes: 'past the byte cap',
  pending: 'while the disk was behind',
  failed: 'failed',
  'too large': 'too large',
}

/**
 * `dir/sub/...`, each folder below `dir` made 0700 if missing and, made now or before, a folder of this
 * user's and not a link: a link planted at an agent's or a route's name (in a capture folder others can
 * write to) cannot send cases elsewhere.
 */
async function ownFolders(dir: string, sub: readonly string[]): Promise<string> {
  await mkdir(dir, { recursive: true, mode: 0o700 })
  let at = dir
  for (const name of sub) {
    at = join(at, name)
    await mkdir(at, { mode: 0o700 }).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'EEXIST') throw err
    })
    const info = await lstat(at)
    const uid = process.geteuid?.()
    if (!info.isDirectory() || (uid !== undefined && info.uid !== uid)) {
      throw new Error(`${at} is ${info.isSymbolicLink() ? 'a link' : info.isDirectory() ? "another user's folder" : 'not a folder'}; capture writes only into folders of its own`)
    }
  }
  return at
}
