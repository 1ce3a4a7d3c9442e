/**
 * File capabilities with the agent's user's privileges. When the front door's peer is another user
 * than the sidecar's (the sidecar runs as root, say, and the agent as a user), a hook's `ctx.file.*`
 * must read and write what that user could, never what the sidecar could: so they run in a helper
 * process started as that user (`setpriv --reuid U --regid G --init-groups --no-new-privs`, the
 * tool the workers' walls use, src/sidecar/worker/pool/walls.ts), running the host library's own
 * default handlers (user-files-main.ts). One helper per user, started on first use, ended when idle
 * and with the front door. When it cannot be started (the sidecar is not root, setpriv is missing,
 * the user cannot read hookd's install), file capabilities are refused saying why.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { accountOf } from '../../agents/user-account.js'
import { CapabilityError, type CallOrigin, type FileHandlers } from '../../host/capabilities.js'
import { passOn } from '../../protocol/capability-errors.js'
import type { ProtectedRoot } from '../../protocol/protected-paths.js'
import { quoted } from '../../protocol/text.js'
import { type FileCall, type FileOp, type FromHelper, FrameReader, frame, fromHelperWire } from './user-files-wire.js'

const here = fileURLToPath(import.meta.url)
const inSource = here.endsWith('.ts')
/** As the workers (worker-process.ts): from source, the built helper when HOOKD_BUILT_WORKERS=1, else through tsx. */
const builtFromSource = inSource && process.env.HOOKD_BUILT_WORKERS === '1'
const ENTRY = inSource && !builtFromSource
  ? fileURLToPath(new URL('./user-files-main.ts', import.meta.url))
  : fileURLToPath(new URL(builtFromSource ? '../../../dist/sidecar/http/user-files-main.js' : './user-files-main.js', import.meta.url))
const EXEC_ARGV = inSource && !builtFromSource ? ['--import', import.meta.resolve('tsx')] : []

/** The group of a user the system does not name: no group's files are theirs. */
const NOGROUP = 65534

export interface UserFilesOptions {
  /** Ends a user's helper after this long without a call. Default 60 s. */
  idleMs?: number
  /** How long one call may take before the helper is taken for stuck and ended. Default 25 s (under the sidecar's 30 s capability wait). */
  callMs?: number
  /** How long a helper may take to start. Default 10 s. */
  startMs?: number
  /** Lines for the operator (a helper that could not start). */
  report?(line: string): void
}

/** Where one run's files are: its pinned folder and what is protected there. */
export interface RunFolder {
  workdir: string
  pin: { dev: string; ino: string }
  roots: readonly ProtectedRoot[]
}

/** A run's file handlers through its user's helper, and what lets the helper forget the run. */
export interface UserRunFiles {
  files: FileHandlers
  release(): void
}

/** After a helper failed to start, its user's calls are refused at once for this long, not each with a new start. */
const START_BACKOFF_MS = 5000

export class UserFiles {
  private readonly helpers = new Map<number, Helper>()
  private readonly failures = new Map<number, { until: number; why: string }>()
  private nextRun = 1
  private closed = false

  constructor(private readonly options: UserFilesOptions = {}) {}

  /** File handlers for a run of `uid` in `folder`, served by that user's helper. */
  forRun(uid: number, folder: RunFolder): UserRunFiles {
    const run = this.nextRun++
    const call = async (op: FileOp, capability: string, path: string, origin: CallOrigin, text?: string): Promise<unknown> => {
      let helper: Helper
      try {
        helper = await this.helper(uid)
      } catch (err) {
        if (err instanceof CapabilityError) throw err
        throw new CapabilityError('denied', `ctx.${capability}(${quoted(path)}) refused: hookd cannot read or write files as uid ${uid}, the agent's user (${(err as Error).message})`)
      }
      const encoded = text !== undefined ? { text: Buffer.from(text, 'utf8').toString('base64') } : {}
      return helper.call({ op, run, workdir: folder.workdir, pin: folder.pin, roots: [...folder.roots], path, origin, ...encoded }, capability)
    }
    return {
      files: {
        read: async (path, origin) => {
          const value = (await call('read', 'file.read', path, origin)) as { text?: unknown }
          if (typeof value?.text !== 'string') throw new CapabilityError('failed', `ctx.file.read(${quoted(path)}) failed: the file helper answered no text`)
          return Buffer.from(value.text, 'base64').toString('utf8')
        },
        write: async (path, text, origin) => void (await call('write', 'file.write', path, origin, text)),
        append: async (path, text, origin) => void (await call('append', 'file.append', path, origin, text)),
        exists: async (path, origin) => (await call('exists', 'file.exists', path, origin)) === true,
        list: async (path, origin) => {
          const value = await call('list', 'file.list', path, origin)
          if (!Array.isArray(value)) throw new CapabilityError('failed', `ctx.file.list(${quoted(path)}) failed: the file helper answered no names`)
          return value as string[]
        },
      },
      release: () => this.helpers.get(uid)?.forget(run),
    }
  }

  /** Ends every helper. */
  async close(): Promise<void> {
    this.closed = true
    await Promise.all([...this.helpers.values()].map((h) => h.end()))
    this.helpers.clear()
  }

  private async helper(uid: number): Promise<Helper> {
    if (this.closed) throw new CapabilityError('unavailable', 'hookd is shutting down; no file calls are served')
    const failed = this.failures.get(uid)
    if (failed && failed.until > Date.now()) throw new Error(failed.why)
    let helper = this.helpers.get(uid)
    if (!helper || !helper.usable) {
      const made: Helper = new Helper(uid, this.options, () => {
        if (this.helpers.get(uid) === made) this.helpers.delete(uid)
      })
      helper = made
      this.helpers.set(uid, made)
    }
    try {
      await helper.ready
    } catch (err) {
      this.failures.set(uid, { until: Date.now() + START_BACKOFF_MS, why: (err as Error).message })
      throw err
    }
    this.failures.delete(uid)
    return helper
  }
}

interface Pending {
  resolve(value: unknown): void
  reject(err: CapabilityError): void
  timer: NodeJS.Timeout
}

/** One user's helper process. */
class Helper {
  readonly ready: Promise<void>
  gone = false
  private ending = false
  private child: ChildProcess | undefined
  private readonly pending = new Map<number, Pending>()
  private nextId = 1
  private idle: NodeJS.Timeout | undefined
  private stderr = ''

  constructor(
    private readonly uid: number,
    private readonly options: UserFilesOptions,
    private readonly onGone: () => void,
  ) {
    this.ready = this.start()
    this.ready.catch((err: unknown) => {
      this.options.report?.(`the file helper for uid ${uid} could not start: ${(err as Error).message}`)
      this.finish()
    })
  }

  /** False once it has ended or is ending: a new call then needs a new helper. */
  get usable(): boolean {
    return !this.gone && !this.ending
  }

  call(request: Omit<FileCall, 'kind' | 'id'>, capability: string): Promise<unknown> {
    const child = this.child
    if (this.gone || !child?.stdin?.writable) return Promise.reject(this.failure(capability, request.path, 'the file helper has ended'))
    const id = this.nextId++
    clearTimeout(this.idle)
    return new Promise((resolve, reject) => {
      const callMs = this.options.callMs ?? 25_000
      const timer = setTimeout(() => {
        this.pending.delete(id)
        reject(new CapabilityError('timeout', `ctx.${capability}(${quoted(request.path)}) failed: the file helper did not answer within ${callMs} ms`))
        this.kill()
      }, callMs)
      timer.unref()
      this.pending.set(id, {
        resolve,
        reject: (err) => reject(err.code === 'failed' && !err.message.startsWith('ctx.') ? this.failure(capability, request.path, err.message) : err),
        timer,
      })
      child.stdin?.write(frame({ kind: 'call', id, ...request }))
    })
  }

  forget(run: number): void {
    if (!this.gone && this.child?.stdin?.writable) this.child.stdin.write(frame({ kind: 'forget', run }))
  }

  async end(): Promise<void> {
    this.ending = true
    const child = this.child
    if (!child || this.gone) return this.finish()
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
    child.stdin?.end()
    const timer = setTimeout(() => this.kill(), 2000)
    timer.unref()
    await exited
    clearTimeout(timer)
  }

  private async start(): Promise<void> {
    const euid = process.geteuid?.()
    if (euid !== 0) throw new Error(`hookd runs as uid ${euid ?? '?'}, not as root; run hookd as the agent's own user, or as root`)
    const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p))
    if (!setpriv) throw new Error('setpriv is not installed; install util-linux')
    const account = await accountOf(this.uid)
    const group = account ? ['--regid', String(account.gid), '--init-groups'] : ['--regid', String(NOGROUP), '--clear-groups']
    const env: NodeJS.ProcessEnv = {}
    for (const name of ['LANG', 'LC_ALL', 'TZ']) if (process.env[name] !== undefined) env[name] = process.env[name]
    if (EXEC_ARGV.length) env.TSX_DISABLE_CACHE = '1'
    const args = ['--reuid', String(this.uid), ...group, '--inh-caps=-all', '--bounding-set=-all', '--no-new-privs', '--pdeathsig', 'KILL', '--', process.execPath, ...EXEC_ARGV, ENTRY]
    const child = spawn(setpriv, args, { env, cwd: '/', stdio: ['pipe', 'pipe', 'pipe'] })
    this.child = child
    const reader = new FrameReader()
    let readied: (() => void) | undefined
    let failed: ((err: Error) => void) | undefined
    const ready = new Promise<void>((resolve, reject) => {
      readied = resolve
      failed = reject
    })
    child.stderr?.setEncoding('utf8')
    child.stderr?.on('data', (chunk: string) => (this.stderr = (this.stderr + chunk).slice(-2000)))
    child.stdin?.on('error', () => {})
    child.on('error', (err) => failed?.(err))
    child.on('exit', (code, signal) => {
      const last = this.stderr.trim().split('\n').at(-1)
      const why = `its file helper ended (${signal ? `signal ${signal}` : `exit code ${code}`})${last ? `: ${last}` : ''}`
      failed?.(new Error(why))
      this.finish(why)
    })
    // What the helper sends is its user's to forge: a frame too big, not JSON or not a message ends it.
    child.stdout?.on('data', (chunk: Buffer) => {
      try {
        for (const raw of reader.push(chunk)) {
          const parsed = fromHelperWire.safeParse(raw)
          if (!parsed.success) throw new Error('a message hookd does not understand')
          this.receive(parsed.data, readied)
        }
      } catch (err) {
        this.options.report?.(`the file helper for uid ${this.uid} broke protocol (${(err as Error).message}); it is ended`)
        this.kill()
      }
    })
    const startMs = this.options.startMs ?? 10_000
    const timer = setTimeout(() => {
      failed?.(new Error(`it did not start within ${startMs} ms`))
      this.kill()
    }, startMs)
    try {
      await ready
    } finally {
      clearTimeout(timer)
    }
    this.armIdle()
  }

  private receive(message: FromHelper, readied: (() => void) | undefined): void {
    if (message.kind === 'ready') return readied?.()
    const pending = this.pending.get(message.id)
    if (!pending) return
    this.pending.delete(message.id)
    clearTimeout(pending.timer)
    if (message.ok) pending.resolve(message.value)
    else pending.reject(new CapabilityError(passOn(message.code), message.message))
    if (this.pending.size === 0) this.armIdle()
  }

  private armIdle(): void {
    clearTimeout(this.idle)
    this.idle = setTimeout(() => void this.end(), this.options.idleMs ?? 60_000)
    this.idle.unref()
  }

  private failure(capability: string, path: string, why: string): CapabilityError {
    return new CapabilityError('failed', `ctx.${capability}(${quoted(path)}) failed: ${why}`)
  }

  private kill(): void {
    this.child?.kill('SIGKILL')
  }

  private finish(why = 'the file helper has ended'): void {
    if (this.gone) return
    this.gone = true
    clearTimeout(this.idle)
    for (const p of this.pending.values()) {
      clearTimeout(p.timer)
      p.reject(new CapabilityError('failed', why))
    }
    this.pending.clear()
    this.onGone()
  }
}
