/**
 * The default file handlers (`ctx.file.*`): confined to the workdir by real path, one component at a
 * time through every symbolic link; never under a protected name or root (src/protocol/protected-paths.ts),
 * as named and as the links lead; a pinned workdir only while it is still the folder pinned; reads and
 * writes bounded. The sidecar has already checked the session's policy lexically: only the host can
 * follow links. Errors word themselves like the sidecar's refusals:
 * "ctx.file.read('notes.txt') failed: no such file or directory".
 */
import { constants } from 'node:fs'
import { type FileHandle, lstat, mkdir, open, readdir, readlink, realpath, stat } from 'node:fs/promises'
import { basename, dirname, isAbsolute, join, parse, relative, resolve, sep } from 'node:path'
import { MAX_LIST_ENTRIES, quoted } from '../protocol/capabilities.js'
import { passOn } from '../protocol/capability-errors.js'
import { type FileNeed, type ProtectedRoot, hookdStateRoots, protectedReason, protectionOf } from '../protocol/protected-paths.js'
import { type CallOrigin, CapabilityError, type FileHandlers, MAX_REPLY_BYTES } from './capability-handlers.js'

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

