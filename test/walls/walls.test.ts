/**
 * The second wall (walls.ts): what a hook that escaped its isolate would find in its worker process.
 * A fixture started exactly as a worker is stands for the escaped hook and tries what an attacker would;
 * then the real workers of a pool and of two tenants are inspected from outside, through /proc.
 *
 * On this kind of machine (Linux, hookd run as root, util-linux installed, cgroup v1 memory controller)
 * every wall is up; the assertions say which wall stops what.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync, realpathSync } from 'node:fs'
import { chmod, mkdtemp, readFile, readlink, rm, writeFile } from 'node:fs/promises'
import { type Server, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { walls } from '../../src/sidecar/worker/pool/walls.js'
import { WorkerPool } from '../../src/sidecar/worker/pool/worker-pool.js'
import { ROOT } from '../support/processes.js'
import { hook, sessionOptions } from '../support/sidecar.js'
import { startTenants, toolCall } from '../tenants/support.js'

const ESCAPED = fileURLToPath(new URL('./fixtures/escaped.mjs', import.meta.url))
const root = process.getuid?.() === 0
/** This checkout, and isolated-vm where Node finds it from here: the two folders a worker may read. */
const OWN = realpathSync(ROOT)
const ISOLATED_VM = realpathSync(join(ROOT, 'node_modules', 'isolated-vm'))
const READABLE = ISOLATED_VM.startsWith(`${OWN}${sep}`) ? [OWN] : [OWN, ISOLATED_VM]

interface Attempt {
  ok: boolean
  value?: unknown
  error?: string
}
interface Report {
  env: string[]
  uid: number
  gid: number
  groups: number[]
  readSecret: Attempt
  readShadow: Attempt
  write: Attempt
  spawn: Attempt
  thread: Attempt
  connect: Attempt
  signal: Attempt
  reads: Array<Attempt & { path: string }>
}

let dir: string
let secret: string
let server: Server
let port: number
let accepted = 0

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hookd-walls-'))
  await chmod(dir, 0o777)
  // Readable and writable by anyone: only the permission model stands between a worker and these.
  secret = join(dir, 'secret')
  await writeFile(secret, 'the sidecar host key')
  await chmod(secret, 0o644)
  server = createServer((socket) => {
    accepted += 1
    socket.destroy()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as { port: number }).port
})

afterAll(async () => {
  server?.close()
  await rm(dir, { recursive: true, force: true })
})

/** Starts the escaped-hook fixture behind the walls as worker `slot`; its stdout lines and how it ended. */
async function escaped(options: { workerMemoryMb?: number; allocateMb?: number; reads?: string[] } = {}): Promise<{ lines: string[]; code: number | null; signal: NodeJS.Signals | null }> {
  const w = walls({ workerMemoryMb: options.workerMemoryMb ?? 1024 })
  const command = w.command(ESCAPED, [], 4242)
  const argv = [secret, dir, String(port), String(process.pid), String(options.allocateMb ?? 0), JSON.stringify(options.reads ?? [])]
  const child: ChildProcess = spawn(command.file, [...command.args, ...argv], {
    env: command.env,
    cwd: command.cwd,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  })
  const detach = child.pid === undefined ? () => {} : w.attach(child.pid, 4242)
  let out = ''
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk
  })
  let err = ''
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk
  })
  const ended = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
  detach()
  const lines = out.split('\n').filter(Boolean)
  if (lines.length === 0) throw new Error(`the fixture printed nothing (exit ${ended.code ?? ended.signal}): ${err}`)
  return { lines, ...ended }
}

describe('a hook that escaped its isolate, in a worker process', () => {
  it.runIf(process.platform === 'linux' && root)('finds every wall up on this machine, and says so', () => {
    const lines = walls({ workerMemoryMb: 1024 }).describe()
    expect(lines).toEqual([
      "environment: minimal (none of the sidecar's variables)",
      `permission model: reads only ${READABLE.join(' and ')}; no writes, no child processes, no threads`,
      'network: a namespace of its own per worker, no interface up',
      expect.stringMatching(/^user: an unprivileged uid\/gid per worker \(from 1900000000\), no capabilities, no-new-privs$/),
      'memory: a cgroup per worker, 1024 MB',
    ])
  })

  it.runIf(process.platform === 'linux')('gets no secrets, cannot read, write, spawn, thread, connect or signal', async () => {
    process.env.HOOKD_WALLS_TEST_SECRET = 'must not reach a worker'
    const { lines } = await escaped()
    delete process.env.HOOKD_WALLS_TEST_SECRET
    const report = JSON.parse(lines[0] as string) as Report
    // Environment: only what Node's IPC channel needs (and the locale).
    expect(report.env.filter((name) => !['NODE_CHANNEL_FD', 'NODE_CHANNEL_SERIALIZATION_MODE', 'LANG', 'LC_ALL', 'TZ'].includes(name))).toEqual([])
    // Permission model: reads only below hookd's install folder; no writes, processes or threads.
    expect(report.readSecret).toMatchObject({ ok: false, error: 'ERR_ACCESS_DENIED' })
    expect(report.readShadow).toMatchObject({ ok: false, error: 'ERR_ACCESS_DENIED' })
    expect(report.write).toMatchObject({ ok: false, error: 'ERR_ACCESS_DENIED' })
    expect(report.spawn).toMatchObject({ ok: false, error: 'ERR_ACCESS_DENIED' })
    expect(report.thread).toMatchObject({ ok: false, error: 'ERR_ACCESS_DENIED' })
    // Network namespace: loopback is another machine's, and down.
    expect(report.connect.ok).toBe(false)
    expect(accepted).toBe(0)
    if (root) {
      // User: not root, no groups; cannot even probe the sidecar with signal 0.
      expect(report.uid).toBe(1_900_000_000 + 4242)
      expect(report.gid).toBe(1_900_000_000 + 4242)
      // (Node lists the effective gid among the groups.)
      expect(report.groups.filter((g) => g !== report.gid)).toEqual([])
      expect(report.signal).toMatchObject({ ok: false, error: 'EPERM' })
    }
  })

  it.runIf(process.platform === 'linux')("reads hookd's folder and isolated-vm's, where Node found them", async () => {
    const { lines } = await escaped({ reads: [join(OWN, 'package.json'), join(ISOLATED_VM, 'package.json'), join(ISOLATED_VM, 'isolated-vm.js')] })
    const report = JSON.parse(lines[0] as string) as Report
    expect(report.reads.map((r) => [r.path, r.ok])).toEqual([
      [join(OWN, 'package.json'), true],
      [join(ISOLATED_VM, 'package.json'), true],
      [join(ISOLATED_VM, 'isolated-vm.js'), true],
    ])
  })

  // A worktree whose node_modules links to another checkout's: the packages beside isolated-vm are
  // outside both folders (before, the wall let a worker read that whole node_modules). In a plain clone
  // node_modules is inside the checkout; test/package/installed.test.ts holds npm's layouts to the same.
  const beside = join(dirname(ISOLATED_VM), 'zod', 'package.json')
  it.runIf(process.platform === 'linux' && !beside.startsWith(`${OWN}${sep}`))('cannot read the packages beside isolated-vm outside the checkout', async () => {
    const { lines } = await escaped({ reads: [beside, join(dirname(ISOLATED_VM), '.package-lock.json')] })
    const report = JSON.parse(lines[0] as string) as Report
    expect(report.reads).toEqual([
      { path: beside, ok: false, error: 'ERR_ACCESS_DENIED' },
      { path: join(dirname(ISOLATED_VM), '.package-lock.json'), ok: false, error: 'ERR_ACCESS_DENIED' },
    ])
  })

  it.runIf(process.platform === 'linux' && root)("is killed when it uses more memory than its worker's cgroup allows", async () => {
    const ended = await escaped({ workerMemoryMb: 256, allocateMb: 1024 })
    expect(ended.lines).not.toContain('allocated 1024 MB')
    expect(ended.signal).toBe('SIGKILL')
  })
})

describe("hookd's own workers", () => {
  const status = async (pid: number): Promise<Record<string, string>> =>
    Object.fromEntries(
      (await readFile(`/proc/${pid}/status`, 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()]),
    )

  it.runIf(process.platform === 'linux' && root)('run as uids of their own, without capabilities, in their own network namespace and cgroup, with none of our environment', async () => {
    process.env.HOOKD_WALLS_TEST_SECRET = 'must not reach a worker'
    const pool = new WorkerPool({ size: 2 })
    try {
      await pool.start()
      delete process.env.HOOKD_WALLS_TEST_SECRET
      await expect.poll(() => pool.pids(), { timeout: 20_000 }).toHaveLength(2)
      const pids = pool.pids()
      const uids = new Set<string>()
      for (const pid of pids) {
        const s = await status(pid)
        const uid = (s.Uid ?? '').split(/\s+/)
        expect(new Set(uid).size).toBe(1)
        expect(Number(uid[0])).toBeGreaterThanOrEqual(1_900_000_000)
        uids.add(uid[0] as string)
        expect(s.CapEff).toBe('0000000000000000')
        expect(s.CapBnd).toBe('0000000000000000')
        expect(s.NoNewPrivs).toBe('1')
        expect(s.Groups).toBe('')
        expect(await readlink(`/proc/${pid}/ns/net`)).not.toBe(await readlink('/proc/self/ns/net'))
        expect(await readFile(`/proc/${pid}/cgroup`, 'utf8')).toMatch(new RegExp(`memory:/hookd/worker-${process.pid}-\\d+`))
        const environ = (await readFile(`/proc/${pid}/environ`, 'utf8')).split('\0').filter(Boolean)
        expect(environ.some((e) => e.startsWith('HOOKD_WALLS_TEST_SECRET='))).toBe(false)
        expect(environ.some((e) => e.startsWith('PATH='))).toBe(false)
      }
      expect(uids.size).toBe(2)
    } finally {
      await pool.close()
    }
  })

  it('keep each tenant in worker processes of its own', async () => {
    const t = await startTenants([
      { id: 'acme', workers: 2, hooks: { 'who/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ arguments: { tenant: 'acme' } })` }) } },
      { id: 'beta', hooks: { 'who/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ arguments: { tenant: 'beta' } })` }) } },
    ])
    try {
      const acme = t.sidecar.tenants?.poolOf('acme')
      const beta = t.sidecar.tenants?.poolOf('beta')
      expect(acme?.size).toBe(2)
      expect(beta?.size).toBe(1)
      await expect.poll(() => acme?.pids(), { timeout: 20_000 }).toHaveLength(2)
      const acmePids = acme?.pids() ?? []
      const betaPids = beta?.pids() ?? []
      expect(acmePids).toHaveLength(2)
      expect(betaPids).toHaveLength(1)
      expect(acmePids.filter((pid) => betaPids.includes(pid))).toEqual([])

      const a = await (await t.client('acme')).invoke(sessionOptions(['who']), 'beforeToolExecute', toolCall)
      const b = await (await t.client('beta')).invoke(sessionOptions(['who']), 'beforeToolExecute', toolCall)
      expect(a.result.arguments).toEqual({ tenant: 'acme' })
      expect(b.result.arguments).toEqual({ tenant: 'beta' })

      // A change of a tenant's workers gives it new ones, and leaves the other tenant's alone.
      await t.write([{ ...t.entries[0], workers: 1 }, t.entries[1] as Record<string, unknown>])
      await expect.poll(() => t.reports.join('\n'), { timeout: 20_000 }).toContain("changed 'acme': workers (0 open streams ended)")
      const after = t.sidecar.tenants?.poolOf('acme')
      expect(after?.size).toBe(1)
      expect(after?.pids().filter((pid) => acmePids.includes(pid))).toEqual([])
      expect(t.sidecar.tenants?.poolOf('beta')?.pids()).toEqual(betaPids)
      const again = await (await t.client('acme')).invoke(sessionOptions(['who']), 'beforeToolExecute', toolCall)
      expect(again.result.arguments).toEqual({ tenant: 'acme' })
      expect(() => t.sidecar.pool).toThrow(/each with its own workers; use sidecar.tenants.poolOf\(id\)/)
    } finally {
      await t.stop()
    }
  })
})

describe("a worker's code", () => {
  // esbuild names each module it bundles in a comment: what a worker loads, and compiles at every start.
  const bundled = (): string[] => {
    const bundle = readFileSync(fileURLToPath(new URL('../../dist/sidecar/worker/process/main.bundle.js', import.meta.url)), 'utf8')
    // Paths as esbuild wrote them, relative to where it ran; node_modules may be a link elsewhere.
    return [...bundle.matchAll(/^\/\/ (\S+\.js)$/gm)].map((m) => (m[1] as string).replace(/^.*?node_modules\//, 'node_modules/'))
  }

  it('is hookd’s worker modules and what they use of zod: no gRPC, and no translations of zod’s messages', () => {
    const modules = bundled()
    expect(modules).toContain('dist/sidecar/worker/process/main.js')
    expect(modules).toContain('dist/sidecar/chain/chain.js')
    expect(modules.filter((m) => m.includes('grpc') || m.includes('protobufjs'))).toEqual([])
    // `import * as z from 'zod'` lets esbuild drop what the worker never calls; `import { z }` pulled in
    // every locale (64 files) and tripled the bundle, ~55 ms of CPU at each worker's start.
    expect(modules.filter((m) => m.includes('zod/v4/locales/'))).toEqual(['node_modules/zod/v4/locales/en.js'])
  })
})
