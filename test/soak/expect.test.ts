/**
 * The soak's judge (bench/soak/expect.ts), in memory: each kind of wrong answer the soak must catch is
 * caught, and hookd's own refusals are not counted wrong. The soak's "wrong answers: 0" means only as
 * much as this shows it would see.
 */
import { describe, expect, it } from 'vitest'
import { type CallSpec, Generations, commandFor, judgeGate, judgeResult } from '../../bench/soak/expect.js'
import { guardReason, outTag, parkerReason, rewriteTag, sessionTag } from '../../bench/soak/hooks.js'

const spec = (intent: CallSpec['intent']): CallSpec => ({ tenant: 'acme', session: 'g1-r1', cid: 'g1-r1-1', command: commandFor('g1-r1-1', intent), intent })
const rewritten = (s: CallSpec, gen = 1): string => s.command + rewriteTag('acme', gen) + sessionTag(s.session)

function gens(): Generations {
  const g = new Generations()
  g.write('acme', 1, 0, true)
  g.write('acme', 2, 100, false)
  g.write('acme', 3, 200, true)
  return g
}

describe('gates', () => {
  it('takes the expected answers', () => {
    const plain = spec('plain')
    expect(judgeGate(plain, { allow: true, command: rewritten(plain) }, gens(), 10, 20)).toEqual({ kind: 'allowed', gen: 1 })
    expect(judgeGate(spec('deny'), { allow: false, refusedBy: 'guard', reason: guardReason('acme') }, gens(), 10, 20)).toEqual({ kind: 'refused-policy', by: 'guard' })
    expect(judgeGate(spec('parkno'), { allow: false, refusedBy: 'parker', reason: parkerReason('acme') }, gens(), 10, 20)).toEqual({ kind: 'refused-policy', by: 'parker' })
    expect(judgeGate(spec('deny'), { allow: false, refusedBy: 'hookd', reason: "hookd refused the call: hook 'guard' could not decide" }, gens(), 10, 20).kind).toBe('refused-hookd')
    expect(judgeGate(plain, { allow: false, refusedBy: 'hookd', reason: 'cancelled' }, gens(), 10, 20).kind).toBe('refused-hookd')
  })

  it.each([
    ['a gate allowed that the guard refuses', spec('deny'), { allow: true, command: rewritten(spec('deny')) }, /allowed that guard refuses/],
    ['a PARKNO allowed', spec('parkno'), { allow: true, command: rewritten(spec('parkno')) }, /allowed that parker refuses/],
    ['a plain call refused by a hook', spec('plain'), { allow: false, refusedBy: 'guard', reason: guardReason('acme') }, /expected the call allowed/],
    ['another tenant refusing', spec('deny'), { allow: false, refusedBy: 'guard', reason: guardReason('beta') }, /guard:beta/],
    ['the rewrite lost', spec('plain'), { allow: true, command: spec('plain').command + sessionTag('g1-r1') }, /no rewriter tag/],
    ['the rewrite applied twice', spec('plain'), { allow: true, command: spec('plain').command + rewriteTag('acme', 1) + rewriteTag('acme', 1) + sessionTag('g1-r1') }, /applied twice/],
    ["another tenant's rewriter", spec('plain'), { allow: true, command: spec('plain').command + rewriteTag('beta', 1) + sessionTag('g1-r1') }, /tenant beta's rewriter/],
    ["another session's result", spec('plain'), { allow: true, command: spec('plain').command + rewriteTag('acme', 1) + sessionTag('g2-r1') }, /expected/],
    ['a generation that does not load', spec('plain'), { allow: true, command: rewritten(spec('plain'), 2) }, /does not load/],
    ['a generation never written', spec('plain'), { allow: true, command: rewritten(spec('plain'), 9) }, /never written/],
  ])('calls %s wrong', (_, s, answer, why) => {
    const verdict = judgeGate(s, answer, gens(), 300, 310)
    expect(verdict.kind).toBe('wrong')
    expect(verdict.kind === 'wrong' && verdict.why).toMatch(why)
  })

  it('calls a generation written after the call ended, or older than one already served, wrong', () => {
    const g = gens()
    const plain = spec('plain')
    expect(judgeGate(plain, { allow: true, command: rewritten(plain, 3) }, g, 10, 150)).toMatchObject({ kind: 'wrong', why: expect.stringMatching(/written after the call ended/) })
    g.seen('acme', 3, 250)
    expect(judgeGate(plain, { allow: true, command: rewritten(plain, 1) }, g, 240, 260).kind).toBe('allowed')
    expect(judgeGate(plain, { allow: true, command: rewritten(plain, 1) }, g, 251, 260)).toMatchObject({ kind: 'wrong', why: expect.stringMatching(/went back/) })
  })
})

describe('results', () => {
  const s = spec('plain')
  it('takes a rewrite once, or no rewrite with a failure the answer reports', () => {
    expect(judgeResult(s, 'out', `out${outTag('acme', 1)}`, undefined, gens(), 10, 20)).toEqual({ kind: 'changed', gen: 1 })
    expect(judgeResult(s, 'out', 'out', 'rewriter worker-crash', gens(), 10, 20)).toEqual({ kind: 'unchanged', why: 'rewriter worker-crash' })
  })

  it('calls a silent lost rewrite, or a double one, wrong', () => {
    expect(judgeResult(s, 'out', 'out', undefined, gens(), 10, 20).kind).toBe('wrong')
    expect(judgeResult(s, 'out', `out${outTag('acme', 1)}${outTag('acme', 1)}`, undefined, gens(), 10, 20)).toMatchObject({ kind: 'wrong', why: expect.stringMatching(/twice/) })
  })
})
