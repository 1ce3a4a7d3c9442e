/** AskedDecisions: a gRPC session's asks waiting for their host's report, each settled once, within a cap and an expiry. */
import { describe, expect, it } from 'vitest'
import type { OutcomeReport } from '../../../src/sidecar/observability/observer.js'
import { AskedDecisions } from '../../../src/sidecar/session/asked-decisions.js'

function decisions(options: { max?: number; expiryMs?: number } = {}): { asked: AskedDecisions; settled: OutcomeReport[]; clock: { now: number } } {
  const settled: OutcomeReport[] = []
  const clock = { now: 1_000 }
  const asked = new AskedDecisions({ ...options, now: () => clock.now, settled: (r) => settled.push(r) })
  return { asked, settled, clock }
}

describe('AskedDecisions', () => {
  it("records a waiting decision's reported outcome once, with who said it; another id is refused", () => {
    const { asked, settled } = decisions()
    asked.add('d1')
    expect(asked.report('d2', 'allowed', 'PostToolUse', 'agent')).toEqual({ recorded: false, message: expect.stringContaining("decision 'd2' is no asked decision of this session") })
    expect(asked.report('d1', 'denied', 'rewrite refused', 'host')).toEqual({ recorded: true })
    expect(asked.report('d1', 'allowed', 'PostToolUse', 'agent')).toEqual({
      recorded: false,
      message: "decision 'd1' was already settled (denied by the host, via rewrite refused); each outcome is recorded once",
    })
    expect(settled).toEqual([{ decisionId: 'd1', outcome: 'denied', by: 'host', via: 'rewrite refused' }])
    expect(asked.size).toBe(0)
  })

  it('past its cap settles the oldest unknown (too many asks); it remembers only the last `max` settled ids', () => {
    const { asked, settled } = decisions({ max: 2 })
    for (const id of ['d1', 'd2', 'd3', 'd4', 'd5']) asked.add(id)
    expect(asked.size).toBe(2)
    expect(settled.map((s) => [s.decisionId, s.outcome, s.by, s.via])).toEqual([
      ['d1', 'unknown', 'hookd', 'too many asks'],
      ['d2', 'unknown', 'hookd', 'too many asks'],
      ['d3', 'unknown', 'hookd', 'too many asks'],
    ])
    // d1 fell out of the memory of settled ids: refused all the same, only less precisely.
    expect(asked.report('d1', 'allowed', 'PostToolUse', 'agent')).toMatchObject({ recorded: false, message: expect.stringContaining('is no asked decision') })
    expect(asked.report('d3', 'allowed', 'PostToolUse', 'agent')).toMatchObject({ recorded: false, message: expect.stringContaining('already settled (unknown by hookd, via too many asks)') })
    expect(asked.report('d5', 'allowed', 'PostToolUse', 'agent')).toEqual({ recorded: true })
  })

  it('settles decisions past their expiry unknown (expired) when it next hears of one; a report after that is refused', () => {
    const { asked, settled, clock } = decisions({ expiryMs: 60_000 })
    asked.add('old')
    clock.now += 30_000
    asked.add('young')
    clock.now += 30_000
    expect(asked.report('old', 'allowed', 'PostToolUse', 'agent')).toMatchObject({ recorded: false, message: expect.stringContaining('already settled (unknown by hookd, via expired)') })
    expect(asked.report('young', 'allowed', 'PostToolUse', 'agent')).toEqual({ recorded: true })
    expect(settled.map((s) => [s.decisionId, s.via])).toEqual([['old', 'expired'], ['young', 'PostToolUse']])
  })

  it('when the session ends, settles every decision still waiting unknown (run ended), and one decided after that at once', () => {
    const { asked, settled } = decisions()
    asked.add('a')
    asked.add('b')
    asked.end()
    // A call that was running when the session closed: recorded all the same, once.
    asked.add('c')
    asked.end()
    expect(settled).toEqual([
      { decisionId: 'a', outcome: 'unknown', by: 'hookd', via: 'run ended' },
      { decisionId: 'b', outcome: 'unknown', by: 'hookd', via: 'run ended' },
      { decisionId: 'c', outcome: 'unknown', by: 'hookd', via: 'run ended' },
    ])
    expect(asked.size).toBe(0)
    expect(asked.report('c', 'allowed', 'PostToolUse', 'agent')).toMatchObject({ recorded: false, message: expect.stringContaining('already settled (unknown by hookd, via run ended)') })
  })
})
