/**
 * A hook's content digest: one sha256 over every file the hook loads (hook.json, and index.js or every
 * file esbuild read into its bundle, package.json files included), each named by its path relative to
 * the hook's folder, in path order. The digests of the files come from the very reads the loader used
 * (read-regular-file.ts hashes the bytes it read), so what is pinned is what runs: nothing is read a
 * second time to be hashed. A remote hook's content is its hook.json alone (its server is not ours to
 * read). No mtime, no absolute path: the same files give the same digest on every machine.
 */
import { createHash } from 'node:crypto'

/** One file a hook loads: its path in the hook's folder ('/'-separated) and the sha256 (hex) of its bytes. */
export interface FileDigest {
  path: string
  sha256: string
}

/** What a hook loads, and the digest over it. */
export interface HookContent {
  /** Sorted by path, each path once. */
  files: FileDigest[]
  /** `sha256:` and 64 hex digits. */
  digest: string
}

/** The prefix of every content digest: the algorithm, so that a later one can be told apart. */
export const DIGEST_PREFIX = 'sha256:'

/** The sha256 (hex) of some bytes. */
export function sha256Hex(bytes: string | Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex')
}

/** The content of a hook from the files it loads (duplicates dropped: the last read of a path wins). */
export function hookContent(files: readonly FileDigest[]): HookContent {
  const byPath = new Map<string, string>()
  for (const f of files) byPath.set(f.path, f.sha256)
  const sorted = [...byPath.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([path, sha256]) => ({ path, sha256 }))
  const hash = createHash('sha256').update('hookd-content-v1\n')
  for (const f of sorted) hash.update(`${f.path}\0${f.sha256}\n`)
  return { files: sorted, digest: `${DIGEST_PREFIX}${hash.digest('hex')}` }
}

/** The files two contents disagree on: changed, added (only in `next`) and removed (only in `locked`). */
export function changedFiles(locked: readonly FileDigest[], next: readonly FileDigest[]): string[] {
  const before = new Map(locked.map((f) => [f.path, f.sha256]))
  const after = new Map(next.map((f) => [f.path, f.sha256]))
  const out: string[] = []
  for (const [path, sha] of after) {
    const was = before.get(path)
    if (was === undefined) out.push(`${path} (new)`)
    else if (was !== sha) out.push(path)
  }
  for (const path of before.keys()) if (!after.has(path)) out.push(`${path} (gone)`)
  return out.sort()
}
