/**
 * The worker pool's side of the parked-memory bound (WorkerPool, docs/containment.md "Memory parked on
 * the host"), driven on the pool itself: an isolate that holds more than its memory limit when it starts
 * to wait counts what it holds; a chain that waits on its host keeps one hook's isolate, not its finished
 * hooks' too; and work waiting in the pool for room in a worker ends at once when its call is cancelled.
 */
import { readFile } from 'node:fs/promises'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { getPoint } from '../../src/protocol/points/points.js'
import { DEFAULT_LIMITS, type Limits } from '../../src/sidecar/limits.js'
import type { CapabilityReply, ChainRequest, CtxData, InvocationRequest, InvokeOutcome } from '../../src/sidecar/runners/hook-runner.js'
import { type PoolOptions, WorkerPool } from '../../src/sidecar/worker/pool/worker-pool.js'
import { CALL, FIXTURES } from './support.js'

const fixture = (name: string): string => readFileSync(join(FIXTURES, name, 'index.js'), 'utf8')

function ctxFor(name: string): CtxData {
  return {
    workdir: '/nowhere',
    session: { id: 'parked-pool', interactive: true, autoApprove: false },
    agent: { id: 'tester', modelId: 'test-model' },
    config: {},
    system: { platform: process.platform, arch: process.arch, hookdVersion: 'test' },
    env: {},
    hook: { name, version: 'v1', point: 'beforeToolExecute' },
  }
}

/** A host that holds every capability call until `answerAll`. */
function slowHost(): { onCapability(): Promise<CapabilityReply>; held(): number; answerAll(): void } {
  const waiting: Array<(reply: CapabilityReply) => void> = []
  return {
    onCapability: () => new Promise<CapabilityReply>((resolve) => waiting.push(resolve)),
    held: () => waiting.length,
    answerAll: () => {
      for (const answer of waiting.splice(0)) answer({ ok: true, value: true })
    },
  }
}

function invocation(name: string, source: string, limits: Limits, extra: Partial<InvocationRequest> = {}): InvocationRequest {
  return {
    hook: { name, version: 'v1', filename: `${name}/index.js`, source },
    point: 'beforeToolExecute',
    args: [CALL],
    ctx: ctxFor(name),
    limits,
    onCapability: () => Promise.resolve({ ok: false, code: 'denied', message: 'no host here' }),
    onLog: () => {},
    ...extra,
  }
}

async function rssMb(pid: number): Promise<number> {
  const kb = /VmRSS:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1]
  return Number(kb) / 1024
}

/** A successful outcome's answer, parsed; a failed outcome as it is. */
const answerOf = (outcome: InvokeOutcome | { ok: false }): unknown => (outcome.ok && outcome.value !== undefined ? JSON.parse(outcome.value) : outcome)

describe('the pool', () => {
  const pools: WorkerPool[] = []
  const pool = async (options: PoolOptions = {}): Promise<WorkerPool> => {
    const p = new WorkerPool({ size: 1, ...options })
    pools.push(p)
    await p.start()
    return p
  }

  afterEach(async () => {
    await Promise.all(pools.splice(0).map((p) => p.close()))
  })

  it('parks-over-limit: an isolate that holds more than its limit as it waits counts what it holds; the calls past the bound get limit', async () => {
    // 16 MB invocations that each hold ~21 MB (13 MB of ArrayBuffers beside their heap). Counted by
    // their limits, four would fit in 72 MB; counted by what they hold, three.
    const p = await pool({ maxParkedMb: 72 })
    const limits = { ...DEFAULT_LIMITS, memoryMb: 16, cpuMs: 5000, wallMs: 60_000 }
    const host = slowHost()
    const reports = Array.from({ length: 6 }, () => p.invoke(invocation('parks-over-limit', fixture('parks-over-limit'), limits, { onCapability: host.onCapability })))
    const refused: unknown[] = []
    for (const report of reports) void report.then((r) => refused.push(answerOf(r.outcome)))
    await vi.waitFor(() => expect(host.held() + refused.length).toBe(6), { timeout: 30_000, interval: 50 })
    expect(host.held()).toBe(3)
    const text = /^ctx\.confirm: this invocation holds (\d+) MB \(more than its memory limit\), invocations that wait on their host already hold (\d+) MB in this sandbox worker, and at most 72 MB may wait at once; hold less when you call, or try again when the host has answered$/
    for (const answer of refused) {
      expect(answer).toEqual({ arguments: { refused: 'limit', message: expect.stringMatching(text), kept: 16 } })
      const [, holds, parked] = text.exec((answer as { arguments: { message: string } }).arguments.message) ?? []
      expect(Number(holds)).toBeGreaterThan(16)
      expect(Number(parked)).toBeGreaterThan(3 * 16)
      expect(Number(parked) + Number(holds)).toBeGreaterThan(72)
    }
    host.answerAll()
    const answers = (await Promise.all(reports)).map((r) => answerOf(r.outcome))
    expect(answers.filter((a) => JSON.stringify(a) === JSON.stringify({ arguments: { confirmed: true, kept: 16 } }))).toHaveLength(3)
    // The worker still serves.
    expect(answerOf((await p.invoke(invocation('ordinary', fixture('ordinary'), limits))).outcome)).toEqual({ arguments: { ...CALL.arguments, ordinary: true } })
  })

  it('a chain waiting on its host keeps only the waiting hook: the isolates of its finished hooks (40 MB each) are gone', async () => {
    const p = await pool()
    const limits = { ...DEFAULT_LIMITS, memoryMb: 64, cpuMs: 5000, wallMs: 60_000 }
    const [pid] = p.pids()
    const idle = await rssMb(pid as number)
    const host = slowHost()
    const step = (name: string, source: string): ChainRequest['steps'][number] => ({
      hook: { name, version: 'v1', filename: `${name}/index.js`, source },
      points: ['beforeToolExecute'],
      onError: 'default',
      ctx: ctxFor(name),
      onCapability: host.onCapability,
      onLog: () => {},
    })
    const chain = (): ChainRequest => ({
      point: 'beforeToolExecute',
      initial: getPoint('beforeToolExecute')?.payload.parse(CALL),
      steps: [1, 2, 3, 4].map((n) => step(`fill-${n}`, fixture('fills-and-returns'))).concat(step('parks-filled', fixture('parks-filled'))),
      limits,
    })
    // Four chains, each four hooks that fill 40 MB and answer, then one that fills 40 MB and waits.
    const runs = Array.from({ length: 4 }, () => p.invokeChain(chain()))
    // Twenty 40 MB fills in one worker: a minute or two on a loaded machine.
    await vi.waitFor(() => expect(host.held()).toBe(4), { timeout: 170_000, interval: 50 })
    await new Promise((resolve) => setTimeout(resolve, 200))
    const parked = await rssMb(pid as number)
    console.log(`four chains parked: worker idle ${Math.round(idle)} MB, parked ${Math.round(parked)} MB`)
    // Four waiting hooks of 64 MB, and room for what the worker frees a moment late; the finished
    // hooks' isolates kept too would be 16 x 40 MB more.
    expect(parked - idle).toBeLessThan(4 * 64 + 64)
    host.answerAll()
    for (const run of runs) {
      expect(answerOf((await run.report(4))?.outcome ?? { ok: false })).toEqual({ arguments: { confirmed: true, kept: 5 } })
      await run.done
    }
    expect(p.pids()).toEqual([pid])
  }, 180_000)

  it('work waiting for room in a busy worker ends at once when its call is cancelled, without running', async () => {
    // Room for one 16 MB invocation at a time; a hook that never settles holds it.
    const p = await pool({ maxRunningMb: 16 })
    const limits = { ...DEFAULT_LIMITS, memoryMb: 16, wallMs: 60_000 }
    const stuck = new AbortController()
    const first = p.invoke(invocation('never-settles', fixture('never-settles'), limits, { signal: stuck.signal }))
    await vi.waitFor(() => expect(p.states().busy).toBe(1), { timeout: 10_000, interval: 20 })
    const cancel = new AbortController()
    const ran: string[] = []
    const second = p.invoke(invocation('ordinary', fixture('ordinary'), limits, { signal: cancel.signal, onLog: (line) => ran.push(line) }))
    await vi.waitFor(() => expect(p.stats().waiting).toBe(1), { timeout: 10_000, interval: 20 })
    cancel.abort()
    expect(await second).toEqual({ outcome: { ok: false, kind: 'cancelled', message: 'the host cancelled the point call before the hook started' }, wallUs: 0, cpuUs: 0 })
    expect(p.stats().waiting).toBe(0)
    stuck.abort()
    expect((await first).outcome).toMatchObject({ ok: false, kind: 'cancelled' })
    expect(answerOf((await p.invoke(invocation('ordinary', fixture('ordinary'), limits))).outcome)).toEqual({ arguments: { ...CALL.arguments, ordinary: true } })
    expect(ran).toEqual([])
  })
})
