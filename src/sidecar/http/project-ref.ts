/**
 * What a request to the user's own hookd (projects.ts) may name as its project: a folder of the user's
 * own (that hookd runs as the user), not the file system's root nor a system or shared folder (the
 * workdirs' rule, agents/workdir.ts), and its hooks folder a real folder inside it, owned by the user,
 * with no symbolic link on the way. A repository chooses what its hooks folder holds (those hooks run
 * sandboxed), never where hookd reads it from.
 */
import { lstat, realpath, stat } from 'node:fs/promises'
import { isAbsolute, join, normalize, parse, sep } from 'node:path'
import { systemFolder } from '../../agents/workdir.js'
import { HookdError } from '../../protocol/status.js'
import { inert } from '../../protocol/text.js'
import type { ProjectRef } from '../projects/projects.js'

/** Folders that are never a project: the system's own, whose files are nobody's project. */

/**
 * `root` (absolute) and `hooksDir` (relative to it) as a project, or a HookdError (failed-precondition)
 * saying what is wrong and what to do.
 */
export async function checkProject(root: string, hooksDir: string): Promise<ProjectRef> {
  const bad = (why: string): HookdError => new HookdError('failed-precondition', why)
  if (!isAbsolute(root) || root.includes('\0')) throw bad(`the project folder '${inert(root)}' is not an absolute path; the agent's entry passes its project folder (hookd init writes it)`)
  let real: string
  try {
    real = await realpath(root)
    if (!(await stat(real)).isDirectory()) throw new Error('not a folder')
  } catch (err) {
    throw bad(`the project folder ${inert(root)} cannot be used (${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such folder' : (err as Error).message})`)
  }
  const system = real === parse(real).root ? "the file system's root" : systemFolder(real)
  if (system) throw bad(`${inert(real)} is ${system}, not a project; start the agent in your project's folder`)
  const me = process.geteuid?.()
  const info = await stat(real)
  if (me !== undefined && info.uid !== me) throw bad(`the project folder ${inert(real)} belongs to uid ${info.uid}, not to the user this hookd runs as (uid ${me}); each user runs their own hookd ('hookd up')`)
  if (hooksDir.includes('\0') || isAbsolute(hooksDir) || normalize(hooksDir).split(sep).includes('..') || normalize(hooksDir) === '.') {
    throw bad(`the hooks folder '${inert(hooksDir)}' must be a folder inside the project, written relative to it (e.g. hooks)`)
  }
  let path = real
  for (const part of normalize(hooksDir).split(sep).filter((p) => p !== '')) {
    path = join(path, part)
    let entry
    try {
      entry = await lstat(path)
    } catch {
      throw bad(`the project ${inert(real)} has no hooks folder ${inert(hooksDir)}: create it (hookd new NAME --dir ${inert(hooksDir)}), or run the agent in the project's root folder`)
    }
    if (entry.isSymbolicLink()) throw bad(`${inert(path)} is a symbolic link; a project's hooks folder is a real folder inside it`)
    if (!entry.isDirectory()) throw bad(`${inert(path)} is not a folder`)
    if (me !== undefined && entry.uid !== me) throw bad(`${inert(path)} belongs to uid ${entry.uid}, not to this user`)
  }
  return { root: real, hooks: path }
}

