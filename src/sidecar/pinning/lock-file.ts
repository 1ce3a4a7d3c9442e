/**
 * hookd.lock: what `hookd lock` and `hookd trust` pin, beside the hooks folder (`./hooks` → `./hookd.lock`).
 * One entry per hook: its content digest (content-digest.ts), the digest of each file it loads (so that
 * a change can be said file by file) and its hook.json "permissions" as written, in canonical JSON.
 *
 * The file is canonical JSON, indented, keys sorted, with no mtime and no absolute path: the same hooks
 * give the same bytes on every machine, and a diff of it in a pull request shows exactly which hook
 * changed. It is read bounded (size before a byte is read, nesting before parsing), never through a
 * link, and validated with zod; an invalid one is refused with the line and field that are wrong. It is
 * written through a temporary file and a rename (state-folder.ts writeReplacing), and never when the
 * path is a symbolic link (a repository could commit one pointing anywhere).
 */
import { lstat } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import * as z from 'zod'
import { parseJson } from '../../protocol/bounded-json.js'
import { HOOK_NAME } from '../../protocol/hook-name.js'
import { issueText } from '../../protocol/issue-text.js'
import { HookdError } from '../../protocol/status.js'
import { readRegularFile } from '../hooks/read-regular-file.js'
import { writeReplacing } from '../state/state-folder.js'
import { canonicalJsonPretty } from './canonical-json.js'
import { type FileDigest, type HookContent, sha256Hex } from './content-digest.js'

/** The lock file's name, beside the hooks folder. */
export const LOCK_FILE = 'hookd.lock'
/** The format version this hookd writes and reads. */
export const LOCK_VERSION = 1
/** The largest lock file read: a few hundred bytes per hook, for thousands of hooks. */
export const LOCK_MAX_BYTES = 4 * 1024 * 1024

const HEX64 = /^[0-9a-f]{64}$/
const SAFE_PATH = /^(?!\/)(?!.*(?:^|\/)\.\.?(?:\/|$))[\w@.+\-/ ]{1,512}$/

const lockEntrySchema = z.strictObject({
  digest: z.string().regex(/^sha256:[0-9a-f]{64}$/, 'expected "sha256:" and 64 hex digits'),
  files: z.record(z.string().regex(SAFE_PATH, 'expected a path inside the hook folder'), z.string().regex(HEX64, 'expected 64 hex digits')),
  /** hook.json "permissions" in canonical JSON text; absent when the hook declares none. */
  permissions: z.string().max(256 * 1024).optional(),
})

export const lockFileSchema = z.strictObject({
  hookdLock: z.literal(LOCK_VERSION, { error: `expected ${LOCK_VERSION}: this hookd reads hookd.lock version ${LOCK_VERSION}; write it again with hookd lock` }),
  hooks: z.record(z.string().regex(HOOK_NAME, 'a hook name'), lockEntrySchema),
})

export type LockEntry = z.output<typeof lockEntrySchema>
export type LockFile = z.output<typeof lockFileSchema>

/** A lock file as read: its entries, its exact text and that text's sha256 (what hookd sign --lock signs). */
export interface ReadLock {
  path: string
  lock: LockFile
  text: string
  sha256: string
}

/** Where the lock of a hooks folder lives: beside it, unless given. */
export function lockPathFor(hooksRoot: string, given?: string): string {
  return given ?? join(dirname(resolve(hooksRoot)), LOCK_FILE)
}

/** An empty lock. */
export function emptyLock(): LockFile {
  return { hookdLock: LOCK_VERSION, hooks: {} }
}

/** A hook's entry, from what it loads and its hook.json "permissions" (canonical text). */
export function lockEntry(content: HookContent, permissions: string | undefined): LockEntry {
  const files: Record<string, string> = {}
  for (const f of content.files) files[f.path] = f.sha256
  return { digest: content.digest, files, ...(permissions !== undefined ? { permissions } : {}) }
}

/** An entry's files as a list (content-digest.ts changedFiles). */
export function entryFiles(entry: LockEntry): FileDigest[] {
  return Object.entries(entry.files).map(([path, sha256]) => ({ path, sha256 }))
}

/** The lock's text: canonical, indented JSON with a final newline. */
export function lockText(lock: LockFile): string {
  return `${canonicalJsonPretty(lock)}\n`
}

/** Parses and validates a lock file's text; a HookdError names the file, line and field when it is wrong. */
export function parseLock(text: string, path: string): LockFile {
  const parsed = parseJson(text, path, { maxDepth: 8, maxBytes: LOCK_MAX_BYTES })
  if (!parsed.ok) throw new HookdError('invalid-argument', `${parsed.message}; write it again with hookd lock`)
  const checked = lockFileSchema.safeParse(parsed.value)
  if (checked.success) return checked.data
  const issue = checked.error.issues[0]
  const keys = (issue?.path ?? []).filter((k): k is string => typeof k === 'string')
  const key = issue?.code === 'unrecognized_keys' ? issue.keys[0] : keys.at(-1)
  const line = lineOf(text, keys.length > 1 ? keys.at(-2) : undefined, key)
  throw new HookdError('invalid-argument', `${path}${line !== undefined ? `:${line}` : ''}: ${issueText(checked.error)}; write it again with hookd lock (or fix that field)`)
}

/** Reads the lock file at `path`: undefined when there is none; a HookdError when it cannot be used. */
export async function readLock(path: string): Promise<ReadLock | undefined> {
  const file = await readRegularFile(path, LOCK_MAX_BYTES)
  if (!file.ok) {
    if (file.reason === 'missing') return undefined
    const advice = file.reason === 'link' ? '; hookd reads only a regular file as a lock file: remove the link and run hookd lock' : ''
    throw new HookdError('failed-precondition', `${path} ${file.why}${advice}`)
  }
  return { path, lock: parseLock(file.text, path), text: file.text, sha256: file.sha256 }
}

/** Writes the lock file (temporary file and rename); refuses a path that is a symbolic link. Returns its text. */
export async function writeLock(path: string, lock: LockFile): Promise<string> {
  await refuseLink(path)
  const text = lockText(lock)
  await writeReplacing(path, text, 0o644)
  return text
}

/** Refuses to write over a symbolic link (or anything but a regular file). */
export async function refuseLink(path: string): Promise<void> {
  try {
    const info = await lstat(path)
    if (info.isSymbolicLink()) throw new HookdError('failed-precondition', `${path} is a symbolic link; hookd does not write through links: remove it and run the command again`)
    if (!info.isFile()) throw new HookdError('failed-precondition', `${path} is not a regular file; remove it and run the command again`)
  } catch (err) {
    if (err instanceof HookdError) throw err
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new HookdError('unavailable', `cannot write ${path}: ${(err as Error).message}`)
  }
}

/** The sha256 of a lock's text, as `sha256:` (what a lock signature signs). */
export function lockDigest(text: string): string {
  return `sha256:${sha256Hex(text)}`
}

/** The 1-based line of `"key"` in the text, after `"parent"` when given. */
function lineOf(text: string, parent: string | undefined, key: string | undefined): number | undefined {
  if (key === undefined) return undefined
  const from = parent !== undefined ? Math.max(0, text.indexOf(JSON.stringify(parent))) : 0
  const at = text.indexOf(JSON.stringify(key), from)
  return at < 0 ? undefined : text.slice(0, at).split('\n').length
}
