/** The chain (src/sidecar/chain/chain.ts): one point through a session's hooks, with the catalog's rules. */
import { describe, expect, it } from 'vitest'
import { type AnyPoint, type PointName, getPoint } from '../../src/protocol/points/points.js'
import { checkReturn, runChain } from '../../src/sidecar/chain/chain.js'
import { FakeRunner, aborted, chainStep, fails, mutates, nothing, returns } from './fakes.js'

const pointOf = (name: PointName): AnyPoint => getPoint(name) as AnyPoint

/** Runs `point` with the host's payload `raw` through hooks run by `runner`, each `[name, exports]`. */
function chain(runner: FakeRunner, name: PointName, raw: unknown, hooks: Array<[string, PointName[]]>, signal?: AbortSignal) {
  const point = pointOf(name)
  const steps = hooks.map(([hook, points]) => chainStep(runner, { name: hook, points }, signal))
  return runChain(point, 7, point.payload.parse(raw), steps, { signal, jsonDepth: 64 })
}

const call = { id: 'c1', name: 'shell', arguments: { command: 'ls' } }
const request = { system: 'You help.', model: 'm', messages: [{ role: 'user', text: 'hi' }] }
const toolResult = { call, result: { text: 'out', isError: false } }

describe('order and chaining', () => {
  it('runs the hooks in declared order, each getting the output of the one before', async () => {
    const runner = new FakeRunner()
      .script('a', (r) => returns({ system: `${(r.args[0] as typeof request).system} A` }))
      .script('b', (r) => returns({ system: `${(r.args[0] as typeof request).system} B` }))
      .script('c', (r) => returns({ system: `${(r.args[0] as typeof request).system} C` }))
    const result = await chain(runner, 'beforeModelRequest', request, [['c', ['beforeModelRequest']], ['a', ['beforeModelRequest']], ['b', ['beforeModelRequest']]])
    expect(runner.calls.map((c) => c.hook)).toEqual(['c', 'a', 'b'])
    expect(runner.calls.map((c) => (c.args[0] as typeof request).system)).toEqual(['You help.', 'You help. C', 'You help. C A'])
    expect(result).toMatchObject({ seq: 7, point: 'beforeModelRequest', result: { system: 'You help. C A B' }, diagnostics: [] })
    expect(result.trace.map((t) => [t.hook, t.outcome])).toEqual([['c', 'changed'], ['a', 'changed'], ['b', 'changed']])
  })

  it('passes each hook the point arguments after ctx: the call for beforeToolExecute, call and result for afterToolExecute', async () => {
    const runner = new FakeRunner().script('a', () => nothing())
    await chain(runner, 'beforeToolExecute', call, [['a', ['beforeToolExecute']]])
    await chain(runner, 'afterToolExecute', toolResult, [['a', ['afterToolExecute']]])
    expect(runner.calls.map((c) => [c.point, c.args, c.resultArg])).toEqual([
      ['beforeToolExecute', [call], undefined],
      ['afterToolExecute', [call, { text: 'out', isError: false }], undefined],
    ])
  })

  it('consults only the hooks that export the point, without a trace entry for the others', async () => {
    const runner = new FakeRunner().script('a', () => nothing())
    const result = await chain(runner, 'beforeModelRequest', request, [['a', ['beforeModelRequest']], ['other', ['afterRun']]])
    expect(runner.calls.map((c) => c.hook)).toEqual(['a'])
    expect(result.trace.map((t) => t.hook)).toEqual(['a'])
  })

  it('lets every returned field replace only itself', async () => {
    const runner = new FakeRunner().script('a', () => returns({ text: 'OUT' })).script('b', () => returns({ isError: true }))
    const result = await chain(runner, 'afterToolExecute', toolResult, [['a', ['afterToolExecute']], ['b', ['afterToolExecute']]])
    expect(result.result).toEqual({ text: 'OUT', isError: true })
    expect(runner.calls[1]?.args[1]).toEqual({ text: 'OUT', isError: false })
  })

  it('keeps the current value of a field returned as null, and traces a hook that changed nothing as no-opinion', async () => {
    const runner = new FakeRunner().script('a', () => returns({ text: 'A', thinking: 'T' })).script('b', () => returns({ text: null, thinking: null }))
    const result = await chain(runner, 'afterModelResponse', { text: 'x' }, [['a', ['afterModelResponse']], ['b', ['afterModelResponse']]])
    expect(result.result).toEqual({ text: 'A', thinking: 'T' })
    expect(result.trace.map((t) => t.outcome)).toEqual(['changed', 'no-opinion'])
    expect(result.diagnostics).toEqual([])
  })

  it('reads returning nothing, or null, as no opinion', async () => {
    const runner = new FakeRunner().script('a', () => nothing()).script('b', () => returns(null))
    const result = await chain(runner, 'beforeModelRequest', request, [['a', ['beforeModelRequest']], ['b', ['beforeModelRequest']]])
    expect(result.result).toEqual({ system: 'You help.' })
    expect(result.trace.map((t) => t.outcome)).toEqual(['no-opinion', 'no-opinion'])
    expect(result.diagnostics).toEqual([])
  })

  it('returns {} for points whose hooks may return nothing', async () => {
    const runner = new FakeRunner().script('a', () => nothing())
    const result = await chain(runner, 'beforeRun', { sessionId: 's', agentId: 'a', modelId: 'm' }, [['a', ['beforeRun']]])
    expect(result.result).toEqual({})
    expect(result.trace.map((t) => t.outcome)).toEqual(['no-opinion'])
  })
})

describe('refusal at beforeToolExecute', () => {
  it('stops at the first allow: false; later hooks are not run and the refusal carries its reason and hook', async () => {
    const runner = new FakeRunner()
      .script('rewrite', () => returns({ arguments: { command: 'ls -la' } }))
      .script('guard', () => returns({ allow: false, reason: 'no listing' }))
      .script('late', () => returns({ allow: true }))
    const hooks: Array<[string, PointName[]]> = [['rewrite', ['beforeToolExecute']], ['guard', ['beforeToolExecute']], ['late', ['beforeToolExecute']]]
    const result = await chain(runner, 'beforeToolExecute', call, hooks)
    expect(result.result).toEqual({ allow: false, reason: 'no listing', refusedBy: 'guard', arguments: { command: 'ls -la' } })
    expect(result.trace.map((t) => [t.hook, t.outcome])).toEqual([['rewrite', 'changed'], ['guard', 'refused'], ['late', 'not-run']])
    expect(result.trace[2]).toMatchObject({ durationUs: 0, cpuUs: 0 })
    expect(runner.calls.map((c) => c.hook)).toEqual(['rewrite', 'guard'])
  })

  it('gives a refusal without a reason one that names the hook', async () => {
    const runner = new FakeRunner().script('guard', () => returns({ allow: false }))
    const result = await chain(runner, 'beforeToolExecute', call, [['guard', ['beforeToolExecute']]])
    expect(result.result).toEqual({ allow: false, reason: "refused by hook 'guard'", refusedBy: 'guard', arguments: call.arguments })
  })

  it('treats reason as a field: kept on an allowed call, kept by a refusal that gives none, replaced by one that does', async () => {
    const runner = new FakeRunner()
      .script('notes', () => returns({ reason: 'noted' }))
      .script('quiet', () => returns({ allow: false }))
      .script('loud', () => returns({ allow: false, reason: 'loud says no' }))
    const gate = (hooks: string[]) => chain(runner, 'beforeToolExecute', call, hooks.map((h): [string, PointName[]] => [h, ['beforeToolExecute']]))
    expect((await gate(['notes'])).result).toEqual({ allow: true, reason: 'noted', arguments: call.arguments })
    expect((await gate(['notes', 'quiet'])).result).toEqual({ allow: false, reason: 'noted', refusedBy: 'quiet', arguments: call.arguments })
    expect((await gate(['notes', 'loud'])).result).toEqual({ allow: false, reason: 'loud says no', refusedBy: 'loud', arguments: call.arguments })
    expect((await gate(['notes'])).trace.map((t) => t.outcome)).toEqual(['changed'])
  })

  it('reads an answer with no field the point knows as invalid-result, never as allowed-and-changed', async () => {
    const runner = new FakeRunner().script('foreign', () => returns({ decision: 'block', why: 'x' }))
    const result = await chain(runner, 'beforeToolExecute', call, [['foreign', ['beforeToolExecute']]])
    expect(result.diagnostics.map((d) => [d.kind, d.message])).toEqual([
      [
        'invalid-result',
        "hook 'foreign': beforeToolExecute returned {'decision', 'why'}, none of which it accepts; return an object like {allow?, reason?, arguments?, defer?} or nothing; the hook was skipped; 'decision' is Claude Code's hook answer, not hookd's: to refuse the tool call, return { allow: false, reason: \"why, for the model\" } from beforeToolExecute (to let it run, return nothing)",
      ],
    ])
    expect(result.trace.map((t) => t.outcome)).toEqual(['failed'])
  })

  it('lets the tool call through with the arguments as the last hook left them', async () => {
    const runner = new FakeRunner()
      .script('a', () => returns({ arguments: { command: 'ls', cwd: '/tmp' } }))
      .script('b', (r) => returns({ allow: true, arguments: { ...(r.args[0] as typeof call).arguments, color: 'never' } }))
    const result = await chain(runner, 'beforeToolExecute', call, [['a', ['beforeToolExecute']], ['b', ['beforeToolExecute']]])
    expect(result.result).toEqual({ allow: true, arguments: { command: 'ls', cwd: '/tmp', color: 'never' } })
    expect(runner.calls[1]?.args[0]).toEqual({ ...call, arguments: { command: 'ls', cwd: '/tmp' } })
  })
})

describe('failures are diagnostics', () => {
  it('reports a failed hook with hook, point, kind, message, file, line and version, skips it and goes on', async () => {
    const runner = new FakeRunner()
      .script('a', () => returns({ system: 'A' }))
      .script('broken', () => fails('throw', 'TypeError: x is undefined', 3))
      .script('c', (r) => returns({ system: `${(r.args[0] as typeof request).system}C` }))
    const hooks: Array<[string, PointName[]]> = [['a', ['beforeModelRequest']], ['broken', ['beforeModelRequest']], ['c', ['beforeModelRequest']]]
    const result = await chain(runner, 'beforeModelRequest', request, hooks)
    expect(result.result).toEqual({ system: 'AC' })
    expect(result.diagnostics).toEqual([
      {
        hook: 'broken',
        point: 'beforeModelRequest',
        kind: 'throw',
        message: "hook 'broken' beforeModelRequest: TypeError: x is undefined",
        file: 'broken/index.js',
        line: 3,
        version: 'broken-v1',
      },
    ])
    expect(result.trace.map((t) => t.outcome)).toEqual(['changed', 'failed', 'changed'])
  })

  it.each(['timeout', 'cpu', 'memory', 'worker-crash', 'limit', 'capability-denied'] as const)('reports a %s failure with its kind and no line when none is known', async (kind) => {
    const runner = new FakeRunner().script('a', () => fails(kind, 'it went wrong'))
    const result = await chain(runner, 'afterToolExecute', toolResult, [['a', ['afterToolExecute']]])
    expect(result.diagnostics).toEqual([
      { hook: 'a', point: 'afterToolExecute', kind, message: "hook 'a' afterToolExecute: it went wrong", file: 'a/index.js', version: 'a-v1' },
    ])
    expect(result.result).toEqual(toolResult.result)
  })

  it('lets a gate through when its only hook threw (a failure is skipped like any other)', async () => {
    const runner = new FakeRunner().script('guard', () => fails('throw', 'Error: boom'))
    const result = await chain(runner, 'beforeToolExecute', call, [['guard', ['beforeToolExecute']]])
    expect(result.result).toEqual({ allow: true, arguments: call.arguments })
    expect(result.trace.map((t) => t.outcome)).toEqual(['failed'])
  })

  it('reports an answer of the wrong type as invalid-result', async () => {
    const runner = new FakeRunner().script('a', () => returns('allow'))
    const result = await chain(runner, 'beforeToolExecute', call, [['a', ['beforeToolExecute']]])
    expect(result.diagnostics).toEqual([
      expect.objectContaining({
        kind: 'invalid-result',
        message: "hook 'a': beforeToolExecute must return an object like {allow?, reason?, arguments?, defer?} or nothing; it returned a string; the hook was skipped",
      }),
    ])
    expect(result.trace.map((t) => t.outcome)).toEqual(['failed'])
  })

  it('reports a field of the wrong type as invalid-result and applies none of the answer', async () => {
    const runner = new FakeRunner().script('a', () => returns({ arguments: { command: 'pwd' }, allow: 'no' }))
    const result = await chain(runner, 'beforeToolExecute', call, [['a', ['beforeToolExecute']]])
    expect(result.result).toEqual({ allow: true, arguments: call.arguments })
    expect(result.diagnostics.map((d) => [d.kind, d.message])).toEqual([
      ['invalid-result', "hook 'a': beforeToolExecute returned an invalid 'allow' (a string): Invalid input: expected boolean, received string; the hook was skipped"],
    ])
  })

  it('reports an array answer, and any answer from a point that takes none, as invalid-result', async () => {
    const runner = new FakeRunner().script('a', () => returns([1])).script('b', () => returns(42))
    const rm = await chain(runner, 'afterModelResponse', { text: 't' }, [['a', ['afterModelResponse']]])
    expect(rm.diagnostics[0]?.message).toBe(
      "hook 'a': afterModelResponse must return an object like {text?, thinking?} or nothing; it returned an array; the hook was skipped",
    )
    const run = await chain(runner, 'afterRun', { reason: 'end_turn' }, [['b', ['afterRun']]])
    expect(run.diagnostics[0]?.message).toBe("hook 'b': afterRun must return nothing; it returned a number; the hook was skipped")
  })

  it('reports an answer that is not JSON as internal', async () => {
    const runner = new FakeRunner().script('a', () => ({ rawValue: '{oops' }))
    const result = await chain(runner, 'beforeModelRequest', request, [['a', ['beforeModelRequest']]])
    expect(result.diagnostics.map((d) => [d.kind, d.message])).toEqual([['internal', expect.stringMatching(/^hook 'a' beforeModelRequest: the returned value is not valid JSON \(.+\); the hook was skipped$/)]])
    expect(result.trace.map((t) => t.outcome)).toEqual(['failed'])
  })

  it('ignores a field the point does not allow, says so, and applies the rest', async () => {
    const runner = new FakeRunner().script('a', () => returns({ system: 'S', model: 'other', messages: [] }))
    const result = await chain(runner, 'beforeModelRequest', request, [['a', ['beforeModelRequest']]])
    expect(result.result).toEqual({ system: 'S' })
    expect(result.diagnostics).toEqual([
      {
        hook: 'a',
        point: 'beforeModelRequest',
        kind: 'ignored-field',
        message: "hook 'a' returned 'model', 'messages', which beforeModelRequest does not let a hook change; ignored (it accepts: system)",
        file: 'a/index.js',
        version: 'a-v1',
      },
    ])
    expect(result.trace.map((t) => t.outcome)).toEqual(['changed'])
  })

  it('says a point accepts nothing when a hook returns fields to one that takes none', async () => {
    const runner = new FakeRunner().script('a', () => returns({ note: 'hi' }))
    const result = await chain(runner, 'beforeRun', { sessionId: 's', agentId: 'a', modelId: 'm' }, [['a', ['beforeRun']]])
    expect(result.diagnostics.map((d) => [d.kind, d.message])).toEqual([
      ['ignored-field', "hook 'a' returned 'note', which beforeRun does not let a hook change; ignored (it accepts: nothing)"],
    ])
    expect(result.trace.map((t) => t.outcome)).toEqual(['no-opinion'])
  })
})

describe('event points (mutate mode)', () => {
  const gateEvent = { callId: 'c1', name: 'shell', input: { command: 'rm -rf /' }, turn: 2 }

  it('gives the handler the event to mutate and returns only the changed fields the point allows', async () => {
    const runner = new FakeRunner().script('redact', mutates((e) => void (e.result = 'TOKEN=<redacted>')))
    const event = { callId: 'c1', name: 'shell', input: {}, result: 'TOKEN=abc', isError: false, outputBytes: 9 }
    const result = await chain(runner, 'tool:transform', event, [['redact', ['tool:transform']]])
    expect(runner.calls[0]).toMatchObject({ point: 'tool:transform', args: [event], resultArg: 0 })
    expect(result.result).toEqual({ result: 'TOKEN=<redacted>' })
    expect(result.trace.map((t) => t.outcome)).toEqual(['changed'])
  })

  it('chains mutations: the next handler sees the event as the one before left it', async () => {
    const runner = new FakeRunner()
      .script('a', mutates((e) => void (e.messages = [...(e.messages as unknown[]), 'a'])))
      .script('b', mutates((e) => void (e.messages = [...(e.messages as unknown[]), 'b'])))
    const result = await chain(runner, 'context:transform', { messages: ['m'] }, [['a', ['context:transform']], ['b', ['context:transform']]])
    expect(runner.calls[1]?.args).toEqual([{ messages: ['m', 'a'] }])
    expect(result.result).toEqual({ messages: ['m', 'a', 'b'] })
  })

  it('leaves out a field changed back to what the host sent', async () => {
    const runner = new FakeRunner().script('a', mutates((e) => void (e.system = 'X'))).script('b', mutates((e) => void (e.system = 'S')))
    const result = await chain(runner, 'system:transform', { system: 'S' }, [['a', ['system:transform']], ['b', ['system:transform']]])
    expect(result.result).toEqual({})
    expect(result.trace.map((t) => t.outcome)).toEqual(['changed', 'changed'])
  })

  it('counts a null written by a handler as a value', async () => {
    const runner = new FakeRunner().script('a', mutates((e) => void (e.result = null)))
    const result = await chain(runner, 'tool:transform', { result: 'text', isError: false }, [['a', ['tool:transform']]])
    expect(result.result).toEqual({ result: null })
  })

  it('ignores a change to a field the event point does not allow', async () => {
    const runner = new FakeRunner().script('a', mutates((e) => {
      e.name = 'other'
      e.block = true
    }))
    const result = await chain(runner, 'tool:gate', gateEvent, [['a', ['tool:gate']]])
    expect(result.result).toEqual({ block: true })
    expect(result.diagnostics.map((d) => [d.kind, d.message])).toEqual([
      ['ignored-field', "hook 'a' changed 'name', which tool:gate does not let a hook change; ignored (it accepts: block, reason, result)"],
    ])
  })

  it('reports a handler that replaced the event with something that is not an object', async () => {
    const runner = new FakeRunner().script('a', () => returns('gone'))
    const result = await chain(runner, 'tool:transform', { result: 'x' }, [['a', ['tool:transform']]])
    expect(result.diagnostics.map((d) => [d.kind, d.message])).toEqual([
      ['invalid-result', "hook 'a': the event is no longer an object; the hook was skipped"],
    ])
  })

  it('reports a mutated field of the wrong type as invalid-result', async () => {
    const runner = new FakeRunner().script('a', mutates((e) => void (e.system = 42)))
    const result = await chain(runner, 'system:transform', { system: 'S' }, [['a', ['system:transform']]])
    expect(result.diagnostics.map((d) => d.kind)).toEqual(['invalid-result'])
    expect(result.diagnostics[0]?.message).toMatch(/^hook 'a': system:transform returned an invalid 'system' \(a number\): /)
    expect(result.result).toEqual({})
  })

  it('runs observer points: a handler may look but its changes are ignored', async () => {
    const runner = new FakeRunner().script('a', mutates((e) => void (e.usage = 0)))
    const result = await chain(runner, 'usage', { usage: 10 }, [['a', ['usage']]])
    expect(result.result).toEqual({})
    expect(result.diagnostics.map((d) => d.kind)).toEqual(['ignored-field'])
    expect(result.diagnostics[0]?.message).toContain('(it accepts: nothing)')
  })
})

describe('step-point handlers serving event points through their alias', () => {
  const gateEvent = { callId: 'c1', name: 'shell', input: { command: 'rm -rf /' } }

  it('tool:gate <- beforeToolExecute: the handler gets a tool call and allow: false blocks', async () => {
    const runner = new FakeRunner().script('guard', () => returns({ allow: false, reason: 'dangerous' }))
    const result = await chain(runner, 'tool:gate', gateEvent, [['guard', ['beforeToolExecute']]])
    expect(runner.calls[0]).toMatchObject({ point: 'beforeToolExecute', args: [{ id: 'c1', name: 'shell', arguments: { command: 'rm -rf /' } }], resultArg: undefined })
    expect(result.result).toEqual({ block: true, reason: 'dangerous' })
    expect(result.trace.map((t) => t.outcome)).toEqual(['changed'])
  })

  it('tool:gate: rewritten arguments cannot be expressed and are reported as ignored, naming the alias', async () => {
    const runner = new FakeRunner().script('rewrite', () => returns({ arguments: { command: 'ls' } }))
    const result = await chain(runner, 'tool:gate', gateEvent, [['rewrite', ['beforeToolExecute']]])
    expect(result.result).toEqual({})
    expect(result.diagnostics).toEqual([
      {
        hook: 'rewrite',
        point: 'tool:gate',
        kind: 'ignored-field',
        message: "hook 'rewrite' (beforeToolExecute serving tool:gate) returned 'arguments', which tool:gate does not let a hook change; ignored (it accepts: block, reason, result)",
        file: 'rewrite/index.js',
        version: 'rewrite-v1',
      },
    ])
    expect(result.trace.map((t) => t.outcome)).toEqual(['no-opinion'])
  })

  it('tool:gate: once a call is blocked, later aliased handlers are not run', async () => {
    const runner = new FakeRunner().script('native', mutates((e) => {
      e.block = true
      e.reason = 'native says no'
    })).script('guard', () => returns({ allow: true }))
    const result = await chain(runner, 'tool:gate', gateEvent, [['native', ['tool:gate']], ['guard', ['beforeToolExecute']]])
    expect(result.result).toEqual({ block: true, reason: 'native says no' })
    expect(result.trace.map((t) => [t.hook, t.outcome])).toEqual([['native', 'changed'], ['guard', 'not-run']])
    expect(runner.callsOf('guard')).toEqual([])
  })

  it('prefers a hook\'s own export of the event point over its aliased step point', async () => {
    const runner = new FakeRunner().script('both', mutates((e) => void (e.reason = 'own export')))
    await chain(runner, 'tool:gate', gateEvent, [['both', ['beforeToolExecute', 'tool:gate']]])
    expect(runner.calls.map((c) => c.point)).toEqual(['tool:gate'])
  })

  it('tool:transform <- afterToolExecute: the handler gets call and result, and its text becomes the result', async () => {
    const runner = new FakeRunner().script('upper', (r) => returns({ text: (r.args[1] as { text: string }).text.toUpperCase(), isError: true }))
    const event = { callId: 'c1', name: 'read_file', input: { path: 'a' }, result: { lines: 2 }, isError: false }
    const result = await chain(runner, 'tool:transform', event, [['upper', ['afterToolExecute']]])
    expect(runner.calls[0]?.args).toEqual([{ id: 'c1', name: 'read_file', arguments: { path: 'a' } }, { text: '{"lines":2}', isError: false }])
    expect(result.result).toEqual({ result: '{"LINES":2}', isError: true })
  })

  it('system:transform <- beforeModelRequest: the handler gets {system, model, messages} and its system is applied', async () => {
    const runner = new FakeRunner().script('date', (r) => returns({ system: `${(r.args[0] as typeof request).system}\nToday.` }))
    const event = { system: 'Be brief.', model: 'claude', messages: [{ role: 'user', text: 'hi' }], turn: 3 }
    const result = await chain(runner, 'system:transform', event, [['date', ['beforeModelRequest']]])
    expect(runner.calls[0]?.args).toEqual([{ system: 'Be brief.', model: 'claude', messages: [{ role: 'user', text: 'hi' }] }])
    expect(result.result).toEqual({ system: 'Be brief.\nToday.' })
  })

  it('skips an aliased handler, as internal, when the event cannot become its payload', async () => {
    const runner = new FakeRunner().script('date', () => returns({ system: 'x' }))
    const result = await chain(runner, 'system:transform', { system: 'S', messages: [42] }, [['date', ['beforeModelRequest']]])
    expect(runner.calls).toEqual([])
    expect(result.diagnostics.map((d) => [d.kind, d.message])).toEqual([
      ['internal', "hook 'date' (beforeModelRequest serving system:transform): the system:transform event could not be turned into a beforeModelRequest payload; the hook was skipped"],
    ])
    expect(result.trace).toEqual([{ hook: 'date', version: 'date-v1', outcome: 'failed', durationUs: 0, cpuUs: 0 }])
  })

  it('labels a failure of an aliased handler with both points', async () => {
    const runner = new FakeRunner().script('guard', () => fails('throw', 'Error: boom', 2))
    const result = await chain(runner, 'tool:gate', gateEvent, [['guard', ['beforeToolExecute']]])
    expect(result.diagnostics).toEqual([
      expect.objectContaining({ point: 'tool:gate', kind: 'throw', line: 2, message: "hook 'guard' (beforeToolExecute serving tool:gate) beforeToolExecute: Error: boom" }),
    ])
  })
})

describe('cancellation', () => {
  it('marks every hook cancelled, running none, when the signal is already aborted', async () => {
    const runner = new FakeRunner().script('a', () => nothing())
    const abort = new AbortController()
    abort.abort()
    const result = await chain(runner, 'beforeModelRequest', request, [['a', ['beforeModelRequest']], ['b', ['beforeModelRequest']]], abort.signal)
    expect(runner.calls).toEqual([])
    expect(result.trace.map((t) => [t.hook, t.outcome])).toEqual([['a', 'cancelled'], ['b', 'cancelled']])
    expect(result.diagnostics).toEqual([])
    expect(result.result).toEqual({ system: 'You help.' })
  })

  it('reports the hook running at the cancel as cancelled and marks the rest cancelled', async () => {
    const abort = new AbortController()
    const runner = new FakeRunner()
      .script('a', () => returns({ system: 'A' }))
      .script('slow', async (r) => {
        abort.abort()
        await aborted(r.signal)
        return fails('cancelled', 'the point call was cancelled')
      })
      .script('c', () => returns({ system: 'C' }))
    const hooks: Array<[string, PointName[]]> = [['a', ['beforeModelRequest']], ['slow', ['beforeModelRequest']], ['c', ['beforeModelRequest']]]
    const result = await chain(runner, 'beforeModelRequest', request, hooks, abort.signal)
    expect(result.trace.map((t) => [t.hook, t.outcome])).toEqual([['a', 'changed'], ['slow', 'cancelled'], ['c', 'cancelled']])
    expect(result.diagnostics.map((d) => [d.hook, d.kind, d.message])).toEqual([['slow', 'cancelled', "hook 'slow' beforeModelRequest: the point call was cancelled"]])
    expect(result.result).toEqual({ system: 'A' })
  })
})

describe('a cancelled gate', () => {
  const gateEvent = { callId: 'c1', name: 'shell', input: { command: 'rm -rf /' } }

  it('is refused by hookd, whatever the failure policy, when its hooks had not decided', async () => {
    for (const onError of ['default', 'skip'] as const) {
      const abort = new AbortController()
      const runner = new FakeRunner().script('asks', async (r) => {
        abort.abort()
        await aborted(r.signal)
        return fails('cancelled', 'the point call was cancelled')
      })
      const point = pointOf('tool:gate')
      const steps = [chainStep(runner, { name: 'asks', points: ['tool:gate'] }, abort.signal)]
      const result = await runChain(point, 1, point.payload.parse(gateEvent), steps, { signal: abort.signal, jsonDepth: 64, onError: () => onError })
      expect(result.result).toEqual({
        block: true,
        reason: onError === 'skip' ? 'hookd refused the call: the host cancelled it before its hooks decided' : "hookd refused the call: hook 'asks' could not decide (the call was cancelled)",
      })
    }
  })

  it('keeps the block a hook already made, with its reason, when a later hook is cancelled', async () => {
    const abort = new AbortController()
    const runner = new FakeRunner()
      .script('blocks', mutates((e) => Object.assign(e, { block: true, reason: 'blocks says no' })))
      .script('asks', async (r) => {
        abort.abort()
        await aborted(r.signal)
        return fails('cancelled', 'the point call was cancelled')
      })
    const result = await chain(runner, 'tool:gate', gateEvent, [['blocks', ['tool:gate']], ['asks', ['tool:gate']]], abort.signal)
    expect(result.result).toEqual({ block: true, reason: 'blocks says no' })
    expect(result.trace.map((t) => t.outcome)).toEqual(['changed', 'cancelled'])
  })
})

describe('the trace', () => {
  it('records each hook\'s version, outcome, wall and CPU time as the runner reported them', async () => {
    const runner = new FakeRunner()
      .script('a', () => ({ value: { system: 'A' }, wallUs: 1500, cpuUs: 700 }))
      .script('b', () => ({ nothing: true, wallUs: 20, cpuUs: 10 }))
      .script('c', () => ({ fail: 'throw', message: 'x', wallUs: 300, cpuUs: 290 }))
    const result = await chain(runner, 'beforeModelRequest', request, [['a', ['beforeModelRequest']], ['b', ['beforeModelRequest']], ['c', ['beforeModelRequest']]])
    expect(result.trace).toEqual([
      { hook: 'a', version: 'a-v1', outcome: 'changed', durationUs: 1500, cpuUs: 700 },
      { hook: 'b', version: 'b-v1', outcome: 'no-opinion', durationUs: 20, cpuUs: 10 },
      { hook: 'c', version: 'c-v1', outcome: 'failed', durationUs: 300, cpuUs: 290 },
    ])
    expect(Number.isInteger(result.durationUs) && result.durationUs >= 0).toBe(true)
  })

  it('returns an empty trace and the payload\'s result when no hook serves the point', async () => {
    const result = await chain(new FakeRunner(), 'afterToolExecute', toolResult, [['a', ['beforeRun']]])
    expect(result).toMatchObject({ result: toolResult.result, trace: [], diagnostics: [] })
  })
})

describe('checkReturn', () => {
  const bmr = pointOf('beforeModelRequest')
  const gate = pointOf('tool:gate')

  it('keeps fields returned as undefined or null at returning points', () => {
    expect(checkReturn(bmr, { system: undefined })).toEqual({ changes: {}, ignored: [] })
    expect(checkReturn(bmr, { system: null })).toEqual({ changes: {}, ignored: [] })
    expect(checkReturn(bmr, { system: 'S', other: 1 })).toEqual({ changes: { system: 'S' }, ignored: ['other'] })
  })

  it('treats a null as a value when nulls do not keep (mutating points)', () => {
    expect(checkReturn(gate, { result: null }, false)).toEqual({ changes: { result: null }, ignored: [] })
    expect(checkReturn(bmr, { system: null }, false).error).toMatch(/^beforeModelRequest returned an invalid 'system' \(null\): /)
  })

  it('does not take an inherited property for an allowed field', () => {
    expect(checkReturn(bmr, { system: 'S', toString: 'x', constructor: 'y' })).toEqual({ changes: { system: 'S' }, ignored: ['toString', 'constructor'] })
    expect(checkReturn(bmr, { toString: 'x' }).error).toBe(
      "beforeModelRequest returned {'toString'}, none of which it accepts; return an object like {system?} or nothing",
    )
  })
})

describe('failures at a gate', () => {
  const gateCall = { id: 'c1', name: 'shell', arguments: { command: 'ls' } }

  async function gateWith(kind: Parameters<typeof fails>[0], onError?: 'default' | 'refuse' | 'skip') {
    const runner = new FakeRunner().script('g', () => fails(kind, 'it went wrong')).script('next', () => returns({ arguments: { after: true } }))
    const point = pointOf('beforeToolExecute')
    const steps = [chainStep(runner, { name: 'g', points: ['beforeToolExecute'] }), chainStep(runner, { name: 'next', points: ['beforeToolExecute'] })]
    return runChain(point, 1, point.payload.parse(gateCall), steps, { jsonDepth: 64, ...(onError ? { onError: () => onError } : {}) })
  }

  it.each(['timeout', 'cpu', 'memory', 'result-too-large', 'limit', 'worker-crash', 'cancelled', 'unavailable', 'internal'] as const)(
    'a hook that could not decide (%s) refuses the call by default, naming itself; later hooks are not consulted',
    async (kind) => {
      const result = await gateWith(kind)
      expect(result.result).toMatchObject({ allow: false, refusedBy: 'hookd', reason: expect.stringMatching(/^hookd refused the call: hook 'g' could not decide \(/) })
      expect(result.trace.map((t) => t.outcome)).toEqual([kind === 'cancelled' ? 'cancelled' : 'failed', 'not-run'])
    },
  )

  it.each(['throw', 'invalid-result', 'load', 'hook-removed', 'capability-denied'] as const)(
    'what the hook did itself (%s) is skipped by default, as the seed says',
    async (kind) => {
      const result = await gateWith(kind)
      expect(result.result).toEqual({ allow: true, arguments: { after: true } })
    },
  )

  it('"refuse" refuses on any failure; "skip" on none', async () => {
    expect((await gateWith('throw', 'refuse')).result).toMatchObject({ allow: false, refusedBy: 'hookd', reason: "hookd refused the call: hook 'g' could not decide (it threw)" })
    expect((await gateWith('worker-crash', 'skip')).result).toEqual({ allow: true, arguments: { after: true } })
  })

  it('a point that is not a gate always skips a failed hook', async () => {
    const runner = new FakeRunner().script('g', () => fails('worker-crash', 'gone'))
    const point = pointOf('beforeModelRequest')
    const result = await runChain(point, 1, point.payload.parse({ system: 'S', model: 'm', messages: [] }), [chainStep(runner, { name: 'g', points: ['beforeModelRequest'] })], {
      jsonDepth: 64,
      onError: () => 'refuse',
    })
    expect(result.result).toEqual({ system: 'S' })
  })
})
