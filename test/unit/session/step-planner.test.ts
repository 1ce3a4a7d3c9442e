/**
 * A session's step planner (src/sidecar/session/step-planner.ts) alone, in memory: what the chain runs
 * for one point call, over a real registry with the fake loader and runner. The steps are invoked by
 * hand or through runChain, so each shows which hook runs, through which export, with what ctx.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { getPoint, type AnyPoint } from '../../../src/protocol/points/points.js'
import type { OnError, OpenSessionWire } from '../../../src/protocol/wire.js'
import { runChain } from '../../../src/sidecar/chain/chain.js'
import type { Registry } from '../../../src/sidecar/hooks/registry.js'
import { StepPlanner } from '../../../src/sidecar/session/step-planner.js'
import {
  FakeLoader,
  FakeRunner,
  type FakeRunnerOptions,
  type FakeTenantOptions,
  type HookFolder,
  type HooksRoot,
  exporting,
  fakeTenant,
  hooksFolder,
  loadedRegistry,
  nothing,
  openRequest,
  returns,
} from '../fakes.js'

const opened: Array<{ folder: HooksRoot; registry: Registry }> = []

afterEach(async () => {
  for (const { folder, registry } of opened.splice(0)) {
    await registry.close()
    await folder.dispose()
  }
})

interface Planned {
  planner: StepPlanner
  runner: FakeRunner
  folder: HooksRoot
  registry: Registry
  /** The hosts the planner asked for, as [seq, hook, point]. */
  hosts: Array<[number, string, string]>
}

async function planner(
  hooks: Record<string, HookFolder>,
  declared: string[],
  options: { open?: Partial<OpenSessionWire>; tenant?: FakeTenantOptions; runner?: FakeRunnerOptions; loader?: (l: FakeLoader) => void } = {},
): Promise<Planned> {
  const folder = await hooksFolder(hooks)
  const loader = new FakeLoader()
  options.loader?.(loader)
  const runner = new FakeRunner(options.runner)
  const registry = await loadedRegistry(folder.root, loader, runner)
  opened.push({ folder, registry })
  const hosts: Array<[number, string, string]> = []
  const planner = new StepPlanner({
    tenant: fakeTenant(registry, runner, options.tenant),
    open: openRequest({ hooks: declared, ...options.open }),
    hooks: declared,
    env: { TEAM: 'infra' },
    host: (seq, hook, point) => {
      hosts.push([seq, hook, point])
      return { onCapability: () => Promise.resolve({ ok: true, value: `${hook} asked at ${point}` }), onLog: () => {} }
    },
  })
  return { planner, runner, folder, registry, hosts }
}

const point = (name: string): AnyPoint => getPoint(name) as AnyPoint
const call = { id: 'c1', name: 'shell', arguments: { command: 'ls' } }
/** A tool:gate payload as the session hands it to the planner: parsed by the point's schema. */
const gateEvent: unknown = point('tool:gate').payload.parse({ callId: 'c1', name: 'shell', input: { command: 'ls' } })
const signal = new AbortController().signal
/** A hook that exports an event point by its own name (its exports are scripted: FakeLoader reads only `exports.NAME`). */
const eventExport = "exports['tool:gate'] = function () {}\n"

describe('steps', () => {
  it('serves an event point through the step point it aliases: tool:gate runs the hook\'s beforeToolExecute, ctx naming tool:gate', async () => {
    const p = await planner({ guard: { index: exporting('beforeToolExecute') }, audit: { index: exporting('afterRun') } }, ['audit', 'guard'])
    p.runner.script('guard', () => returns({ allow: false, reason: 'not here' }))
    const steps = p.planner.steps(4, point('tool:gate'), gateEvent, signal)
    expect(steps.map((s) => s.hook.name)).toEqual(['guard'])
    expect(p.hosts).toEqual([[4, 'guard', 'tool:gate']])
    // The chain picks the export and turns the event into the step point's arguments and back.
    const result = await runChain(point('tool:gate'), 4, gateEvent, steps, { signal, jsonDepth: 64 })
    expect(result.result).toEqual({ block: true, reason: 'not here' })
    const [run] = p.runner.calls
    expect([run?.hook, run?.point, run?.args, run?.ctx.hook]).toEqual([
      'guard',
      'beforeToolExecute',
      [{ id: 'c1', name: 'shell', arguments: { command: 'ls' } }],
      { name: 'guard', version: p.registry.get('guard')?.version, point: 'tool:gate' },
    ])
  })

  it('skips a hook for a tool its hook.json "tools" does not list, at every point about one call, and nowhere else', async () => {
    const p = await planner(
      {
        files: { index: eventExport, json: { tools: ['write_file', 'edit_file'] } },
        shells: { index: eventExport, json: { tools: ['shell'] } },
        every: { index: eventExport },
      },
      ['files', 'shells', 'every'],
      { loader: (l) => ['files', 'shells', 'every'].forEach((n) => void l.script(n, { ok: true, exports: ['beforeToolExecute', 'afterToolExecute', 'permission:request', 'beforeRun'] })) },
    )
    const names = (name: string, payload: unknown): string[] => p.planner.steps(1, point(name), payload, signal).map((s) => s.hook.name)
    expect(names('beforeToolExecute', point('beforeToolExecute').payload.parse(call))).toEqual(['shells', 'every'])
    expect(names('afterToolExecute', point('afterToolExecute').payload.parse({ call: { ...call, name: 'write_file' }, result: { text: '', isError: false } }))).toEqual(['files', 'every'])
    expect(names('tool:gate', gateEvent)).toEqual(['shells', 'every'])
    expect(names('permission:request', point('permission:request').payload.parse({ ...call, name: 'edit_file' }))).toEqual(['files', 'every'])
    // A call under a name that is no canonical tool's (an MCP tool, a native call with no canonical
    // reading such as a Codex patch of two files, a host's own name) reaches every hook: nothing says
    // it is outside what a hook guards.
    expect(names('beforeToolExecute', point('beforeToolExecute').payload.parse({ ...call, name: 'mcp__db__query' }))).toEqual(['files', 'shells', 'every'])
    expect(names('beforeToolExecute', point('beforeToolExecute').payload.parse({ ...call, name: 'apply_patch' }))).toEqual(['files', 'shells', 'every'])
    expect(names('beforeRun', { sessionId: 's', agentId: 'a', modelId: 'm' })).toEqual(['files', 'shells', 'every'])
  })

  it('refuses a hook.json "tools" that is no list of names, or longer than there are tools twice over, saying so', async () => {
    const p = await planner(
      {
        one: { index: exporting('beforeToolExecute'), json: { tools: 'shell' } },
        many: { index: exporting('beforeToolExecute'), json: { tools: Array.from({ length: 1000 }, () => 'shell') } },
        none: { index: exporting('beforeToolExecute'), json: { tools: [] } },
      },
      ['one', 'many', 'none'],
    )
    const error = (name: string): string | undefined => p.registry.list().find((h) => h.name === name)?.lastError?.message
    expect(error('one')).toContain('hook.json is invalid: tools: expected a list of tool names, e.g. ["shell", "write_file"]')
    expect(error('many')).toContain('hook.json is invalid: tools: lists more names than there are tools (9)')
    expect(error('none')).toContain('hook.json is invalid: tools: lists no tool; leave "tools" out for a hook called for every tool call')
    for (const name of ['one', 'many', 'none']) expect(p.registry.get(name)).toBeUndefined()
  })

  it('refuses a hook.json whose "tools" names no canonical tool, saying the names', async () => {
    const p = await planner({ typo: { index: exporting('beforeToolExecute'), json: { tools: ['shel'] } } }, ['typo'])
    expect(p.registry.get('typo')).toBeUndefined()
    expect(p.registry.list().find((h) => h.name === 'typo')?.lastError?.message).toContain(
      `hook.json is invalid: tools[0]: 'shel' is not a canonical tool name (did you mean 'shell'?); the names are shell, read_file, write_file, edit_file, web_fetch, web_search, find_files, search_files, list_files`,
    )
  })

  it('keeps the declared order, and runs a hook\'s own export of the event point when it has one', async () => {
    const p = await planner({ a: { index: eventExport }, b: { index: exporting('afterToolExecute') }, c: { index: exporting('beforeRun') } }, ['c', 'b', 'a'], {
      loader: (l) => void l.script('a', { ok: true, exports: ['tool:transform'] }),
    })
    const steps = p.planner.steps(1, point('tool:transform'), {}, signal)
    expect(steps.map((s) => [s.hook.name, [...s.hook.points]])).toEqual([['b', ['afterToolExecute']], ['a', ['tool:transform']]])
  })

  it('gives each hook the run\'s ctx data, its own config and the session\'s env', async () => {
    const p = await planner({ guard: { index: exporting('beforeRun'), json: { config: { strict: true } } } }, ['guard'], { open: { workdir: '/w', sessionId: 'run-7', interactive: false, autoApprove: true, agentId: 'a1', modelId: 'm1' } })
    const hook = p.registry.get('guard')
    if (!hook) throw new Error('guard did not load')
    expect(p.planner.ctxFor(hook, 'agent:start')).toEqual({
      workdir: '/w',
      session: { id: 'run-7', interactive: false, autoApprove: true },
      agent: { id: 'a1', modelId: 'm1' },
      config: { strict: true },
      system: expect.objectContaining({ platform: process.platform, arch: process.arch }),
      env: { TEAM: 'infra' },
      hook: { name: 'guard', version: hook.version, point: 'agent:start' },
    })
  })

  it('reports a hook removed mid-session as hook-removed on the points it served, and nothing on the others', async () => {
    const p = await planner({ guard: { index: exporting('beforeToolExecute') } }, ['guard'])
    await p.folder.remove('guard')
    await p.registry.loadOne('guard')
    const steps = p.planner.steps(1, point('tool:gate'), gateEvent, signal)
    expect(steps.map((s) => s.hook.name)).toEqual(['guard'])
    expect((await steps[0]?.invoke('beforeToolExecute', [call], undefined))?.outcome).toEqual({
      ok: false,
      kind: 'hook-removed',
      message: `the hook's folder ${p.folder.root}/guard was removed while this session used it; skipped. Restore the folder, or drop 'guard' from the agent's hooks`,
    })
    expect(p.planner.steps(2, point('afterRun'), { reason: 'end_turn' }, signal)).toEqual([])
    expect(p.runner.calls).toEqual([])
  })

  it('refuses every gate while a hook that must not be skipped never loaded, and skips it elsewhere', async () => {
    const broken = { broken: { index: 'x = (' } }
    const loader = (l: FakeLoader): void => void l.script('broken', { ok: false, message: 'SyntaxError: Unexpected end of input' })
    const strict = await planner(broken, ['broken'], { open: { onError: 'refuse' }, loader })
    const [step, ...rest] = strict.planner.steps(1, point('tool:gate'), gateEvent, signal)
    expect(rest).toEqual([])
    expect(step?.hook).toEqual({ name: 'broken', version: '', filename: 'broken/index.js', points: new Set(['tool:gate']), onError: 'refuse', layer: 'session' })
    expect((await step?.invoke('beforeToolExecute', [call], undefined))?.outcome).toMatchObject({ ok: false, kind: 'load', message: expect.stringMatching(/^it did not load \(SyntaxError: Unexpected end of input/) })
    expect(strict.planner.steps(2, point('afterRun'), {}, signal)).toEqual([])
    const lenient = await planner(broken, ['broken'], { loader })
    expect(lenient.planner.steps(1, point('tool:gate'), gateEvent, signal)).toEqual([])
  })

  it('runs the steps as one chain when two or more share a runner that can run chains, each with its onError', async () => {
    const hooks = { a: { index: exporting('beforeToolExecute'), json: { onError: 'skip' } }, b: { index: eventExport } }
    const p = await planner(hooks, ['a', 'b'], { runner: { chains: true }, loader: (l) => void l.script('b', { ok: true, exports: ['tool:gate'] }) })
    p.runner.script('a', () => nothing()).script('b', () => nothing())
    await runChain(point('tool:gate'), 1, gateEvent, p.planner.steps(1, point('tool:gate'), gateEvent, signal), { signal, jsonDepth: 64 })
    expect(p.runner.chainRequests.map((r) => [r.point, r.steps.map((s) => [s.hook.name, s.points, s.onError, s.ctx.hook.point])])).toEqual([
      ['tool:gate', [['a', ['beforeToolExecute'], 'skip', 'tool:gate'], ['b', ['tool:gate'], 'default', 'tool:gate']]],
    ])
    // One step alone is invoked on its own.
    const single = await planner({ a: hooks.a }, ['a'], { runner: { chains: true } })
    single.runner.script('a', () => nothing())
    await single.planner.steps(1, point('tool:gate'), gateEvent, signal)[0]?.invoke('beforeToolExecute', [call], undefined)
    expect([single.runner.chainRequests, single.runner.calls.map((c) => c.via)]).toEqual([[], ['invoke']])
  })
})

describe('onErrorOf', () => {
  const cases: Array<[string, { tenant?: 'default' | 'refuse'; session: OpenSessionWire['onError']; hook: OnError }, OnError]> = [
    ['the operator\'s floor wins over a hook that says skip', { tenant: 'refuse', session: 'skip', hook: 'skip' }, 'refuse'],
    ['a session that says refuse', { session: 'refuse', hook: 'skip' }, 'refuse'],
    ['a hook that says refuse', { session: 'skip', hook: 'refuse' }, 'refuse'],
    ['a guarding session refuses unless the hook says skip', { session: 'refuse-unless-skip', hook: 'default' }, 'refuse'],
    ['a guarding session skips a hook that says skip', { session: 'refuse-unless-skip', hook: 'skip' }, 'skip'],
    ['skip from the session', { session: 'skip', hook: 'default' }, 'skip'],
    ['skip from the hook', { session: 'default', hook: 'skip' }, 'skip'],
    ['the seed\'s rule otherwise', { session: 'default', hook: 'default' }, 'default'],
  ]
  it.each(cases)('%s', async (_, { tenant, session, hook }, expected) => {
    const p = await planner({}, [], { open: { onError: session }, tenant: { onError: tenant ?? 'default' } })
    expect(p.planner.onErrorOf(hook)).toBe(expected)
  })
})
