/**
 * The agents' own points through agent-point.ts, whatever the agent: what the hooks see (a permission
 * dialog's call in canonical form, with the subagent), what the dialect is handed back (the changed
 * fields, a rewrite in the agent's own input), and what never reaches the hooks (a call hookd cannot
 * read) or never reaches the agent silently (fields the dialect cannot carry). A fake run stands for the
 * session: the chain itself is tested with the catalog (test/unit/chain.test.ts).
 */
import { describe, expect, it } from 'vitest'
import { agentPoint } from '../../../src/agents/agent-point.js'
import type { AgentRun, ChainAnswer, RunPoint } from '../../../src/agents/agent-run.js'
import { CLAUDE_CODE_TOOLS } from '../../../src/agents/claude-code/tools.js'
import type { Dialect, HookEvent, PointChanges } from '../../../src/agents/hook-event.js'
import { getPoint } from '../../../src/protocol/points/points.js'

const WORKDIR = '/home/me/project'

interface Seen {
  point: RunPoint
  payload: unknown
}

/** A run whose hooks answer `answer` at every point, recording what they were given. */
function fakeRun(answer: Partial<ChainAnswer>, serves = true): { run: AgentRun; seen: Seen[] } {
  const seen: Seen[] = []
  const run: AgentRun = {
    serves: () => serves,
    call: async (point, payload) => {
      seen.push({ point, payload })
      return { result: {}, diagnostics: [], asks: [], ...answer }
    },
    close: async () => ({ result: {}, diagnostics: [], asks: [] }),
    abort: () => {},
  }
  return { run, seen }
}

/** A dialect that hands back what it was given, and cannot carry `cannot`. */
function echoDialect(cannot: string[] = []): { dialect: Dialect<string>; given: PointChanges[] } {
  const given: PointChanges[] = []
  const dialect = {
    agent: 'claude-code',
    title: 'Claude Code',
    tools: CLAUDE_CODE_TOOLS,
    answer: (_event: string, _point: string, changes: PointChanges) => {
      given.push(changes)
      const fields = Object.fromEntries(Object.entries(changes.fields).filter(([k]) => !cannot.includes(k)))
      return { answer: { fields, ...(changes.input ? { input: changes.input } : {}) }, dropped: cannot.filter((k) => k in changes.fields) }
    },
  } as unknown as Dialect<string>
  return { dialect, given }
}

const dialogAbout = (command: string, subagent?: { id: string; type: string }): Extract<HookEvent, { kind: 'point' }> => ({
  kind: 'point',
  point: 'permission:request',
  payload: { suggestions: [] },
  call: { id: 'toolu_1', tool: 'Bash', input: { command, description: 'run it' }, ...(subagent ? { subagent } : {}) },
})

describe('permission:request', () => {
  it('hooks see the canonical call, the agent\'s tool and the subagent that makes it', async () => {
    const { run, seen } = fakeRun({})
    const { dialect } = echoDialect()
    const answer = await agentPoint(run, dialect, 'native', dialogAbout('ls', { id: 'a1', type: 'Explore' }), WORKDIR, () => {})
    expect(answer).toBeUndefined()
    expect(seen).toEqual([
      {
        point: 'permission:request',
        payload: {
          suggestions: [],
          id: 'toolu_1',
          name: 'shell',
          arguments: { command: 'ls' },
          native: { agent: 'claude-code', name: 'Bash', input: { command: 'ls', description: 'run it' } },
          subagent: { id: 'a1', type: 'Explore' },
          tool: 'Bash',
        },
      },
    ])
  })

  it('a decision with rewritten arguments comes back as the agent\'s whole native input', async () => {
    const { run } = fakeRun({ result: { decision: 'allow', arguments: { command: 'ls -a' } } })
    const { dialect, given } = echoDialect()
    await agentPoint(run, dialect, 'native', dialogAbout('ls'), WORKDIR, () => {})
    expect(given).toEqual([{ fields: { decision: 'allow' }, input: { command: 'ls -a', description: 'run it' } }])
  })

  it("a rewrite the agent's tool cannot take denies the call, saying which field", async () => {
    const { run } = fakeRun({ result: { decision: 'allow', arguments: { command: 42 } } })
    const { dialect, given } = echoDialect()
    await agentPoint(run, dialect, 'native', dialogAbout('ls'), WORKDIR, () => {})
    expect(given).toEqual([
      {
        fields: {
          decision: 'deny',
          reason: "hookd refused this call: the rewritten shell arguments.command: Invalid input: expected string, received number, so Claude Code's Bash cannot take them; fix the hook that rewrites shell",
        },
      },
    ])
  })

  it("a hook's ctx.confirm with no decision opens the dialog with its question", async () => {
    const { run } = fakeRun({ asks: [{ hook: 'guard', title: 'Push to main?', body: 'git push origin main' }] })
    const { dialect, given } = echoDialect()
    await agentPoint(run, dialect, 'native', dialogAbout('git push origin main'), WORKDIR, () => {})
    expect(given).toEqual([{ fields: { decision: 'ask', reason: "Push to main?: git push origin main (asked by hookd hook 'guard')" } }])
  })

  it('a call hookd cannot read is denied without asking the hooks, and the operator reads why', async () => {
    const { run, seen } = fakeRun({ result: { decision: 'allow' } })
    const { dialect, given } = echoDialect()
    const lines: string[] = []
    const event = dialogAbout('ls')
    if (event.call) event.call.unreadable = "Bash's tool_input is nested deeper than 64 levels"
    await agentPoint(run, dialect, 'native', event, WORKDIR, (l) => lines.push(l))
    expect(seen).toEqual([])
    expect(given).toEqual([{ fields: { decision: 'deny', reason: "hookd refused this call, which no hook could check: Bash's tool_input is nested deeper than 64 levels" } }])
    expect(lines).toEqual(["Bash call toolu_1: hookd refused this call, which no hook could check: Bash's tool_input is nested deeper than 64 levels"])
  })
})

describe('every agent point', () => {
  it('with no hook serving it, the hooks are not called and the agent gets no opinion', async () => {
    const { run, seen } = fakeRun({}, false)
    const { dialect, given } = echoDialect()
    expect(await agentPoint(run, dialect, 'native', { kind: 'point', point: 'notification', payload: { message: 'hi' } }, WORKDIR, () => {})).toBeUndefined()
    expect(seen).toEqual([])
    expect(given).toEqual([])
  })

  it('what the dialect cannot carry is named for the operator, never lost silently', async () => {
    const { run } = fakeRun({ result: { keepWorking: true, reason: 'tests still fail' } })
    const { dialect } = echoDialect(['keepWorking'])
    const lines: string[] = []
    const answer = await agentPoint(run, dialect, 'native', { kind: 'point', point: 'subagent:stop', payload: { subagent: { id: 'a1' } } }, WORKDIR, (l) => lines.push(l))
    expect(answer).toEqual({ fields: { reason: 'tests still fail' } })
    expect(lines).toEqual(["Claude Code cannot carry 'keepWorking' at subagent:stop; dropped"])
  })

  it('a dialect with no answers at all drops every change, saying which', async () => {
    const { run } = fakeRun({ result: { block: true, reason: 'not now' } })
    const { answer: _none, ...dialect } = echoDialect().dialect
    const lines: string[] = []
    expect(await agentPoint(run, dialect, 'native', { kind: 'point', point: 'compact:before', payload: { trigger: 'auto' } }, WORKDIR, (l) => lines.push(l))).toBeUndefined()
    expect(lines).toEqual(['Claude Code cannot carry what the hooks changed at compact:before (block, reason); dropped'])
  })
})

describe('the gates among them refuse when the hooks cannot decide', () => {
  it.each([
    ['permission:request', { decision: 'deny', reason: 'hookd: no answer' }],
    ['config:change', { block: true, reason: 'hookd: no answer' }],
  ])('%s', (name, refused) => {
    const point = getPoint(name)
    const state = point?.payload.parse({ source: 'project_settings' })
    const after = point?.refuse?.(state, 'hookd: no answer', 'hookd')
    expect(point?.result(after)).toEqual(refused)
    expect(point?.stopped(after)).toBe(true)
  })

  it("a permission dialog's decision only gets stricter down the chain: a later allow leaves an ask as it was", () => {
    const point = getPoint('permission:request')
    const asked = point?.apply(point.payload.parse({ name: 'shell' }), { decision: 'ask', reason: 'a person decides' }, 'first')
    const after = point?.apply(asked, { decision: 'allow', reason: 'fine by me', arguments: { command: 'ls' } }, 'second')
    expect(point?.result(after)).toEqual({ decision: 'ask', reason: 'a person decides' })
    expect(point?.result(point.apply(asked, { decision: 'deny', reason: 'no' }, 'third'))).toEqual({ decision: 'deny', reason: 'no' })
  })

  it('the observers are no gates: hookd never refuses a notice', () => {
    expect(getPoint('notification')?.refuse).toBeUndefined()
    expect(getPoint('subagent:stop')?.refuse).toBeUndefined()
  })
})
