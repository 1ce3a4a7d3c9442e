/**
 * Memory parked on the host holds its bound (docs/containment.md, "Memory parked on the host"): 80, then
 * 200, invocations that each fill ~40 MB and then wait on a host that holds its answer. The workers'
 * resident memory is read from /proc while they wait: its peak stays within --parked-mb plus the
 * documented overhead per worker, the calls past the bound get `limit` inside the hook (which catches
 * it), no worker dies, the sidecar keeps answering, and the memory returns once the host answers.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import type { PointCallResult } from '../../src/host/index.js'
import { type Running, sessionOptions } from '../support/sidecar.js'
import { CALL, expectServing, startHostile } from './support.js'

/** The defaults users get: --parked-mb 512, --memory-mb 64. */
const PARKED_MB = 512
const MEMORY_MB = 64
const WORKERS = 2
/** What each worker may grow by past --parked-mb while invocations are parked (docs/containment.md). */
const OVERHEAD_MB = 256
/** How close to its idle size a worker must come back once the host has answered. */
const RETURN_MB = 64

const REFUSAL = `ctx.confirm: invocations that wait on their host already hold ${PARKED_MB} MB in this sandbox worker, and at most ${PARKED_MB} MB may wait at once; try again when the host has answered`

let running: Running

beforeAll(async () => {
  running = await startHostile({
    only: ['parks-filled'],
    workers: WORKERS,
    limits: { memoryMb: MEMORY_MB, cpuMs: 5000, wallMs: 60_000 },
    confirmMs: 300_000,
  })
  await vi.waitFor(() => expect(running.sidecar.pool.pids()).toHaveLength(WORKERS), { timeout: 30_000 })
})

afterAll(async () => {
  await running?.stop()
})

async function status(pid: number, field: 'VmRSS' | 'VmHWM'): Promise<number> {
  const text = await readFile(`/proc/${pid}/status`, 'utf8')
  const kb = new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)?.[1]
  if (kb === undefined) throw new Error(`no ${field} in /proc/${pid}/status`)
  return Number(kb) / 1024
}

/**
 * The highest resident memory of each worker from now on: the kernel's own high-water mark (VmHWM,
 * reset through clear_refs), so that no peak between two reads is missed; where it cannot be reset, the
 * highest of reads every 20 ms.
 */
async function peakOf(pids: number[]): Promise<{ stop(): Promise<number[]> }> {
  const reset = await Promise.all(pids.map((pid) => writeFile(`/proc/${pid}/clear_refs`, '5').then(() => true, () => false)))
  const sampled = pids.map(() => 0)
  let sampling = true
  const sampler = (async () => {
    while (sampling) {
      const now = await Promise.all(pids.map((pid) => status(pid, 'VmRSS').catch(() => 0)))
      now.forEach((mb, i) => (sampled[i] = Math.max(sampled[i] as number, mb)))
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  })()
  return {
    async stop() {
      sampling = false
      await sampler
      return Promise.all(pids.map(async (pid, i) => Math.max(sampled[i] as number, reset[i] ? await status(pid, 'VmHWM').catch(() => 0) : 0)))
    },
  }
}

/** Runs the hook a few times with the host answering at once, so that every worker has compiled and warmed it. */
async function warmUp(): Promise<void> {
  const session = await running.client.openSession(sessionOptions(['parks-filled'], { interactive: true, capabilities: { confirm: async () => true } }))
  try {
    for (let i = 0; i < 4 * WORKERS; i++) await session.call('beforeToolExecute', CALL)
  } finally {
    session.abandon()
  }
}

interface Parked {
  /** Resident memory of each worker (MB) before (idle), at its peak, while parked, and after the host answered. */
  idle: number[]
  peak: number[]
  /** Once only the parked invocations were left. */
  parked: number[]
  after: number[]
}

/** `count` sessions call at once; their host holds every confirm until all have parked or been refused. */
async function park(count: number): Promise<Parked> {
  const pool = running.sidecar.pool
  const pids = pool.pids()
  expect(pids).toHaveLength(WORKERS)
  const spawned = pool.stats().spawned
  await warmUp()
  await new Promise((resolve) => setTimeout(resolve, 300))
  const idle = await Promise.all(pids.map((pid) => status(pid, 'VmRSS')))
  const held: Array<(yes: boolean) => void> = []
  const sessions = await Promise.all(
    Array.from({ length: count }, () =>
      running.client.openSession(
        sessionOptions(['parks-filled'], { interactive: true, capabilities: { confirm: () => new Promise<boolean>((resolve) => held.push(resolve)) } }),
      ),
    ),
  )
  try {
    const peak = await peakOf(pids)
    const answered: Array<PointCallResult<'beforeToolExecute'>> = []
    const calls = sessions.map((s) => s.call('beforeToolExecute', CALL).then((out) => (answered.push(out), out)))
    for (const call of calls) call.catch(() => {})
    // Until every call has parked or been answered, or a worker died (a memory cgroup kill replaces it).
    const until = Date.now() + 120_000
    while (answered.length + held.length < count && pool.stats().spawned === spawned && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100))
    const peaks = await peak.stop()
    expect(pool.stats().spawned).toBe(spawned)
    expect(answered.length + held.length).toBe(count)
    expect(pool.pids()).toEqual(pids)
    // At most --parked-mb of 64 MB invocations wait in each worker: 8 each.
    expect(held).toHaveLength(WORKERS * (PARKED_MB / MEMORY_MB))
    for (const out of answered) {
      expect(out.diagnostics).toEqual([])
      expect(out.result).toEqual({ allow: true, arguments: { refused: 'limit', message: REFUSAL, kept: 5 } })
    }
    // Once only the parked invocations are left (the refused ones' isolates are disposed a moment
    // after their answers), each worker holds no more than --parked-mb past its idle size.
    let parked: number[] = []
    await vi.waitFor(
      async () => {
        parked = await Promise.all(pids.map((pid) => status(pid, 'VmRSS')))
        parked.forEach((mb, i) => expect(mb - (idle[i] as number)).toBeLessThanOrEqual(PARKED_MB))
      },
      { timeout: 10_000, interval: 200 },
    )
    // Other sessions are served while they wait.
    await expectServing(running)
    for (const answer of held) answer(true)
    const confirmed = (await Promise.all(calls)).filter((out) => (out.result as { arguments: { confirmed?: boolean } }).arguments.confirmed === true)
    expect(confirmed).toHaveLength(held.length)
    // The memory they held returns (the isolates are disposed a moment after each answer).
    let after: number[] = []
    await vi.waitFor(
      async () => {
        after = await Promise.all(pids.map((pid) => status(pid, 'VmRSS')))
        after.forEach((mb, i) => expect(mb).toBeLessThan((idle[i] as number) + RETURN_MB))
      },
      { timeout: 30_000, interval: 200 },
    )
    // Settled, for the figure printed.
    await new Promise((resolve) => setTimeout(resolve, 1000))
    after = await Promise.all(pids.map((pid) => status(pid, 'VmRSS')))
    return { idle, peak: peaks, parked, after }
  } finally {
    for (const s of sessions) s.abandon()
  }
}

function expectWithinBound(memory: Parked): void {
  const growth = memory.peak.map((mb, i) => Math.round(mb - (memory.idle[i] as number)))
  const round = (mbs: number[]): string => mbs.map(Math.round).join(', ')
  console.log(`resident memory per worker: idle ${round(memory.idle)} MB, peak ${round(memory.peak)} MB (growth ${growth.join(', ')}), parked ${round(memory.parked)} MB, after ${round(memory.after)} MB`)
  for (const mb of growth) expect(mb).toBeLessThanOrEqual(PARKED_MB + OVERHEAD_MB)
}

describe('memory parked on a slow host', () => {
  it('80 invocations that fill 40 MB each: each worker grows by at most --parked-mb plus its overhead; the rest get limit; the memory returns', async () => {
    expectWithinBound(await park(80))
    await expectServing(running)
  }, 180_000)

  it('200 invocations: the same bound, the same answers', async () => {
    expectWithinBound(await park(200))
    await expectServing(running)
  }, 180_000)
})
