/**
 * `hookd serve --listen` takes only what is free or a stale socket (issue 15, item 13): a file, a folder
 * or a socket in use at the path, or a port in use, is left alone and reported in one line, with no
 * gRPC log line. Real files, real sockets, the built command.
 */
import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { type Server, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkHealth } from '../../src/host/health-check.js'
import { prepareSocket } from '../../src/sidecar/grpc/socket.js'
import { runHookd as hookd, startServe, stopProcess } from '../support/processes.js'
import { EXAMPLE_HOOKS } from '../support/sidecar.js'

let dir: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hookd-listen-'))
})

afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

const serve = (...args: string[]) => hookd(['serve', '--hooks', EXAMPLE_HOOKS, '--workers', '1', ...args], { timeoutMs: 60_000 })

function listening(server: Server, at: string | number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    if (typeof at === 'number') server.listen(at, '127.0.0.1', resolve)
    else server.listen(at, resolve)
  })
}

/** A socket file nobody listens on, as a sidecar that was killed leaves it. */
async function staleSocket(path: string): Promise<void> {
  const child = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, 'SIGKILL'))`])
  await new Promise((resolve) => child.once('exit', resolve))
  expect((await stat(path)).isSocket()).toBe(true)
}

describe('hookd serve --listen unix:PATH', () => {
  it('leaves a regular file alone: exit 2, saying what is there', async () => {
    const file = join(dir, 'data.txt')
    await writeFile(file, 'data\n')
    const ran = await serve('--listen', `unix:${file}`)
    expect(ran.code).toBe(2)
    expect(ran.stderr).toBe(
      `hookd serve: --listen: cannot listen on unix:${file}: ${file} is a regular file of 5 bytes, not a socket, and hookd replaces only a stale socket; pass another path\n`,
    )
    expect(await readFile(file, 'utf8')).toBe('data\n')
  })

  it('a folder: exit 2 in one line, naming a path inside it', async () => {
    const folder = join(dir, 'folder')
    await mkdir(folder)
    const ran = await serve('--listen', `unix:${folder}`)
    expect(ran.code).toBe(2)
    expect(ran.stderr).toBe(
      `hookd serve: --listen: cannot listen on unix:${folder}: ${folder} is a folder, not a socket, and hookd replaces only a stale socket; pass another path (such as unix:${folder}/hookd.sock)\n`,
    )
  })

  it('a socket another process listens on: exit 1 in one line, and that socket keeps working', async () => {
    const path = join(dir, 'live.sock')
    // hookd's check connects and hangs up at once: what the server writes then has no reader.
    const other = createServer((c) => c.on('error', () => {}).end('still here'))
    await listening(other, path)
    try {
      const ran = await serve('--listen', `unix:${path}`)
      expect(ran.code).toBe(1)
      expect(ran.stderr).toBe(`hookd serve: --listen: another process is already listening on unix:${path}; stop it or pass another path\n`)
      expect((await stat(path)).isSocket()).toBe(true)
    } finally {
      await new Promise((resolve) => other.close(resolve))
    }
  })

  it('replaces a stale socket and serves there', async () => {
    const path = join(dir, 'stale.sock')
    await staleSocket(path)
    const serving = await startServe(['--hooks', EXAMPLE_HOOKS, '--workers', '1', '--listen', `unix:${path}`], { cwd: dir })
    try {
      expect(serving.address).toBe(`unix:${path}`)
      // An answer from the sidecar there (which also means it has set up its signal handlers).
      expect(await checkHealth(serving.address, { timeoutMs: 20_000 })).toBe('SERVING')
    } finally {
      expect(await stopProcess(serving.child)).toBe(0)
    }
  })

  it('the library refuses a regular file too (Sidecar.listen prepares the socket)', async () => {
    const file = join(dir, 'kept.txt')
    await writeFile(file, 'x')
    await expect(prepareSocket(file)).rejects.toMatchObject({ code: 'invalid-argument', message: expect.stringContaining(`${file} is a regular file of 1 byte, not a socket`) })
    expect(await readFile(file, 'utf8')).toBe('x')
  })
})

describe('hookd serve on a port in use', () => {
  it('--listen HOST:PORT: exit 1 in one line, no gRPC log line', async () => {
    const other = createServer()
    await listening(other, 0)
    const port = (other.address() as { port: number }).port
    try {
      const ran = await serve('--listen', `127.0.0.1:${port}`, '--insecure')
      expect(ran.code).toBe(1)
      expect(ran.stderr).toBe(`hookd serve: --listen: another process is already listening on 127.0.0.1:${port}; stop it or pass another port\n`)

      const health = await serve('--listen', `unix:${join(dir, 'h.sock')}`, '--health-listen', `127.0.0.1:${port}`)
      expect(health.code).toBe(1)
      expect(health.stderr).toBe(`hookd serve: --health-listen: another process is already listening on 127.0.0.1:${port}; stop it or pass another port\n`)
    } finally {
      await new Promise((resolve) => other.close(resolve))
    }
  })
})
