/** What a path on the command line is: a folder, one hook's folder. */
import { stat } from 'node:fs/promises'
import { join } from 'node:path'
import { ENTRY_FILES } from '../../sidecar/hooks/bundle-plan.js'

export async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory()
  } catch {
    return false
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path)
    return true
  } catch {
    return false
  }
}

/** A hook's own folder: it holds an entry file (index.js, index.ts, ...), a hook.json or a tests/ folder. */
export async function isHookFolder(path: string): Promise<boolean> {
  for (const name of [...ENTRY_FILES, 'hook.json']) if (await exists(join(path, name))) return true
  return isDirectory(join(path, 'tests'))
}
