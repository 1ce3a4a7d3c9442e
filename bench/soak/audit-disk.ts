/**
 * The audit log's disk: a small tmpfs in a mount namespace of the soak's own (`unshare -m`, then
 * `mount -t tmpfs`), held open by a process that only sleeps, so that it outlives every sidecar the
 * soak starts in it (`nsenter -t HOLDER -m`). The soak reads the log through /proc/HOLDER/root.
 *
 * The disk is kept small: its size is raised a few MB at a time as the log grows (`mount -o remount`),
 * and `fill` writes a file of zeros until the file system says ENOSPC, which hookd then meets on its
 * next line; `free` deletes it. Real ENOSPC from a real file system; nothing in hookd is faked.
 * Without root (or without mount namespaces) it is a plain folder and `fill` says why it cannot.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { mkdir, open, statfs, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** Room kept free on the disk between faults, and the step it grows by. */
const HEADROOM = 4 * 1024 * 1024
const STEP = 8 * 1024 * 1024

export class AuditDisk {
  private filled = false

  private constructor(
    /** Where hookd writes the log, as the sidecar sees it. */
    readonly auditPath: string,
    /** The same file, as this process reads it. */
    readonly hostPath: string,
    private readonly mountDir: string,
    private readonly holder: ChildProcess | undefined,
    /** Why there is no tmpfs (the fill fault cannot run), when there is none. */
    readonly unavailable: string | undefined,
  ) {}

  /** The tmpfs in its namespace, or a plain folder saying why not. */
  static async create(dir: string): Promise<AuditDisk> {
    const mountDir = join(dir, 'audit-disk')
    await mkdir(mountDir, { recursive: true })
    const auditPath = join(mountDir, 'audit.jsonl')
    if (process.getuid?.() !== 0) return new AuditDisk(auditPath, auditPath, mountDir, undefined, 'the soak is not root: no mount namespace or tmpfs of its own')
    const holder = spawn('unshare', ['-m', '--propagation', 'private', 'sh', '-c', `mount -t tmpfs -o size=${STEP},mode=0700 soak-audit "$0" && echo mounted && exec sleep 2147483647`, mountDir], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let err = ''
    holder.stderr?.on('data', (d: Buffer) => (err += d.toString()))
    const ok = await new Promise<boolean>((resolve) => {
      holder.stdout?.on('data', (d: Buffer) => d.toString().includes('mounted') && resolve(true))
      holder.once('exit', () => resolve(false))
      holder.once('error', (e) => {
        err += e.message
        resolve(false)
      })
    })
    if (!ok) return new AuditDisk(auditPath, auditPath, mountDir, undefined, `no tmpfs in a mount namespace here (${err.trim() || 'unshare failed'})`)
    return new AuditDisk(auditPath, join(`/proc/${holder.pid}/root`, auditPath), mountDir, holder, undefined)
  }

  /** The program and arguments that run `file args` inside the disk's namespace. */
  wrap(file: string, args: readonly string[]): { file: string; args: string[] } {
    if (!this.holder) return { file, args: [...args] }
    return { file: 'nsenter', args: ['-t', String(this.holder.pid), '-m', '--', file, ...args] }
  }

  /** Size and free bytes of the disk. */
  async space(): Promise<{ size: number; free: number }> {
    const s = await statfs(join(`/proc/${this.holder?.pid ?? 'self'}/root`, this.mountDir))
    return { size: s.blocks * s.bsize, free: s.bavail * s.bsize }
  }

  /** Grows the disk by a step when less than the headroom is free (not while it is meant to be full). */
  async keepRoom(): Promise<void> {
    if (!this.holder || this.filled) return
    const { size, free } = await this.space()
    if (free >= HEADROOM) return
    await run('nsenter', ['-t', String(this.holder.pid), '-m', '--', 'mount', '-o', `remount,size=${size + STEP}`, this.mountDir])
  }

  /** Fills the disk until the file system refuses a byte more; returns the bytes written. */
  async fill(): Promise<number> {
    if (this.unavailable) throw new Error(this.unavailable)
    this.filled = true
    const file = await open(this.fillerPath(), 'w')
    const chunk = Buffer.alloc(64 * 1024)
    let bytes = 0
    try {
      for (;;) {
        const { bytesWritten } = await file.write(chunk, 0, chunk.length)
        bytes += bytesWritten
        if (bytesWritten < chunk.length) break
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err
    } finally {
      await file.close().catch(() => {})
    }
    return bytes
  }

  /** Deletes the filler: the disk has room again. */
  async free(): Promise<void> {
    await unlink(this.fillerPath()).catch(() => {})
    this.filled = false
    await this.keepRoom()
  }

  /** Ends the namespace (and the tmpfs with it). */
  async close(): Promise<void> {
    const holder = this.holder
    if (!holder || holder.exitCode !== null || holder.signalCode !== null) return
    await new Promise<void>((resolve) => {
      holder.once('exit', () => resolve())
      holder.kill('SIGKILL')
    })
  }

  private fillerPath(): string {
    return join(this.hostPath, '..', 'filler')
  }
}
