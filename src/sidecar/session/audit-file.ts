/**
 * Where the audit log's lines go (audit.ts): a file, or stdout. A file is written synchronously, one
 * line per decision, before the decision's result is sent: once a host has its answer, the line is in
 * the kernel, and a sidecar killed the next moment (SIGKILL, OOM) has lost nothing it answered.
 *
 * A line the file system refuses (ENOSPC on a full disk, EIO, a quota) is never half written: a short
 * write is cut back off the file. The line is counted instead, the sidecar goes on answering, and the
 * operator is told: once when writing starts to fail, every 30 s while it still fails, and when it
 * writes again, at which point the log itself gets a line in place of the missing ones:
 *
 *   {"time": ..., "unwritten": 30, "from": ..., "to": ..., "error": "ENOSPC: no space left on device"}
 *
 * A log closed while it still cannot write says at close how many it did not write. Every write tries
 * the file again, so the log resumes by itself as soon as there is room. Measured cost: one write
 * system call per decision on the main thread (docs/tenants.md#audit-log).
 */
import { fstatSync, ftruncateSync, writeSync } from 'node:fs'
import { type FileHandle, open } from 'node:fs/promises'
import { HookdError } from '../../protocol/status.js'
import { inertJson } from '../../protocol/text.js'

/** How often the operator is reminded while the log still cannot be written. */
const REMIND_MS = 30_000

/** A stretch of decisions the file refused. */
interface Gap {
  count: number
  from: Date
  to: Date
  error: string
  remindedAt: number
}

export interface AuditSink {
  /** Writes one line (an object, made inert JSON); never throws. */
  write(line: object): void
  /** Decisions not written since the last line that was. */
  readonly unwritten: number
  /** Decisions not written since the log was opened. */
  readonly totalUnwritten: number
  close(): Promise<void>
}

/** Opens `to` (a file, appended to and created 0600, or '-' for stdout); fails naming the file when it cannot. */
export async function openAuditSink(to: string, report: (line: string) => void): Promise<AuditSink> {
  if (to === '-') return new StdoutSink(report)
  let handle: FileHandle
  try {
    handle = await open(to, 'a', 0o600)
  } catch (err) {
    throw new HookdError('invalid-argument', `cannot open the audit log ${to}: ${(err as Error).message}; pass --audit with a writable file, or - for stdout`)
  }
  return new FileSink(to, handle, report)
}

class FileSink implements AuditSink {
  private gap: Gap | undefined
  private total = 0
  private closed = false
  private afterClose = 0

  constructor(
    private readonly path: string,
    private readonly handle: FileHandle,
    private readonly report: (line: string) => void,
  ) {}

  get unwritten(): number {
    return this.gap?.count ?? 0
  }

  get totalUnwritten(): number {
    return this.total
  }

  write(line: object): void {
    if (this.closed) {
      // Nothing should be decided after the log closes (the sidecar closes it last); if it is, say so once.
      if (this.afterClose++ === 0) this.report(`a decision came after the audit log ${this.path} was closed; it was not written`)
      this.total += 1
      return
    }
    const text = `${inertJson(JSON.stringify(line))}\n`
    const failed = (this.gap === undefined || this.resume()) ? this.append(text) : this.gap.error
    if (failed === undefined) return
    this.total += 1
    const now = new Date()
    if (!this.gap) {
      this.gap = { count: 1, from: now, to: now, error: failed, remindedAt: now.getTime() }
      this.report(`cannot write the audit log ${this.path} (${failed}); decisions are still answered, and counted until it can write again`)
      return
    }
    this.gap.count += 1
    this.gap.to = now
    this.gap.error = failed
    if (now.getTime() - this.gap.remindedAt >= REMIND_MS) {
      this.gap.remindedAt = now.getTime()
      this.report(`still cannot write the audit log ${this.path} (${failed}): ${decisions(this.gap.count)} not written so far, since ${this.gap.from.toISOString()}`)
    }
  }

  async close(): Promise<void> {
    if (this.closed) return
    if (this.gap) this.resume()
    this.closed = true
    const gap = this.gap
    if (gap) this.report(`stopped with ${decisions(gap.count)} not written to the audit log ${this.path} (it could not be written since ${gap.from.toISOString()}: ${gap.error})`)
    await this.handle.close().catch(() => {})
  }

  /** Writes the line that stands for the gap; true once it is written (and the gap closed). */
  private resume(): boolean {
    const gap = this.gap as Gap
    const now = new Date()
    const line = { time: now.toISOString(), unwritten: gap.count, from: gap.from.toISOString(), to: gap.to.toISOString(), error: gap.error }
    const failed = this.append(`${inertJson(JSON.stringify(line))}\n`)
    if (failed !== undefined) {
      gap.error = failed
      return false
    }
    this.gap = undefined
    this.report(`the audit log ${this.path} is written again: ${decisions(gap.count)} from ${line.from} to ${line.to} could not be written (${gap.error}); a line in the log says so`)
    return true
  }

  /** Appends `text` whole; on failure cuts off what part of it went in, and returns the error. */
  private append(text: string): string | undefined {
    const bytes = Buffer.from(text)
    let done = 0
    try {
      while (done < bytes.length) {
        const n = writeSync(this.handle.fd, bytes, done, bytes.length - done)
        if (n <= 0) throw Object.assign(new Error('EIO: the file took no bytes'), { code: 'EIO' })
        done += n
      }
      return undefined
    } catch (err) {
      if (done > 0) this.cut(done)
      return describe(err)
    }
  }

  /** Removes the last `bytes` of the file: a line that went in only in part. */
  private cut(bytes: number): void {
    try {
      ftruncateSync(this.handle.fd, fstatSync(this.handle.fd).size - bytes)
    } catch {
      // The file is as it is; the next line starts on a line of its own anyway (every line ends in \n).
    }
  }
}

/** `--audit -`: lines on stdout, which Node writes synchronously to files and pipes on Linux. */
class StdoutSink implements AuditSink {
  private failed = false
  readonly unwritten = 0
  readonly totalUnwritten = 0

  constructor(private readonly report: (line: string) => void) {
    process.stdout.on('error', (err) => {
      if (this.failed) return
      this.failed = true
      this.report(`cannot write the audit log to stdout (${describe(err)}); point results are no longer audited`)
    })
  }

  write(line: object): void {
    if (!this.failed) process.stdout.write(`${inertJson(JSON.stringify(line))}\n`)
  }

  async close(): Promise<void> {}
}

const decisions = (n: number): string => (n === 1 ? '1 decision' : `${n} decisions`)

/** An error as the operator reads it: `ENOSPC: no space left on device` (Node's trailing syscall name dropped). */
function describe(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err)
  return message.replace(/, (write|open|ftruncate)$/, '')
}
