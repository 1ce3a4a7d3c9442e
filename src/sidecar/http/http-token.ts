/**
 * The HTTP front door's token on a sidecar without tenants. A payload's `cwd` becomes a folder hooks
 * may read, so nobody may post events without it, not even another local user who can reach the
 * loopback port. It is made on the first start (`hkd_` and 32 random bytes) in a state folder
 * (`.hookd/http-token` by default: state-folder.ts says what hookd trusts as its own), and read again
 * on every later start, so the settings `hookd setup` wrote keep working. `cat .hookd/http-token`
 * shows it. With tenants, each tenant's own token is the credential instead (docs/tenants.md).
 *
 * A token file named with `--http-token-file` may live in a folder hookd did not make (a secrets
 * mount, say): then it is never created there, and it must still be a regular file of this user's,
 * closed to others, in a folder nobody else can write to.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import { realpath, stat } from 'node:fs/promises'
import { basename, dirname } from 'node:path'
import { HookdError } from '../../protocol/status.js'
import { StateFolder, readStateFile } from '../state/state-folder.js'
import { newToken } from '../tenancy/tenant-token.js'

export const DEFAULT_HTTP_TOKEN_FILE = '.hookd/http-token'

const TOKEN = /^[A-Za-z0-9._~+/=-]{32,512}$/

export interface LoadedToken {
  token: string
  created: boolean
  /** The token's folder when it is a state folder of hookd's, where the front door's URL is recorded too. */
  folder?: StateFolder
}

/**
 * The token in `file`. With `create` (the default token file) its folder is a state folder, made if
 * missing, and the token is made there if there is none. Without it (a file the operator named) the
 * file must exist. A HookdError saying what is wrong and what to do when the file or its folder cannot
 * be trusted (a link, a FIFO, another user's, open to others) or holds no token.
 */
export async function loadHttpToken(file: string, options: { create: boolean } = { create: true }): Promise<LoadedToken> {
  if (options.create) {
    const folder = (await StateFolder.open(dirname(file), { create: true })) as StateFolder
    const text = await folder.read(basename(file))
    if (text === undefined) {
      const token = newToken()
      await folder.write(basename(file), `${token}\n`)
      return { token, created: true, folder }
    }
    return { token: tokenIn(text, file), created: false, folder }
  }
  await checkNamedFolder(dirname(file))
  const text = await readStateFile(file, 4096)
  if (text === undefined) throw new HookdError('failed-precondition', `the HTTP token file ${file} does not exist: write one (a line of 32 to 512 characters, chmod 600), or leave out --http-token-file to let hookd make ${DEFAULT_HTTP_TOKEN_FILE}`)
  const folder = await StateFolder.open(dirname(file), { create: false }).catch(() => undefined)
  return { token: tokenIn(text, file), created: false, ...(folder ? { folder } : {}) }
}

function tokenIn(text: string, file: string): string {
  const token = text.trim()
  if (!TOKEN.test(token)) {
    throw new HookdError('failed-precondition', `the HTTP token file ${file} does not hold a token (32 to 512 characters of A-Z a-z 0-9 . _ ~ + / = -); delete it and start again to get a new one`)
  }
  return token
}

/** A folder hookd did not make may hold the token file if nobody but this user (or root) can write to it. */
async function checkNamedFolder(dir: string): Promise<void> {
  let real: string
  let info
  try {
    real = await realpath(dir)
    info = await stat(real)
  } catch (err) {
    throw new HookdError('failed-precondition', `the HTTP token file's folder ${dir} cannot be used: ${(err as Error).message}`)
  }
  const me = process.geteuid?.()
  if (!info.isDirectory()) throw new HookdError('failed-precondition', `the HTTP token file's folder ${dir} is not a folder`)
  if (me !== undefined && info.uid !== me && info.uid !== 0) {
    throw new HookdError('failed-precondition', `the HTTP token file's folder ${dir} belongs to uid ${info.uid}, who could replace the token; keep it in a folder of yours`)
  }
  if ((info.mode & 0o022) !== 0) {
    throw new HookdError('failed-precondition', `the HTTP token file's folder ${dir} can be written by other users (mode ${(info.mode & 0o777).toString(8)}), who could replace the token; keep it in a folder only you can write to`)
  }
}

/** Compares a presented token with the expected one in constant time. */
export function sameToken(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented).digest()
  const b = createHash('sha256').update(expected).digest()
  return timingSafeEqual(a, b)
}
