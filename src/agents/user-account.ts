/**
 * A user's account by uid: their name, primary group and home folder, from the system's user database
 * (/etc/passwd, then `getent passwd` for users it does not list, such as a directory service's). The
 * front door needs it for the agent's user: whose home folder a run must not open its files in
 * (workdir.ts), and which group its file helper runs with (src/sidecar/http/user-files.ts).
 */
import { execFile } from 'node:child_process'
import { readFile, stat } from 'node:fs/promises'

export interface Account {
  name: string
  uid: number
  gid: number
  home: string
}

/** Far more than any real user database; bounded all the same. */
const MAX_PASSWD_BYTES = 16 * 1024 * 1024

/** `uid`'s account, or undefined when no database names it. `passwd` is where to look first (tests pass their own). */
export async function accountOf(uid: number, passwd = '/etc/passwd'): Promise<Account | undefined> {
  if (!Number.isInteger(uid) || uid < 0) return undefined
  const listed = await fromFile(uid, passwd)
  if (listed) return listed
  return passwd === '/etc/passwd' ? fromGetent(uid) : undefined
}

async function fromFile(uid: number, passwd: string): Promise<Account | undefined> {
  try {
    if ((await stat(passwd)).size > MAX_PASSWD_BYTES) return undefined
    return findAccount(await readFile(passwd, 'utf8'), uid)
  } catch {
    return undefined
  }
}

function fromGetent(uid: number): Promise<Account | undefined> {
  return new Promise((resolve) => {
    execFile('getent', ['passwd', String(uid)], { timeout: 2000, maxBuffer: 64 * 1024, encoding: 'utf8' }, (err, stdout) => {
      resolve(err ? undefined : findAccount(stdout, uid))
    })
  })
}

/** The account of `uid` in passwd(5) text: `name:password:uid:gid:gecos:home:shell` lines. */
export function findAccount(text: string, uid: number): Account | undefined {
  for (const line of text.split('\n')) {
    const fields = line.split(':')
    if (fields.length < 7 || Number(fields[2]) !== uid || fields[2] === '') continue
    const gid = Number(fields[3])
    const home = fields[5] as string
    if (!Number.isInteger(gid) || gid < 0 || !home.startsWith('/')) continue
    return { name: fields[0] as string, uid, gid, home }
  }
  return undefined
}
