/**
 * `hookd health` and `hookd serve --health-listen`: what a container health check, a Kubernetes gRPC
 * probe or an operator's script sees, against real sidecars on real sockets.
 */
import { cp, mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as grpc from '@grpc/grpc-js'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { HookdClient } from '../../../src/host/client.js'
import { HookdError } from '../../../src/protocol/status.js'
import { Sidecar } from '../../../src/sidecar/sidecar.js'
import { runInProcess as inProcess, startServe, stopProcess } from '../../support/processes.js'
import { EXAMPLE_HOOKS, type Running, sessionOptions, startSidecar } from '../../support/sidecar.js'

/** A TCP port on loopback where nothing listens (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

describe('hookd health: usage', () => {
  it('answers --help', async () => {
    const ran = await inProcess(['health', '--help'])
    expect(ran.code).toBe(0)
    expect(ran.stdout).toMatch(/^Usage: hookd health \[--addr ADDR\] \[--service NAME\] \[--timeout-ms N\]/)
    expect(ran.stdout).toContain('0 when SERVING; 1 when NOT_SERVING')
  })

  it('is listed in hookd --help', async () => {
    const ran = await inProcess(['--help'])
    expect(ran.stdout).toMatch(/^ {2}health {4}ask a running sidecar whether it serves/m)
  })

  it('exits 2 for usage errors, saying what to fix', async () => {
    const unknown = await inProcess(['health', '--frobnicate'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain("Unknown option '--frobnicate'")

    const timeout = await inProcess(['health', '--timeout-ms', 'soon'])
    expect(timeout.code).toBe(2)
    expect(timeout.stderr).toBe("hookd health: --timeout-ms must be a positive whole number; got 'soon'\n")

    const addr = await inProcess(['health', '--addr', 'localhost'])
    expect(addr.code).toBe(2)
    expect(addr.stderr).toContain("hookd health: --addr: address 'localhost' is not understood; write unix:PATH or HOST:PORT")

    const tls = await inProcess(['health', '--addr', 'unix:/tmp/x.sock', '--tls'])
    expect(tls.code).toBe(2)
    expect(tls.stderr).toContain('--tls, --tls-ca and --tls-server-name are for TCP addresses')
  })

  it('exits 1 when nothing listens, naming the address', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hookd-health-'))
    const noSocket = await inProcess(['health', '--addr', `unix:${join(dir, 'none.sock')}`])
    expect(noSocket.code).toBe(1)
    expect(noSocket.stdout).toBe('')
    expect(noSocket.stderr).toContain(`hookd health: cannot reach hookd at unix:${join(dir, 'none.sock')}: no socket at`)
    await rm(dir, { recursive: true, force: true })

    const port = await closedPort()
    const refused = await inProcess(['health', '--addr', `127.0.0.1:${port}`, '--timeout-ms', '20000'])
    expect(refused.code).toBe(1)
    expect(refused.stdout).toBe('')
    expect(refused.stderr).toMatch(new RegExp(`^hookd health: cannot reach hookd at 127\\.0\\.0\\.1:${port}: .*is 'hookd serve' running there\\?\\n$`))
  })

  it('serve exits 2 when --health-listen is not HOST:PORT, before starting any worker', async () => {
    const unix = await inProcess(['serve', '--hooks', EXAMPLE_HOOKS, '--health-listen', 'unix:/tmp/health.sock'])
    expect(unix.code).toBe(2)
    expect(unix.stderr).toContain('--health-listen takes HOST:PORT (e.g. 0.0.0.0:8081)')
    const bad = await inProcess(['serve', '--hooks', EXAMPLE_HOOKS, '--health-listen', '8081'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("--health-listen: address '8081' is not understood")
  })
})

/** The file's sidecar: the drain test stops it, after the tests that need it serving. */
let running: Running

beforeAll(async () => {
  running = await startSidecar({ hooks: EXAMPLE_HOOKS, watch: false, graceMs: 20_000 })
})

afterAll(async () => {
  await running?.stop()
})

describe('hookd health against a running sidecar', () => {
  it('prints SERVING and exits 0, for the sidecar and for its hook service', async () => {
    const whole = await inProcess(['health', '--addr', running.address])
    expect(whole).toEqual({ code: 0, stdout: 'SERVING\n', stderr: '' })
    const executor = await inProcess(['health', '--addr', running.address, '--service', 'hookd.v1.HookExecutor', '--token', 'ignored'])
    expect(executor).toEqual({ code: 0, stdout: 'SERVING\n', stderr: '' })
  })

  it('exits 1 for a service the sidecar does not report on, naming the ones it does', async () => {
    const ran = await inProcess(['health', '--addr', running.address, '--service', 'nope'])
    expect(ran.code).toBe(1)
    expect(ran.stderr).toBe(
      `hookd health: hookd at ${running.address} does not report on service 'nope'; ask about '' (the whole sidecar, the default) or 'hookd.v1.HookExecutor'\n`,
    )
  })

  it('serves health alone on --health-listen: no hooks, no reflection', async () => {
    const health = await running.sidecar.listenHealth('127.0.0.1:0')
    expect(health).toMatch(/^127\.0\.0\.1:\d+$/)
    expect(await inProcess(['health', '--addr', health])).toEqual({ code: 0, stdout: 'SERVING\n', stderr: '' })

    const client = await HookdClient.connect(health)
    try {
      const refused = await client.listHooks().catch((err: unknown) => err)
      expect(refused).toBeInstanceOf(HookdError)
      expect((refused as HookdError).message).toBe('The server does not implement the method /hookd.v1.HookExecutor/ListHooks')
    } finally {
      client.close()
    }

    const raw = new grpc.Client(health, grpc.credentials.createInsecure())
    const identity = (b: Buffer): Buffer => b
    const code = await new Promise<number>((resolve) => {
      const stream = raw.makeBidiStreamRequest('/grpc.reflection.v1.ServerReflection/ServerReflectionInfo', identity, identity)
      stream.on('data', () => resolve(-1))
      stream.on('error', (err: grpc.ServiceError) => resolve(err.code))
      stream.end(Buffer.alloc(0))
    })
    raw.close()
    expect(code).toBe(grpc.status.UNIMPLEMENTED)
  })
})

describe('the health listener follows the sidecar', () => {
  it('reports NOT_SERVING while the sidecar drains, and is gone once it stopped', async () => {
    const health = await running.sidecar.listenHealth('127.0.0.1:0')
    // A call that waits on a human keeps the drain going until it is answered (an idle session would
    // end at once).
    let asked!: () => void
    const confirmAsked = new Promise<void>((resolve) => (asked = resolve))
    let answer!: (yes: boolean) => void
    const answered = new Promise<boolean>((resolve) => (answer = resolve))
    const session = await running.client.openSession(
      sessionOptions(['guard'], { interactive: true, capabilities: { confirm: () => (asked(), answered) } }),
    )
    const call = session.call('beforeToolExecute', { id: 'c1', name: 'shell', arguments: { command: 'rm -rf build' } })
    await confirmAsked
    const stopped = running.stop()
    try {
      await vi.waitFor(
        async () => {
          const ran = await inProcess(['health', '--addr', health])
          expect(ran.stdout).toBe('NOT_SERVING\n')
          expect(ran.code).toBe(1)
          expect(ran.stderr).toBe(
            `hookd health: ${health} reports the sidecar NOT_SERVING: it is draining after SIGINT/SIGTERM, or its worker pool gave up (see its stderr)\n`,
          )
        },
        { timeout: 15_000, interval: 100 },
      )
    } finally {
      answer(false)
      await call.catch(() => {})
      await stopped
    }
    const gone = await inProcess(['health', '--addr', health])
    expect(gone.code).toBe(1)
    expect(gone.stderr).toContain(`cannot reach hookd at ${health}`)
  })

  it('reports NOT_SERVING when the worker pool gave up', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hookd-health-broken-'))
    // Workers that die right after saying they are ready: the pool gives up after two start failures.
    const dieAfterReady =
      "const send = process.send.bind(process); process.send = (m, ...r) => { if (m && m.$ === 'ready') setTimeout(() => process.exit(9), 50); return send(m, ...r) };"
    await cp(join(EXAMPLE_HOOKS, 'guard'), join(dir, 'hooks', 'guard'), { recursive: true })
    const sidecar = await Sidecar.create({
      hooks: join(dir, 'hooks'),
      watch: false,
      pool: { size: 1, maxStartFailures: 2, execArgv: ['--import', `data:text/javascript,${encodeURIComponent(dieAfterReady)}`] },
    })
    try {
      const health = await sidecar.listenHealth('127.0.0.1:0')
      await vi.waitFor(
        async () => {
          const ran = await inProcess(['health', '--addr', health, '--service', 'hookd.v1.HookExecutor'])
          expect(ran.stdout).toBe('NOT_SERVING\n')
          expect(ran.code).toBe(1)
        },
        { timeout: 20_000, interval: 100 },
      )
    } finally {
      await sidecar.stop()
      await rm(dir, { recursive: true, force: true })
    }
  })
})

describe('hookd serve --health-listen, as a program', () => {
  it('prints where health is served, answers hookd health there, and stops on SIGTERM', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hookd-health-serve-'))
    const serving = await startServe([
      '--hooks', EXAMPLE_HOOKS, '--workers', '1', '--no-watch', '--listen', `unix:${join(dir, 'hookd.sock')}`, '--health-listen', '127.0.0.1:0',
    ])
    try {
      // The line follows the ready line, and may arrive in a later chunk of stderr.
      const line = await vi.waitFor(
        () => {
          const found = /^hookd: health on (127\.0\.0\.1:\d+)$/m.exec(serving.output.stderr)
          expect(found, serving.output.stderr).not.toBeNull()
          return found
        },
        { timeout: 10_000, interval: 50 },
      )
      const health = (line as RegExpExecArray)[1] as string
      const ran = await inProcess(['health', '--addr', health])
      expect(ran).toEqual({ code: 0, stdout: 'SERVING\n', stderr: '' })
      expect(await stopProcess(serving.child, 'SIGTERM')).toBe(0)
    } finally {
      await stopProcess(serving.child, 'SIGKILL')
      await rm(dir, { recursive: true, force: true })
    }
  })
})
