/**
 * What the second wall costs (src/sidecar/worker/pool/walls.ts): a worker's start (spawn to ready) and a
 * sequential invocation's latency (calls 5 ms apart, as an agent's hook points come), with every wall
 * this machine allows and with walls switched off, measured in alternating rounds of the same run on the
 * built workers (so the permission model is on).
 */
import { ROOT } from '../test/support/processes.js'
import type { InvocationRequest } from '../src/sidecar/runners/hook-runner.js'
import type { WorkerPool as Pool, PoolOptions } from '../src/sidecar/worker/pool/worker-pool.js'
import { DEFAULT_LIMITS } from '../src/sidecar/limits.js'

export interface WallsResult {
  walls: string[]
  start_ms: { walls: number; none: number; ratio: number }
  invoke_us: { walls: number; none: number; ratio: number }
  worker_rss_mb: { walls: number; none: number }
}

const SOURCE = `module.exports = { beforeToolExecute(ctx, call) { return { arguments: { ...call.arguments, checked: true } } } }`

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? 0
}

function request(i: number): InvocationRequest {
  return {
    hook: { name: 'bench', version: 'v1', filename: 'bench/index.js', source: SOURCE },
    point: 'beforeToolExecute',
    args: [{ id: `c${i}`, name: 'shell', arguments: { command: 'ls' } }],
    ctx: {
      workdir: '/',
      session: { id: 'bench', interactive: false, autoApprove: false },
      agent: { id: 'bench', modelId: 'none' },
      config: {},
      system: { platform: 'linux', arch: 'x64', hookdVersion: 'bench' },
      env: {},
      hook: { name: 'bench', version: 'v1', point: 'beforeToolExecute' },
    },
    limits: DEFAULT_LIMITS,
    onCapability: async () => ({ ok: true, value: null }),
    onLog: () => {},
  }
}

async function rssMb(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises')
  const line = (await readFile(`/proc/${pid}/status`, 'utf8')).split('\n').find((l) => l.startsWith('VmRSS:'))
  return Math.round(Number(/(\d+)/.exec(line ?? '')?.[1] ?? 0) / 1024)
}

export async function wallsBench(smoke: boolean): Promise<WallsResult> {
  // The built pool: its workers run from dist, with Node's permission model (from source it is off).
  const { WorkerPool } = (await import(`${ROOT}/dist/sidecar/worker/pool/worker-pool.js`)) as { WorkerPool: new (o: PoolOptions) => Pool }
  const rounds = smoke ? 1 : 7
  const calls = smoke ? 20 : 300
  const samples = { walls: { start: [] as number[], invoke: [] as number[], rss: [] as number[] }, none: { start: [] as number[], invoke: [] as number[], rss: [] as number[] } }
  let lines: string[] = []
  for (let round = 0; round < rounds; round++) {
    for (const mode of round % 2 ? (['none', 'walls'] as const) : (['walls', 'none'] as const)) {
      const pool = new WorkerPool({ size: 1, walls: { enabled: mode === 'walls' } })
      const started = performance.now()
      await pool.start()
      samples[mode].start.push(performance.now() - started)
      if (mode === 'walls') lines = pool.wallLines()
      for (let i = 0; i < 20; i++) await pool.invoke(request(i))
      const times: number[] = []
      for (let i = 0; i < calls; i++) {
        await new Promise((resolve) => setTimeout(resolve, 5))
        const t = performance.now()
        const report = await pool.invoke(request(i))
        times.push((performance.now() - t) * 1000)
        if (!report.outcome.ok) throw new Error(`bench invocation failed: ${JSON.stringify(report.outcome)}`)
      }
      samples[mode].invoke.push(median(times))
      const [pid] = pool.pids()
      if (pid !== undefined) samples[mode].rss.push(await rssMb(pid))
      await pool.close()
    }
  }
  const ratio = (a: number, b: number): number => Math.round((a / (b || 1)) * 100) / 100
  const start = { walls: Math.round(median(samples.walls.start)), none: Math.round(median(samples.none.start)) }
  const invoke = { walls: Math.round(median(samples.walls.invoke)), none: Math.round(median(samples.none.invoke)) }
  return {
    walls: lines,
    start_ms: { ...start, ratio: ratio(start.walls, start.none) },
    invoke_us: { ...invoke, ratio: ratio(invoke.walls, invoke.none) },
    worker_rss_mb: { walls: median(samples.walls.rss), none: median(samples.none.rss) },
  }
}

export function wallsRows(r: WallsResult | undefined): Array<[string, string]> {
  if (!r) return []
  return [
    ['worker start, walls / none (median ms)', `${r.start_ms.walls} / ${r.start_ms.none} (${r.start_ms.ratio}x)`],
    ['invocation, walls / none (median us)', `${r.invoke_us.walls} / ${r.invoke_us.none} (${r.invoke_us.ratio}x)`],
    ['worker RSS, walls / none (MB)', `${r.worker_rss_mb.walls} / ${r.worker_rss_mb.none}`],
  ]
}
