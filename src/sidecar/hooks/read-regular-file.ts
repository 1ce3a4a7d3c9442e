/**
 * Reads a file of an untrusted hook folder: only a regular file (not a FIFO that blocks forever, not a
 * device that never ends), never through a symbolic link at its last component (O_NOFOLLOW), and never
 * more than `maxBytes`. The bundler reads every input through this.
 */
import { constants } from 'node:fs'
import { open } from 'node:fs/promises'

export type RegularFile = { ok: true; text: string; bytes: number } | { ok: false; why: string }

export async function readRegularFile(path: string, maxBytes: number): Promise<RegularFile> {
  let handle
  try {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it.
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ELOOP') return { ok: false, why: 'it is a symbolic link' }
    if (code === 'ENOENT') return { ok: false, why: 'it does not exist' }
    return { ok: false, why: `it cannot be opened (${code ?? (err as Error).message})` }
  }
  try {
    const info = await handle.stat()
    if (!info.isFile()) return { ok: false, why: 'it is not a regular file' }
    if (info.size > maxBytes) return { ok: false, why: `it is ${info.size} bytes, over the limit of ${maxBytes} bytes` }
    // Read one byte past the limit: a file that grew since fstat is caught too.
    const buffer = Buffer.alloc(Math.min(maxBytes + 1, info.size + 1))
    let bytes = 0
    for (;;) {
      const { bytesRead } = await handle.read(buffer, bytes, buffer.length - bytes, bytes)
      if (bytesRead === 0) break
      bytes += bytesRead
      if (bytes === buffer.length) break
    }
    if (bytes > maxBytes || (bytes === buffer.length && bytes > info.size)) {
      return { ok: false, why: `it grew past the limit of ${maxBytes} bytes while it was read` }
    }
    return { ok: true, text: buffer.subarray(0, bytes).toString('utf8'), bytes }
  } finally {
    await handle.close()
  }
}
