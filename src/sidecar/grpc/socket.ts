/** The Unix socket a sidecar listens on: its folder, and a stale socket left by a sidecar that died. */
import { chmod, mkdir, unlink } from 'node:fs/promises'
import { connect } from 'node:net'
import { dirname } from 'node:path'
import { HookdError } from '../../protocol/status.js'

/** Creates the socket's folder (0700) and removes a stale socket; refuses when a live one answers. */
export async function prepareSocket(path: string): Promise<void> {
  // Only a folder hookd creates is narrowed to 0700; an existing one (say /tmp) is left as it is.
  if (await mkdir(dirname(path), { recursive: true, mode: 0o700 })) await chmod(dirname(path), 0o700)
  const live = await new Promise<boolean>((resolve) => {
    const socket = connect(path)
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
  if (live) throw new HookdError('unavailable', `another process is already listening on unix:${path}; stop it or pass --listen`)
  await unlink(path).catch(() => {})
}
