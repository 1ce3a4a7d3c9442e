/**
 * Fairness between tenants: tenant B's latency for ordinary sequential point calls, alone and while
 * tenant A floods the same sidecar, against `hookd serve --tenants` in its own process (as a host runs
 * it). The flood comes from a separate process, so that B's client does not share an event loop with it.
 *
 *   npx tsx bench/tenants.ts                 # 400 calls per phase
 *   BENCH_SMOKE=1 npx tsx bench/tenants.ts   # 40 per phase, only proves the benchmark works
 *   BENCH_SLOTS=4 npx tsx bench/tenants.ts   # phase 2 with another --slots
 *
 * Phases: (1) B alone; (2) B while A keeps FLOOD calls in flight, each burning ~BUSY_MS of CPU in its
 * hook, with the fair queue on (the default: one slot per worker); (3) the same flood with the fair queue
 * effectively off (--slots 100000), for context. Printed: B's p50 and p99 per phase, and the ratios to
 * the baseline. Nothing here asserts a speed.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { HookdClient } from '../src/host/index.js'
import { hashToken, newToken } from '../src/sidecar/tenancy/tenant-token.js'
import { ROOT, startServe, stopProcess } from '../test/support/processes.js'

const SMOKE = process.env.BENCH_SMOKE === '1'
const CALLS = SMOKE ? 40 : 400
const WARMUP = SMOKE ? 5 : 30
const FLOOD = 32
const BUSY_MS = 5
const WORKERS = 2
const CALL = { id: 'c1', name: 'shell', arguments: { command: 'ls' } }

function percentile(sorted: number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[i] ?? 0
}

const round = (n: number): number => Math.round(n * 100) / 100

// ------------------------------------------------------------------------------------------------
// The flood: `tsx bench/tenants.ts flood ADDRESS TOKEN`, run as a child process until killed.
// ------------------------------------------------------------------------------------------------

async function flood(address: string, token: string): Promise<void> {
  const client = await HookdClient.connect(address, { token })
  const session = await client.openSession({ sessionId: 'flood', hooks: ['busy'] })
  let done = 0
  let refused = 0
  const lane = async (): Promise<void> => {
    for (;;) {
      const out = await session.call('beforeToolExecute', CALL)
      if (out.diagnostics.some((d) => d.kind === 'quota')) refused += 1
      done += 1
    }
  }
  for (let i = 0; i < FLOOD; i++) void lane()
  process.on('SIGTERM', () => {
    process.stdout.write(`${JSON.stringify({ done, refused })}\n`)
    process.exit(0)
  })
  process.send?.('flooding')
}

// ------------------------------------------------------------------------------------------------
// The measurement.
// ------------------------------------------------------------------------------------------------

function startFlood(address: string, token: string): Promise<{ child: ChildProcess; stop(): Promise<{ done: number; refused: number }> }> {
  const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), join(ROOT, 'bench', 'tenants.ts'), 'flood', address, token], {
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  })
  let out = ''
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()))
  return new Promise((resolve, reject) => {
    child.once('message', () =>
      resolve({
        child,
        stop: () =>
          new Promise((done) => {
            child.once('exit', () => done(JSON.parse(out.trim() || '{"done":0,"refused":0}') as { done: number; refused: number }))
            child.kill('SIGTERM')
          }),
      }),
    )
    child.once('exit', (code) => reject(new Error(`the flood exited early (${code})`)))
  })
}

/** B's sequential calls on one session; returns the latencies in ms. */
async function sequential(client: HookdClient, n: number): Promise<number[]> {
  const session = await client.openSession({ sessionId: `steady-${Date.now()}`, hooks: ['plain'] })
  for (let i = 0; i < WARMUP; i++) await session.call('beforeToolExecute', CALL)
  const samples: number[] = []
  for (let i = 0; i < n; i++) {
    const t0 = performance.now()
    await session.call('beforeToolExecute', CALL)
    samples.push(performance.now() - t0)
  }
  await session.close()
  return samples.sort((a, b) => a - b)
}

interface Phase {
  name: string
  p50: number
  p99: number
  flood?: { done: number; refused: number; seconds: number }
}

async function phases(dir: string, file: string, tokens: { a: string; b: string }, slots: string[], withBaseline: boolean): Promise<Phase[]> {
  const address = `unix:${join(dir, `hookd-${slots.join('')}.sock`)}`
  const { child: sidecar } = await startServe(['--tenants', file, '--listen', address, '--workers', String(WORKERS), ...slots])
  const out: Phase[] = []
  try {
    const b = await HookdClient.connect(address, { token: tokens.b })
    if (withBaseline) {
      const alone = await sequential(b, CALLS)
      out.push({ name: 'B alone', p50: percentile(alone, 50), p99: percentile(alone, 99) })
    }
    const a = await startFlood(address, tokens.a)
    const t0 = performance.now()
    const loaded = await sequential(b, CALLS)
    const seconds = (performance.now() - t0) / 1000
    const flooded = await a.stop()
    out.push({
      name: slots[1] === '100000' ? 'B while A floods, fair queue off' : 'B while A floods (fair queue)',
      p50: percentile(loaded, 50),
      p99: percentile(loaded, 99),
      flood: { ...flooded, seconds },
    })
    b.close()
  } finally {
    await stopProcess(sidecar)
  }
  return out
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'hookd-bench-tenants-'))
  try {
    const tokens = { a: newToken(), b: newToken() }
    await mkdir(join(dir, 'a', 'busy'), { recursive: true })
    await mkdir(join(dir, 'b', 'plain'), { recursive: true })
    await writeFile(
      join(dir, 'a', 'busy', 'index.js'),
      `module.exports = { beforeToolExecute(ctx, call) { const end = Date.now() + ${BUSY_MS}; while (Date.now() < end) {} } }\n`,
    )
    await writeFile(join(dir, 'b', 'plain', 'index.js'), `module.exports = { beforeToolExecute(ctx, call) { return { arguments: { seen: true } } } }\n`)
    const file = join(dir, 'tenants.json')
    await writeFile(
      file,
      JSON.stringify({
        tenants: [
          { id: 'a', tokenHash: hashToken(tokens.a), hooks: 'a', limits: { concurrentInvocations: 1000 } },
          { id: 'b', tokenHash: hashToken(tokens.b), hooks: 'b' },
        ],
      }),
    )
    const fair = process.env.BENCH_SLOTS ? ['--slots', process.env.BENCH_SLOTS] : []
    const results = [...(await phases(dir, file, tokens, fair, true)), ...(await phases(dir, file, tokens, ['--slots', '100000'], false))]
    const base = results[0] as Phase
    process.stdout.write(
      `tenant B: ${CALLS} sequential beforeToolExecute calls per phase (one trivial hook); tenant A: ${FLOOD} calls in flight, each hook burning ~${BUSY_MS} ms CPU; ${WORKERS} workers\n\n`,
    )
    const width = Math.max(...results.map((r) => r.name.length))
    process.stdout.write(`${'phase'.padEnd(width)}  ${'p50 ms'.padStart(7)}  ${'p99 ms'.padStart(7)}  ${'p99 ratio'.padStart(9)}  A calls/s\n`)
    for (const r of results) {
      const ratio = r === base ? '1.00' : (r.p99 / base.p99).toFixed(2)
      const rate = r.flood ? String(Math.round(r.flood.done / r.flood.seconds)) : '-'
      process.stdout.write(`${r.name.padEnd(width)}  ${String(round(r.p50)).padStart(7)}  ${String(round(r.p99)).padStart(7)}  ${ratio.padStart(9)}  ${rate}\n`)
    }
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

if (process.argv[2] === 'flood') await flood(process.argv[3] as string, process.argv[4] as string)
else await main()
