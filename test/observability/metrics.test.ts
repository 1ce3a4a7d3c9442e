/**
 * `hookd serve --metrics`: known traffic through the command, then a scrape whose counters must say
 * exactly what happened (calls by outcome, hooks by outcome, who refused, fail closed and fail open,
 * capability verdicts, sessions, worker restarts, loads), the probes on the same listener, and the gRPC
 * health service answering by service name, through a drain. The command runs in-process (main(argv,
 * io), stopped as SIGTERM would stop it): the test is about what it serves, not the process.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { HookdClient } from '../../src/host/index.js'
import { type ServingInProcess, serveInProcess } from '../support/processes.js'
import { sessionOptions } from '../support/sidecar.js'
import { type HealthClient, check, family, getJson, healthClient, outcomeHooks, scrape } from './support.js'

const shell = (command: string) => ({ id: 'c1', name: 'shell', arguments: { command } })

describe('hookd serve --metrics', () => {
  let cwd: string
  let hooks: string
  let serving: ServingInProcess
  let client: HookdClient
  let base: string
  let health: HealthClient

  beforeAll(async () => {
    cwd = await mkdtemp(join(tmpdir(), 'hookd-metrics-'))
    hooks = await outcomeHooks()
    serving = await serveInProcess(
      // CPU and wall limits far above what the crashing hook needs before V8 gives up, on a busy machine.
      ['--hooks', hooks, '--workers', '1', '--cpu-ms', '60000', '--wall-ms', '120000', '--no-watch', '--metrics', '127.0.0.1:0', '--health-listen', '127.0.0.1:0', '--grace-ms', '20000'],
      { cwd },
    )
    const url = /^hookd: metrics on (http:\/\/127\.0\.0\.1:\d+)\/metrics$/m.exec(serving.output.stderr)?.[1]
    if (!url) throw new Error(`no metrics line: ${serving.output.stderr}`)
    base = url
    client = await HookdClient.connect(serving.address)
    health = healthClient(/^hookd: health on (\S+)$/m.exec(serving.output.stderr)?.[1] as string)
  })

  afterAll(async () => {
    client?.close()
    health?.close()
    if (serving) await serving.stop()
    await rm(cwd, { recursive: true, force: true })
    await rm(hooks, { recursive: true, force: true })
  })

  it('prints where it serves metrics, before it listens for hooks', () => {
    const lines = serving.output.stderr.split('\n').filter(Boolean)
    expect(lines[0]).toBe(`hookd: metrics on ${base}/metrics`)
    expect(lines).toContain(`hookd: listening on ${serving.address}`)
  })

  it('counts known traffic exactly', async () => {
    const invoke = (names: string[], command: string) => client.invoke(sessionOptions(names), 'beforeToolExecute', shell(command))
    expect((await invoke(['allow', 'deny'], 'ls')).result.allow).toBe(true)
    expect((await invoke(['allow', 'deny'], 'rm -rf /')).result).toMatchObject({ allow: false, refusedBy: 'deny' })
    const thrown = await invoke(['thrower', 'allow'], 'ls')
    expect([thrown.result.allow, thrown.diagnostics.map((d) => d.kind)]).toEqual([true, ['throw']])
    const huge = await invoke(['huge', 'allow'], 'ls')
    expect([huge.result.refusedBy, huge.diagnostics.map((d) => d.kind)]).toEqual(['hookd', ['result-too-large']])
    expect((await invoke(['asker'], 'ls')).result.allow).toBe(true)

    const session = await client.openSession(sessionOptions(['allow']))
    await session.call('beforeToolExecute', shell('ls'))
    expect(family(await scrape(`${base}/metrics`), 'hookd_sessions_active')).toEqual({ 'hookd_sessions_active{tenant="",transport="grpc"}': 1 })
    await session.close()

    const m = await scrape(`${base}/metrics`)
    const t = 'tenant=""'
    expect(family(m, 'hookd_sessions_active')).toEqual({ [`hookd_sessions_active{${t},transport="grpc"}`]: 0 })
    expect(family(m, 'hookd_point_calls_total')).toEqual({
      [`hookd_point_calls_total{${t},point="beforeToolExecute",outcome="allowed"}`]: 4,
      [`hookd_point_calls_total{${t},point="beforeToolExecute",outcome="refused"}`]: 2,
      [`hookd_point_calls_total{${t},point="afterRun",outcome="unchanged"}`]: 1,
    })
    expect(family(m, 'hookd_hook_invocations_total')).toEqual({
      [`hookd_hook_invocations_total{${t},point="beforeToolExecute",hook="allow",outcome="no-opinion"}`]: 4,
      [`hookd_hook_invocations_total{${t},point="beforeToolExecute",hook="allow",outcome="not-run"}`]: 1,
      [`hookd_hook_invocations_total{${t},point="beforeToolExecute",hook="deny",outcome="no-opinion"}`]: 1,
      [`hookd_hook_invocations_total{${t},point="beforeToolExecute",hook="deny",outcome="refused"}`]: 1,
      [`hookd_hook_invocations_total{${t},point="beforeToolExecute",hook="thrower",outcome="failed"}`]: 1,
      [`hookd_hook_invocations_total{${t},point="beforeToolExecute",hook="huge",outcome="failed"}`]: 1,
      [`hookd_hook_invocations_total{${t},point="beforeToolExecute",hook="asker",outcome="no-opinion"}`]: 1,
    })
    expect(family(m, 'hookd_refusals_total')).toEqual({
      [`hookd_refusals_total{${t},point="beforeToolExecute",refused_by="deny"}`]: 1,
      [`hookd_refusals_total{${t},point="beforeToolExecute",refused_by="hookd"}`]: 1,
    })
    expect(family(m, 'hookd_fail_decisions_total')).toEqual({
      [`hookd_fail_decisions_total{${t},point="beforeToolExecute",mode="open",kind="throw"}`]: 1,
      [`hookd_fail_decisions_total{${t},point="beforeToolExecute",mode="closed",kind="result-too-large"}`]: 1,
    })
    expect(family(m, 'hookd_capability_calls_total')).toEqual({
      [`hookd_capability_calls_total{${t},capability="confirm",decision="allowed"}`]: 1,
      [`hookd_capability_calls_total{${t},capability="file.read",decision="denied"}`]: 1,
    })
    expect(family(m, 'hookd_diagnostics_total')).toEqual({
      [`hookd_diagnostics_total{${t},kind="throw"}`]: 1,
      [`hookd_diagnostics_total{${t},kind="result-too-large"}`]: 1,
    })
    expect(family(m, 'hookd_quota_refusals_total')).toEqual({})
    // No audit log: nothing it could not write.
    expect(family(m, 'hookd_audit_unwritten_total')).toEqual({ hookd_audit_unwritten_total: 0 })
    // Durations vary; how many were observed does not.
    const counts = Object.fromEntries(Object.entries({ ...family(m, 'hookd_point_call_duration_seconds'), ...family(m, 'hookd_hook_duration_seconds') }).filter(([s]) => s.includes('_count')))
    expect(counts).toEqual({
      [`hookd_point_call_duration_seconds_count{${t},point="beforeToolExecute"}`]: 6,
      [`hookd_point_call_duration_seconds_count{${t},point="afterRun"}`]: 1,
      [`hookd_hook_duration_seconds_count{${t},hook="allow"}`]: 4,
      [`hookd_hook_duration_seconds_count{${t},hook="deny"}`]: 2,
      [`hookd_hook_duration_seconds_count{${t},hook="thrower"}`]: 1,
      [`hookd_hook_duration_seconds_count{${t},hook="huge"}`]: 1,
      [`hookd_hook_duration_seconds_count{${t},hook="asker"}`]: 1,
    })
    // Every sample falls in a bucket: the largest finite one (10 s) holds them all.
    expect(m.get(`hookd_hook_duration_seconds_bucket{le="10",${t},hook="allow"}`)).toBe(4)
    expect(m.get(`hookd_hook_duration_seconds_bucket{le="+Inf",${t},hook="allow"}`)).toBe(4)
    expect(family(m, 'hookd_hook_loads_total')).toEqual(
      Object.fromEntries(['allow', 'asker', 'crash', 'deny', 'huge', 'thrower'].map((h) => [`hookd_hook_loads_total{${t},hook="${h}",result="loaded"}`, 1])),
    )
    expect(family(m, 'hookd_hooks')).toEqual({ [`hookd_hooks{${t},status="ready"}`]: 6 })
    expect(family(m, 'hookd_info')).toEqual({ 'hookd_info{version="0.1.0"}': 1 })
    expect(family(m, 'hookd_ready')).toEqual({ hookd_ready: 1 })
    expect(family(m, 'hookd_worker_restarts_total')).toEqual({})
    expect(m.get(`hookd_workers{${t},state="idle"}`)).toBe(1)
    // Node's own process metrics come along.
    expect(m.get('process_cpu_seconds_total')).toBeGreaterThan(0)
    expect(m.get('nodejs_heap_size_used_bytes')).toBeGreaterThan(0)
  })

  it('counts worker restarts: a hook that kills its worker costs two (its run, and its rerun alone), and the gate fails closed', async () => {
    const crashed = await client.invoke(sessionOptions(['crash']), 'beforeToolExecute', shell('ls'))
    expect([crashed.result.refusedBy, crashed.diagnostics.map((d) => d.kind)]).toEqual(['hookd', ['worker-crash']])
    const t = 'tenant=""'
    const m = await scrape(`${base}/metrics`)
    expect(family(m, 'hookd_worker_restarts_total')).toEqual({ [`hookd_worker_restarts_total{${t},reason="crashed"}`]: 2 })
    expect(m.get(`hookd_fail_decisions_total{${t},point="beforeToolExecute",mode="closed",kind="worker-crash"}`)).toBe(1)
    expect(m.get(`hookd_refusals_total{${t},point="beforeToolExecute",refused_by="hookd"}`)).toBe(2)
    // The pool replaces the worker.
    await vi.waitFor(async () => expect((await scrape(`${base}/metrics`)).get(`hookd_workers{${t},state="idle"}`)).toBe(1), { timeout: 30_000, interval: 200 })
  })

  it('answers probes on the same listener, and nothing else', async () => {
    expect(await getJson(`${base}/healthz`)).toEqual({ status: 200, body: { status: 'live' } })
    expect(await getJson(`${base}/readyz`)).toEqual({ status: 200, body: { status: 'ready' } })
    const missing = await fetch(`${base}/nope`)
    expect([missing.status, await missing.text()]).toEqual([404, 'no such endpoint: /nope; this listener serves GET /metrics, /healthz and /readyz\n'])
    const post = await fetch(`${base}/metrics`, { method: 'POST' })
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD'])
  })

  it('reports health by service name, and through a drain: not ready, still live, metrics still served', async () => {
    const names = ['', 'hookd.v1.HookExecutor', 'grpc.health.v1.Health', 'grpc.reflection.v1.ServerReflection', 'grpc.reflection.v1alpha.ServerReflection']
    expect(await Promise.all(names.map((n) => check(health, n)))).toEqual(names.map(() => 'SERVING'))
    expect(await check(health, 'no.such.Service')).toBe('NOT_FOUND')

    // A call that waits on the human keeps the drain going (for up to --grace-ms) while we look.
    let asked: () => void = () => {}
    const waiting = new Promise<void>((resolve) => (asked = resolve))
    let answer: (yes: boolean) => void = () => {}
    const session = await client.openSession(
      sessionOptions(['asker'], {
        interactive: true,
        capabilities: {
          confirm: () => {
            asked()
            return new Promise<boolean>((resolve) => (answer = resolve))
          },
        },
      }),
    )
    const running = session.call('beforeToolExecute', shell('ls'))
    await waiting
    const exited = serving.stop('SIGTERM')
    await vi.waitFor(async () => expect((await getJson(`${base}/readyz`)).status).toBe(503), { timeout: 10_000, interval: 50 })
    expect(await getJson(`${base}/readyz`)).toEqual({ status: 503, body: { status: 'not ready', reason: 'draining: it is shutting down' } })
    expect(await getJson(`${base}/healthz`)).toEqual({ status: 200, body: { status: 'live' } })
    expect(await Promise.all(names.map((n) => check(health, n)))).toEqual(names.map(() => 'NOT_SERVING'))
    expect((await scrape(`${base}/metrics`)).get('hookd_ready')).toBe(0)

    answer(true)
    expect((await running).result).toMatchObject({ allow: true })
    expect(await exited).toBe(0)
    expect(serving.output.stderr).toMatch(/^hookd: draining after SIGTERM: health says NOT_SERVING, new sessions and calls get UNAVAILABLE; 1 open session\(s\) end once their running calls finish \(at most 20000 ms, --grace-ms\)$/m)
    expect(serving.output.stderr).toMatch(/^hookd: drained in \d+ ms: every session ended; stopped$/m)
  })
})

describe.runIf(existsSync('/dev/full'))('hookd serve --metrics --audit on a full disk', () => {
  it('counts the decisions the audit log could not write, and still answers them', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'hookd-metrics-audit-'))
    const hooks = await outcomeHooks()
    const serving = await serveInProcess(['--hooks', hooks, '--workers', '1', '--no-watch', '--metrics', '127.0.0.1:0', '--audit', '/dev/full'], { cwd })
    const client = await HookdClient.connect(serving.address)
    try {
      const url = /^hookd: metrics on (http:\/\/127\.0\.0\.1:\d+)\/metrics$/m.exec(serving.output.stderr)?.[1] as string
      expect(family(await scrape(`${url}/metrics`), 'hookd_audit_unwritten_total')).toEqual({ hookd_audit_unwritten_total: 0 })
      for (const command of ['ls', 'rm -rf /', 'ls']) await client.invoke(sessionOptions(['allow', 'deny']), 'beforeToolExecute', shell(command))
      expect(family(await scrape(`${url}/metrics`), 'hookd_audit_unwritten_total')).toEqual({ hookd_audit_unwritten_total: 3 })
      expect(serving.output.stderr).toContain('hookd: cannot write the audit log /dev/full (ENOSPC: no space left on device)')
    } finally {
      client.close()
      await serving.stop()
      await rm(cwd, { recursive: true, force: true })
      await rm(hooks, { recursive: true, force: true })
    }
  })
})
