/**
 * Reading hook folders: the folder names under a root, and one folder's files (`index.js`, `hook.json`)
 * as they are at one moment, with a digest that says whether two reads saw the same bytes.
 */
import { createHash } from 'node:crypto'
import { readdir, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { HookdError } from '../../protocol/status.js'

/** A hook's name: its folder's name. */
export const HOOK_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/

/** The digest of a folder that is not there. */
export const ABSENT = 'absent'

/** A hook folder's files as read at one moment. Equal digests mean the same files, byte for byte. */
export interface HookFiles {
  name: string
  /** False when `<root>/<name>` is not a folder (any more). */
  present: boolean
  source?: string
  /** Why index.js could not be read, when it exists but is unreadable. */
  sourceError?: string
  configText?: string
  digest: string
}

/** The hook folder names under `root`, sorted. Throws NOT_FOUND when the root cannot be read. */
export async function hookFolderNames(root: string): Promise<string[]> {
  try {
    const dirents = await readdir(root, { withFileTypes: true })
    return dirents
      .filter((d) => (d.isDirectory() || d.isSymbolicLink()) && HOOK_NAME.test(d.name))
      .map((d) => d.name)
      .sort()
  } catch (err) {
    throw new HookdError('not-found', `cannot read the hooks folder ${root}: ${(err as Error).message}; pass --hooks DIR with a folder of hooks`)
  }
}

/** Reads a hook folder's files, without loading them. */
export async function readHookFolder(root: string, name: string): Promise<HookFiles> {
  const dir = join(root, name)
  if (!HOOK_NAME.test(name)) return { name, present: false, digest: ABSENT }
  try {
    if (!(await stat(dir)).isDirectory()) return { name, present: false, digest: ABSENT }
  } catch {
    return { name, present: false, digest: ABSENT }
  }
  const files: HookFiles = { name, present: true, digest: '' }
  try {
    files.source = await readFile(join(dir, 'index.js'), 'utf8')
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code !== 'ENOENT' && code !== 'ENOTDIR') files.sourceError = (err as Error).message
  }
  try {
    files.configText = await readFile(join(dir, 'hook.json'), 'utf8')
  } catch {
    // No hook.json: the hook has no configuration.
  }
  files.digest = createHash('sha256')
    .update(files.source === undefined ? `-${files.sourceError ?? ''}` : `+${files.source}`)
    .update('\0')
    .update(files.configText === undefined ? '-' : `+${files.configText}`)
    .digest('hex')
  return files
}
