/**
 * The soak's fault injector: one fault at a time, on a schedule, each followed by a wait until every
 * tenant is served as usual again on both transports (Ledger.servedAgain), which is the figure it
 * records. The faults, in the order of each cycle:
 *
 *   kill-running-worker   SIGKILL the worker using the most CPU now (SPIN calls keep one mid-chain)
 *   edit-hook             save a new rewriter generation (hot reload); its reload latency is recorded
 *   drop-connections      cut half of the gRPC hosts' connections and abort half of the agents' posts
 *   kill-parked-workers   while calls wait on their host's confirm, SIGKILL every worker
 *   break-hook            save a rewriter that does not load, then fix it (the last good one serves)
 *   stop-worker           SIGSTOP a busy worker until the pool kills it as hung (or SIGCONT, if it does not)
 *   fill-disk             fill the audit log's file system, hold it full, free it
 *   restart-sigterm       SIGTERM (drain), start a new sidecar; hosts and agents reconnect
 *   restart-sigkill       once per run: SIGKILL, start a new sidecar
 *
 * Restarts come at most every `restartEveryMs` in a long run, so that memory can be read for a while
 * between them.
 */
import type { AuditDisk } from './audit-disk.js'
import type { Generations } from './expect.js'
import { type GrpcAgent, sleep } from './grpc-agent.js'
import { BREAKS, GRPC_CHAIN, HANG_GRACE_MS, type SoakTenant, WALL_MS, brokenRewriter, rewriterSource, saveRewriter } from './hooks.js'
import type { HttpAgent } from './http-agent.js'
import type { Ledger } from './ledger.js'
import { busiestWorker, workersOf } from './proc.js'
import type { SidecarProcess } from './sidecar-process.js'

export const FAULTS = [
  'kill-running-worker',
  'edit-hook',
  'drop-connections',
  'kill-parked-workers',
  'break-hook',
  'stop-worker',
  'fill-disk',
  'restart-sigterm',
  'restart-sigkill',
] as const
export type FaultKind = (typeof FAULTS)[number]

/**
 * How long a stopped worker can hold its calls: the pool kills a worker whose chain runs past its steps'
 * wall-time limits plus the hang grace (worker-pool.ts), so a 4-hook chain, 4 × 2 s + 5 s.
 */
const HUNG_CHAIN_MS = GRPC_CHAIN.length * WALL_MS + HANG_GRACE_MS

/**
 * How soon every tenant must be served again after each fault (docs/operations.md, "What hookd
 * survives"): a worker's replacement and a rerun take a few seconds on a loaded machine, a restart a
 * few more (the 30-minute run's worst: 2.8 s after killing every worker, 13.2 s after a stop, 4.5 s
 * after a restart).
 */
export const SERVED_AGAIN_BOUND_MS: Record<FaultKind, number> = {
  'kill-running-worker': 10_000,
  'edit-hook': 10_000,
  'drop-connections': 10_000,
  'kill-parked-workers': 10_000,
  'break-hook': 10_000,
  'stop-worker': HUNG_CHAIN_MS + 4000,
  'fill-disk': 10_000,
  'restart-sigterm': 30_000,
  'restart-sigkill': 30_000,
}

export interface FaultRecord {
  kind: FaultKind
  /** ms since the soak began. */
  at: number
  detail: string
  /** How long the fault itself lasted (a worker stopped until the pool killed it, the disk full, a restart until the new sidecar listened). */
  durationMs: number
  /** From the fault's start until every tenant was served as usual on both transports by calls started after it. */
  servedAgainMs: number | undefined
  /** Hot reload: from the save to the first answer of the new generation. */
  reloadMs?: number[]
  /** The full disk's window, in ms since the soak began. */
  window?: [number, number]
}

export interface Stack {
  readonly sidecar: SidecarProcess
  restart(signal: NodeJS.Signals): Promise<{ exit: string; stoppedMs: number; listeningMs: number }>
}

export interface FaultDeps {
  t0: number
  stack: Stack
  disk: AuditDisk
  ledger: Ledger
  gens: Generations
  tenants: SoakTenant[]
  grpcAgents: GrpcAgent[]
  httpAgents: HttpAgent[]
  parked: { now: number }
}

export class FaultInjector {
  readonly done: FaultRecord[] = []
  private nextEdit = 0
  private saves = 0

  constructor(private readonly deps: FaultDeps) {}

  /** Runs one fault and waits until service is back (or its bound has passed twice over). */
  async run(kind: FaultKind): Promise<FaultRecord> {
    const start = Date.now()
    const record: FaultRecord = { kind, at: start - this.deps.t0, detail: '', durationMs: 0, servedAgainMs: undefined }
    const served = this.deps.ledger.servedAgain(start, SERVED_AGAIN_BOUND_MS[kind] * 2)
    try {
      await this.inject(kind, record)
    } catch (err) {
      record.detail = `${record.detail} (the fault failed: ${String(err)})`
    }
    record.durationMs ||= Date.now() - start
    const at = await served
    record.servedAgainMs = at === undefined ? undefined : at - start
    this.done.push(record)
    return record
  }

  private async inject(kind: FaultKind, r: FaultRecord): Promise<void> {
    const sidecar = this.deps.stack.sidecar.pid
    switch (kind) {
      case 'kill-running-worker': {
        const busy = await busiestWorker(sidecar)
        const victim = busy ?? (await workersOf(sidecar))[0]
        if (victim === undefined) throw new Error('no worker to kill')
        process.kill(victim, 'SIGKILL')
        r.detail = `SIGKILL worker ${victim} (${busy ? 'running a hook' : 'idle: none was running'})`
        return
      }
      case 'kill-parked-workers': {
        const until = Date.now() + 10_000
        while (this.deps.parked.now === 0 && Date.now() < until) await sleep(20)
        const parked = this.deps.parked.now
        const workers = await workersOf(sidecar)
        for (const pid of workers) process.kill(pid, 'SIGKILL')
        r.detail = `SIGKILL all ${workers.length} workers with ${parked} call(s) parked on their host's confirm`
        return
      }
      case 'stop-worker': {
        const victim = (await busiestWorker(sidecar)) ?? (await workersOf(sidecar))[0]
        if (victim === undefined) throw new Error('no worker to stop')
        const start = Date.now()
        process.kill(victim, 'SIGSTOP')
        const limit = start + HUNG_CHAIN_MS + 15_000
        while (alive(victim) && Date.now() < limit) await sleep(50)
        r.durationMs = Date.now() - start
        if (alive(victim)) {
          process.kill(victim, 'SIGCONT')
          r.detail = `SIGSTOP worker ${victim}: still there after ${r.durationMs} ms, sent SIGCONT`
        } else r.detail = `SIGSTOP worker ${victim}: the pool killed it after ${r.durationMs} ms`
        return
      }
      case 'edit-hook': {
        const tenant = this.tenant()
        r.reloadMs = [await this.save(tenant)]
        r.detail = `tenant ${tenant.id}: rewriter generation ${this.deps.gens.latest(tenant.id)}`
        return
      }
      case 'break-hook': {
        const tenant = this.tenant()
        const how = BREAKS[this.saves % BREAKS.length] as (typeof BREAKS)[number]
        const broken = this.deps.gens.latest(tenant.id) + 1
        this.deps.gens.write(tenant.id, broken, Date.now(), false)
        await saveRewriter(tenant, brokenRewriter(tenant.id, broken, how), this.saves++ % 2 === 0)
        await sleep(2500)
        r.reloadMs = [await this.save(tenant)]
        r.detail = `tenant ${tenant.id}: generation ${broken} broken (${how}) for 2.5 s, fixed by ${this.deps.gens.latest(tenant.id)}`
        return
      }
      case 'fill-disk': {
        const from = Date.now()
        const bytes = await this.deps.disk.fill()
        await sleep(5000)
        await this.deps.disk.free()
        r.durationMs = Date.now() - from
        r.window = [from - this.deps.t0, Date.now() - this.deps.t0]
        r.detail = `filled with ${Math.round(bytes / 1024)} KiB, full for ${r.durationMs} ms, then freed`
        return
      }
      case 'drop-connections': {
        const half = <T>(xs: T[]): T[] => xs.filter((_, i) => i % 2 === this.done.length % 2)
        const hosts = half(this.deps.grpcAgents)
        const grpc = hosts.reduce((n, a) => n + a.drop(), 0)
        const agents = half(this.deps.httpAgents)
        const http = agents.reduce((n, a) => n + a.drop(), 0)
        r.detail = `cut the connections of ${hosts.length} gRPC hosts with ${grpc} call(s) in flight, and ${http} front-door request(s) in flight of ${agents.length} agents`
        return
      }
      case 'restart-sigterm':
      case 'restart-sigkill': {
        const signal = kind === 'restart-sigterm' ? 'SIGTERM' : 'SIGKILL'
        const done = await this.deps.stack.restart(signal)
        r.durationMs = done.listeningMs
        r.detail = `${signal}: the old sidecar ended (${done.exit}) after ${done.stoppedMs} ms; the new one listened ${done.listeningMs} ms after the signal`
        return
      }
    }
  }

  /** Saves the next good generation of `tenant`'s rewriter; resolves with its reload latency (ms), or -1 if never seen. */
  private async save(tenant: SoakTenant): Promise<number> {
    const gen = this.deps.gens.latest(tenant.id) + 1
    // Known before the file changes: an answer may come from it as soon as it is saved.
    this.deps.gens.write(tenant.id, gen, Date.now(), true)
    await saveRewriter(tenant, rewriterSource(tenant.id, gen), this.saves++ % 2 === 0)
    const saved = Date.now()
    const until = saved + 10_000
    while (Date.now() < until) {
      const seen = this.deps.gens.firstSeenAt(tenant.id, gen)
      if (seen !== undefined) return seen - saved
      await sleep(10)
    }
    return -1
  }

  private tenant(): SoakTenant {
    return this.deps.tenants[this.nextEdit++ % this.deps.tenants.length] as SoakTenant
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
