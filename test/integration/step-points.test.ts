/**
 * The step points' semantics (docs/points.md), each through real gRPC on a real socket.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HookdError, type LogLineData } from '../../src/host/index.js'
import { hook, type Running, sessionOptions, startSidecar, writeTree } from '../support/sidecar.js'

let running: Running
let root: string

beforeAll(async () => {
  root = await writeTree({
    'sys-a/index.js': hook({ beforeModelRequest: `(ctx, r) => ({ system: r.system + ' +a' })` }),
    'sys-b/index.js': hook({ beforeModelRequest: `(ctx, r) => ({ system: r.system + ' +b' })` }),
    'every-point/index.js': hook({
      beforeRun: `(ctx, e) => { ctx.log('beforeRun', e.sessionId, e.agentId, e.modelId) }`,
      afterRun: `(ctx, e) => { ctx.log('afterRun', e.reason) }`,
      beforeModelRequest: `(ctx, r) => ({ system: r.system + ' for ' + r.model + ' after ' + r.messages.length })`,
      afterModelResponse: `(ctx, r) => ({ text: r.text + '!', thinking: r.thinking.toUpperCase() })`,
      beforeToolExecute: `(ctx, c) => ({ arguments: { ...c.arguments, seen: c.name } })`,
      afterToolExecute: `(ctx, call, result) => ({ text: call.name + ': ' + result.text, isError: !result.isError })`,
    }),
    'args-first/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ arguments: { ...c.arguments, n: 1 } })` }),
    'args-second/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ arguments: { ...c.arguments, n: c.arguments.n + 1 } })` }),
    'keeps/index.js': hook({
      afterModelResponse: `(ctx, r) => ({ text: undefined, thinking: null })`,
      afterToolExecute: `(ctx, call, result) => ({ isError: true })`,
    }),
    'silent/index.js': hook({ beforeToolExecute: `(ctx, c) => {}`, beforeModelRequest: `(ctx, r) => undefined` }),
    'refuse/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ allow: false, reason: 'no ' + c.name })` }),
    'refuse-quiet/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ allow: false })` }),
    'allow-true/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ allow: true })` }),
    'tattle/index.js': hook({ beforeToolExecute: `(ctx, c) => { ctx.log('tattle ran'); return { arguments: { tattled: true } } }` }),
    'thrower/index.js': `module.exports = {\n  beforeToolExecute(ctx, call) {\n    throw new TypeError('boom ' + call.id)\n  },\n}\n`,
    'rejecter/index.js': hook({ beforeToolExecute: `async (ctx, c) => { throw new Error('async boom') }` }),
    'global-setter/index.js': hook({
      beforeToolExecute: `(ctx, c) => { const before = typeof globalThis.leftover; globalThis.leftover = 42; Array.prototype.evil = 1; return { arguments: { before, proto: typeof [].evil } } }`,
    }),
    'bad-type/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ allow: 'no' })` }),
    'bad-shape/index.js': hook({ beforeToolExecute: `(ctx, c) => 'allow'` }),
    'extra-field/index.js': hook({ beforeModelRequest: `(ctx, r) => ({ system: 'S', model: 'other' })` }),
    'ctx-dump/index.js': hook({
      beforeToolExecute: `(ctx, c) => ({ arguments: { workdir: ctx.workdir, session: ctx.session, agent: ctx.agent, config: ctx.config, system: ctx.system, env: ctx.env, frozen: Object.isFrozen(ctx) } })`,
    }),
    'ctx-dump/hook.json': JSON.stringify({ config: { level: 3, words: ['a'] } }),
    'asker/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ arguments: { answer: ctx.confirm({ title: 'ok?', body: c.name }) } })` }),
    'notifier/index.js': hook({ afterRun: `(ctx, e) => { ctx.notify({ title: 'done', body: e.reason }) }` }),
    'awaiter/index.js': hook({
      beforeToolExecute: `async (ctx, c) => { await null; const v = await new Promise((r) => r(7)); return { arguments: { v } } }`,
    }),
    'broken/index.js': 'module.exports = {\n  beforeToolExecute(ctx, call) {\n    return {\n  },\n',
    'top-throw/index.js': `throw new Error('top-level failure')\n`,
  })
  running = await startSidecar({ hooks: root })
})

afterAll(async () => {
  await running?.stop()
})

const call = { id: 'c1', name: 'shell', arguments: { command: 'ls' } }

describe('the six points', () => {
  it('passes each payload and applies each return', async () => {
    const logs: LogLineData[] = []
    const session = await running.client.openSession(sessionOptions(['every-point'], { capabilities: { log: (l) => logs.push(l) } }))
    await session.call('beforeRun', { sessionId: 's', agentId: 'a', modelId: 'm' })
    expect(logs.map((l) => l.message)).toEqual(['beforeRun s a m'])

    const request = await session.call('beforeModelRequest', { system: 'You help.', model: 'm1', messages: [{ role: 'user', text: 'hi' }] })
    expect(request.result).toEqual({ system: 'You help. for m1 after 1' })

    const response = await session.call('afterModelResponse', { text: 'hello', thinking: 'hmm', toolCalls: [] })
    expect(response.result).toEqual({ text: 'hello!', thinking: 'HMM' })

    const before = await session.call('beforeToolExecute', call)
    expect(before.result).toEqual({ allow: true, arguments: { command: 'ls', seen: 'shell' } })

    const after = await session.call('afterToolExecute', { call, result: { text: 'out', isError: false } })
    expect(after.result).toEqual({ text: 'shell: out', isError: true })

    const closed = await session.close('interrupted')
    expect(closed.result).toEqual({})
    expect(logs.map((l) => l.message)).toContain('afterRun interrupted')
  })

  it('runs hooks in declared order', async () => {
    const payload = { system: 'S', model: 'm', messages: [] }
    const ab = await running.client.openSession(sessionOptions(['sys-a', 'sys-b']))
    expect((await ab.call('beforeModelRequest', payload)).result.system).toBe('S +a +b')
    const ba = await running.client.openSession(sessionOptions(['sys-b', 'sys-a']))
    expect((await ba.call('beforeModelRequest', payload)).result.system).toBe('S +b +a')
    ab.abandon()
    ba.abandon()
  })

  it('fails the open when a declared hook does not exist, naming it', async () => {
    const err = await running.client.openSession(sessionOptions(['sys-a', 'no-such-hook'])).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(HookdError)
    expect((err as HookdError).code).toBe('not-found')
    expect((err as HookdError).message).toContain("unknown hook 'no-such-hook'")
  })

  it("feeds one hook's output to the next", async () => {
    const session = await running.client.openSession(sessionOptions(['args-first', 'args-second']))
    const out = await session.call('beforeToolExecute', call)
    expect(out.result.arguments).toEqual({ command: 'ls', n: 2 })
    expect(out.trace.map((t) => t.outcome)).toEqual(['changed', 'changed'])
    session.abandon()
  })

  it('keeps the current value for omitted, undefined and null fields', async () => {
    const session = await running.client.openSession(sessionOptions(['keeps']))
    const response = await session.call('afterModelResponse', { text: 'T', thinking: 'K', toolCalls: [] })
    expect(response.result).toEqual({ text: 'T', thinking: 'K' })
    const after = await session.call('afterToolExecute', { call, result: { text: 'out', isError: false } })
    expect(after.result).toEqual({ text: 'out', isError: true })
    session.abandon()
  })

  it('changes nothing when a hook returns nothing', async () => {
    const session = await running.client.openSession(sessionOptions(['silent']))
    const out = await session.call('beforeToolExecute', call)
    expect(out.result).toEqual({ allow: true, arguments: call.arguments })
    expect(out.trace).toEqual([expect.objectContaining({ hook: 'silent', outcome: 'no-opinion' })])
    expect(out.diagnostics).toEqual([])
    session.abandon()
  })
})

describe('beforeToolExecute refusals', () => {
  it('stops at the first allow: false and consults no later hook', async () => {
    const logs: LogLineData[] = []
    const session = await running.client.openSession(
      sessionOptions(['args-first', 'refuse', 'tattle'], { capabilities: { log: (l) => logs.push(l) } }),
    )
    const out = await session.call('beforeToolExecute', call)
    expect(out.result).toEqual({ allow: false, reason: 'no shell', refusedBy: 'refuse', arguments: { command: 'ls', n: 1 } })
    expect(out.trace.map((t) => [t.hook, t.outcome])).toEqual([
      ['args-first', 'changed'],
      ['refuse', 'refused'],
      ['tattle', 'not-run'],
    ])
    expect(logs).toEqual([])
    session.abandon()
  })

  it('gives a refusal without a reason a reason naming the hook', async () => {
    const session = await running.client.openSession(sessionOptions(['refuse-quiet']))
    const out = await session.call('beforeToolExecute', call)
    expect(out.result).toMatchObject({ allow: false, reason: "refused by hook 'refuse-quiet'", refusedBy: 'refuse-quiet' })
    session.abandon()
  })

  it('does not let a later allow: true undo anything, nor an earlier one stop the chain', async () => {
    const session = await running.client.openSession(sessionOptions(['allow-true', 'tattle']))
    const out = await session.call('beforeToolExecute', call)
    expect(out.result).toEqual({ allow: true, arguments: { tattled: true } })
    session.abandon()
  })
})

describe('failures are diagnostics, and the chain goes on', () => {
  it('reports a throwing hook with its message and line, and skips it', async () => {
    const session = await running.client.openSession(sessionOptions(['args-first', 'thrower', 'args-second']))
    const out = await session.call('beforeToolExecute', call)
    expect(out.result.arguments).toEqual({ command: 'ls', n: 2 })
    expect(out.diagnostics).toEqual([
      expect.objectContaining({
        hook: 'thrower',
        point: 'beforeToolExecute',
        kind: 'throw',
        message: "hook 'thrower' beforeToolExecute: TypeError: boom c1",
        file: 'thrower/index.js',
        line: 3,
      }),
    ])
    expect(out.trace.map((t) => t.outcome)).toEqual(['changed', 'failed', 'changed'])
    session.abandon()
  })

  it('reports a rejected promise as a throw', async () => {
    const session = await running.client.openSession(sessionOptions(['rejecter']))
    const out = await session.call('beforeToolExecute', call)
    expect(out.diagnostics).toEqual([expect.objectContaining({ kind: 'throw', message: expect.stringContaining('Error: async boom') })])
    expect(out.result.allow).toBe(true)
    session.abandon()
  })

  it('rejects a wrongly typed field with invalid-result and skips the hook', async () => {
    const session = await running.client.openSession(sessionOptions(['bad-type', 'bad-shape', 'args-first']))
    const out = await session.call('beforeToolExecute', call)
    expect(out.result).toEqual({ allow: true, arguments: { command: 'ls', n: 1 } })
    expect(out.diagnostics.map((d) => [d.hook, d.kind])).toEqual([
      ['bad-type', 'invalid-result'],
      ['bad-shape', 'invalid-result'],
    ])
    expect(out.diagnostics[0]?.message).toContain("invalid 'allow' (a string)")
    expect(out.diagnostics[1]?.message).toContain('it returned a string')
    session.abandon()
  })

  it('drops fields the point does not accept, with a diagnostic, and applies the rest', async () => {
    const session = await running.client.openSession(sessionOptions(['extra-field']))
    const out = await session.call('beforeModelRequest', { system: 'x', model: 'm', messages: [] })
    expect(out.result).toEqual({ system: 'S' })
    expect(out.diagnostics).toEqual([
      expect.objectContaining({ kind: 'ignored-field', message: expect.stringContaining("returned 'model', which beforeModelRequest does not let a hook change") }),
    ])
    session.abandon()
  })

  it('reports a hook that fails to load when the session opens, and skips it', async () => {
    const pushed: string[] = []
    const session = await running.client.openSession(
      sessionOptions(['broken', 'top-throw', 'args-first'], { capabilities: { diagnostic: (d) => pushed.push(`${d.hook}:${d.kind}:${d.line ?? ''}`) } }),
    )
    const out = await session.call('beforeToolExecute', call)
    expect(out.result.arguments).toEqual({ command: 'ls', n: 1 })
    expect(out.trace.map((t) => t.hook)).toEqual(['args-first'])
    expect(pushed.sort()).toEqual(['broken:load:4', 'top-throw:load:1'])
    const listed = await running.client.listHooks()
    const broken = listed.find((h) => h.name === 'broken')
    expect(broken?.status).toBe('broken')
    expect(broken?.lastError?.message).toMatch(/SyntaxError/)
    session.abandon()
  })
})

describe('fresh state', () => {
  it('never shows one invocation the globals or prototypes another one set', async () => {
    const session = await running.client.openSession(sessionOptions(['global-setter']))
    const first = await session.call('beforeToolExecute', call)
    const second = await session.call('beforeToolExecute', call)
    expect(first.result.arguments).toEqual({ before: 'undefined', proto: 'number' })
    expect(second.result.arguments).toEqual({ before: 'undefined', proto: 'number' })
    session.abandon()
  })
})

describe('ctx', () => {
  it('carries workdir, session, agent, config and system, frozen', async () => {
    const session = await running.client.openSession(
      sessionOptions(['ctx-dump'], { workdir: '/srv/work', sessionId: 'run-7', agentId: 'careful', modelId: 'm-2', autoApprove: true }),
    )
    const out = await session.call('beforeToolExecute', call)
    expect(out.result.arguments).toEqual({
      workdir: '/srv/work',
      session: { id: 'run-7', interactive: false, autoApprove: true },
      agent: { id: 'careful', modelId: 'm-2' },
      config: { level: 3, words: ['a'] },
      system: { platform: process.platform, arch: process.arch, hookdVersion: expect.any(String) },
      env: {},
      frozen: true,
    })
    session.abandon()
  })

  it('answers confirm with the auto-approve flag in a non-interactive session', async () => {
    const yes = await running.client.openSession(sessionOptions(['asker'], { autoApprove: true }))
    expect((await yes.call('beforeToolExecute', call)).result.arguments).toEqual({ answer: true })
    const no = await running.client.openSession(sessionOptions(['asker'], { autoApprove: false }))
    expect((await no.call('beforeToolExecute', call)).result.arguments).toEqual({ answer: false })
    yes.abandon()
    no.abandon()
  })

  it('asks the host to confirm in an interactive session', async () => {
    const asked: string[] = []
    const session = await running.client.openSession(
      sessionOptions(['asker'], {
        interactive: true,
        capabilities: {
          confirm: (m, origin) => {
            asked.push(`${origin.hook}/${origin.point}: ${m.title} ${m.body}`)
            return true
          },
        },
      }),
    )
    expect((await session.call('beforeToolExecute', call)).result.arguments).toEqual({ answer: true })
    expect(asked).toEqual(['asker/beforeToolExecute: ok? shell'])
    session.abandon()
  })

  it('delivers notify to the host and runs afterRun on close', async () => {
    const notes: string[] = []
    const session = await running.client.openSession(
      sessionOptions(['notifier'], { capabilities: { notify: (m, o) => void notes.push(`${o.hook}: ${m.title} ${m.body}`) } }),
    )
    await session.close('end_turn')
    expect(notes).toEqual(['notifier: done end_turn'])
  })

  it('awaits async hooks', async () => {
    const session = await running.client.openSession(sessionOptions(['awaiter']))
    expect((await session.call('beforeToolExecute', call)).result.arguments).toEqual({ v: 7 })
    session.abandon()
  })
})

describe('unary Invoke', () => {
  it('runs one point with logs and notifications in the response', async () => {
    const out = await running.client.invoke(sessionOptions(['args-first', 'refuse']), 'beforeToolExecute', call)
    expect(out.result).toMatchObject({ allow: false, refusedBy: 'refuse' })
    const notified = await running.client.invoke(sessionOptions(['notifier']), 'afterRun', { reason: 'error' })
    expect(notified.notifications).toEqual([{ title: 'done', body: 'error' }])
  })

  it('refuses an unknown hook with NOT_FOUND and a bad payload with INVALID_ARGUMENT', async () => {
    const missing = await running.client.invoke(sessionOptions(['ghost']), 'beforeToolExecute', call).catch((e: unknown) => e)
    expect(missing).toMatchObject({ code: 'not-found', message: expect.stringContaining("'ghost'") })
    const bad = await running.client
      .invoke(sessionOptions(['refuse']), 'beforeToolExecute', { id: 1 } as never)
      .catch((e: unknown) => e)
    expect(bad).toMatchObject({ code: 'invalid-argument', message: expect.stringContaining('beforeToolExecute payload.id') })
  })
})
