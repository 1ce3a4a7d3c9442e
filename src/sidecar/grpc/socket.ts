/**
 * What stands where a sidecar is about to listen: for a Unix socket, its folder, and whatever already
 * has the path; for TCP, whether the port is free. hookd takes a path only when nothing is there or a
 * stale socket is (a sidecar that died leaves one behind): a regular file, a folder, a link or a socket
 * that answers are somebody's, and are left alone with a message saying what is there.
 */
import { chmod, lstat, mkdir, unlink } from 'node:fs/promises'
import { connect, createServer } from 'node:net'
import { dirname } from 'node:path'
import { type Address, formatAddress } from '../../protocol/address.js'
import { HookdError } from '../../protocol/status.js'

/**
 * Why hookd cannot listen at an address: `taken` (something else holds it now: a live socket, a port
 * in use) or `wrong` (the path holds something that is not a socket, or cannot be a socket's path).
 * A message that ends by asking for another path or port lets the caller name the flag.
 */
export interface ListenProblem {
  kind: 'taken' | 'wrong'
  message: string
}

/** Linux's limit on a socket path (sun_path is 108 bytes, with its final NUL). */
const MAX_SOCKET_PATH_BYTES = 107

/** What keeps hookd from listening at `address`, checked without changing anything; undefined when nothing does. */
export async function listenProblem(address: Address): Promise<ListenProblem | undefined> {
  return address.kind === 'unix' ? socketProblem(address.path) : portProblem(address.host, address.port)
}

/**
 * Creates the socket's folder (0700) and removes a stale socket. Anything else at the path is refused:
 * `invalid-argument` when it is not a socket, `unavailable` when another process listens on it.
 */
export async function prepareSocket(path: string): Promise<void> {
  const problem = await socketProblem(path)
  if (problem) throw new HookdError(problem.kind === 'taken' ? 'unavailable' : 'invalid-argument', problem.message)
  // Only a folder hookd creates is narrowed to 0700; an existing one (say /tmp) is left as it is.
  if (await mkdir(dirname(path), { recursive: true, mode: 0o700 })) await chmod(dirname(path), 0o700)
  try {
    await unlink(path)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new HookdError('unavailable', `cannot remove the stale socket ${path}: ${(err as Error).message}`)
    }
  }
}

async function socketProblem(path: string): Promise<ListenProblem | undefined> {
  const at = `unix:${path}`
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES) {
    return { kind: 'wrong', message: `cannot listen on ${at}: a socket path may be at most ${MAX_SOCKET_PATH_BYTES} bytes; this one has ${Buffer.byteLength(path)}. Use a shorter path` }
  }
  const parent = await lstat(dirname(path)).catch(() => undefined)
  if (parent && !parent.isDirectory() && !parent.isSymbolicLink()) {
    return { kind: 'wrong', message: `cannot listen on ${at}: ${dirname(path)} is ${what(parent)}, not a folder` }
  }
  const info = await lstat(path).catch(() => undefined)
  if (!info) return undefined
  if (!info.isSocket()) {
    return {
      kind: 'wrong',
      message: `cannot listen on ${at}: ${path} is ${what(info)}, not a socket, and hookd replaces only a stale socket; pass another path${info.isDirectory() ? ` (such as unix:${path}/hookd.sock)` : ''}`,
    }
  }
  const answer = await new Promise<'live' | 'stale' | NodeJS.ErrnoException>((resolve) => {
    const socket = connect(path)
    socket.once('connect', () => {
      socket.destroy()
      resolve('live')
    })
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED' || err.code === 'ENOENT' ? 'stale' : err))
  })
  if (answer === 'live') return { kind: 'taken', message: `another process is already listening on ${at}; stop it or pass another path` }
  if (answer !== 'stale') return { kind: 'taken', message: `cannot listen on ${at}: the socket there cannot be checked (${answer.code ?? answer.message}); pass another path` }
  return undefined
}

/** A stat's kind, as a message says it: "a regular file of 5 bytes", "a folder". */
function what(info: Awaited<ReturnType<typeof lstat>>): string {
  if (info.isFile()) return `a regular file of ${info.size} byte${info.size === 1 ? '' : 's'}`
  if (info.isDirectory()) return 'a folder'
  if (info.isSymbolicLink()) return 'a symbolic link'
  if (info.isFIFO()) return 'a named pipe'
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device'
  return 'something else'
}

/** Tries the port with a listener of its own, closed at once: the error gRPC would log, as one sentence. */
async function portProblem(host: string, port: number): Promise<ListenProblem | undefined> {
  if (port === 0) return undefined
  const at = formatAddress({ kind: 'tcp', host, port })
  const error = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
    const server = createServer()
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err))
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)))
  })
  if (!error) return undefined
  switch (error.code) {
    case 'EADDRINUSE':
      return { kind: 'taken', message: `another process is already listening on ${at}; stop it or pass another port` }
    case 'EACCES':
      return { kind: 'wrong', message: `cannot listen on ${at}: this user may not use port ${port} (ports below 1024 need privileges); pass a port above 1023` }
    case 'EADDRNOTAVAIL':
      return { kind: 'wrong', message: `cannot listen on ${at}: ${host} is not an address of this machine; use one of its addresses, 127.0.0.1 or 0.0.0.0` }
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return { kind: 'wrong', message: `cannot listen on ${at}: the host name ${host} does not resolve; use an address such as 127.0.0.1` }
    default:
      return { kind: 'wrong', message: `cannot listen on ${at}: ${error.code ?? error.message}` }
  }
}
