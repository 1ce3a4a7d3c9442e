/**
 * The host's side of `ctx`: handlers that serve capability calls forwarded by the sidecar, and sound
 * defaults for each. The sidecar has already checked the session's policy; these defaults check again
 * where only the host can (real paths through symlinks, for one: a link to `.git` or to the hooks
 * folder is refused like the name itself, src/protocol/protected-paths.ts), and bound what they send
 * back.
 *
 * Errors are `CapabilityError`s: the hook sees an Error whose `code` is the error's code and whose
 * message is the error's message, so the defaults word theirs like the sidecar's refusals:
 * "ctx.file.read('notes.txt') failed: no such file or directory".
 */
import { constants } from 'node:fs'
import { type FileHandle, lstat, mkdir, open, readdir, readlink, realpath, stat } from 'node:fs/promises'
import { basename, dirname, isAbsolute, join, parse, relative, resolve, sep } from 'node:path'
import { createInterface } from 'node:readline'
import type { LogLineData } from '../protocol/wire.js'
import type { Diagnostic } from '../protocol/diagnostic.js'
import { type FetchResult, MAX_LIST_ENTRIES, originOf, quoted } from '../protocol/capabilities.js'
import { type CapabilityCode, passOn } from '../protocol/capability-errors.js'
import { type FileNeed, type ProtectedRoot, hookdStateRoots, protectedReason, protectionOf } from '../protocol/protected-paths.js'
import { inert } from '../protocol/text.js'

/** Which hook, during which point call, made a capability call. */
export interface CallOrigin {
  hook: string
  point: string
  seq: number
}

export interface Message {
  title: string
  body?: string
}

export interface FetchInit {
  method?: string
  headers?: Record<string, string>
  body?: string
}

export interface FileHandlers {
  read(path: string, origin: CallOrigin): Promise<string>
  write(path: string, text: string, origin: CallOrigin): Promise<void>
  /** Adds `text` at the end of the file, creating it (and missing folders) when it is not there. */
  append(path: string, text: string, origin: CallOrigin): Promise<void>
  exists(path: string, origin: CallOrigin): Promise<boolean>
  list(dir: string, origin: CallOrigin): Promise<string[]>
}

/** A capability call as the host received it, its arguments validated, before its handler runs. */
export interface ReceivedCall {
  capability: string
  args: readonly unknown[]
  origin: CallOrigin
}

/** Everything a host can serve. Each handler is optional; missing ones get the defaults below. */
export interface CapabilityHandlers {
  /** Ask the human. Default: a yes/no prompt on the terminal. Only called in interactive sessions. */
  confirm?(message: Message, origin: CallOrigin): Promise<boolean> | boolean
  notify?(message: Message, origin: CallOrigin): Promise<void> | void
  file?: Partial<FileHandlers>
  fetch?(url: string, init: FetchInit, origin: CallOrigin): Promise<FetchResult>
  /** A hook's ctx.log line, while the hook runs. */
  log?(line: LogLineData): void
  /** A diagnostic the sidecar pushed outside any point result (e.g. a broken hook at open). */
  diagnostic?(d: Diagnostic): void
  /** Told of every capability call before its handler runs (to record or audit them; `hookd test` records its cases' calls so). */
  onCall?(call: ReceivedCall): void
}

/**
 * A capability's failure, as the hook will see it (`err.code`, `err.message`). The code is one of
 * hookd's (`denied`, `limit`, `invalid`, `failed`, `timeout`, `cancelled`, `unavailable`) or a system
 * error's (`ENOENT`, ...): docs/capabilities.md, "Errors".
 */
export class CapabilityError extends Error {
  constructor(
    readonly code: CapabilityCode,
    message: string,
  ) {
    super(message)
    this.name = 'CapabilityError'
  }
}

/**
 * The most a default handler sends back in one reply (a file's bytes, a response body). A reply
 * crosses gRPC to the sidecar, which accepts messages of at most 8 MiB; a bigger one would end the
 * session instead of failing the call.
 */
export const MAX_REPLY_BYTES = 4 * 1024 * 1024
export { MAX_LIST_ENTRIES }
/** How long the default fetch waits for a response; under the sidecar's 30 s capability ceiling. */
export const FETCH_TIMEOUT_MS = 20_000
/** Symbolic links followed while resolving one path, as Linux's own limit. */
const MAX_LINK_HOPS = 40

const denied = (why: string): CapabilityError => new CapabilityError('denied', why)

/**
 * Resolves `path` inside `workdir` the way the kernel will, one component at a time, following every
 * symbolic link (including dangling ones, which a write would create through); refuses with a
 * `denied` CapabilityError saying why when the path is absolute or ends up outside the workdir.
 * Parts that do not exist yet are kept as written, so a write may create them.
 *
 * A link swapped between this check and the read or write that follows is not caught; hosts that
 * share a workdir with an adversary need an OS sandbox as well.
 */
export async function confine(workdir: string, path: string): Promise<string> {
  return (await resolveInside(workdir, path)).full
}

/** A path resolved inside a workdir: the workdir's real path, the path as named there, and where it really leads. */
interface Resolved {
  root: string
  lexical: string
  full: string
}

async function resolveInside(workdir: string, path: string): Promise<Resolved> {
  if (path.includes('\0')) throw denied('the path contains a NUL byte')
  if (isAbsolute(path)) throw denied('absolute paths are refused; use a path relative to the workdir')
  let root: string
  try {
    root = await realpath(workdir)
  } catch (err) {
    throw new CapabilityError('failed', `the workdir ${workdir} cannot be used (${(err as Error).message})`)
  }
  const lexical = resolve(root, path)
  if (!inside(root, lexical)) throw denied('the path leads outside the workdir')

  const queue = relative(root, lexical).split(sep).filter((part) => part !== '' && part !== '.')
  let current = root
  let hops = 0
  while (queue.length) {
    const part = queue.shift() as string
    if (part === '..') {
      current = dirname(current)
      continue
    }
    const next = join(current, part)
    let link: boolean
    try {
      link = (await lstat(next)).isSymbolicLink()
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err
      // Nothing exists here: the rest is a path still to be created (or not found).
      current = join(next, ...queue)
      break
    }
    if (!link) {
      current = next
      continue
    }
    hops += 1
    if (hops > MAX_LINK_HOPS) throw denied('the path goes through too many symbolic links')
    const to = await readlink(next)
    if (isAbsolute(to)) current = parse(to).root
    queue.unshift(...to.split(sep).filter((p) => p !== '' && p !== '.'))
  }
  if (!inside(root, current)) throw denied('the path leads outside the workdir through a symbolic link')
  return { root, lexical, full: current }
}

function inside(root: string, p: string): boolean {
  const rel = relative(root, p)
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel))
}

/** A folder's identity (lstat's device and inode, as text: inodes may pass 2^53). */
export interface WorkdirPin {
  dev: string
  ino: string
}

/** The identity of the folder `path` names now (not following a last link). */
export async function pinOf(path: string): Promise<WorkdirPin> {
  const info = await lstat(path, { bigint: true })
  return { dev: String(info.dev), ino: String(info.ino) }
}

/**
 * Where a workdir's file calls may go: inside the workdir, never under a protected name or root
 * (protected-paths.ts), as named and as the links lead; and, when the workdir is pinned, only while
 * the folder there is still the one pinned.
 */
class PathGuard {
  private realRoots: Promise<ProtectedRoot[]> | undefined

  constructor(
    private readonly workdir: string,
    private readonly roots: readonly ProtectedRoot[],
    private readonly pinned: WorkdirPin | undefined,
  ) {}

  /** The real path `path` leads to, or a `denied` CapabilityError saying why hooks may not go there. */
  async resolve(path: string, need: FileNeed): Promise<Resolved> {
    if (this.pinned) await this.checkPin(this.pinned)
    const resolved = await resolveInside(this.workdir, path)
    await this.check(resolved.lexical, need)
    await this.check(resolved.full, need)
    return resolved
  }

  /**
   * Checks again where an opened file really is (Linux: its /proc/self/fd link), before a byte of it
   * is read or written: a link swapped in after `resolve` must not lead a write under .git/ or
   * outside. A file with other hard links is not written: hookd cannot see where else it is.
   */
  async opened(handle: FileHandle, resolved: Resolved, need: FileNeed, links: number): Promise<void> {
    if (need === 'write' && links > 1) throw denied('the file has other hard links, which may lead anywhere; hookd does not write through them')
    let actual: string
    try {
      actual = await readlink(`/proc/self/fd/${handle.fd}`)
    } catch {
      return
    }
    if (!isAbsolute(actual)) return
    if (!inside(resolved.root, actual)) throw denied('the path leads outside the workdir through a symbolic link')
    await this.check(actual, need)
  }

  private async check(path: string, need: FileNeed): Promise<void> {
    const hit = protectionOf(path, need, await this.protectedRoots())
    if (hit) throw denied(protectedReason(hit, need))
  }

  private async checkPin(pinned: WorkdirPin): Promise<void> {
    let now: WorkdirPin | undefined
    try {
      now = await pinOf(this.workdir)
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw new CapabilityError(passOn(code), `the session's folder ${this.workdir} cannot be reached (${fsReason(err)})`)
    }
    if (now?.dev === pinned.dev && now.ino === pinned.ino && (await lstat(this.workdir)).isDirectory()) return
    throw denied(`the session's folder ${this.workdir} is no longer the folder the run opened in (it was moved, removed or replaced); start a new session`)
  }

  /** The roots as given and as their real paths (the hooks folder may be named through a link). */
  private protectedRoots(): Promise<ProtectedRoot[]> {
    this.realRoots ??= Promise.all(
      this.roots.map(async (r) => {
        const real = await realish(r.path)
        return real === r.path ? [r] : [r, { ...r, path: real }]
      }),
    ).then((lists) => lists.flat())
    return this.realRoots
  }
}

/** The real path of `path`, or of its nearest existing folder with the rest as written. */
async function realish(path: string, depth = 0): Promise<string> {
  try {
    return await realpath(path)
  } catch {
    const up = dirname(path)
    if (up === path || depth > 64) return path
    return join(await realish(up, depth + 1), basename(path))
  }
}

/** "ENOENT: no such file or directory, open '/abs/path'" -> "no such file or directory" */
function fsReason(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).replace(/^[A-Z0-9_]+: /, '').replace(/, \w+ '.*'$/s, '')
}

/** The error a hook sees when a default file handler fails: says which capability, on what, and why. */
function fileError(capability: string, path: string, err: unknown): CapabilityError {
  const asked = `ctx.${capability}(${quoted(path)})`
  if (err instanceof CapabilityError) {
    return new CapabilityError(err.code, `${asked} ${err.code === 'denied' ? 'refused' : 'failed'}: ${err.message}`)
  }
  return new CapabilityError(passOn((err as NodeJS.ErrnoException).code), `${asked} failed: ${fsReason(err)}`)
}

async function described<T>(capability: string, path: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run()
  } catch (err) {
    throw fileError(capability, path, err)
  }
}

/**
 * File handlers confined to `workdir` (real paths), as the host library uses by default. Whatever the
 * session's policy, they refuse writes under the protected names and roots (protected-paths.ts) and
 * reads of the protected ones that refuse reads, as named and through symbolic links.
 */
export function workdirFiles(workdir: string, options: WorkdirFilesOptions = {}): FileHandlers {
  const maxRead = options.maxReadBytes ?? MAX_REPLY_BYTES
  const budget = new CallBudget(options.maxWriteBytesPerCall ?? MAX_WRITE_BYTES_PER_CALL)
  const guard = new PathGuard(workdir, options.protectedRoots ?? hookdStateRoots(), options.pinned)
  /** Opens `full` for writing (creating it) and checks it before anything is written. */
  const openForWrite = async (resolved: Resolved, flags: number): Promise<FileHandle> => {
    await mkdir(dirname(resolved.full), { recursive: true })
    const handle = await open(resolved.full, constants.O_WRONLY | constants.O_CREAT | constants.O_NONBLOCK | constants.O_NOFOLLOW | flags, 0o644)
    try {
      const info = await handle.stat()
      if (!info.isFile()) throw denied('it is not a regular file')
      await guard.opened(handle, resolved, 'write', info.nlink)
      return handle
    } catch (err) {
      await handle.close()
      throw err
    }
  }
  return {
    read: (path) =>
      described('file.read', path, async () => {
        const resolved = await guard.resolve(path, 'read')
        // Opened without blocking and checked before any byte is read: a FIFO or a device in the
        // workdir must not hang the host, and a huge file must not be read whole.
        const handle = await open(resolved.full, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW)
        try {
          const info = await handle.stat()
          if (!info.isFile()) throw denied('it is not a regular file')
          await guard.opened(handle, resolved, 'read', info.nlink)
          if (info.size > maxRead) throw new CapabilityError('limit', `the file is ${info.size} bytes, over the limit of ${maxRead}`)
          const buffer = Buffer.alloc(Math.min(info.size, maxRead) + 1)
          const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0)
          if (bytesRead > maxRead) throw new CapabilityError('limit', `the file grew past the limit of ${maxRead} bytes while it was read`)
          return buffer.subarray(0, bytesRead).toString('utf8')
        } finally {
          await handle.close()
        }
      }),
    write: (path, text, origin) =>
      described('file.write', path, async () => {
        const resolved = await guard.resolve(path, 'write')
        budget.spend(origin, Buffer.byteLength(text))
        const handle = await openForWrite(resolved, 0)
        try {
          await handle.truncate(0)
          await handle.writeFile(text)
        } finally {
          await handle.close()
        }
      }),
    append: (path, text, origin) =>
      described('file.append', path, async () => {
        const resolved = await guard.resolve(path, 'write')
        budget.spend(origin, Buffer.byteLength(text))
        const handle = await openForWrite(resolved, constants.O_APPEND)
        try {
          await handle.writeFile(text)
        } finally {
          await handle.close()
        }
      }),
    exists: (path) =>
      described('file.exists', path, async () => {
        const { full } = await guard.resolve(path, 'read')
        return stat(full).then(
          () => true,
          () => false,
        )
      }),
    list: (dir) =>
      described('file.list', dir, async () => {
        const { full } = await guard.resolve(dir, 'read')
        const names = await readdir(full)
        if (names.length > MAX_LIST_ENTRIES) {
          throw new CapabilityError('limit', `the folder holds ${names.length} entries, over the limit of ${MAX_LIST_ENTRIES}`)
        }
        return names.sort()
      }),
  }
}

export interface WorkdirFilesOptions extends FileLimits {
  /**
   * Folders and files protected wherever they are, beside the protected names that are always
   * refused: the session's hooks folder, the sidecar's token. Default: this user's hookd state
   * folders (hookdStateRoots). Pass them with the defaults when adding to them.
   */
  protectedRoots?: readonly ProtectedRoot[]
  /**
   * The workdir's identity when the run opened (pinOf): every call checks the folder is still that
   * one, and refuses saying so when it was moved, removed or replaced (by a link to `/`, say).
   */
  pinned?: WorkdirPin
}

/** The most a hook may write through the default handlers during one point call. */
export const MAX_WRITE_BYTES_PER_CALL = 16 * 1024 * 1024

export interface FileLimits {
  /** The largest file `ctx.file.read` returns. Default MAX_REPLY_BYTES. */
  maxReadBytes?: number
  /** The bytes one hook may write during one point call, in all. Default MAX_WRITE_BYTES_PER_CALL. */
  maxWriteBytesPerCall?: number
}

/**
 * Bytes spent per hook and point call. The host does not learn when an invocation ends, so it keeps the
 * most recent calls' counts (a bounded map): an old call's count is forgotten, never a new one's.
 */
class CallBudget {
  private readonly spent = new Map<string, number>()

  constructor(private readonly max: number) {}

  spend(origin: CallOrigin, bytes: number): void {
    const key = `${origin.seq}\0${origin.hook}`
    const total = (this.spent.get(key) ?? 0) + bytes
    if (total > this.max) {
      throw new CapabilityError('limit', `this hook has written ${this.max} bytes during this point call, the most the host allows; the rest are refused`)
    }
    this.spent.delete(key)
    this.spent.set(key, total)
    if (this.spent.size > 256) this.spent.delete(this.spent.keys().next().value as string)
  }
}

export interface FetchOptions {
  /** Default FETCH_TIMEOUT_MS. */
  timeoutMs?: number
  /** The largest response body returned, in bytes. Default MAX_REPLY_BYTES. */
  maxBodyBytes?: number
}

/**
 * Fetch through the platform's fetch, re-checking the origin against the allowlist (origins are
 * normalised, so "http://127.0.0.1:8080/" allows "http://127.0.0.1:8080"). Redirects are not followed
 * (the hook sees the 3xx and its `location`), so an allowed origin cannot lead elsewhere. Bodies over
 * `maxBodyBytes` fail with code 'limit'; a response that takes longer than `timeoutMs`, 'timeout'.
 */
export function allowlistedFetch(origins: readonly string[], options: FetchOptions = {}): NonNullable<CapabilityHandlers['fetch']> {
  const allowed = new Set(origins.map((o) => originOf(o) ?? o))
  const timeoutMs = options.timeoutMs ?? FETCH_TIMEOUT_MS
  const maxBodyBytes = options.maxBodyBytes ?? MAX_REPLY_BYTES
  return async (url, init) => {
    const asked = `ctx.http.fetch(${quoted(url)})`
    const origin = originOf(url)
    if (!origin) throw new CapabilityError('denied', `${asked} refused: only absolute http:// and https:// URLs can be fetched`)
    if (!allowed.has(origin)) throw new CapabilityError('denied', `${asked} refused: origin ${origin} is not allowed by the host`)
    const signal = AbortSignal.timeout(timeoutMs)
    let response: Response
    try {
      response = await fetch(url, {
        method: init.method ?? 'GET',
        ...(init.headers ? { headers: init.headers } : {}),
        ...(init.body !== undefined ? { body: init.body } : {}),
        redirect: 'manual',
        signal,
      })
    } catch (err) {
      throw fetchError(asked, err, signal, timeoutMs)
    }
    const headers: Record<string, string> = {}
    response.headers.forEach((value, name) => {
      headers[name] = value
    })
    let body: string
    try {
      body = await readBody(response, maxBodyBytes)
    } catch (err) {
      if (err instanceof CapabilityError) throw new CapabilityError(err.code, `${asked} failed: ${err.message}`)
      throw fetchError(asked, err, signal, timeoutMs)
    }
    return { status: response.status, headers, body }
  }
}

function fetchError(asked: string, err: unknown, signal: AbortSignal, timeoutMs: number): CapabilityError {
  if (signal.aborted) return new CapabilityError('timeout', `${asked} failed: no response within ${timeoutMs} ms`)
  // undici reports "fetch failed" and puts the reason (ECONNREFUSED ...) in `cause`.
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : undefined
  const why = err instanceof Error ? err.message : String(err)
  return new CapabilityError('failed', `${asked} failed: ${cause ? `${why} (${cause})` : why}`)
}

async function readBody(response: Response, max: number): Promise<string> {
  if (!response.body) return ''
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > max) {
      await reader.cancel().catch(() => {})
      throw new CapabilityError('limit', `the response body is over the limit of ${max} bytes`)
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** Where terminalConfirm asks: the process's stdin and stderr unless a command runs with others. */
export interface ConfirmTerminal {
  input: NodeJS.ReadableStream & { readableEnded?: boolean; destroyed?: boolean }
  output: NodeJS.WritableStream
}

/**
 * Asks on the terminal (question on stderr, answer on stdin), one question at a time. Only "y" or
 * "yes" allows; anything else, end of input or Ctrl-C answers no, so a closed stdin never leaves a
 * hook waiting.
 */
let terminalQueue: Promise<unknown> = Promise.resolve()
export function terminalConfirm(message: Message, origin: CallOrigin, terminal?: ConfirmTerminal): Promise<boolean> {
  const ask = (): Promise<boolean> =>
    new Promise<boolean>((resolveAnswer) => {
      const { input, output } = terminal ?? { input: process.stdin, output: process.stderr }
      if (input.readableEnded || input.destroyed) {
        output.write(`${inert(`[${origin.hook}] ${message.title}: no answer possible (stdin is closed); answering no`)}\n`)
        resolveAnswer(false)
        return
      }
      const rl = createInterface({ input, output })
      let answered = false
      const answer = (yes: boolean): void => {
        if (answered) return
        answered = true
        rl.close()
        resolveAnswer(yes)
      }
      rl.once('close', () => answer(false))
      rl.once('SIGINT', () => {
        output.write('\n')
        answer(false)
      })
      const body = message.body ? `\n  ${inert(message.body)}` : ''
      rl.question(`${inert(`[${origin.hook}] ${message.title}`)}${body}\n  Allow? [y/N] `, (text) => answer(/^y(es)?$/i.test(text.trim())))
    })
  const next = terminalQueue.then(ask, ask)
  terminalQueue = next.catch(() => {})
  return next
}
