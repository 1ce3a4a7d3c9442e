/**
 * Readiness while the first load runs: the metrics and health listeners are up before the hooks load,
 * /healthz says live, /readyz says what is still loading and the gRPC health service answers NOT_SERVING
 * for the sidecar and its hook service (SERVING for itself), until every hook folder (every tenant's) has
 * loaded once. A remote hook whose server holds its Describe answer keeps the load going for as long as
 * the test needs. With tenants, series are labelled by tenant, and quota refusals are counted (a call held on its
 * host's answer keeps the tenant at its one concurrent call). `hookd serve` runs in-process (main(argv, io)
 * until stopped): the tests are about what it serves and prints, not the process.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as grpc from '@grpc/grpc-js'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { HookdClient } from '../../src/host/index.js'
import { hookService } from '../../src/sidecar/runners/remote/remote-wire.js'
import { hashToken, newToken } from '../../src/sidecar/tenancy/tenant-token.js'
import { type ServingInProcess, serveInProcess } from '../support/processes.js'
import { hook, sessionOptions, writeTree } from '../support/sidecar.js'
import { check, family, freePort, getJson, healthClient, scrape } from './support.js'

const METRICS_LINE = /^hookd: metrics on (http:\/\/127\.0\.0\.1:\d+)\/metrics\r?\n/m
const SERVICES = ['', 'hookd.v1.HookExecutor', 'grpc.health.v1.Health']

/** A remote hook server whose Describe answers only when `release` is called. */
async function heldDescribe(): Promise<{ address: string; asked: Promise<void>; release(): void; stop(): void }> {
  let release = (): void => {}
  let asked = (): void => {}
  const wasAsked = new Promise<void>((resolve) => (asked = resolve))
  const released = new Promise<void>((resolve) => (release = resolve))
  const server = new grpc.Server()
  server.addService(hookService(), {
    Describe: (_call: grpc.ServerUnaryCall<unknown, unknown>, done: grpc.sendUnaryData<unknown>) => {
      asked()
      void released.then(() => done(null, { protocolVersion: 1, points: ['beforeToolExecute'], version: 'v1', description: 'held' }))
    },
    Run: (stream: grpc.ServerDuplexStream<unknown, unknown>) => stream.end(),
  })
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  )
  return { address: `127.0.0.1:${port}`, asked: wasAsked, release, stop: () => server.forceShutdown() }
}

describe('readiness during the first load', () => {
  it('answers live but not ready while a hook folder loads, over HTTP and gRPC health, then ready', async () => {
    const remote = await heldDescribe()
    const hooks = await writeTree({ 'slow/hook.json': JSON.stringify({ remote: remote.address }), 'allow/index.js': hook({ beforeToolExecute: 'function () {}' }) })
    const healthAddress = `127.0.0.1:${await freePort()}`
    const health = healthClient(healthAddress)
    let serving: ServingInProcess | undefined
    try {
      const args = ['--hooks', hooks, '--workers', '1', '--listen', `unix:${join(hooks, 'hookd.sock')}`, '--metrics', '127.0.0.1:0', '--health-listen', healthAddress]
      serving = await serveInProcess(args, { ready: METRICS_LINE })
      const base = serving.address
      await remote.asked
      expect(await getJson(`${base}/healthz`)).toEqual({ status: 200, body: { status: 'live' } })
      expect(await getJson(`${base}/readyz`)).toEqual({ status: 503, body: { status: 'not ready', reason: 'loading hooks' } })
      expect((await scrape(`${base}/metrics`)).get('hookd_ready')).toBe(0)
      expect(await Promise.all(SERVICES.map((s) => check(health, s)))).toEqual(['NOT_SERVING', 'NOT_SERVING', 'SERVING'])
      expect(serving.output.stderr).not.toContain('listening on')

      remote.release()
      await vi.waitFor(() => expect(serving?.output.stderr).toContain('hookd: listening on'), { timeout: 20_000, interval: 50 })
      expect(serving.output.stderr).toContain(`hookd: health on ${healthAddress}\n`)
      expect(await getJson(`${base}/readyz`)).toEqual({ status: 200, body: { status: 'ready' } })
      expect(await Promise.all(SERVICES.map((s) => check(health, s)))).toEqual(['SERVING', 'SERVING', 'SERVING'])
      const m = await scrape(`${base}/metrics`)
      expect(m.get('hookd_ready')).toBe(1)
      expect(family(m, 'hookd_hooks')).toEqual({ 'hookd_hooks{tenant="",status="ready"}': 2 })
    } finally {
      health.close()
      remote.release()
      remote.stop()
      if (serving) await serving.stop()
      await rm(hooks, { recursive: true, force: true })
    }
  })

  it('with tenants, names each tenant still loading, and is ready once the last one has loaded', async () => {
    const remote = await heldDescribe()
    const cwd = await writeTree({
      'slow/held/hook.json': JSON.stringify({ remote: remote.address }),
      'fast/allow/index.js': hook({ beforeToolExecute: 'function () {}' }),
    })
    const tenant = (id: string) => ({ id, tokenHash: hashToken(newToken()), hooks: join(cwd, id), workers: 1, remoteHooks: [remote.address] })
    // In file order: 'slow' loads first and holds 'fast' back too.
    await writeFile(join(cwd, 'tenants.json'), JSON.stringify({ tenants: [tenant('slow'), tenant('fast')] }))
    const healthAddress = `127.0.0.1:${await freePort()}`
    const health = healthClient(healthAddress)
    let serving: ServingInProcess | undefined
    try {
      const args = ['--tenants', 'tenants.json', '--listen', `unix:${join(cwd, 'hookd.sock')}`, '--metrics', '127.0.0.1:0', '--health-listen', healthAddress]
      serving = await serveInProcess(args, { cwd, ready: METRICS_LINE })
      const base = serving.address
      await remote.asked
      expect(await getJson(`${base}/readyz`)).toEqual({ status: 503, body: { status: 'not ready', reason: "loading the hooks of tenant 'slow', the hooks of tenant 'fast'" } })
      expect(await Promise.all(SERVICES.map((s) => check(health, s)))).toEqual(['NOT_SERVING', 'NOT_SERVING', 'SERVING'])

      remote.release()
      await vi.waitFor(() => expect(serving?.output.stderr).toContain('hookd: serving 2 tenant(s): slow, fast'), { timeout: 30_000, interval: 50 })
      expect(await getJson(`${base}/readyz`)).toEqual({ status: 200, body: { status: 'ready' } })
      expect(await Promise.all(SERVICES.map((s) => check(health, s)))).toEqual(['SERVING', 'SERVING', 'SERVING'])
      expect(family(await scrape(`${base}/metrics`), 'hookd_hooks')).toEqual({ 'hookd_hooks{tenant="slow",status="ready"}': 1, 'hookd_hooks{tenant="fast",status="ready"}': 1 })
    } finally {
      health.close()
      remote.release()
      remote.stop()
      if (serving) await serving.stop()
      await rm(cwd, { recursive: true, force: true })
    }
  })
})

describe('metrics of a sidecar with tenants', () => {
  let cwd: string
  let serving: ServingInProcess
  let base: string
  let token: string

  beforeAll(async () => {
    cwd = await mkdtemp(join(tmpdir(), 'hookd-tenant-metrics-'))
    const hooks = join(cwd, 'acme')
    await mkdir(join(hooks, 'allow'), { recursive: true })
    await writeFile(join(hooks, 'allow', 'index.js'), hook({ beforeToolExecute: 'function () {}' }))
    await mkdir(join(hooks, 'holder'), { recursive: true })
    await writeFile(join(hooks, 'holder', 'index.js'), hook({ beforeToolExecute: "function (ctx) { ctx.confirm({ title: 'hold' }) }" }))
    token = newToken()
    // One point call at a time: while one waits on its host, the next is over the quota.
    const tenants = { tenants: [{ id: 'acme', tokenHash: hashToken(token), hooks, workers: 1, limits: { concurrentInvocations: 1 } }] }
    await writeFile(join(cwd, 'tenants.json'), JSON.stringify(tenants))
    serving = await serveInProcess(['--tenants', 'tenants.json', '--listen', `unix:${join(cwd, 'hookd.sock')}`, '--metrics', '127.0.0.1:0'], { cwd })
    base = METRICS_LINE.exec(serving.output.stderr)?.[1] as string
  })

  afterAll(async () => {
    if (serving) await serving.stop()
    await rm(cwd, { recursive: true, force: true })
  })

  it('labels series with the tenant, and counts quota refusals (a stream answers them; an Invoke fails)', async () => {
    const client = await HookdClient.connect(serving.address, { token })
    try {
      const call = { id: 'c1', name: 'shell', arguments: { command: 'ls' } }
      let answer = (_yes: boolean): void => {}
      let asked = (): void => {}
      const waiting = new Promise<void>((resolve) => (asked = resolve))
      const holding = await client.openSession(
        sessionOptions(['holder'], { interactive: true, capabilities: { confirm: () => new Promise<boolean>((resolve) => ((answer = resolve), asked())) } }),
      )
      const held = holding.call('beforeToolExecute', call)
      await waiting
      const session = await client.openSession(sessionOptions(['allow']))
      const over = await session.call('beforeToolExecute', call)
      expect([over.result.allow, over.diagnostics.map((d) => d.kind)]).toEqual([false, ['quota']])
      await expect(client.invoke(sessionOptions(['allow']), 'beforeToolExecute', call)).rejects.toMatchObject({ code: 'resource-exhausted' })
      answer(true)
      expect((await held).result.allow).toBe(true)
      expect((await session.call('beforeToolExecute', call)).result.allow).toBe(true)
      session.abandon()
      holding.abandon()

      const m = await scrape(`${base}/metrics`)
      const t = 'tenant="acme"'
      expect(family(m, 'hookd_quota_refusals_total')).toEqual({ [`hookd_quota_refusals_total{${t},point="beforeToolExecute"}`]: 2 })
      expect(family(m, 'hookd_point_calls_total')).toEqual({
        [`hookd_point_calls_total{${t},point="beforeToolExecute",outcome="allowed"}`]: 2,
        [`hookd_point_calls_total{${t},point="beforeToolExecute",outcome="refused"}`]: 1,
      })
      expect(family(m, 'hookd_refusals_total')).toEqual({ [`hookd_refusals_total{${t},point="beforeToolExecute",refused_by="hookd"}`]: 1 })
      expect(family(m, 'hookd_hook_invocations_total')).toEqual({
        [`hookd_hook_invocations_total{${t},point="beforeToolExecute",hook="holder",outcome="no-opinion"}`]: 1,
        [`hookd_hook_invocations_total{${t},point="beforeToolExecute",hook="allow",outcome="no-opinion"}`]: 1,
        [`hookd_hook_invocations_total{${t},point="beforeToolExecute",hook="allow",outcome="not-run"}`]: 1,
      })
      expect(family(m, 'hookd_capability_calls_total')).toEqual({ [`hookd_capability_calls_total{${t},capability="confirm",decision="allowed"}`]: 1 })
      // A quota refusal is the sidecar's answer, not a hook's failure: no fail-closed decision.
      expect(family(m, 'hookd_fail_decisions_total')).toEqual({})
      expect(family(m, 'hookd_hook_loads_total')).toEqual({
        [`hookd_hook_loads_total{${t},hook="allow",result="loaded"}`]: 1,
        [`hookd_hook_loads_total{${t},hook="holder",result="loaded"}`]: 1,
      })
      expect(m.get(`hookd_workers{${t},state="idle"}`)).toBe(1)
    } finally {
      client.close()
    }
  })
})
