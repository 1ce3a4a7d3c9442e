/** PendingAsks: the asks of one run waiting for their outcome, each settled once, within a cap and an expiry. */
import { describe, expect, it } from 'vitest'
import type { AskSettled } from '../../../src/agents/agent-run.js'
import { PendingAsks } from '../../../src/agents/pending-asks.js'

function asks(options: { max?: number; expiryMs?: number } = {}): { pending: PendingAsks; settled: AskSettled[]; clock: { now: number } } {
  const settled: AskSettled[] = []
  const clock = { now: 1_000 }
  const pending = new PendingAsks({ ...options, now: () => clock.now, settled: (s) => settled.push(s) })
  return { pending, settled, clock }
}

describe('PendingAsks', () => {
  it('settles the oldest ask under a key with its outcome, once; another key settles nothing', () => {
    const { pending, settled } = asks()
    pending.add('id a', 'd1')
    pending.add('id a', 'd2')
    expect(pending.settle('id b', 'allowed', 'PostToolUse')).toBe(false)
    expect(pending.settle('id a', 'allowed', 'PostToolUse')).toBe(true)
    expect(settled).toEqual([{ decisionId: 'd1', outcome: 'allowed', by: 'agent', via: 'PostToolUse' }])
    expect(pending.size).toBe(1)
    pending.settle('id a', 'denied', 'PostToolBatch')
    pending.settle('id a', 'denied', 'PostToolBatch')
    expect(settled.map((s) => [s.decisionId, s.outcome])).toEqual([['d1', 'allowed'], ['d2', 'denied']])
  })

  it('past its cap settles the oldest ask unknown (too many asks), so at most `max` wait', () => {
    const { pending, settled } = asks({ max: 2 })
    for (const id of ['d1', 'd2', 'd3', 'd4']) pending.add(`id ${id}`, id)
    expect(pending.size).toBe(2)
    expect(settled).toEqual([
      { decisionId: 'd1', outcome: 'unknown', by: 'hookd', via: 'too many asks' },
      { decisionId: 'd2', outcome: 'unknown', by: 'hookd', via: 'too many asks' },
    ])
    expect(pending.settle('id d1', 'allowed', 'PostToolUse')).toBe(false)
    expect(pending.settle('id d4', 'allowed', 'PostToolUse')).toBe(true)
  })

  it('settles asks past their expiry unknown (expired) when it next hears of an ask or an outcome', () => {
    const { pending, settled, clock } = asks({ expiryMs: 60_000 })
    pending.add('id old', 'd1')
    clock.now += 30_000
    pending.add('id new', 'd2')
    clock.now += 30_000
    expect(pending.settle('id old', 'allowed', 'PostToolUse')).toBe(false)
    expect(settled).toEqual([{ decisionId: 'd1', outcome: 'unknown', by: 'hookd', via: 'expired' }])
    expect(pending.settle('id new', 'allowed', 'PostToolUse')).toBe(true)
  })

  it('at the end of the run: denied when the agent ended it and reports calls that ran, else unknown', () => {
    const ended = (by: 'agent' | 'hookd', reportsRan: boolean): AskSettled[] => {
      const { pending, settled } = asks()
      pending.add('id a', 'd1')
      pending.end(by, reportsRan)
      expect(pending.size).toBe(0)
      return settled
    }
    expect(ended('agent', true)).toEqual([{ decisionId: 'd1', outcome: 'denied', by: 'agent', via: 'run ended' }])
    expect(ended('agent', false)).toEqual([{ decisionId: 'd1', outcome: 'unknown', by: 'agent', via: 'run ended' }])
    expect(ended('hookd', true)).toEqual([{ decisionId: 'd1', outcome: 'unknown', by: 'hookd', via: 'run ended' }])
  })
})
