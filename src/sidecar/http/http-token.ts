/**
 * The HTTP front door's token on a sidecar without tenants. A payload's `cwd` becomes a folder hooks
 * may write in, so nobody may post events without it, not even another local user who can reach the
 * loopback port. It is made on the first start (`hkd_` and 32 random bytes), kept in a file only its
 * owner can read (`.hookd/http-token` by default, folder 0700, file 0600), and read again on every
 * later start, so the settings `hookd setup` wrote keep working. `cat .hookd/http-token` shows it.
 * With tenants, each tenant's own token is the credential instead (docs/tenants.md).
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import { chmod, mkdir, open, readFile, stat } from 'node:fs/promises'
import { dirname } from 'node:path'
import { HookdError } from '../../protocol/status.js'
import { newToken } from '../tenancy/tenant-token.js'

export const DEFAULT_HTTP_TOKEN_FILE = '.hookd/http-token'

const TOKEN = /^[A-Za-z0-9._~+/=-]{32,512}$/

/** The token in `file`, made there first if there is none. */
export async function loadHttpToken(file: string): Promise<{ token: string; created: boolean }> {
  if (await mkdir(dirname(file), { recursive: true, mode: 0o700 })) await chmod(dirname(file), 0o700)
  try {
    const handle = await open(file, 'wx', 0o600)
    const token = newToken()
    try {
      await handle.writeFile(`${token}\n`)
    } finally {
      await handle.close()
    }
    return { token, created: true }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new HookdError('unavailable', `cannot create the HTTP token file ${file}: ${(err as Error).message}`)
    }
  }
  const info = await stat(file)
  if ((info.mode & 0o077) !== 0) {
    throw new HookdError(
      'failed-precondition',
      `the HTTP token file ${file} can be read by other users (mode ${(info.mode & 0o777).toString(8)}); run 'chmod 600 ${file}', or delete it to get a new token`,
    )
  }
  const token = (await readFile(file, 'utf8')).trim()
  if (!TOKEN.test(token)) {
    throw new HookdError('failed-precondition', `the HTTP token file ${file} does not hold a token; delete it and start again to get a new one`)
  }
  return { token, created: false }
}

/** Compares a presented token with the expected one in constant time. */
export function sameToken(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented).digest()
  const b = createHash('sha256').update(expected).digest()
  return timingSafeEqual(a, b)
}
