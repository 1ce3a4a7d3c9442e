/**
 * Reads a file of an untrusted folder (a hook folder, a profile, test cases): only a regular file (not
 * a FIFO that blocks forever, not a device that never ends), never through a symbolic link at its last
 * component (O_NOFOLLOW, unless `follow`), and never more than `maxBytes` (the size is checked on the
 * open descriptor before a byte is read, and the read stops one byte past the limit, so a file that
 * grows meanwhile is caught too). Never throws.
 *
 * `inside`: the real path of a folder the file must be in. O_NOFOLLOW guards only the last component of
 * the path; a folder on the way that was swapped for a link after the caller checked it would still be
 * followed. So, where the system names open descriptors (`/proc/self/fd` on Linux), the file actually
 * opened is checked to lie inside that folder before a byte is read.
 */
import { createHash } from 'node:crypto'
import { constants } from 'node:fs'
import { open, readlink } from 'node:fs/promises'
import { isAbsolute, relative } from 'node:path'

/** Why a file could not be read, with `why` worded to follow the file's name ("x is a symbolic link"). */
export type Unreadable =
  | { ok: false; reason: 'missing'; why: string }
  | { ok: false; reason: 'link'; why: string }
  | { ok: false; reason: 'special'; why: string }
  | { ok: false; reason: 'size'; size: number; why: string }
  | { ok: false; reason: 'error'; why: string }
  | { ok: false; reason: 'outside'; why: string }

/** A file read whole: its text, its size, and the sha256 (hex) of exactly the bytes read (a digest of what was loaded, from the same read). */
export type RegularFile = { ok: true; text: string; bytes: number; sha256: string; data: Buffer } | Unreadable

export async function readRegularFile(path: string, maxBytes: number, follow = false, inside?: string): Promise<RegularFile> {
  let handle
  try {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it.
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | (follow ? 0 : constants.O_NOFOLLOW))
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return { ok: false, reason: 'missing', why: 'does not exist' }
    if (code === 'ELOOP') return { ok: false, reason: 'link', why: 'is a symbolic link' }
    return { ok: false, reason: 'error', why: `cannot be opened (${code ?? (err as Error).message})` }
  }
  try {
    if (inside !== undefined && !(await opensInside(handle.fd, inside))) return { ok: false, reason: 'outside', why: 'was reached through a symbolic link out of its folder' }
    const info = await handle.stat()
    if (!info.isFile()) return { ok: false, reason: 'special', why: `is not a regular file (${fileKind(info)})` }
    if (info.size > maxBytes) return { ok: false, reason: 'size', size: info.size, why: `is ${info.size} bytes, over the ${maxBytes} bytes hookd reads` }
    const buffer = Buffer.alloc(info.size + 1)
    let bytes = 0
    for (;;) {
      const { bytesRead } = await handle.read(buffer, bytes, buffer.length - bytes, bytes)
      if (bytesRead === 0 || bytes + bytesRead === buffer.length) {
        bytes += bytesRead
        break
      }
      bytes += bytesRead
    }
    if (bytes > info.size) return { ok: false, reason: 'size', size: bytes, why: `grew past ${info.size} bytes while it was read` }
    const read = buffer.subarray(0, bytes)
    return { ok: true, text: read.toString('utf8'), bytes, sha256: createHash('sha256').update(read).digest('hex'), data: read }
  } catch (err) {
    return { ok: false, reason: 'error', why: `cannot be read (${(err as Error).message})` }
  } finally {
    await handle.close()
  }
}

/** False when the descriptor's file is not below `folder`; true where the system cannot tell. */
async function opensInside(fd: number, folder: string): Promise<boolean> {
  let real: string
  try {
    real = await readlink(`/proc/self/fd/${fd}`)
  } catch {
    return true
  }
  const rel = relative(folder, real)
  return rel !== '' && rel !== '..' && !rel.startsWith('../') && !isAbsolute(rel)
}

function fileKind(info: { isDirectory(): boolean; isFIFO(): boolean; isSocket(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean }): string {
  if (info.isDirectory()) return 'a folder'
  if (info.isFIFO()) return 'a FIFO'
  if (info.isSocket()) return 'a socket'
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device'
  return 'a special file'
}
