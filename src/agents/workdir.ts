/**
 * The folder an agent event names (Claude Code's `cwd`) becomes the run's `ctx.workdir`, where hooks
 * may read (and, when a profile allows, write) files. Workdirs are real and the user's:
 *
 * - the folder is resolved once, when the run opens (its real path), and pinned (its device and inode):
 *   the run's file capabilities use that folder, and refuse once the path names another;
 * - it must exist, and not be the file system's root, a system folder or a folder every user shares
 *   (SYSTEM_TREES, SHARED_FOLDERS below; docs/containment.md lists them);
 * - it must belong to the user who posted the event (the front door's peer, from the kernel), or, for
 *   an agent that runs in this process (the Claude Agent SDK), to this process's user; an unknown user
 *   owns nothing;
 * - a user's home folder itself, or a folder above it, opens the run with no file access: a home folder
 *   holds keys and shell start-up files. Folders inside it are fine.
 */
import { realpath, stat } from 'node:fs/promises'
import { isAbsolute, parse, relative, sep } from 'node:path'
import { HookdError } from '../protocol/status.js'
import { accountOf } from './user-account.js'

/** Who posted an event over a connection (the front door): the uid owning its client end, undefined when unknown. */
export interface Peer {
  uid: number | undefined
}

/** What checkWorkdir found when the run opened: what its file capabilities use. */
export interface CheckedWorkdir {
  /** The folder's real path then; the run's files are served from it, not from the path the event names. */
  real: string
  /** Its identity then (device and inode, as text): a folder with another is not the run's. */
  pin: { dev: string; ino: string }
  /** The user whose folder it is, whose privileges the run's file capabilities have. */
  uid: number
  /** That user's home folder (real path), when the user database names it. */
  home?: string
  /** Why hooks get no file access in this folder, when they get none (a home folder). */
  noFiles?: string
}

/**
 * Folders that are never a workdir, nor anything below them (except USER_TREES): the system's own. On
 * macOS /etc and /var are links into /private, and real paths are compared.
 */
export const SYSTEM_TREES = [
  '/etc', '/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/boot', '/dev', '/proc', '/sys', '/run', '/var',
  '/System', '/Library', '/private/etc', '/private/var',
] as const

/** Folders below a system tree that hold users' own folders (temporary ones, homes): those below them are fine. */
export const USER_TREES = ['/var/tmp', '/var/home', '/var/folders', '/dev/shm', '/private/var/tmp', '/private/var/folders'] as const

/** Folders that are never a workdir themselves, though folders below them may be: every user shares them. */
export const SHARED_FOLDERS = [
  '/tmp', '/var/tmp', '/dev/shm', '/home', '/Users', '/var/home', '/var/folders', '/private/tmp', '/private/var/tmp', '/private/var/folders',
  '/opt', '/srv', '/snap', '/mnt', '/media', '/private', '/Applications', '/Volumes',
] as const

const EVERYONES = new Set<string>(['/tmp', '/var/tmp', '/dev/shm', '/home', '/Users', '/var/home', '/var/folders', '/private/tmp', '/private/var/tmp', '/private/var/folders'])

function within(folder: string, path: string): boolean {
  const rel = relative(folder, path)
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel))
}

/** macOS folds case in folder names: compare as it does. */
const fold = (path: string): string => (process.platform === 'darwin' ? path.toLowerCase() : path)

/** Why `real` (a real, absolute path) is never a workdir, in the words of a refusal; undefined when it may be one. */
export function systemFolder(real: string): string | undefined {
  const path = fold(real)
  const shared = SHARED_FOLDERS.find((f) => fold(f) === path)
  if (shared) return EVERYONES.has(shared) ? `a folder every user shares (${shared})` : `a system folder (${shared})`
  if (USER_TREES.some((tree) => within(fold(tree), path) && fold(tree) !== path)) return undefined
  const tree = SYSTEM_TREES.find((t) => within(fold(t), path))
  if (!tree) return undefined
  return fold(tree) === path ? `a system folder (${tree})` : `inside a system folder (${tree})`
}

/** What can be checked without the file system, on every event: a HookdError when `cwd` cannot be a workdir. */
export function workdirPath(cwd: string, field = 'cwd'): string {
  if (cwd.includes('\0')) throw new HookdError('invalid-argument', `the event's ${field} contains a NUL byte`)
  if (!isAbsolute(cwd)) throw new HookdError('invalid-argument', `the event's ${field} '${cwd}' is not an absolute path; hookd needs the session's folder to confine its hooks' files`)
  return cwd
}

export interface WorkdirChecks {
  /**
   * Who posted the event, when it came over a connection (the front door): the folder must be theirs.
   * Absent when the agent runs in this process, whose user it must belong to then.
   */
  peer?: Peer
  /** Where the user database is read (tests pass their own). */
  passwd?: string
}

/**
 * What `cwd` is as a workdir (CheckedWorkdir); a HookdError (invalid-argument; failed-precondition
 * when the peer's user is unknown) saying why it cannot be one otherwise. It asks the file system, so it runs
 * when a run opens, not on every event.
 */
export async function checkWorkdir(cwd: string, field = 'cwd', checks: WorkdirChecks = {}): Promise<CheckedWorkdir> {
  workdirPath(cwd, field)
  const asked = `the event's ${field} '${cwd}'`
  let real: string
  let info: Awaited<ReturnType<typeof stat>>
  try {
    real = await realpath(cwd)
    info = await stat(real, { bigint: true })
    if (!info.isDirectory()) throw new Error('not a folder')
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such folder' : (err as Error).message
    throw new HookdError('invalid-argument', `${asked} cannot be the hooks' workdir (${why}); run the agent in an existing folder`)
  }
  if (parse(real).root === real) {
    throw new HookdError('invalid-argument', `${asked} is the file system's root, which would give hooks every file; run the agent in a project folder`)
  }
  const system = systemFolder(real)
  if (system) throw new HookdError('invalid-argument', `${asked} is ${system}, which hookd never makes a workdir for hooks; run the agent in a project folder`)

  const own = process.geteuid?.()
  const uid = checks.peer ? checks.peer.uid : own
  if (checks.peer && uid === undefined) {
    throw new HookdError(
      'failed-precondition',
      "hookd cannot tell which user posted this event (the kernel's socket tables do not list its connection), and an unknown user owns no folder; post from this machine, as the agent's own user",
    )
  }
  const owner = Number(info.uid)
  if (uid !== undefined && owner !== uid) {
    const who = checks.peer ? `uid ${uid}, who posted the event` : `uid ${uid}, who runs this agent`
    throw new HookdError('invalid-argument', `${asked} belongs to uid ${owner}, not to ${who}; hooks work only in folders of the agent's own user`)
  }
  const checked: CheckedWorkdir = { real, pin: { dev: String(info.dev), ino: String(info.ino) }, uid: uid ?? owner }
  const account = uid === undefined ? undefined : await accountOf(uid, checks.passwd)
  if (account) {
    const home = await realpath(account.home).catch(() => account.home)
    checked.home = home
    if (within(real, home)) {
      const where = real === home ? 'is the home folder' : `is above ${home}, the home folder`
      checked.noFiles = `the session's folder ${real} ${where} of uid ${account.uid}, which holds keys and shell start-up files; run the agent in a project folder inside it`
    }
  }
  return checked
}
