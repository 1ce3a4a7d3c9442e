/**
 * The conformance harness: what every runner needs running before it starts. It copies a hooks folder
 * (the fixture hooks, test/conformance/hooks) to a temp folder, starts each remote hook in it (a folder
 * with a server.py, run with Debian's Python as `server.py --listen ADDRESS`, ADDRESS being what its
 * hook.json names, resolved in the copy), then a real sidecar on a Unix socket serving the copy.
 * Runners get the sidecar's address. The Python examples' tests use it too.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { cp, mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve as resolvePath } from 'node:path'
import { type Running, startSidecar } from '../support/sidecar.js'

export const ROOT = join(import.meta.dirname, '..', '..')
export const CONFORMANCE = import.meta.dirname
/** Debian's Python sees python3-grpcio; `python3` on PATH may be another one (scripts/python-deps.sh). */
export const PYTHON = process.env.HOOKD_PYTHON ?? '/usr/bin/python3'

export interface Harness {
  address: string
  running: Running
  stop(): Promise<void>
}

/** Fails with what to do when the Python side cannot run at all. */
export function checkPython(): void {
  const probe = spawnSync(PYTHON, ['-c', 'import grpc, grpc_tools'], { encoding: 'utf8' })
  if (probe.status !== 0) {
    throw new Error(
      `${PYTHON} cannot import grpc and grpc_tools (${(probe.stderr || probe.error?.message || '').trim().split('\n').at(-1)}); run scripts/python-deps.sh (make test does)`,
    )
  }
}

/** Starts `server.py` and waits for its "listening on" line. */
function startRemote(script: string, address: string): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, [script, '--listen', address], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${script} did not start within 20 s: ${err || out}`))
    }, 20_000)
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString()
      if (out.includes('listening on')) {
        clearTimeout(timer)
        resolve(child)
      }
    })
    child.stderr.on('data', (d: Buffer) => (err += d.toString()))
    child.on('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`${script} exited (${code}) before listening: ${err || out}`))
    })
  })
}

/** `hooksFolder`: relative to test/conformance/, or absolute. */
export async function startHarness(hooksFolder = 'hooks'): Promise<Harness> {
  checkPython()
  const tmp = await mkdtemp(join(tmpdir(), 'hookd-conf-'))
  const source = resolvePath(CONFORMANCE, hooksFolder)
  const hooks = join(tmp, 'hooks')
  await cp(source, hooks, { recursive: true, filter: (path) => !path.endsWith('.sock') && !path.includes('__pycache__') })
  const remotes: ChildProcess[] = []
  try {
    for (const name of await readdir(source)) {
      const script = join(source, name, 'server.py')
      if (!(await stat(script).catch(() => undefined))) continue
      const json = JSON.parse(await readFile(join(hooks, name, 'hook.json'), 'utf8')) as { remote: string }
      const path = json.remote.replace(/^unix:/, '')
      remotes.push(await startRemote(script, `unix:${path.startsWith('/') ? path : join(hooks, name, path)}`))
    }
    const running = await startSidecar({ hooks, watch: false })
    return {
      address: running.address,
      running,
      async stop() {
        await running.stop()
        for (const child of remotes) child.kill('SIGTERM')
        await rm(tmp, { recursive: true, force: true })
      },
    }
  } catch (err) {
    for (const child of remotes) child.kill('SIGKILL')
    await rm(tmp, { recursive: true, force: true })
    throw err
  }
}
