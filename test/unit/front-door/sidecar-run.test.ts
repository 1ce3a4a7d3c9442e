/**
 * The run the front door opens for an agent session (src/sidecar/http/sidecar-run.ts) over a real
 * Session with a fake runner (test/unit/fakes.ts), so no worker starts: how a hook's ctx.confirm is
 * answered for each profile, agent and permission mode (left to the agent's prompt as an ask, or
 * answered at once), what the run hands the adapter back, which points it serves, the asks' outcomes
 * and the run's end, and the lines the operator reads. The same through real workers and a real
 * agent's JSON stays in test/agents/front-door.test.ts and ask-outcomes.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { RunStart } from '../../../src/agents/agent-run.js'
import { NO_OBSERVER, type DecidedResult, type OutcomeReport, type SessionObserver } from '../../../src/sidecar/observability/observer.js'
import { type ConfirmMode, defaultProfile } from '../../../src/sidecar/http/agent-route.js'
import { SidecarRun } from '../../../src/sidecar/http/sidecar-run.js'
import type { CapabilityReply } from '../../../src/sidecar/runners/hook-runner.js'
import { FakeLoader, FakeRunner, type HooksRoot, aborted, exporting, fails, fakeTenant, hooksFolder, loadedRegistry, nothing, returns } from '../fakes.js'

const QUESTION = { title: 'Dangerous command', body: 'rm -rf victim' }
const CALL = { id: 'toolu_1', name: 'shell', arguments: { command: 'rm -rf victim' } }

interface World {
  run: SidecarRun
  runner: FakeRunner
  reports: string[]
  decided: DecidedResult[]
  outcomes: OutcomeReport[]
}

const cleanup: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const done of cleanup.splice(0)) await done()
})

/**
 * A run of `hooks` (guard: at the gate and after a tool, it asks ctx.confirm and refuses on a no; lifecycle:
 * afterRun; broken: never loads) for an agent session started as `start` says, with the profile's confirm.
 */
async function world(hooks: string[], confirm: ConfirmMode = 'ask', start: Partial<RunStart> = {}): Promise<World> {
  const folder: HooksRoot = await hooksFolder({
    guard: { index: exporting('beforeToolExecute', 'afterToolExecute') },
    lifecycle: { index: exporting('afterRun') },
    broken: { index: 'module.exports = {' },
  })
  const runner = new FakeRunner()
  const loader = new FakeLoader().script('broken', { ok: false, message: 'SyntaxError: Unexpected end of input' })
  const registry = await loadedRegistry(folder.root, loader, runner)
  cleanup.push(async () => {
    await registry.close()
    await folder.dispose()
  })
  runner.script('guard', async (r) => {
    const reply = await r.onCapability('confirm', [QUESTION])
    if (r.point === 'beforeToolExecute' && !(reply.ok && reply.value === true)) return returns({ allow: false, reason: 'refused by the user' })
    return nothing()
  })
  runner.script('lifecycle', async (r) => {
    await r.onCapability('notify', [{ title: 'afterRun', body: String((r.args[0] as { reason?: unknown }).reason) }])
    return nothing()
  })
  const reports: string[] = []
  const decided: DecidedResult[] = []
  const outcomes: OutcomeReport[] = []
  const observe: SessionObserver = { ...NO_OBSERVER.session({ tenant: undefined, transport: 'http' }), decided: (d) => void decided.push(d), outcome: (o) => void outcomes.push(o) }
  const run = SidecarRun.open({
    tenant: fakeTenant(registry, runner),
    start: { key: { sessionId: 'sess-1', workdir: '/home/me/project', channel: `claude-code/${hooks.join(',')}` }, agentId: 'claude-code', modelId: '', ...start },
    profile: { ...defaultProfile(hooks), confirm },
    localFiles: false,
    report: (l) => reports.push(l),
    observe,
  })
  cleanup.unshift(async () => run.abort())
  return { run, runner, reports, decided, outcomes }
}

/** The reply the guard's ctx.confirm got, in the call of `point`. */
function confirmed(w: World, point: string): CapabilityReply | undefined {
  return w.runner.callsOf('guard').find((c) => c.point === point)?.capabilities.find((c) => c.capability === 'confirm')?.reply
}

const ASK = [{ hook: 'guard', ...QUESTION }]
const NOBODY = (point: string) => `claude-code session sess-1: [guard] ctx.confirm("Dangerous command") at ${point} answered no: nobody can be asked there`

describe("a hook's ctx.confirm through the front door's run", () => {
  const rows: Array<{ row: string; confirm?: ConfirmMode; start?: Partial<RunStart>; point?: 'beforeToolExecute' | 'afterToolExecute'; got: CapabilityReply; result: unknown; asks: unknown[]; asked?: unknown[]; reports?: string[] }> = [
    {
      row: "at a gate, in ask mode, is yes for the chain and left to the agent's prompt: the decision is asked, with the question",
      got: { ok: true, value: true },
      result: { allow: true, arguments: CALL.arguments },
      asks: ASK,
      asked: ASK,
    },
    {
      row: 'for an agent that cannot ask (Codex, Gemini CLI), is no at once: the hook refuses',
      start: { canAsk: false },
      got: { ok: true, value: false },
      result: { allow: false, reason: 'refused by the user', refusedBy: 'guard', arguments: CALL.arguments },
      asks: [],
    },
    ...['bypassPermissions', 'dontAsk'].map((mode) => ({
      row: `in permission mode ${mode}, where the agent never asks, is no at once`,
      start: { permissionMode: mode },
      got: { ok: true, value: false } as CapabilityReply,
      result: { allow: false, reason: 'refused by the user', refusedBy: 'guard', arguments: CALL.arguments },
      asks: [],
    })),
    { row: 'with a profile that says allow, is yes at once, and nothing is asked', confirm: 'allow', got: { ok: true, value: true }, result: { allow: true, arguments: CALL.arguments }, asks: [] },
    { row: 'with a profile that says deny, is no at once', confirm: 'deny', got: { ok: true, value: false }, result: { allow: false, reason: 'refused by the user', refusedBy: 'guard', arguments: CALL.arguments }, asks: [] },
    {
      row: 'after a tool, where nobody can be asked, is no, and the operator reads why',
      point: 'afterToolExecute',
      got: { ok: true, value: false },
      result: { text: 'out', isError: false },
      asks: [],
      reports: [NOBODY('afterToolExecute')],
    },
  ]

  it.each(rows)('$row', async (row) => {
    const w = await world(['guard'], row.confirm, row.start)
    const point = row.point ?? 'beforeToolExecute'
    const answer = await w.run.call(point, point === 'beforeToolExecute' ? CALL : { call: CALL, result: { text: 'out', isError: false } })
    expect(confirmed(w, point)).toEqual(row.got)
    expect(answer.result).toEqual(row.result)
    expect(answer.asks).toEqual(row.asks)
    expect(answer.decisionId).toBe(w.decided[0]?.decisionId)
    expect(w.decided[0]?.asked).toEqual(row.asked)
    expect(w.reports).toEqual(row.reports ?? [])
  })
})

describe("the run's points, outcomes and end", () => {
  it('serves the points its loaded hooks serve, and a gate when a declared hook did not load (the chain decides)', async () => {
    const loaded = await world(['guard'])
    expect(['beforeToolExecute', 'afterToolExecute', 'beforeModelRequest', 'afterRun'].map((p) => loaded.run.serves(p as never))).toEqual([true, true, false, false])
    const broken = await world(['broken'])
    expect(['beforeToolExecute', 'afterToolExecute'].map((p) => broken.run.serves(p as never))).toEqual([true, false])
    const refused = await broken.run.call('beforeToolExecute', CALL)
    expect(refused.result).toEqual({ allow: false, reason: "hookd refused the call: hook 'broken' could not decide (it did not load)", refusedBy: 'hookd', arguments: CALL.arguments })
  })

  it("an ask's outcome, as the agent reports it, is the decision's second line; one with no report is denied when the agent ends the run", async () => {
    const w = await world(['guard', 'lifecycle'])
    const first = await w.run.call('beforeToolExecute', CALL)
    const second = await w.run.call('beforeToolExecute', { ...CALL, id: 'toolu_2' })
    w.run.awaitOutcome('id toolu_1', first.decisionId as string)
    w.run.awaitOutcome('id toolu_2', second.decisionId as string)
    expect(w.run.awaitsOutcomes()).toBe(true)
    w.run.outcome('id toolu_1', 'allowed', 'PostToolUse')
    w.run.outcome('id nobody', 'allowed', 'PostToolUse')
    expect(w.outcomes).toEqual([{ decisionId: first.decisionId, outcome: 'allowed', by: 'agent', via: 'PostToolUse' }])
    await w.run.close('end_turn')
    expect(w.outcomes.slice(1)).toEqual([{ decisionId: second.decisionId, outcome: 'denied', by: 'agent', via: 'run ended' }])
    expect(w.run.awaitsOutcomes()).toBe(false)
    expect(w.runner.callsOf('lifecycle').map((c) => ({ point: c.point, args: c.args }))).toEqual([{ point: 'afterRun', args: [{ reason: 'end_turn' }] }])
    expect(w.reports).toEqual(['claude-code session sess-1: [lifecycle] notify: afterRun: end_turn'])
  })

  it('an ask still waiting when hookd ends the run is unknown: hookd cannot tell', async () => {
    const w = await world(['guard'])
    const asked = await w.run.call('beforeToolExecute', CALL)
    w.run.awaitOutcome('id toolu_1', asked.decisionId as string)
    await w.run.close('interrupted', 'hookd')
    expect(w.outcomes).toEqual([{ decisionId: asked.decisionId, outcome: 'unknown', by: 'hookd', via: 'run ended' }])
  })

  it("a call whose agent went away is cancelled: the hook's invocation is stopped, and the gate refused", async () => {
    const w = await world(['guard'])
    // As a sandboxed hook is: stopped when its invocation's signal aborts.
    w.runner.script('guard', async (r) => {
      await aborted(r.signal)
      return fails('cancelled', 'the invocation was cancelled')
    })
    const gone = new AbortController()
    setTimeout(() => gone.abort(), 10)
    const answer = await w.run.call('beforeToolExecute', CALL, gone.signal)
    expect(answer.result).toEqual({ allow: false, reason: "hookd refused the call: hook 'guard' could not decide (the call was cancelled)", refusedBy: 'hookd', arguments: CALL.arguments })
  })

  it("a hook's failure is a diagnostic the operator reads, the run's label first", async () => {
    const w = await world(['guard'])
    w.runner.script('guard', () => fails('throw', 'Error: boom'))
    const answer = await w.run.call('afterToolExecute', { call: CALL, result: { text: 'out', isError: false } })
    expect(answer.result).toEqual({ text: 'out', isError: false })
    expect(answer.diagnostics.map((d) => d.kind)).toEqual(['throw'])
    expect(w.reports).toEqual(["claude-code session sess-1: throw diagnostic from hook 'guard': hook 'guard' afterToolExecute: Error: boom"])
  })
})
