/**
 * One `hookd serve` process of the soak: the built command (dist/), started inside the audit disk's
 * mount namespace (audit-disk.ts), serving the tenants over gRPC on a Unix socket and the front door
 * on a fixed loopback port, so that hosts and agents find it again after a restart. Its stderr is read
 * line by line (`--log-format json`) and only what the soak reports is kept: worker exits, failed
 * reloads and what the audit log says about lines it could not write.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { BUILT_CLI, ROOT } from '../../test/support/processes.js'
import type { AuditDisk } from './audit-disk.js'

export interface ServeSettings {
  tenantsFile: string
  socket: string
  httpPort: number
  graceMs: number
}

/** What a sidecar's stderr said that the soak counts. */
export interface SidecarNews {
  workerExits: Array<{ at: number; tenant: string | null; pid: number; reason: string; exit: string }>
  /** What it said, as it stopped, it had not written to the audit log. */
  auditUnwrittenAtStop: number
  /** Every line about the audit log, as printed. */
  auditLines: string[]
  /** Lines that are not JSON, or say something failed that the soak does not expect. */
  other: string[]
}

export class SidecarProcess {
  readonly news: SidecarNews = { workerExits: [], auditUnwrittenAtStop: 0, auditLines: [], other: [] }
  readonly startedAt = Date.now()
  /** When it printed that it listens (gRPC and front door both bound). */
  readyAt: number | undefined
  exit: { code: number | null; signal: NodeJS.Signals | null; at: number } | undefined
  private readonly exited: Promise<void>

  private constructor(readonly child: ChildProcess) {
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exit = { code, signal, at: Date.now() }
        resolve()
      })
    })
  }

  get pid(): number {
    return this.child.pid as number
  }

  /** Starts `hookd serve` and resolves once it listens; rejects with its stderr when it does not. */
  static async start(settings: ServeSettings, disk: AuditDisk, timeoutMs = 60_000): Promise<SidecarProcess> {
    const args = [
      BUILT_CLI,
      'serve',
      ...['--tenants', settings.tenantsFile, '--listen', `unix:${settings.socket}`, '--http', `127.0.0.1:${settings.httpPort}`],
      ...['--audit', disk.auditPath, '--audit-payloads', '--grace-ms', String(settings.graceMs), '--log-format', 'json', '--log-level', 'warn'],
    ]
    const command = disk.wrap(process.execPath, args)
    const child = spawn(command.file, command.args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] })
    const sidecar = new SidecarProcess(child)
    const tail: string[] = []
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`hookd serve was not ready within ${timeoutMs} ms: ${tail.join('\n')}`)), timeoutMs)
      createInterface({ input: child.stderr as NodeJS.ReadableStream }).on('line', (line) => {
        if (!sidecar.readyAt) {
          tail.push(line)
          if (tail.length > 40) tail.shift()
        }
        if (sidecar.read(line) === 'listening') {
          sidecar.readyAt = Date.now()
          clearTimeout(timer)
          resolve()
        }
      })
      child.once('exit', (code, signal) => {
        clearTimeout(timer)
        reject(new Error(`hookd serve exited (${code ?? signal}) before it listened: ${tail.join('\n')}`))
      })
    })
    await ready
    return sidecar
  }

  /** Sends `signal`; resolves once the process has exited. */
  async stop(signal: NodeJS.Signals): Promise<void> {
    if (!this.exit) this.child.kill(signal)
    await this.exited
  }

  get running(): boolean {
    return this.exit === undefined
  }

  /** Reads one stderr line; says 'listening' for the gRPC listener's line. */
  private read(line: string): 'listening' | undefined {
    let record: Record<string, unknown>
    try {
      record = JSON.parse(line) as Record<string, unknown>
    } catch {
      this.readAudit(line)
      if (!/audit log/.test(line)) this.keep(line)
      return undefined
    }
    const event = record.event
    const msg = typeof record.msg === 'string' ? record.msg : ''
    if (event === 'listening') return record.listener === 'grpc' ? 'listening' : undefined
    if (event === 'worker-exit') {
      this.news.workerExits.push({
        at: Date.now(),
        tenant: typeof record.tenant === 'string' ? record.tenant : null,
        pid: Number(record.pid),
        reason: String(record.reason),
        exit: String(record.exit),
      })
      return undefined
    }
    if (/audit log/.test(msg)) return this.readAudit(msg)
    // Decisions at which a hook failed are warnings: the soak's answers say the same.
    if (event === 'decision' || event === 'reload') return undefined
    if (event === 'message' && /^walls: |^serving \d+ tenant/.test(msg)) return undefined
    this.keep(line)
    return undefined
  }

  private readAudit(text: string): undefined {
    if (!/audit log/.test(text)) return undefined
    this.news.auditLines.push(text.slice(0, 400))
    if (this.news.auditLines.length > 200) this.news.auditLines.splice(100, 1)
    // The log's own gap lines count what it wrote again after; this, what it never did.
    const stopped = /stopped with (\d+) decisions? not written/.exec(text)
    if (stopped) this.news.auditUnwrittenAtStop += Number(stopped[1])
    return undefined
  }

  private keep(line: string): void {
    if (this.news.other.length < 200) this.news.other.push(line.slice(0, 400))
  }
}
