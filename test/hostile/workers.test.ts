/**
 * Hostile hooks against the worker processes: a V8 fatal out-of-memory that kills its worker (the chain
 * goes on, other sessions are served, the pool replaces the worker), a worker that stops answering,
 * workers that keep dying at start-up (the pool gives up instead of looping), and the bound on the code
 * each worker keeps.
 */
import { readFileSync } from 'node:fs'
import { cp, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as grpc from '@grpc/grpc-js'
import * as protoLoader from '@grpc/proto-loader'
import { protoPath as healthProto } from 'grpc-health-check'
import { Sidecar } from '../../src/sidecar/sidecar.js'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { DEFAULT_LIMITS, type Limits } from '../../src/sidecar/limits.js'
import type { CapabilityReply, InvocationRequest } from '../../src/sidecar/runners/hook-runner.js'
import { WorkerPool } from '../../src/sidecar/worker/pool/worker-pool.js'
import type { Running } from '../support/sidecar.js'
import { CALL, FIXTURES, HOSTILE_LIMITS, type HookRun, afterFailure, expectServing, failed, runHooks, startHostile } from './support.js'
import { FAILURE_TEXT } from '../../src/sidecar/runners/failure-text.js'

const LIMITS: Limits = { ...DEFAULT_LIMITS, ...HOSTILE_LIMITS }
/** V8 spends a few hundred ms in last-resort GCs before it gives up: room for the fatal hooks to get there. */
// Far from what the fatal hooks need: on a busy machine the CPU clock (it counts a running stretch on a
// steady clock) must not stop them before V8 does.
const FATAL_LIMITS = { cpuMs: 120_000, wallMs: 240_000 }

/** An invocation of a fixture hook straight on a pool, without a sidecar. */
function request(hook: string, extra: Partial<InvocationRequest> = {}): InvocationRequest {
  return {
    hook: { name: hook, version: 'v1', filename: `${hook}/index.js`, source: readFileSync(join(FIXTURES, hook, 'index.js'), 'utf8') },
    point: 'beforeToolExecute',
    args: [CALL],
    ctx: {
      workdir: '/nowhere',
      session: { id: 'pool-test', interactive: false, autoApprove: false },
      agent: { id: 'tester', modelId: 'test-model' },
      config: {},
      system: { platform: process.platform, arch: process.arch, hookdVersion: 'test' },
      env: {},
      hook: { name: hook, version: 'v1', point: 'beforeToolExecute' },
    },
    limits: LIMITS,
    onCapability: () => Promise.resolve({ ok: false, code: 'denied', message: 'no capabilities here' }),
    onLog: () => {},
    ...extra,
  }
}

const ORDINARY = { ok: true, value: JSON.stringify({ arguments: { ...CALL.arguments, ordinary: true } }) }

/**
 * Opens a session whose hook waits for its host inside ctx.confirm, and resolves once it does: an
 * invocation held in flight on a worker. `answer` lets it finish.
 */
async function holdInFlight(running: Running): Promise<{ answer(yes: boolean): void; result: Promise<HookRun> }> {
  let answer: (yes: boolean) => void = () => {}
  let asked: () => void = () => {}
  const waiting = new Promise<void>((resolve) => {
    asked = resolve
  })
  const result = runHooks(running, ['slow-confirm'], {
    interactive: true,
    capabilities: {
      confirm: () => {
        asked()
        return new Promise<boolean>((resolve) => {
          answer = resolve
        })
      },
    },
  })
  await waiting
  return { answer: (yes) => answer(yes), result }
}

describe('V8 fatal errors', () => {
  let running: Running

  beforeAll(async () => {
    // With the usual small CPU limit the limit might stop the hooks first (fine, but not what these
    // tests are about).
    running = await startHostile({ workers: 2, limits: FATAL_LIMITS, confirmMs: 60_000, only: ['fatal-size', 'slow-confirm'] })
  })

  afterAll(async () => {
    await running?.stop()
  })

  it('fatal-size: a worker killed outright ends as worker-crash, after one run alone on a fresh worker; the gate refuses; another session is served; the worker is replaced', async () => {
    await vi.waitFor(() => expect(running.sidecar.pool.pids()).toHaveLength(2), { timeout: 20_000, interval: 50 })
    const before = running.sidecar.pool.pids()
    // Session B holds an invocation on one worker; A's hook then runs on the other (the least busy).
    const b = await holdInFlight(running)

    const run = await runHooks(running, ['fatal-size', 'ordinary'])
    // It called no capability, so it ran once more, alone on a fresh worker (it could have been the
    // victim of another hook's crash), and crashed that one too.
    expect(run.logs).toEqual(['about to crash the worker', 'about to crash the worker'])
    expect(run.diagnostics).toEqual([
      {
        hook: 'fatal-size',
        point: 'beforeToolExecute',
        kind: 'worker-crash',
        message: expect.stringMatching(
          /^hook 'fatal-size' beforeToolExecute: the sandbox worker \(pid \d+\) died while the hook ran \(signal SIG[A-Z]+, V8 reported a fatal error\); a new worker replaces it$/,
        ),
        file: 'fatal-size/index.js',
        version: expect.any(String),
      },
    ])
    // A gate whose hook could not decide refuses the call; the next hook is not consulted.
    expect(run.result).toEqual(afterFailure('fatal-size', 'worker-crash'))

    // B never noticed.
    b.answer(true)
    const outB = await b.result
    expect(outB.diagnostics).toEqual([])
    expect(outB.result).toEqual({ allow: true, arguments: { answer: true } })

    // The pool is back to two workers, one of them new.
    await vi.waitFor(() => expect(running.sidecar.pool.pids()).toHaveLength(2), { timeout: 20_000, interval: 50 })
    expect(running.sidecar.pool.pids().filter((pid) => !before.includes(pid))).toHaveLength(1)
    await expectServing(running)
  }, 120_000)

  it('fatal-oom: a catastrophic out-of-memory ends as memory; the worker retires after the invocation it shares finishes', async () => {
    const solo = await startHostile({ limits: FATAL_LIMITS, confirmMs: 60_000, only: ['fatal-oom', 'slow-confirm'] })
    try {
      const [pid] = solo.sidecar.pool.pids()
      // Session B holds an invocation on the only worker, which A's hook is about to wreck.
      const b = await holdInFlight(solo)

      const run = await runHooks(solo, ['fatal-oom', 'ordinary'])
      expect(run.logs).toEqual(['about to exhaust V8'])
      expect(run.diagnostics).toEqual([
        failed(
          'fatal-oom',
          'memory',
          `ran out of memory beyond what V8 can recover from (limit ${HOSTILE_LIMITS.memoryMb} MB; isolated-vm: Catastrophic out-of-memory error); its sandbox worker is retired and replaced`,
        ),
      ])
      // A gate whose hook could not decide refuses the call.
      expect(run.result).toEqual(afterFailure('fatal-oom', 'memory'))
      // The next call is served, by the replacement worker.
      const next = await runHooks(solo, ['ordinary'])
      expect(next.result).toEqual({ allow: true, arguments: { ...CALL.arguments, ordinary: true } })

      // B, on the retiring worker, still finishes.
      b.answer(true)
      const outB = await b.result
      expect(outB.diagnostics).toEqual([])
      expect(outB.result).toEqual({ allow: true, arguments: { answer: true } })

      await vi.waitFor(() => expect(solo.sidecar.pool.stats()).toMatchObject({ ready: 1, spawned: 2 }), { timeout: 20_000, interval: 50 })
      expect(solo.sidecar.pool.pids()).not.toContain(pid)
      await expectServing(solo)
    } finally {
      await solo.stop()
    }
  }, 120_000)

  it('fatal-size again and again: every crash is replaced; crashes while running hooks never make the pool give up', async () => {
    for (let i = 0; i < 3; i++) {
      const run = await runHooks(running, ['fatal-size'])
      expect(run.diagnostics.map((d) => d.kind)).toEqual(['worker-crash'])
    }
    expect(running.sidecar.pool.stats()).toMatchObject({ startFailures: 0 })
    expect(running.sidecar.pool.stats().broken).toBeUndefined()
    await expectServing(running)
  }, 120_000)
})

describe('the pool', () => {
  const pools: WorkerPool[] = []
  const pool = (options: ConstructorParameters<typeof WorkerPool>[0]): WorkerPool => {
    const p = new WorkerPool(options)
    pools.push(p)
    return p
  }

  afterEach(async () => {
    await Promise.all(pools.splice(0).map((p) => p.close()))
  })

  it('hung worker: a worker that stops answering is killed at the deadline and replaced', async () => {
    const p = pool({ size: 1, hangGraceMs: 300 })
    await p.start()
    const [pid] = p.pids()
    // No retry: this test is about the kill (the next one is about what a retry does).
    const pending = p.invoke({ ...request('never-settles'), retries: 0 })
    // Freeze the whole worker process: its own watchdog cannot fire any more.
    process.kill(pid as number, 'SIGSTOP')
    const report = await pending
    expect(report.outcome).toEqual({
      ok: false,
      kind: 'worker-crash',
      message: `the sandbox worker (pid ${pid}) was killed because it stopped answering: an invocation ran 300 ms past its wall-time limit; a new worker replaces it`,
    })
    expect((await p.invoke(request('ordinary'))).outcome).toEqual(ORDINARY)
    expect(p.pids()).not.toContain(pid)
  })

  it('an invocation lost with a hung worker runs once more on a fresh worker, and ends on its own terms', async () => {
    const p = pool({ size: 1, hangGraceMs: 300 })
    await p.start()
    const [pid] = p.pids()
    const pending = p.invoke(request('never-settles'))
    process.kill(pid as number, 'SIGSTOP')
    // Its retry runs on the replacement, which is not frozen: the hook's own wall-time limit ends it.
    expect((await pending).outcome).toEqual({ ok: false, kind: 'timeout', message: FAILURE_TEXT.wall(LIMITS) })
    expect(p.pids()).not.toContain(pid)
  })

  it('host waits do not count towards the hang deadline', async () => {
    const p = pool({ size: 1, hangGraceMs: 300 })
    await p.start()
    const [pid] = p.pids()
    // The host takes longer than wall-time limit plus grace to answer.
    const slowHost = (): Promise<CapabilityReply> =>
      new Promise((resolve) => setTimeout(() => resolve({ ok: true, value: true }), LIMITS.wallMs + 700))
    const report = await p.invoke(request('slow-confirm', { onCapability: slowHost }))
    expect(report.outcome).toEqual({ ok: true, value: JSON.stringify({ arguments: { answer: true } }) })
    expect(p.pids()).toEqual([pid])
  })

  it('workers that die at start-up: the pool gives up after maxStartFailures instead of looping', async () => {
    const p = pool({ size: 1, maxStartFailures: 3, execArgv: ['--import', 'data:text/javascript,process.exit(7)'] })
    await expect(p.start()).rejects.toMatchObject({
      code: 'unavailable',
      message: 'no sandbox worker could start: workers failed to start 3 times in a row (last: exit code 7)',
    })
    expect(p.stats()).toMatchObject({ spawned: 3, ready: 0 })
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(p.stats().spawned).toBe(3)
    const report = await p.invoke(request('ordinary'))
    expect(report.outcome).toEqual({ ok: false, kind: 'worker-crash', message: 'the sidecar is shutting down' })
    // A healthy pool beside it still serves.
    const healthy = pool({ size: 1 })
    await healthy.start()
    expect((await healthy.invoke(request('ordinary'))).outcome).toEqual(ORDINARY)
  })

  it('workers that die idle right after start-up also count: the pool gives up, invocations fail fast', async () => {
    // Each worker exits 50 ms after it reported ready, before it is given any work.
    const dieAfterReady = [
      'const send = process.send.bind(process);',
      'process.send = (message, ...rest) => {',
      "  if (message && message.$ === 'ready') setTimeout(() => process.exit(9), 50);",
      '  return send(message, ...rest);',
      '};',
    ].join('')
    const p = pool({ size: 1, maxStartFailures: 3, execArgv: ['--import', `data:text/javascript,${encodeURIComponent(dieAfterReady)}`] })
    const told: string[] = []
    p.onBroken((reason) => told.push(reason))
    await p.start()
    await vi.waitFor(() => expect(p.stats().broken).toBeDefined(), { timeout: 20_000, interval: 50 })
    expect(told).toEqual(['workers failed to start 3 times in a row (last: exit code 9)'])
    expect(p.stats()).toMatchObject({
      spawned: 3,
      broken: 'workers failed to start 3 times in a row (last: exit code 9)',
    })
    const report = await p.invoke(request('ordinary'))
    expect(report.outcome).toEqual({
      ok: false,
      kind: 'worker-crash',
      message: 'no sandbox worker is available: workers failed to start 3 times in a row (last: exit code 9)',
    })
  })

  it('a sidecar whose pool gave up reports NOT_SERVING on the health service', async () => {
    const dieAfterReady = "const send = process.send.bind(process); process.send = (m, ...r) => { if (m && m.$ === 'ready') setTimeout(() => process.exit(9), 50); return send(m, ...r) };"
    const dir = await mkdtemp(join(tmpdir(), 'hookd-broken-'))
    // One hook: every load a dying worker takes on counts as work, not as a start failure.
    await cp(join(FIXTURES, 'ordinary'), join(dir, 'hooks', 'ordinary'), { recursive: true })
    const sidecar = await Sidecar.create({
      hooks: join(dir, 'hooks'),
      watch: false,
      pool: { size: 1, maxStartFailures: 2, execArgv: ['--import', `data:text/javascript,${encodeURIComponent(dieAfterReady)}`] },
    })
    try {
      const address = await sidecar.listen(`unix:${join(dir, 'hookd.sock')}`)
      const def = protoLoader.loadSync(healthProto, { enums: String })
      const pkg = grpc.loadPackageDefinition(def) as unknown as {
        grpc: { health: { v1: { Health: new (a: string, c: grpc.ChannelCredentials) => grpc.Client & { check(r: unknown, cb: (e: Error | null, r: { status: string }) => void): void } } } }
      }
      const client = new pkg.grpc.health.v1.Health(address, grpc.credentials.createInsecure())
      const status = (): Promise<string> =>
        new Promise((resolve, reject) => client.check({ service: 'hookd.v1.HookExecutor' }, (e, r) => (e ? reject(e) : resolve(r.status))))
      await vi.waitFor(async () => expect(await status()).toBe('NOT_SERVING'), { timeout: 20_000, interval: 100 })
      client.close()
    } finally {
      await sidecar.stop()
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('keeps at most keepVersions hooks per worker, and sends the source again after forgetting', async () => {
    const p = pool({ size: 1, keepVersions: 2 })
    await p.start()
    const named = (name: string): InvocationRequest => {
      const r = request('ordinary')
      return { ...r, hook: { ...r.hook, name, filename: `${name}/index.js` } }
    }
    for (const name of ['a', 'b', 'c', 'a', 'b', 'c', 'c', 'a']) {
      expect((await p.invoke(named(name))).outcome).toEqual(ORDINARY)
    }
  })
})
