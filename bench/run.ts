/**
 * hookd's benchmarks, with every baseline measured in the same run so that ratios hold on a noisy
 * machine. Prints a table and writes bench/out/results.json. `BENCH_SMOKE=1` runs a tiny version that
 * only proves the benchmark still works (it is part of `make test`; nothing asserts a speed).
 *
 *   make bench                # full run (with the real Claude Code: bench/agents.ts, BENCH_AGENTS=0 skips it)
 *   make bench BENCH_SMOKE=1  # smoke run
 */
import { type ChildProcess, fork, spawn } from 'node:child_process'
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { availableParallelism, tmpdir } from 'node:os'
import { join } from 'node:path'
import * as grpc from '@grpc/grpc-js'
import { createHooks } from 'hookable'
import { HookdClient, bridgeHookable } from '../src/host/index.js'
import { ROOT, startServe, stopProcess } from '../test/support/processes.js'
import { ECHO_SERVICE } from './echo-floor.js'
import { conditionsBench } from './agent-conditions.js'
import { agentRows, agentsBench, agentsWanted } from './agents.js'
import { shimBench, shimRows } from './shim.js'
import { type WallsResult, wallsBench, wallsRows } from './walls.js'
import { type ObservabilityResult, observabilityBench, observabilityRows } from './observability.js'

const SMOKE = process.env.BENCH_SMOKE === '1'
const OUT = join(ROOT, 'bench', 'out')
const WORKERS = availableParallelism()
const PACE_MS = Number(process.env.BENCH_PACE_MS ?? 5)

const counts = SMOKE
  ? { latency: 40, warmup: 5, process: 3, sessions: 4, perSession: 10, floorMs: 300, rounds: 1, rssFirst: 60, rssSecond: 240, unsubscribed: 20_000 }
  : { latency: 2000, warmup: 200, process: 60, sessions: 16, perSession: 250, floorMs: 3000, rounds: 3, rssFirst: 1000, rssSecond: 20_000, unsubscribed: 1_000_000 }

const HOOK = `module.exports = {
  beforeToolExecute(ctx, call) {
    if (call.name === 'shell' && /\\brm\\s+-rf\\b/.test(call.arguments.command || '')) return { allow: false, reason: 'no' }
    return { arguments: { ...call.arguments, checked: (call.arguments.checked || 0) + 1 } }
  },
}
`

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return 0
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[i] as number
}

function summary(samplesUs: number[]): { p50: number; p99: number } {
  const sorted = [...samplesUs].sort((a, b) => a - b)
  return { p50: Math.round(percentile(sorted, 50) * 10) / 10, p99: Math.round(percentile(sorted, 99) * 10) / 10 }
}

function median(xs: number[]): number {
  return percentile([...xs].sort((a, b) => a - b), 50)
}

async function time<T>(fn: () => Promise<T>): Promise<number> {
  const start = process.hrtime.bigint()
  await fn()
  return Number(process.hrtime.bigint() - start) / 1000
}

/** Latency of `once`: `counts.warmup` calls not counted, then `counts.latency` calls `paceMs` apart. */
async function paced(once: () => Promise<unknown>, paceMs: number): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < counts.warmup; i++) await once()
  const samples: number[] = []
  for (let i = 0; i < counts.latency; i++) {
    if (paceMs) await new Promise((r) => setTimeout(r, paceMs))
    samples.push(await time(once))
  }
  return summary(samples)
}

/** Starts `hookd serve` as its own process, as a host would run it. */
async function serve(hooks: string, address: string): Promise<ChildProcess> {
  // The built command (make bench and make test build it first).
  return (await startServe(['--hooks', hooks, '--listen', address])).child
}

/** Resident memory of a process and all its descendants, in MB (Linux /proc). */
async function treeRssMb(pid: number): Promise<number> {
  let kb = 0
  const visit = async (p: number): Promise<void> => {
    try {
      const status = await readFile(`/proc/${p}/status`, 'utf8')
      kb += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
      for (const task of await readdir(`/proc/${p}/task`)) {
        const children = (await readFile(`/proc/${p}/task/${task}/children`, 'utf8')).trim()
        for (const c of children ? children.split(/\s+/) : []) await visit(Number(c))
      }
    } catch {
      // The process ended while we looked.
    }
  }
  await visit(pid)
  return Math.round((kb / 1024) * 10) / 10
}

/**
 * The tree's resident memory once a burst is over: the median of 5 readings 100 ms apart, after 200 ms
 * of quiet. A single reading moves by 10-20 % with where each process's garbage collector happens to
 * be (measured: a worker's heapUsed swings between ~11 and ~35 MB under load).
 */
async function settledRssMb(pid: number): Promise<number> {
  await new Promise((r) => setTimeout(r, 200))
  const readings: number[] = []
  for (let i = 0; i < 5; i++) {
    readings.push(await treeRssMb(pid))
    await new Promise((r) => setTimeout(r, 100))
  }
  return median(readings)
}

const call = { id: 'c1', name: 'shell', arguments: { command: 'ls -la' } }

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'hookd-bench-'))
  const hooks = join(dir, 'hooks')
  for (const name of ['one', 'two', 'three']) {
    await mkdir(join(hooks, name), { recursive: true })
    await writeFile(join(hooks, name, 'index.js'), HOOK)
  }
  const address = `unix:${join(dir, 'hookd.sock')}`
  const sidecar = await serve(hooks, address)
  const results: Record<string, unknown> = { smoke: SMOKE, cores: WORKERS, node: process.version, when: new Date().toISOString() }
  try {
    const client = await HookdClient.connect(address)

    // Latency, one session, sequential calls, end to end from the host library. An agent's hook points
    // come between model turns and tool runs, so calls are paced (PACE_MS apart, not counted); the
    // back-to-back figures show the same calls with no pause at all, where every invocation also pays
    // for creating its isolate (that sustained cost is what the throughput figures measure).
    const latency = async (names: string[], paceMs: number): Promise<{ p50: number; p99: number }> => {
      const session = await client.openSession({ sessionId: `lat-${names.length}-${paceMs}`, hooks: names })
      const measured = await paced(() => session.call('beforeToolExecute', call), paceMs)
      session.abandon()
      return measured
    }
    const oneHook = await latency(['one'], PACE_MS)
    const threeHooks = await latency(['one', 'two', 'three'], PACE_MS)
    const oneHookBackToBack = await latency(['one'], 0)

    // The same hook function, in-process through hookable: no isolation at all.
    const require = createRequire(import.meta.url)
    const hookFile = join(hooks, 'one', 'index.js')
    const mod = require(hookFile) as { beforeToolExecute(ctx: unknown, c: typeof call): unknown }
    const inproc = createHooks<Record<string, (c: Record<string, unknown>) => void | Promise<void>>>()
    inproc.hook('tool:gate', (c) => void mod.beforeToolExecute({}, c as typeof call))
    for (let i = 0; i < counts.warmup; i++) await inproc.callHook('tool:gate', { ...call })
    const inprocSamples: number[] = []
    for (let i = 0; i < counts.latency; i++) inprocSamples.push(await time(async () => inproc.callHook('tool:gate', { ...call })))

    // A new node process per call, JSON on stdin/stdout.
    const runner = join(ROOT, 'bench', 'process-hook-runner.cjs')
    const processSamples: number[] = []
    for (let i = 0; i < counts.process; i++) {
      processSamples.push(
        await time(
          () =>
            new Promise<void>((resolve, reject) => {
              const child = spawn(process.execPath, [runner, hookFile], { stdio: ['pipe', 'pipe', 'inherit'] })
              child.stdout.resume()
              child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`hook process exited ${code}`))))
              child.stdin.end(JSON.stringify(call))
            }),
        ),
      )
    }

    // Throughput: many concurrent sessions, every invocation in a fresh isolate, against the floor:
    // isolate + context + compile + run + dispose in a tight loop, no gRPC, same parallelism. The two
    // alternate for `rounds` rounds, each round's ratio taken from runs seconds apart, so that a
    // change in the machine's speed during the run moves both sides of a ratio alike.
    const sessions = await Promise.all(
      Array.from({ length: counts.sessions }, (_, i) => client.openSession({ sessionId: `tp-${i}`, hooks: ['one'] })),
    )
    const rounds: Array<{ hookd: number; floor: number; ratio: number }> = []
    for (let round = 0; round < counts.rounds; round++) {
      const tpStart = process.hrtime.bigint()
      await Promise.all(sessions.map(async (s) => {
        for (let i = 0; i < counts.perSession; i++) await s.call('beforeToolExecute', call)
      }))
      const tpSeconds = Number(process.hrtime.bigint() - tpStart) / 1e9
      const hookd = Math.round((counts.sessions * counts.perSession) / tpSeconds)
      const floor = await rawIsolateFloor(hookFile)
      rounds.push({ hookd, floor, ratio: Math.round((hookd / floor) * 100) / 100 })
    }
    for (const s of sessions) s.abandon()

    // The latency floors of the two process boundaries, paced like hookd's calls.
    const echo = await echoFloors(dir, PACE_MS)

    // Memory after many invocations.
    const rssSession = await client.openSession({ sessionId: 'rss', hooks: ['one'] })
    const burst = async (n: number): Promise<void> => {
      let left = n
      await Promise.all(Array.from({ length: 8 }, async () => {
        while (left-- > 0) await rssSession.call('beforeToolExecute', call)
      }))
    }
    await burst(counts.rssFirst)
    const rssFirst = await settledRssMb(sidecar.pid as number)
    await burst(counts.rssSecond - counts.rssFirst)
    const rssSecond = await settledRssMb(sidecar.pid as number)
    rssSession.abandon()

    // Host-side cost of a point nobody subscribed to: the bridge registers nothing for it.
    const bridged = createHooks<Record<string, (c: Record<string, unknown>) => void | Promise<void>>>()
    bridgeHookable(bridged, { call: () => Promise.reject(new Error('not subscribed')), subscribedPoints: () => new Set(['tool:gate']) })
    const ctx = { delta: 'a', text: 'a' }
    const unStart = process.hrtime.bigint()
    for (let i = 0; i < counts.unsubscribed; i++) {
      // hookable answers synchronously when a point has no handler; await only what it returns.
      const pending = bridged.callHook('stream:text', ctx)
      if (pending) await pending
    }
    const unsubscribedNs = Math.round(Number(process.hrtime.bigint() - unStart) / counts.unsubscribed)

    client.close()
    Object.assign(results, {
      latency_us: {
        hookd_1hook: oneHook,
        hookd_3hooks: threeHooks,
        hookd_1hook_back_to_back: oneHookBackToBack,
        grpc_echo: echo.grpc,
        ipc_echo: echo.ipc,
        inprocess_hookable: summary(inprocSamples),
        process_per_hook: summary(processSamples),
      },
      throughput_per_s: { hookd: median(rounds.map((r) => r.hookd)), raw_isolate_floor: median(rounds.map((r) => r.floor)) },
      throughput_ratio: median(rounds.map((r) => r.ratio)),
      throughput_rounds: rounds,
      unsubscribed_point_ns: unsubscribedNs,
      rss_mb: { after_1k: rssFirst, after_20k: rssSecond },
      counts,
      pace_ms: PACE_MS,
    })
  } finally {
    await stopProcess(sidecar)
    await rm(dir, { recursive: true, force: true })
  }

  // What the second wall around the workers costs (bench/walls.ts).
  results.walls = await wallsBench(SMOKE)

  // What metrics, traces (and tracing configured but sampled off) and the operator log cost a point call (bench/observability.ts).
  results.observability = await observabilityBench(SMOKE, PACE_MS)

  // What the command agents' shim adds to a hook call (bench/shim.ts), then the real Claude Code CLI
  // with and without hooks (bench/agents.ts): its own switch, BENCH_AGENTS.
  // And what hook.json "tools" saves it when no hook cares about the tool called (bench/agent-conditions.ts).
  results.agents = {
    ...(await shimBench(SMOKE)),
    ...(agentsWanted(SMOKE) ? await agentsBench(SMOKE) : {}),
    ...(agentsWanted(SMOKE) ? await conditionsBench({ n: SMOKE ? 2 : 20, rounds: SMOKE ? 1 : 3, log: (line) => process.stderr.write(`bench conditions: ${line}\n`) }) : {}),
  }

  await mkdir(OUT, { recursive: true })
  await writeFile(join(OUT, 'results.json'), `${JSON.stringify(results, null, 2)}\n`)
  print(results)
}

/** Runs the raw isolate loop in one process per core, with the same total concurrency as the throughput run. */
async function rawIsolateFloor(hookFile: string): Promise<number> {
  const script = join(ROOT, 'bench', 'raw-isolate-floor.ts')
  const perProcess = Math.max(1, Math.ceil(counts.sessions / WORKERS))
  const runs = await Promise.all(
    Array.from({ length: WORKERS }, () => new Promise<number>((resolve, reject) => {
      const child = fork(script, [hookFile, String(counts.floorMs), String(perProcess)], {
        execArgv: ['--no-node-snapshot', '--import', import.meta.resolve('tsx')],
      })
      child.on('message', (m) => resolve(Number((m as { opsPerSecond: number }).opsPerSecond)))
      child.on('exit', (code) => (code === 0 ? undefined : reject(new Error(`floor process exited ${code}`))))
    })),
  )
  return Math.round(runs.reduce((a, b) => a + b, 0))
}

/**
 * Bare round trips through the two process boundaries a hook call crosses (bench/echo-floor.ts): a
 * grpc-js bidirectional stream on a Unix socket and Node IPC, each to a process that only echoes, with
 * the same pacing and counts as hookd's latency runs.
 */
async function echoFloors(dir: string, paceMs: number): Promise<{ grpc: { p50: number; p99: number }; ipc: { p50: number; p99: number } }> {
  const address = `unix:${join(dir, 'echo.sock')}`
  const child = fork(join(ROOT, 'bench', 'echo-floor.ts'), [address], { execArgv: ['--import', import.meta.resolve('tsx')] })
  try {
    await new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve())
      child.once('exit', (code) => reject(new Error(`echo floor process exited ${code}`)))
    })
    const EchoClient = grpc.makeGenericClientConstructor(ECHO_SERVICE, 'Echo')
    const echoClient = new EchoClient(address, grpc.credentials.createInsecure())
    const stream = (echoClient as unknown as { Echo(): grpc.ClientDuplexStream<Buffer, Buffer> }).Echo()
    let answered: () => void = () => {}
    stream.on('data', () => answered())
    const frame = Buffer.from(JSON.stringify(call))
    const viaGrpc = (): Promise<void> => new Promise((resolve) => {
      answered = resolve
      stream.write(frame)
    })
    const viaIpc = (): Promise<void> => new Promise((resolve) => {
      child.once('message', () => resolve())
      child.send(call)
    })
    const grpcEcho = await paced(viaGrpc, paceMs)
    const ipcEcho = await paced(viaIpc, paceMs)
    await new Promise<void>((resolve) => {
      stream.on('end', resolve)
      stream.on('error', () => resolve())
      stream.resume()
      stream.end()
    })
    echoClient.close()
    return { grpc: grpcEcho, ipc: ipcEcho }
  } finally {
    child.disconnect()
  }
}

function print(r: Record<string, unknown>): void {
  const lat = r.latency_us as Record<string, { p50: number; p99: number }>
  const tp = r.throughput_per_s as Record<string, number>
  const rss = r.rss_mb as Record<string, number>
  const rows: Array<[string, string]> = [
    [`hookd, 1 hook, calls ${r.pace_ms} ms apart (p50 / p99 us)`, `${lat.hookd_1hook?.p50} / ${lat.hookd_1hook?.p99}`],
    [`hookd, 3 hooks, calls ${r.pace_ms} ms apart (p50 / p99 us)`, `${lat.hookd_3hooks?.p50} / ${lat.hookd_3hooks?.p99}`],
    ['hookd, 1 hook, back to back (p50 / p99 us)', `${lat.hookd_1hook_back_to_back?.p50} / ${lat.hookd_1hook_back_to_back?.p99}`],
    [`bare gRPC stream echo, ${r.pace_ms} ms apart (p50 / p99 us)`, `${lat.grpc_echo?.p50} / ${lat.grpc_echo?.p99}`],
    [`bare Node IPC echo, ${r.pace_ms} ms apart (p50 / p99 us)`, `${lat.ipc_echo?.p50} / ${lat.ipc_echo?.p99}`],
    ['in-process hookable (p50 / p99 us)', `${lat.inprocess_hookable?.p50} / ${lat.inprocess_hookable?.p99}`],
    ['process per hook (p50 / p99 us)', `${lat.process_per_hook?.p50} / ${lat.process_per_hook?.p99}`],
    ['process per hook / hookd p50', `${((lat.process_per_hook?.p50 ?? 0) / (lat.hookd_1hook?.p50 || 1)).toFixed(1)}x`],
    ['hookd throughput (invocations/s)', `${tp.hookd}`],
    ['raw isolate floor (invocations/s)', `${tp.raw_isolate_floor}`],
    ['hookd / floor (median of rounds)', `${r.throughput_ratio} (${(r.throughput_rounds as Array<{ ratio: number }>).map((x) => x.ratio).join(', ')})`],
    ['unsubscribed point (ns)', `${r.unsubscribed_point_ns}`],
    ['sidecar RSS after 1k / 20k (MB)', `${rss.after_1k} / ${rss.after_20k}`],
    ...wallsRows(r.walls as WallsResult | undefined),
    ...shimRows(r.agents as Record<string, unknown> | undefined),
    ...observabilityRows(r.observability as ObservabilityResult | undefined),
    ...agentRows(r.agents as Record<string, unknown> | undefined),
  ]
  const width = Math.max(...rows.map(([k]) => k.length))
  process.stdout.write(`hookd bench${r.smoke ? ' (smoke: counts too small to mean anything)' : ''}\n`)
  for (const [k, v] of rows) process.stdout.write(`  ${k.padEnd(width)}  ${v}\n`)
  process.stdout.write(`  -> ${join('bench', 'out', 'results.json')}\n`)
}

await main()
