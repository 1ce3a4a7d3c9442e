/**
 * Hookable hosts (the event points, docs/points.md): a real hookable instance bridged to hookd, with
 * hookable hooks moved into sandboxed hooks, and a step-point guard serving both kinds of host.
 */
import { createHooks } from 'hookable'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Diagnostic, type HostSession, bridgeHookable } from '../../src/host/index.js'
import { EXAMPLE_HOOKS, type Running, hook, sessionOptions, startSidecar, writeTree } from '../support/sidecar.js'
import { cp } from 'node:fs/promises'
import { join } from 'node:path'

let running: Running

beforeAll(async () => {
  const root = await writeTree({
    'rm-gate/index.js': hook({
      'tool:gate': `(ctx, e) => { if (e.name === 'shell' && String(e.input.command).includes('rm -rf')) { e.block = true; e.reason = 'dangerous command' } }`,
    }),
    'todo-noop/index.js': hook({
      'tool:gate': `(ctx, e) => { if (e.name === 'todowrite' && (e.runToolCounts.todowrite ?? 0) > 0) e.result = 'Already recorded; no-op.' }`,
    }),
    'redact-secrets/index.js': hook({
      'tool:transform': `(ctx, e) => { if (typeof e.result === 'string') e.result = e.result.replace(/\\b(API_KEY|TOKEN|PASSWORD)\\s*=\\s*\\S+/gi, '$1=<redacted>') }`,
    }),
    'plan-mode/index.js': hook({
      'tool:unknown': `(ctx, e) => { if (e.name === 'EnterPlanMode') { e.result = 'EnterPlanMode is not available. Use shell to draft a plan as comments.'; e.suppressError = true } }`,
    }),
    'trimmer/index.js': hook({
      'context:transform': `(ctx, e) => { const KEEP_RECENT = 30; if (e.messages.length > KEEP_RECENT) { const trimmed = [e.messages[0], ...e.messages.slice(-KEEP_RECENT + 1)]; e.messages.splice(0, e.messages.length, ...trimmed) } }`,
    }),
    'reminder/index.js': hook({
      'system:transform': `(ctx, e) => { if (e.session && e.turn > 1) e.system += '\\n\\n## Reminder: keep responses concise after turn ' + e.turn + '.' }`,
    }),
    'renamer/index.js': hook({ 'tool:gate': `(ctx, e) => { e.name = 'innocent'; e.reason = 'renamed' }` }),
    'first-word/index.js': hook({ 'tool:gate': `(ctx, e) => { e.reason = 'first' }` }),
    'second-word/index.js': hook({ 'tool:gate': `(ctx, e) => { e.reason = e.reason + ' then second' }` }),
    'watcher/index.js': hook({ 'turn:after': `(ctx, e) => { ctx.log('turn', e.turn) }` }),
    'async-gate/index.js': hook({ 'tool:gate': `async (ctx, e) => { await null; e.block = true; e.reason = 'later' }` }),
    'bad-gate/index.js': hook({ 'tool:gate': `(ctx, e) => { e.block = 'yes' }` }),
  })
  for (const name of ['guard', 'https-only', 'shout', 'today', 'audit']) await cp(join(EXAMPLE_HOOKS, name), join(root, name), { recursive: true })
  running = await startSidecar({ hooks: root })
})

afterAll(() => running?.stop())

type Ctx = Record<string, unknown>

async function bridged(hookNames: string[], extra: Parameters<typeof sessionOptions>[1] = {}) {
  const session = await running.client.openSession(sessionOptions(hookNames, extra))
  const hooks = createHooks<Record<string, (ctx: Ctx) => void | Promise<void>>>()
  const diagnostics: Diagnostic[] = []
  const off = bridgeHookable(hooks, session, { onDiagnostic: (d) => diagnostics.push(d) })
  return { session, hooks, diagnostics, off }
}

describe('the seed examples, sandboxed', () => {
  it('blocks rm -rf at tool:gate and leaves other calls alone', async () => {
    const { hooks, session } = await bridged(['rm-gate'])
    const decide = (): string => 'functions stay on the host'
    const ctx: Ctx = { name: 'shell', input: { command: 'rm -rf /' }, callId: 'c1', decide }
    await hooks.callHook('tool:gate', ctx)
    expect(ctx).toEqual({ name: 'shell', input: { command: 'rm -rf /' }, callId: 'c1', decide, block: true, reason: 'dangerous command' })
    const safe: Ctx = { name: 'shell', input: { command: 'ls' } }
    await hooks.callHook('tool:gate', safe)
    expect(safe).toEqual({ name: 'shell', input: { command: 'ls' } })
    session.abandon()
  })

  it('substitutes a no-op for a repeated todowrite', async () => {
    const { hooks, session } = await bridged(['todo-noop'])
    const first: Ctx = { name: 'todowrite', input: {}, runToolCounts: {} }
    await hooks.callHook('tool:gate', first)
    expect(first.result).toBeUndefined()
    const again: Ctx = { name: 'todowrite', input: {}, runToolCounts: { todowrite: 1 } }
    await hooks.callHook('tool:gate', again)
    expect(again.result).toBe('Already recorded; no-op.')
    session.abandon()
  })

  it('redacts secrets in tool:transform', async () => {
    const { hooks, session } = await bridged(['redact-secrets'])
    const ctx: Ctx = { name: 'shell', result: 'ok\nAPI_KEY=abc123 token = xyz\nend', isError: false }
    await hooks.callHook('tool:transform', ctx)
    expect(ctx.result).toBe('ok\nAPI_KEY=<redacted> token=<redacted>\nend')
    session.abandon()
  })

  it('answers a hallucinated tool name in tool:unknown', async () => {
    const { hooks, session } = await bridged(['plan-mode'])
    const ctx: Ctx = { name: 'EnterPlanMode', input: {} }
    await hooks.callHook('tool:unknown', ctx)
    expect(ctx).toMatchObject({ result: expect.stringContaining('not available'), suppressError: true })
    session.abandon()
  })

  it('trims old turns in context:transform, in place', async () => {
    const { hooks, session } = await bridged(['trimmer'])
    const messages = Array.from({ length: 40 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', text: `m${i}` }))
    const ctx: Ctx = { messages }
    await hooks.callHook('context:transform', ctx)
    expect(ctx.messages).toBe(messages)
    expect(messages).toHaveLength(30)
    expect(messages[0]?.text).toBe('m0')
    expect(messages[1]?.text).toBe('m11')
    session.abandon()
  })

  it('appends a reminder in system:transform on later turns', async () => {
    const { hooks, session } = await bridged(['reminder'])
    const first: Ctx = { system: 'S', turn: 1, session: { id: 's' } }
    await hooks.callHook('system:transform', first)
    expect(first.system).toBe('S')
    const later: Ctx = { system: 'S', turn: 3, session: { id: 's' } }
    await hooks.callHook('system:transform', later)
    expect(later.system).toBe('S\n\n## Reminder: keep responses concise after turn 3.')
    session.abandon()
  })
})

describe('mutation rules', () => {
  it('returns only changes to fields the point allows; others are dropped with a diagnostic', async () => {
    const { hooks, session, diagnostics } = await bridged(['renamer'])
    const ctx: Ctx = { name: 'shell', input: {} }
    await hooks.callHook('tool:gate', ctx)
    expect(ctx).toEqual({ name: 'shell', input: {}, reason: 'renamed' })
    expect(diagnostics).toEqual([
      expect.objectContaining({ hook: 'renamer', kind: 'ignored-field', message: expect.stringContaining("changed 'name', which tool:gate does not let a hook change") }),
    ])
    session.abandon()
  })

  it('runs sandboxed handlers in order, each seeing the earlier changes: the last write wins', async () => {
    const { hooks, session } = await bridged(['first-word', 'second-word'])
    const ctx: Ctx = { name: 'x', input: {} }
    await hooks.callHook('tool:gate', ctx)
    expect(ctx.reason).toBe('first then second')
    session.abandon()
  })

  it('lets host handlers registered after the bridge see the sandbox changes', async () => {
    const { hooks, session } = await bridged(['rm-gate'])
    const seen: unknown[] = []
    hooks.hook('tool:gate', (ctx) => void seen.push(ctx.block))
    await hooks.callHook('tool:gate', { name: 'shell', input: { command: 'rm -rf x' } })
    expect(seen).toEqual([true])
    session.abandon()
  })

  it('awaits async zidane handlers and rejects wrongly typed changes', async () => {
    const { hooks, session, diagnostics } = await bridged(['bad-gate', 'async-gate'])
    const ctx: Ctx = { name: 'x', input: {} }
    await hooks.callHook('tool:gate', ctx)
    expect(ctx).toMatchObject({ block: true, reason: 'later' })
    expect(diagnostics.map((d) => [d.hook, d.kind])).toEqual([['bad-gate', 'invalid-result']])
    session.abandon()
  })
})

describe('the bridge', () => {
  it('registers only the points some hook handles, and unregisters everything', async () => {
    const session = await running.client.openSession(sessionOptions(['rm-gate', 'watcher']))
    const sent: string[] = []
    const counting = {
      call: ((point: string, payload: never) => {
        sent.push(point)
        return session.call(point as 'tool:gate', payload)
      }) as HostSession['call'],
      subscribedPoints: () => session.subscribedPoints(),
    }
    const hooks = createHooks<Record<string, (ctx: Ctx) => void | Promise<void>>>()
    const off = bridgeHookable(hooks, counting)
    await hooks.callHook('stream:text', { delta: 'a', text: 'a' })
    await hooks.callHook('tool:transform', { result: 'r' })
    await hooks.callHook('turn:after', { turn: 1 })
    await hooks.callHook('tool:gate', { name: 'x', input: {} })
    expect(sent).toEqual(['turn:after', 'tool:gate'])
    off()
    await hooks.callHook('tool:gate', { name: 'x', input: {} })
    expect(sent).toHaveLength(2)
    session.abandon()
  })

  it('can send observers without waiting for the answer', async () => {
    const logs: string[] = []
    const session = await running.client.openSession(sessionOptions(['watcher'], { capabilities: { log: (l) => logs.push(l.message) } }))
    const hooks = createHooks<Record<string, (ctx: Ctx) => void | Promise<void>>>()
    bridgeHookable(hooks, session, { fireAndForgetObservers: true })
    await hooks.callHook('turn:after', { turn: 4 })
    await expect.poll(() => logs).toEqual(['turn 4'])
    session.abandon()
  })
})

describe('one hook, any host', () => {
  it('serves the rienda guard on a rienda host and on a zidane host', async () => {
    const rm = { id: 'c1', name: 'shell', arguments: { command: 'rm -rf /tmp/x' } }
    const rienda = await running.client.openSession(sessionOptions(['guard'], { autoApprove: false }))
    expect((await rienda.call('beforeToolExecute', rm)).result).toMatchObject({ allow: false, reason: 'refused by the user' })
    rienda.abandon()

    const { hooks, session } = await bridged(['guard'], { autoApprove: false })
    expect([...session.subscribedPoints()].sort()).toEqual(['afterRun', 'agent:done', 'beforeToolExecute', 'tool:gate'])
    const ctx: Ctx = { name: 'shell', input: { command: 'rm -rf /tmp/x' }, callId: 'c1' }
    await hooks.callHook('tool:gate', ctx)
    expect(ctx).toMatchObject({ block: true, reason: 'refused by the user' })
    const safe: Ctx = { name: 'shell', input: { command: 'ls' }, callId: 'c2' }
    await hooks.callHook('tool:gate', safe)
    expect(safe.block).toBeUndefined()
    session.abandon()
  })

  it('maps the other aliases: tool:transform, system:transform, agent:done', async () => {
    const notes: string[] = []
    const { hooks, session, diagnostics } = await bridged(['shout', 'today', 'https-only', 'guard'], {
      capabilities: { notify: (m) => void notes.push(String(m.body)) },
    })
    const result: Ctx = { name: 'shell', input: {}, callId: 'c', result: 'quiet', isError: false }
    await hooks.callHook('tool:transform', result)
    expect(result.result).toBe('QUIET')
    const system: Ctx = { system: 'S', turn: 1 }
    await hooks.callHook('system:transform', system)
    expect(system.system).toMatch(/^S\n\nToday is \d{4}-\d{2}-\d{2}\.$/)
    // https-only rewrites arguments, which a zidane gate cannot express: dropped with a diagnostic.
    const gate: Ctx = { name: 'http', input: { url: 'http://a.b' }, callId: 'c' }
    await hooks.callHook('tool:gate', gate)
    expect(gate.input).toEqual({ url: 'http://a.b' })
    expect(diagnostics).toEqual([
      expect.objectContaining({ hook: 'https-only', kind: 'ignored-field', message: expect.stringContaining("(beforeToolExecute serving tool:gate) returned 'arguments'") }),
    ])
    await hooks.callHook('agent:done', { reason: 'interrupted' })
    expect(notes).toEqual(['run finished: interrupted'])
    session.abandon()
  })
})
