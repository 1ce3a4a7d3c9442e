/**
 * The folder an agent event names (Claude Code's `cwd`) becomes the run's `ctx.workdir`, where hooks
 * may read and write files. It must be an absolute path to an existing folder, and not the file
 * system's root: a workdir of `/` would confine nothing.
 */
import { realpath, stat } from 'node:fs/promises'
import { isAbsolute, parse } from 'node:path'
import { HookdError } from '../protocol/status.js'

/** What can be checked without the file system, on every event: a HookdError when `cwd` cannot be a workdir. */
export function workdirPath(cwd: string, field = 'cwd'): string {
  if (cwd.includes('\0')) throw new HookdError('invalid-argument', `the event's ${field} contains a NUL byte`)
  if (!isAbsolute(cwd)) throw new HookdError('invalid-argument', `the event's ${field} '${cwd}' is not an absolute path; hookd needs the session's folder to confine its hooks' files`)
  return cwd
}

/**
 * `cwd` when it can be a workdir; a HookdError (invalid-argument) saying why not otherwise. It asks the
 * file system, so it runs when a run opens, not on every event (a folder removed later fails the
 * hooks' file calls instead).
 */
export async function checkWorkdir(cwd: string, field = 'cwd'): Promise<string> {
  workdirPath(cwd, field)
  let real: string
  try {
    real = await realpath(cwd)
    if (!(await stat(real)).isDirectory()) throw new Error('not a folder')
  } catch (err) {
    const why = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such folder' : (err as Error).message
    throw new HookdError('invalid-argument', `the event's ${field} '${cwd}' cannot be the hooks' workdir (${why}); run the agent in an existing folder`)
  }
  if (parse(real).root === real) {
    throw new HookdError('invalid-argument', `the event's ${field} '${cwd}' is the file system's root, which would give hooks every file; run the agent in a project folder`)
  }
  return cwd
}
