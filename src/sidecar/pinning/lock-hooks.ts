/**
 * What `hookd lock` and `hookd trust` write: each hook's entry as its folder is now, read exactly as
 * the registry reads it (hook-source.ts: the same reads, bundling included, so the digest is that of
 * what would load), merged into the lock file. A folder that cannot be read or bundled is not locked:
 * it is reported, and its old entry (if any) stays.
 */
import { resolve } from 'node:path'
import { hookFolderNames } from '../hooks/hook-folder.js'
import { checkHookJson } from '../hooks/hook-files.js'
import { HookSources } from '../hooks/hook-source.js'
import { canonicalJson } from './canonical-json.js'
import { changedFiles } from './content-digest.js'
import { type LockEntry, type LockFile, emptyLock, entryFiles, lockEntry, lockPathFor, readLock, writeLock } from './lock-file.js'

export interface LockChange {
  name: string
  /** added, changed (with the files and whether permissions changed), unchanged, removed, or not locked (why). */
  change: 'added' | 'changed' | 'unchanged' | 'removed' | 'refused'
  files?: string[]
  permissions?: { locked: string | undefined; now: string | undefined }
  why?: string
}

export interface LockRun {
  path: string
  changes: LockChange[]
}

/**
 * Locks the hooks of `root` (all, or only `only`) into the lock file beside it (or `lockFile`). With
 * `only`, other entries stay as they are; without it, entries of folders that are gone are dropped.
 */
export async function lockHooks(root: string, options: { lockFile?: string; only?: readonly string[]; followSymlinks?: boolean } = {}): Promise<LockRun> {
  const full = resolve(root)
  const path = lockPathFor(full, options.lockFile)
  const before = (await readLock(path))?.lock ?? emptyLock()
  const next: LockFile = { hookdLock: before.hookdLock, hooks: { ...before.hooks } }
  const present = await hookFolderNames(full)
  const names = options.only ?? present
  const sources = new HookSources(full, { followSymlinks: options.followSymlinks === true })
  const changes: LockChange[] = []
  for (const name of names) {
    const files = await sources.read(name)
    if (!files.present) {
      changes.push({ name, change: 'refused', why: `there is no hook folder ${name} in ${full}` })
      continue
    }
    const problem = files.sourceError ?? files.configError ?? files.bundleError?.message ?? files.packageJsonError
    const checked = files.configText !== undefined ? checkHookJson(files.configText) : undefined
    if (problem !== undefined || !files.content || (checked && !checked.ok)) {
      changes.push({ name, change: 'refused', why: problem ?? (checked && !checked.ok ? checked.message : 'it cannot be read') })
      continue
    }
    const permissions = checked?.ok && checked.writtenPermissions !== undefined ? canonicalJson(checked.writtenPermissions) : undefined
    const entry = lockEntry(files.content, permissions)
    changes.push(describe(name, before.hooks[name], entry))
    next.hooks[name] = entry
  }
  if (!options.only) {
    for (const name of Object.keys(before.hooks)) {
      if (!present.includes(name)) {
        delete next.hooks[name]
        changes.push({ name, change: 'removed' })
      }
    }
  }
  await writeLock(path, next)
  return { path, changes }
}

function describe(name: string, old: LockEntry | undefined, entry: LockEntry): LockChange {
  if (!old) return { name, change: 'added' }
  if (old.digest === entry.digest && old.permissions === entry.permissions) return { name, change: 'unchanged' }
  const change: LockChange = { name, change: 'changed', files: changedFiles(entryFiles(old), entryFiles(entry)) }
  if (old.permissions !== entry.permissions) change.permissions = { locked: old.permissions, now: entry.permissions }
  return change
}
