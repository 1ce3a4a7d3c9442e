/**
 * hookd's own state on disk (the front door's token and URL, its socket, setup's backups), and the one
 * rule for trusting it: a state folder is hookd's only when it is a real folder (not a symbolic link),
 * owned by the user hookd runs as, and closed to everyone else (mode 0700); a state file only when it is
 * a regular file there, owned by that user, mode 0600, opened without following a link. A repository
 * can commit a `.hookd/` folder holding a URL that sends the token elsewhere, or a link to one of the
 * user's secrets; a checkout makes folders 0755 and files 0644 under the usual umask, and a link stays
 * a link, so none of it passes. Anything that does not pass is refused with what to do.
 *
 * Two places hold state: a project's `.hookd/` beside `hookd serve`'s hooks folder (its gRPC socket,
 * `hookd serve --http`'s token and URL), and the user's own folder, `$HOOKD_STATE_DIR` or else
 * `~/.local/state/hookd` (the user's hookd started by `hookd up`, setup's backups). Files are written
 * through a temporary file and a rename, so nothing is ever written through a link and a reader never
 * sees half a file. Every state folder hookd makes gets a `.gitignore` of `*`, so that git never shows
 * (or commits) what it holds.
 */
import { randomBytes } from 'node:crypto'
import { constants, type Stats } from 'node:fs'
import { lstat, mkdir, open, rename, rm } from 'node:fs/promises'
import { homedir } from 'node:os'
import { basename, dirname, isAbsolute, join } from 'node:path'
import { HookdError } from '../../protocol/status.js'

/** A project's state folder, beside where `hookd serve` runs. */
export const PROJECT_STATE_DIR = '.hookd'

/** The largest state file hookd reads (a token, a URL, a pid). */
const MAX_STATE_BYTES = 64 * 1024

/** The user's own state folder: `$HOOKD_STATE_DIR` (absolute), else `~/.local/state/hookd`. */
export function userStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const given = env.HOOKD_STATE_DIR
  if (given) {
    if (!isAbsolute(given)) throw new HookdError('invalid-argument', `HOOKD_STATE_DIR must be an absolute path, not '${given}'`)
    return given
  }
  return join(env.HOME || homedir(), '.local', 'state', 'hookd')
}

function euid(): number | undefined {
  return process.geteuid?.()
}

/** Why `info` (of the folder `dir`) is not a state folder of this user's, or undefined when it is one. */
export function folderProblem(dir: string, info: Stats): string | undefined {
  if (info.isSymbolicLink()) return `${dir} is a symbolic link`
  if (!info.isDirectory()) return `${dir} is not a folder`
  const me = euid()
  if (me !== undefined && info.uid !== me) return `${dir} belongs to uid ${info.uid}, not to this user (uid ${me})`
  if ((info.mode & 0o077) !== 0) return `${dir} is open to other users (mode ${(info.mode & 0o777).toString(8).padStart(4, '0')}, hookd makes it 0700)`
  return undefined
}

/** Why `info` (of the file `file`) is not a state file of this user's, or undefined when it is one. */
export function fileProblem(file: string, info: Stats): string | undefined {
  if (info.isSymbolicLink()) return `${file} is a symbolic link`
  if (!info.isFile()) return `${file} is not a regular file`
  const me = euid()
  if (me !== undefined && info.uid !== me) return `${file} belongs to uid ${info.uid}, not to this user (uid ${me})`
  if ((info.mode & 0o077) !== 0) return `${file} can be read or changed by other users (mode ${(info.mode & 0o777).toString(8).padStart(4, '0')}, hookd makes it 0600)`
  return undefined
}

function refusal(problem: string, remedy: string): HookdError {
  return new HookdError('failed-precondition', `${problem}, so hookd does not trust it as its own state (a repository may have put it there); ${remedy}`)
}

/** The advice for a state folder that fails the rule. */
function folderRemedy(dir: string): string {
  return `remove ${dir} if hookd did not make it (hookd makes it again, 0700, with a new token), or fix it with 'chmod 700 ${dir}'`
}

/** A state folder that passed the rule: reads and writes of its files go through it. */
export class StateFolder {
  private constructor(readonly path: string) {}

  /**
   * `dir` as a state folder: checked, and made (0700, with its `.gitignore`) when `create` and missing.
   * Undefined when it is missing and not to be made. A HookdError (failed-precondition) saying what is
   * wrong and what to do when it exists but fails the rule.
   */
  static async open(dir: string, options: { create: boolean }): Promise<StateFolder | undefined> {
    let info: Stats | undefined
    try {
      info = await lstat(dir)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new HookdError('unavailable', `cannot use ${dir}: ${(err as Error).message}`)
    }
    if (!info) {
      if (!options.create) return undefined
      await mkdir(dirname(dir), { recursive: true, mode: 0o700 })
      try {
        await mkdir(dir, { mode: 0o700 })
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new HookdError('unavailable', `cannot create ${dir}: ${(err as Error).message}`)
      }
      info = await lstat(dir)
      const problem = folderProblem(dir, info)
      if (problem) throw refusal(problem, folderRemedy(dir))
      const folder = new StateFolder(dir)
      // git shows nothing of what hookd keeps here, and `git add .` commits none of it.
      await folder.write('.gitignore', '# hookd keeps its token, sockets and backups here: none of it belongs in a commit.\n*\n')
      return folder
    }
    const problem = folderProblem(dir, info)
    if (problem) throw refusal(problem, folderRemedy(dir))
    const folder = new StateFolder(dir)
    if ((await folder.read('.gitignore')) === undefined) await folder.write('.gitignore', '# hookd keeps its token, sockets and backups here: none of it belongs in a commit.\n*\n')
    return folder
  }

  /** The path of `name` in this folder. */
  file(name: string): string {
    if (name !== basename(name) || name === '..' || name === '.') throw new HookdError('internal', `'${name}' is not a file name`)
    return join(this.path, name)
  }

  /**
   * The text of `name`, or undefined when there is none. A HookdError when the file fails the rule (a
   * link, a FIFO, another user's, open to others) or is larger than a state file can be.
   */
  read(name: string, maxBytes = MAX_STATE_BYTES): Promise<string | undefined> {
    return readStateFile(this.file(name), maxBytes)
  }

  /**
   * Writes `name` (mode 0600) through a temporary file and a rename: a link or anything else already
   * there is replaced, never written through, and readers see the old text or the new, never half.
   */
  async write(name: string, text: string | Buffer, mode = 0o600): Promise<void> {
    await writeReplacing(this.file(name), text, mode)
  }

  /** Removes `name` when it is there. */
  async remove(name: string): Promise<void> {
    await rm(this.file(name), { force: true })
  }
}

/**
 * The text of the state file `file`, or undefined when there is none; a HookdError saying what is wrong
 * and what to do when it is not a regular file of this user's closed to others (opened without following
 * a link and without waiting on a FIFO), or larger than `maxBytes`.
 */
export async function readStateFile(file: string, maxBytes = MAX_STATE_BYTES): Promise<string | undefined> {
  let handle
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return undefined
    if (code === 'ELOOP') throw refusal(`${file} is a symbolic link`, 'remove it; hookd writes its own')
    throw new HookdError('unavailable', `cannot read ${file}: ${(err as Error).message}`)
  }
  try {
    const info = await handle.stat()
    const problem = fileProblem(file, info)
    if (problem) throw refusal(problem, info.isFile() ? `remove it if hookd did not make it, or fix it with 'chmod 600 ${file}'` : 'remove it; hookd writes its own')
    if (info.size > maxBytes) throw refusal(`${file} is ${info.size} bytes, more than a state file of hookd's ever holds`, 'remove it; hookd writes its own')
    const buffer = Buffer.alloc(info.size + 1)
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0)
    if (bytesRead > info.size) throw refusal(`${file} grew while it was read`, 'remove it; hookd writes its own')
    return buffer.subarray(0, bytesRead).toString('utf8')
  } finally {
    await handle.close()
  }
}

/**
 * Writes `file` (`mode`) through a new temporary file beside it and a rename over it: never through a
 * link at `file` (the link itself is replaced), never leaving half a file. The folder must exist.
 */
export async function writeReplacing(file: string, text: string | Buffer, mode: number): Promise<void> {
  const temp = join(dirname(file), `.${basename(file)}.${randomBytes(6).toString('hex')}.tmp`)
  const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode)
  try {
    await handle.writeFile(text)
    await handle.chmod(mode)
    await handle.sync()
  } catch (err) {
    await handle.close()
    await rm(temp, { force: true })
    throw err
  }
  await handle.close()
  try {
    await rename(temp, file)
  } catch (err) {
    await rm(temp, { force: true })
    throw err
  }
}
