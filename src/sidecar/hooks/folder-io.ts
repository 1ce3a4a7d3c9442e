/**
 * A hook folder as the bundler reaches it: every look at a path (is it a file, a folder, a link?) and
 * every read of a file in it is made here, by hookd, never by esbuild, whose own resolver would read
 * package.json files anywhere from the folder up to `/` without a size cap (a FIFO among them blocked
 * it for good; a sparse 1 GB one was read whole). The rules are those of hook folders
 * (hook-folder.ts, docs/containment.md#hook-folders):
 *
 * - Paths are looked at through the folder's own descriptor (`/proc/self/fd/N/...` on Linux), so a
 *   folder swapped for a link after it was opened is not followed.
 * - No symbolic link is followed, anywhere on a path, unless the operator opted in (`followSymlinks`,
 *   `hookd serve --allow-symlinks`, refused with tenants). A link is refused whatever it points at, so
 *   a refusal says nothing of what exists outside the folder.
 * - Only regular files are read, each size-checked before a byte is read, and the file actually opened
 *   is checked to lie inside the folder (read-regular-file.ts).
 * - A few operations run at once, however many imports esbuild asks about in parallel.
 *
 * Paths given to and taken from this class are the folder's real path joined with the path inside it
 * (what esbuild sees and puts in the source map); `fsPath` maps them to the descriptor.
 */
import { constants, existsSync } from 'node:fs'
import { type FileHandle, lstat, open, realpath, stat } from 'node:fs/promises'
import { isAbsolute, join, relative, sep } from 'node:path'
import { Semaphore } from '../semaphore.js'
import { type RegularFile, readRegularFile } from './read-regular-file.js'

/** What is at a path. `special`: a FIFO, socket or device (refused when read, saying which). */
export type PathKind = 'file' | 'dir' | 'link' | 'special' | 'missing'

/** Filesystem operations on one folder at once. */
const SLOTS = 8

/** True when `path` is `root` or below it, by the paths' text. */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path)
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel))
}

export class FolderIo {
  private readonly slots = new Semaphore(SLOTS)
  /** Paths inside the folder known to be, or not to be, a link (its folders, as they are checked). */
  private readonly links = new Map<string, boolean>()

  private constructor(
    /** The folder's real path: the prefix of every path esbuild sees. */
    readonly root: string,
    /** Where its files are opened: the descriptor's path, or the root where there is none. */
    private readonly base: string,
    readonly follow: boolean,
    private readonly handle: FileHandle,
  ) {}

  /** Opens the folder; throws an Error saying why it cannot be. Close it when done. */
  static async open(dir: string, follow: boolean): Promise<FolderIo> {
    let handle: FileHandle
    try {
      handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY | (follow ? 0 : constants.O_NOFOLLOW))
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      throw new Error(code === 'ELOOP' ? 'the hook folder is a symbolic link' : `cannot open the hook folder: ${(err as Error).message}`)
    }
    try {
      const byFd = `/proc/self/fd/${handle.fd}`
      const base = existsSync(byFd) ? byFd : dir
      return new FolderIo(await realpath(base), base, follow, handle)
    } catch (err) {
      await handle.close()
      throw new Error(`cannot open the hook folder: ${(err as Error).message}`)
    }
  }

  async close(): Promise<void> {
    await this.handle.close()
  }

  /** A path relative to the folder, for messages ('.' for the folder itself). */
  shown(path: string): string {
    return relative(this.root, path) || '.'
  }

  /** What is at `path` (not following a link at its end, unless links are followed). */
  kind(path: string): Promise<PathKind> {
    if (!isInside(this.root, path)) return Promise.resolve('missing')
    return this.slots.run(async () => {
      try {
        const info = await lstat(this.fsPath(path))
        if (info.isSymbolicLink()) {
          if (!this.follow) return 'link'
          const target = await stat(this.fsPath(path))
          return target.isFile() ? 'file' : target.isDirectory() ? 'dir' : 'special'
        }
        return info.isFile() ? 'file' : info.isDirectory() ? 'dir' : 'special'
      } catch {
        return 'missing'
      }
    })
  }

  /**
   * The first symbolic link on the way from the folder to `dir` (itself included), relative to the
   * folder; undefined when there is none, or when links are followed.
   */
  async linkOnPath(dir: string): Promise<string | undefined> {
    if (this.follow || !isInside(this.root, dir)) return undefined
    const parts = relative(this.root, dir).split(sep).filter(Boolean)
    let at = this.root
    for (const part of parts) {
      at = join(at, part)
      let linked = this.links.get(at)
      if (linked === undefined) {
        linked = (await this.kind(at)) === 'link'
        this.links.set(at, linked)
      }
      if (linked) return relative(this.root, at)
    }
    return undefined
  }

  /** Reads a regular file of at most `maxBytes`, never through a link out of the folder. */
  read(path: string, maxBytes: number): Promise<RegularFile> {
    if (!isInside(this.root, path)) return Promise.resolve({ ok: false, reason: 'outside', why: "is outside the hook's folder" })
    return this.slots.run(() => readRegularFile(this.fsPath(path), maxBytes, this.follow, this.follow ? undefined : this.root))
  }

  private fsPath(path: string): string {
    return join(this.base, relative(this.root, path))
  }
}
