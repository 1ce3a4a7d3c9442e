/**
 * The chain's two layer rules (src/sidecar/chain/chain.ts, would.ts), in memory: a shadow hook's answer
 * is recorded as what it would do and never applied, its failure never refuses; a floor hook's
 * refusal ends the chain at every gate, an event gate included; and who decided a result.
 */
import { describe, expect, it } from 'vitest'
import { type AnyPoint, type PointName, getPoint } from '../../src/protocol/points/points.js'
import { type ChainHook, type Layer, runChain } from '../../src/sidecar/chain/chain.js'
import { FakeRunner, type Script, chainStep, fails, mutates, nothing, returns } from './fakes.js'

const pointOf = (name: PointName): AnyPoint => getPoint(name) as AnyPoint

type Spec = [name: string, points: PointName[], extra?: Partial<Pick<ChainHook, 'mode' | 'layer' | 'onError'>>]

function chain(runner: FakeRunner, name: PointName, raw: unknown, hooks: Spec[], onError?: (hook: ChainHook) => 'default' | 'refuse' | 'skip') {
  const point = pointOf(name)
  const steps = hooks.map(([hook, points, extra]) => {
    const step = chainStep(runner, { name: hook, points })
    return { ...step, hook: { ...step.hook, ...extra } }
  })
  return runChain(point, 1, point.payload.parse(raw), steps, { jsonDepth: 64, ...(onError ? { onError } : {}) })
}

const call = { id: 'c1', name: 'shell', arguments: { command: 'curl x | sh' } }
const shadow = { mode: 'shadow' as const }
const floor = { layer: 'floor' as Layer }
const tenant = { layer: 'tenant' as Layer }

describe('a shadow hook', () => {
  it('would refuse, and the call goes on as if it had no opinion: the next hook sees the call unchanged', async () => {
    const runner = new FakeRunner().script('candidate', () => returns({ allow: false, reason: 'no', arguments: { command: 'x' } })).script('next', () => nothing())
    const result = await chain(runner, 'beforeToolExecute', call, [['candidate', ['beforeToolExecute'], shadow], ['next', ['beforeToolExecute']]])
    expect(result.result).toEqual({ allow: true, arguments: call.arguments })
    expect(runner.calls[1]?.args[0]).toEqual(call)
    expect(result.trace).toEqual([
      expect.objectContaining({ hook: 'candidate', outcome: 'no-opinion', would: 'refuse' }),
      expect.objectContaining({ hook: 'next', outcome: 'no-opinion' }),
    ])
    expect(result.trace[1]).not.toHaveProperty('would')
    expect(result.decidedBy).toBeUndefined()
  })

  it('says rewrite, replace-result, context or none by the fields its answer changes', async () => {
    const cases: Array<[PointName, unknown, Script, string]> = [
      ['beforeToolExecute', call, () => returns({ arguments: { command: 'ls' } }), 'rewrite'],
      ['beforeToolExecute', call, () => returns({ reason: 'noted' }), 'context'],
      ['beforeToolExecute', call, () => returns({ allow: true }), 'none'],
      ['beforeModelRequest', { system: 'S', model: 'm', messages: [] }, () => returns({ system: 'S and more' }), 'context'],
      ['beforeModelRequest', { system: 'S', model: 'm', messages: [] }, () => returns({ system: 'other' }), 'rewrite'],
      ['afterModelResponse', { text: 't' }, () => returns({ text: 'T' }), 'rewrite'],
      ['afterToolExecute', { call, result: { text: 'out', isError: false } }, () => returns({ isError: true }), 'replace-result'],
      ['tool:gate', { name: 'shell', input: {} }, mutates((e) => void (e.block = true)), 'refuse'],
    ]
    for (const [point, raw, answer, would] of cases) {
      const runner = new FakeRunner().script('candidate', answer)
      const result = await chain(runner, point, raw, [['candidate', [point], shadow]])
      expect([point, result.trace[0]?.would]).toEqual([point, would])
    }
  })

  it('never refuses when it fails, whatever the failure policy says', async () => {
    const runner = new FakeRunner().script('candidate', () => fails('timeout', 'ran past its wall-time limit'))
    const result = await chain(runner, 'beforeToolExecute', call, [['candidate', ['beforeToolExecute'], shadow]], () => 'refuse')
    expect(result.result).toEqual({ allow: true, arguments: call.arguments })
    expect(result.trace).toEqual([expect.objectContaining({ outcome: 'failed', would: 'failed' })])
    expect(result.diagnostics).toEqual([expect.objectContaining({ hook: 'candidate', kind: 'timeout' })])
  })
})

describe('a floor hook', () => {
  it('ends the chain with its refusal at an event gate, where a later hook would mutate block back', async () => {
    const runner = new FakeRunner().script('no-curl', mutates((e) => void Object.assign(e, { block: true, reason: 'floor says no' }))).script('undo', mutates((e) => void (e.block = false)))
    const result = await chain(runner, 'tool:gate', { name: 'shell', input: call.arguments }, [['no-curl', ['tool:gate'], floor], ['undo', ['tool:gate'], tenant]])
    expect(result.result).toEqual({ block: true, reason: 'floor says no' })
    expect(runner.calls.map((c) => c.hook)).toEqual(['no-curl'])
    expect(result.trace.map((t) => [t.hook, t.outcome, t.layer])).toEqual([
      ['no-curl', 'refused', 'floor'],
      ['undo', 'not-run', 'tenant'],
    ])
    expect(result.decidedBy).toEqual({ hook: 'no-curl', layer: 'floor' })
    // The same chain without the floor's mark: hookable's last write wins.
    const plain = await chain(runner, 'tool:gate', { name: 'shell', input: call.arguments }, [['no-curl', ['tool:gate'], tenant], ['undo', ['tool:gate'], tenant]])
    expect(plain.result).toEqual({ block: false, reason: 'floor says no' })
  })

  it("ends the chain when its failure refuses, and that refusal is the floor's", async () => {
    const runner = new FakeRunner().script('guard', () => fails('throw', 'boom')).script('undo', () => returns({ allow: true }))
    const result = await chain(runner, 'tool:gate', { name: 'shell', input: {} }, [['guard', ['tool:gate'], floor], ['undo', ['tool:gate'], tenant]], (h) => (h.layer === 'floor' ? 'refuse' : 'default'))
    expect(result.result).toEqual({ block: true, reason: "hookd refused the call: hook 'guard' could not decide (it threw)" })
    expect(result.trace.map((t) => t.outcome)).toEqual(['failed', 'not-run'])
    expect(result.decidedBy).toEqual({ hook: 'guard', layer: 'floor' })
  })

  it('lets the hooks below decide when it has no opinion, and says which layer did', async () => {
    const runner = new FakeRunner().script('guard', () => nothing()).script('rewrite', () => returns({ arguments: { command: 'ls' } }))
    const result = await chain(runner, 'beforeToolExecute', call, [['guard', ['beforeToolExecute'], floor], ['rewrite', ['beforeToolExecute'], tenant]])
    expect(result.result).toEqual({ allow: true, arguments: { command: 'ls' } })
    expect(result.decidedBy).toEqual({ hook: 'rewrite', layer: 'tenant' })
  })
})
