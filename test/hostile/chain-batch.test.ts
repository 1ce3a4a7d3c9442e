/**
 * A chain of sandboxed hooks run in one worker message (WorkerPool.invokeChain, ToWorker 'chain'):
 * each step reported in order, capability calls and log lines routed to the step that made them, a
 * cancel stops the running step and the rest do not run, a worker that dies mid-chain costs the step
 * it was running (the caller runs the rest on its own), and through a sidecar the batched chain gives
 * the same answer as hook after hook.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { getPoint } from '../../src/protocol/points/points.js'
import { DEFAULT_LIMITS, type Limits } from '../../src/sidecar/limits.js'
import type { CapabilityReply, ChainRequest } from '../../src/sidecar/runners/hook-runner.js'
import { WorkerPool } from '../../src/sidecar/worker/pool/worker-pool.js'
import { CALL, FIXTURES, HOSTILE_LIMITS, runHooks, startHostile } from './support.js'

const LIMITS: Limits = { ...DEFAULT_LIMITS, ...HOSTILE_LIMITS }

type Step = ChainRequest['steps'][number]

function step(name: string, source: string, extra: Partial<Step> = {}): Step {
  return {
    hook: { name, version: 'v1', filename: `${name}/index.js`, source },
    points: ['beforeToolExecute'],
    onError: 'default',
    ctx: {
      workdir: '/nowhere',
      session: { id: 'chain-test', interactive: true, autoApprove: false },
      agent: { id: 'tester', modelId: 'test-model' },
      config: {},
      system: { platform: process.platform, arch: process.arch, hookdVersion: 'test' },
      env: {},
      hook: { name, version: 'v1', point: 'beforeToolExecute' },
    },
    onCapability: () => Promise.resolve({ ok: false, code: 'denied', message: `not ${name}'s call` }),
    onLog: () => {},
    ...extra,
  }
}

const fixture = (name: string): string => readFileSync(join(FIXTURES, name, 'index.js'), 'utf8')

/** Adds `tag` to the arguments and logs what it saw. */
const tagger = (tag: string): string => `module.exports = {
  beforeToolExecute(ctx, call) {
    ctx.log('${tag} saw ' + Object.keys(call.arguments).join(','))
    return { arguments: { ...call.arguments, ${tag}: true } }
  },
}`

function chain(steps: Step[], signal?: AbortSignal): ChainRequest {
  return { point: 'beforeToolExecute', initial: getPoint('beforeToolExecute')?.payload.parse(CALL), steps, limits: LIMITS, ...(signal ? { signal } : {}) }
}

describe('a chain in one worker message', () => {
  const pools: WorkerPool[] = []
  const pool = async (): Promise<WorkerPool> => {
    const p = new WorkerPool({ size: 1 })
    pools.push(p)
    await p.start()
    return p
  }

  afterEach(async () => {
    await Promise.all(pools.splice(0).map((p) => p.close()))
  })

  it('runs every step in order, each on the previous answer, and routes capability calls and logs to their step', async () => {
    const p = await pool()
    const logs: string[] = []
    const asked: string[] = []
    const confirm = (name: string) => (capability: string): Promise<CapabilityReply> => {
      asked.push(`${name}:${capability}`)
      return Promise.resolve({ ok: true, value: true })
    }
    const run = p.invokeChain(
      chain([
        step('a', tagger('a'), { onLog: (m) => logs.push(`a| ${m}`) }),
        step('confirm', fixture('slow-confirm'), { onCapability: confirm('confirm') }),
        step('b', tagger('b'), { onLog: (m) => logs.push(`b| ${m}`) }),
      ]),
    )
    const reports = [await run.report(0), await run.report(1), await run.report(2)]
    await run.done
    expect(reports.map((r) => r?.outcome)).toEqual([
      { ok: true, value: JSON.stringify({ arguments: { command: 'ls', a: true } }) },
      { ok: true, value: JSON.stringify({ arguments: { answer: true } }) },
      { ok: true, value: JSON.stringify({ arguments: { answer: true, b: true } }) },
    ])
    expect(asked).toEqual(['confirm:confirm'])
    expect(logs).toEqual(['a| a saw command', 'b| b saw answer'])
  })

  it('two chains of the same hooks sent at once: each runs every step (the code came with the first chain, and the second reaches a step first)', async () => {
    const p = await pool()
    // The first chain's first hook thinks for a while (its config says so); the second chain, sent
    // right after it without the hooks' code (the worker has it), reaches the later hooks first.
    const slow = `module.exports = { beforeToolExecute(ctx, call) { const until = Date.now() + (ctx.config.thinkMs || 0); while (Date.now() < until) {} return { arguments: { ...call.arguments, slow: true } } } }`
    const steps = (thinkMs: number): Step[] => {
      const first = step('slow', slow)
      return [{ ...first, ctx: { ...first.ctx, config: { thinkMs } } }, step('a', tagger('a')), step('b', tagger('b'))]
    }
    const limits = { ...LIMITS, cpuMs: 10_000, wallMs: 20_000 }
    const first = p.invokeChain({ ...chain(steps(200)), limits })
    const second = p.invokeChain({ ...chain(steps(0)), limits })
    for (const run of [second, first]) {
      const outcomes = [await run.report(0), await run.report(1), await run.report(2)].map((r) => r?.outcome)
      expect(outcomes).toEqual([
        { ok: true, value: JSON.stringify({ arguments: { command: 'ls', slow: true } }) },
        { ok: true, value: JSON.stringify({ arguments: { command: 'ls', slow: true, a: true } }) },
        { ok: true, value: JSON.stringify({ arguments: { command: 'ls', slow: true, a: true, b: true } }) },
      ])
      await run.done
    }
  })

  it('a cancel stops the running step; the steps after it do not run', async () => {
    const p = await pool()
    const abort = new AbortController()
    const logs: string[] = []
    const run = p.invokeChain(
      chain([step('stuck', fixture('never-settles')), step('after', tagger('after'), { onLog: (m) => logs.push(m) })], abort.signal),
    )
    setTimeout(() => abort.abort(), 200)
    expect((await run.report(0))?.outcome).toMatchObject({ ok: false, kind: 'cancelled' })
    await run.done
    expect(await run.report(1)).toBeUndefined()
    expect(logs).toEqual([])
  })

  it('a worker that dies mid-chain: the step it ran is lost (its own run is its retry), the rest are left to the caller', async () => {
    const p = await pool()
    const run = p.invokeChain({
      ...chain([step('first', tagger('first')), step('fatal-size', fixture('fatal-size')), step('after', tagger('after'))]),
      limits: { ...LIMITS, cpuMs: 10_000, wallMs: 20_000 },
    })
    expect((await run.report(0))?.outcome).toMatchObject({ ok: true })
    // It made no capability call: no report, and the caller's run of it is its one retry.
    expect(await run.report(1)).toBeUndefined()
    expect(run.lost(1)).toBe(true)
    expect(await run.report(2)).toBeUndefined()
    expect(run.lost(2)).toBe(false)
    await run.done
  })

  it('a worker that dies mid-chain under a step that had called a capability: that step ends as worker-crash', async () => {
    const p = await pool()
    const askThenCrash = `module.exports = { beforeToolExecute(ctx) { ctx.notify({ title: 'about to crash' }); return { arguments: { length: 'x'.repeat(2 ** 28).split('').length } } } }`
    const run = p.invokeChain({
      ...chain([step('first', tagger('first')), step('asks', askThenCrash, { onCapability: () => Promise.resolve({ ok: true, value: null }) })]),
      limits: { ...LIMITS, cpuMs: 10_000, wallMs: 20_000 },
    })
    expect((await run.report(0))?.outcome).toMatchObject({ ok: true })
    expect((await run.report(1))?.outcome).toMatchObject({ ok: false, kind: 'worker-crash' })
    expect(run.lost(1)).toBe(false)
    await run.done
  })
})

describe('a batched chain through a sidecar', () => {
  it('answers as hook after hook would, a capability call of a later hook included', async () => {
    const running = await startHostile({ only: ['ordinary', 'slow-confirm'] })
    try {
      const chained = vi.spyOn(running.sidecar.pool, 'invokeChain')
      const single = vi.spyOn(running.sidecar.pool, 'invoke')
      const run = await runHooks(running, ['ordinary', 'slow-confirm'], { interactive: true, capabilities: { confirm: () => Promise.resolve(false) } })
      expect(run.diagnostics).toEqual([])
      expect(run.result).toEqual({ allow: true, arguments: { answer: false } })
      expect(chained).toHaveBeenCalledTimes(1)
      expect(single).not.toHaveBeenCalled()
    } finally {
      await running.stop()
    }
  })
})
