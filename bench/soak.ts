/**
 * The soak (issue 33): many sessions at once, through gRPC (the host library) and the front door
 * (Claude Code's events), for several tenants, every answer checked against what its hooks must
 * decide, while a fault injector kills, stops and restarts what hookd runs on (bench/soak/faults.ts).
 * It prints a summary and writes ./bench/out/soak.json; a check that does not hold fails the run (exit
 * 1) and says which.
 *
 *   make soak                              # SOAK_MINUTES=3
 *   SOAK_MINUTES=30 npx tsx bench/soak.ts  # the figures in docs/operations.md ("What hookd survives")
 *
 * Settings (environment): SOAK_MINUTES (3), SOAK_GRPC_AGENTS (9), SOAK_HTTP_AGENTS (6), SOAK_THINK_MS
 * (mean pause between an agent's calls, 100), SOAK_FAULT_GAP_MS (pause between faults: 1500 up to 3
 * minutes, else 10000), SOAK_RESTART_EVERY_MS (least time between restarts: 0 up to 3 minutes, else
 * 300000), SOAK_OUT (./bench/out/soak.json). It needs the built hookd (make build) and, for the full
 * audit disk, root (a mount namespace and a tmpfs of its own); without root that fault is skipped.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { ROOT } from '../test/support/processes.js'
import { AuditDisk } from './soak/audit-disk.js'
import { checkAudit } from './soak/audit-check.js'
import { ConnProxy } from './soak/conn-proxy.js'
import { Generations } from './soak/expect.js'
import { FAULTS, FaultInjector, type FaultKind, type Stack } from './soak/faults.js'
import { GrpcAgent, type AgentDeps, sleep } from './soak/grpc-agent.js'
import { TENANTS, writeTenants } from './soak/hooks.js'
import { HttpAgent } from './soak/http-agent.js'
import { Ledger } from './soak/ledger.js'
import { type ProcSample, sample } from './soak/proc.js'
import { report } from './soak/report.js'
import { type ServeSettings, SidecarProcess } from './soak/sidecar-process.js'

const env = (name: string, fallback: number): number => (process.env[name] ? Number(process.env[name]) : fallback)
const MINUTES = env('SOAK_MINUTES', 3)
const SHORT = MINUTES <= 3
const GRPC_AGENTS = env('SOAK_GRPC_AGENTS', 9)
const HTTP_AGENTS = env('SOAK_HTTP_AGENTS', 6)
const THINK_MS = env('SOAK_THINK_MS', 100)
const FAULT_GAP_MS = env('SOAK_FAULT_GAP_MS', SHORT ? 1500 : 10_000)
const RESTART_EVERY_MS = env('SOAK_RESTART_EVERY_MS', SHORT ? 0 : 300_000)
const OUT = process.env.SOAK_OUT ?? join(ROOT, 'bench', 'out', 'soak.json')
const SAMPLE_MS = 5000
/** Left out of each sidecar's memory slope: its first minute (JIT, heaps growing to their working size). */
const WARMUP_MS = 60_000

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  const port = (server.address() as { port: number }).port
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

const say = (line: string): void => void process.stdout.write(`${line}\n`)

async function main(): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'hookd-soak-'))
  const disk = await AuditDisk.create(dir)
  const loop = monitorEventLoopDelay({ resolution: 20 })
  loop.enable()
  try {
    const { tenants, file } = await writeTenants(dir)
    const settings: ServeSettings = { tenantsFile: file, socket: join(dir, 'hookd.sock'), httpPort: await freePort(), graceMs: 3000 }
    const sidecars: SidecarProcess[] = [await SidecarProcess.start(settings, disk)]
    const restarts: Array<{ signal: string; exit: string; stoppedMs: number; listeningMs: number }> = []
    const stack: Stack = {
      get sidecar() {
        return sidecars[sidecars.length - 1] as SidecarProcess
      },
      async restart(signal) {
        const t = Date.now()
        const old = stack.sidecar
        await old.stop(signal)
        const stoppedMs = Date.now() - t
        const exit = old.exit?.code !== null && old.exit?.code !== undefined ? `exit ${old.exit.code}` : `signal ${old.exit?.signal}`
        sidecars.push(await SidecarProcess.start(settings, disk))
        const done = { signal, exit, stoppedMs, listeningMs: Date.now() - t }
        restarts.push(done)
        return done
      },
    }
    const t0 = Date.now()
    const endAt = t0 + MINUTES * 60_000
    const ledger = new Ledger(t0, tenants.flatMap((t) => [`${t.id}/grpc`, `${t.id}/http`]))
    const gens = new Generations()
    for (const t of tenants) gens.write(t.id, 1, 0, true)
    let stopped = false
    const parked = { now: 0 }
    const deps: AgentDeps = { ledger, gens, workdir: dir, thinkMs: THINK_MS, stopped: () => stopped, parked }
    const proxies: ConnProxy[] = []
    const grpcAgents: GrpcAgent[] = []
    for (let i = 0; i < GRPC_AGENTS; i++) {
      const proxy = await ConnProxy.listen(join(dir, `p${i}.sock`), settings.socket)
      proxies.push(proxy)
      grpcAgents.push(new GrpcAgent(String(i), tenants[i % tenants.length] as (typeof tenants)[number], proxy, deps))
    }
    const doorUrl = `http://127.0.0.1:${settings.httpPort}`
    const httpAgents = Array.from({ length: HTTP_AGENTS }, (_, i) => new HttpAgent(String(i), tenants[i % tenants.length] as (typeof tenants)[number], doorUrl, deps))
    say(`hookd soak: ${MINUTES} min, ${GRPC_AGENTS} gRPC hosts and ${HTTP_AGENTS} Claude Code agents over ${tenants.length} tenants (${TENANTS.map((t) => `${t.id}: ${t.workers} worker(s)`).join(', ')}); audit disk: ${disk.unavailable ?? 'a tmpfs of its own'}; load ${loadavg()[0]?.toFixed(1)}`)
    const running = [...grpcAgents.map((a) => a.run()), ...httpAgents.map((a) => a.run())]

    const samples: ProcSample[] = []
    const loadPerMinute: number[] = []
    const sampler = setInterval(() => {
      const sidecar = stack.sidecar
      if (sidecar.running && sidecar.readyAt) void sample(sidecar.pid, Date.now() - t0).then((s) => samples.push(s))
      void disk.keepRoom().catch(() => {})
      const minute = Math.floor((Date.now() - t0) / 60_000)
      while (loadPerMinute.length < minute) loadPerMinute.push(loadavg()[0] ?? 0)
    }, SAMPLE_MS)

    const injector = new FaultInjector({ t0, stack, disk, ledger, gens, tenants, grpcAgents, httpAgents, parked })
    await sleep(SHORT ? 5000 : 30_000)
    const tail = SHORT ? 8000 : 30_000
    let sigkilled = false
    // A long run's first restart comes one spacing in, so that its first sidecar is read for a while too.
    let lastRestart = RESTART_EVERY_MS ? t0 : 0
    const room = (): boolean => Date.now() < endAt - tail
    // The first round runs whole, however slow the machine: every kind of fault comes at least once.
    for (let round = 0; round === 0 || room(); round++) {
      for (const kind of FAULTS) {
        if (round > 0 && !room()) break
        if (!wanted(kind, { sigkilled, lastRestart, half: Date.now() > t0 + (endAt - t0) / 2, diskOk: !disk.unavailable })) continue
        const f = await injector.run(kind)
        say(`  +${Math.round(f.at / 1000)}s ${f.kind}: served again after ${f.servedAgainMs ?? 'NEVER'} ms; ${f.detail}`)
        if (kind.startsWith('restart')) lastRestart = Date.now()
        if (kind === 'restart-sigkill') sigkilled = true
        await sleep(FAULT_GAP_MS)
      }
    }
    while (Date.now() < endAt) await sleep(200)
    stopped = true
    const ending = Date.now()
    await Promise.race([Promise.all(running), new Promise((resolve) => setTimeout(resolve, 30_000).unref())])
    clearInterval(sampler)
    loadPerMinute.push(loadavg()[0] ?? 0)
    const agentsEnded = Date.now() - ending
    await stack.sidecar.stop('SIGTERM')
    for (const p of proxies) await p.close()
    say(`ended: the agents' last calls took ${agentsEnded} ms, the sidecar's drain ${Date.now() - ending - agentsEnded} ms`)

    const windows = injector.done.filter((f) => f.window).map((f) => [(f.window as [number, number])[0], (f.window as [number, number])[1] + 2000] as [number, number])
    const checking = Date.now()
    const audit = await checkAudit(disk.hostPath, ledger, windows, sidecars.reduce((n, s) => n + s.news.auditUnwrittenAtStop, 0))
    say(`audit log read in ${Date.now() - checking} ms`)
    const workerExits: Record<string, number> = {}
    for (const s of sidecars) for (const e of s.news.workerExits) workerExits[e.reason] = (workerExits[e.reason] ?? 0) + 1
    const { json, summary, checks } = report({
      minutes: MINUTES,
      config: {
        grpcAgents: GRPC_AGENTS,
        httpAgents: HTTP_AGENTS,
        thinkMs: THINK_MS,
        faultGapMs: FAULT_GAP_MS,
        restartEveryMs: RESTART_EVERY_MS,
        tenants: TENANTS,
        cores: availableParallelism(),
        soakEventLoopP99Ms: Math.round(loop.percentile(99) / 1e4) / 100,
        sidecarNews: sidecars.map((s) => ({ pid: s.pid, auditLines: s.news.auditLines.slice(0, 20), other: s.news.other.slice(0, 20) })),
      },
      ledger,
      faults: injector.done,
      samples,
      audit,
      workerExits,
      restarts,
      hostErrors: [...grpcAgents.flatMap((a) => a.errors), ...httpAgents.flatMap((a) => a.errors)],
      diskUnavailable: disk.unavailable,
      warmupMs: WARMUP_MS,
      judgeSlopesAfterMs: 10 * 60_000,
      loadPerMinute,
    })
    await mkdir(dirname(OUT), { recursive: true })
    await writeFile(OUT, `${JSON.stringify(json, null, 2)}\n`)
    say(summary)
    say(`wrote ${OUT}`)
    const failed = checks.filter((c) => !c.ok)
    if (failed.length) say(`soak FAILED: ${failed.map((c) => c.name).join('; ')}`)
    return failed.length ? 1 : 0
  } finally {
    loop.disable()
    await disk.close()
    await rm(dir, { recursive: true, force: true })
  }

  /** Whether `kind` comes now: one SIGKILL restart per run (past half of a long run), restarts spaced out. */
  function wanted(kind: FaultKind, s: { sigkilled: boolean; lastRestart: number; half: boolean; diskOk: boolean }): boolean {
    if (kind === 'fill-disk') return s.diskOk
    if (!kind.startsWith('restart')) return true
    if (RESTART_EVERY_MS && s.lastRestart && Date.now() - s.lastRestart < RESTART_EVERY_MS) return false
    if (kind === 'restart-sigkill') return !s.sigkilled && (SHORT || s.half)
    // Past half of a long run, the next restart is the SIGKILL one.
    return SHORT || s.sigkilled || !s.half
  }
}

process.exitCode = await main()
