/**
 * A session's capability broker (src/sidecar/session/capability-broker.ts) alone, in memory: a fake
 * tenant over an empty registry, a link that records the calls it is given, and the host's answers fed
 * to `answerFromHost` as the Session stream would. No session, no chain, no sidecar process.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { HookdError } from '../../../src/protocol/status.js'
import { MESSAGE_CHARS } from '../../../src/protocol/text.js'
import type { CapabilityCallData, OpenSessionWire } from '../../../src/protocol/wire.js'
import type { Registry } from '../../../src/sidecar/hooks/registry.js'
import { DEFAULT_LIMITS } from '../../../src/sidecar/limits.js'
import type { CapabilityDecision } from '../../../src/sidecar/observability/observer.js'
import type { CapabilityReply } from '../../../src/sidecar/runners/hook-runner.js'
import { type BrokerSession, CapabilityBroker, type HostAnswer } from '../../../src/sidecar/session/capability-broker.js'
import { DEFAULT_POLICY, type SessionPolicy } from '../../../src/sidecar/session/policy.js'
import type { LinkReply } from '../../../src/sidecar/session/session-link.js'
import { type FakeTenantOptions, FakeLoader, FakeRunner, type HooksRoot, fakeTenant, hooksFolder, loadedRegistry } from '../fakes.js'

const opened: Array<{ folder: HooksRoot; registry: Registry }> = []

afterEach(async () => {
  for (const { folder, registry } of opened.splice(0)) {
    await registry.close()
    await folder.dispose()
  }
})

interface Broker {
  broker: CapabilityBroker
  /** The calls the broker forwarded to the link, in order. */
  forwarded: CapabilityCallData[]
  /** The policy decisions the observer was told of, as [capability, decision]. */
  decisions: Array<[string, CapabilityDecision]>
}

interface BrokerOptions {
  open?: Partial<Pick<OpenSessionWire, 'workdir' | 'interactive' | 'autoApprove'>>
  policy?: Partial<SessionPolicy>
  tenant?: FakeTenantOptions
  /** The link's own answer to a call (the front door's), or undefined to wait for the host's (a stream). */
  link?: (call: CapabilityCallData) => Promise<LinkReply> | undefined
}

async function broker(options: BrokerOptions = {}): Promise<Broker> {
  const folder = await hooksFolder({})
  const runner = new FakeRunner()
  const registry = await loadedRegistry(folder.root, new FakeLoader(), runner)
  opened.push({ folder, registry })
  const forwarded: CapabilityCallData[] = []
  const decisions: Array<[string, CapabilityDecision]> = []
  const session: BrokerSession = {
    tenant: fakeTenant(registry, runner, options.tenant),
    open: { workdir: '/home/me/proj', interactive: true, autoApprove: false, ...options.open },
    policy: { ...DEFAULT_POLICY, ...options.policy },
    link: {
      capability: (call) => {
        forwarded.push(call)
        return options.link?.(call)
      },
    },
    observe: { capability: (capability, decision) => void decisions.push([capability, decision]) },
  }
  return { broker: new CapabilityBroker(session), forwarded, decisions }
}

/** The HookdError `run` throws, as code and message. */
function hookdError(run: () => unknown): { code: string; message: string } {
  try {
    run()
  } catch (err) {
    if (!(err instanceof HookdError)) throw err
    return { code: err.code, message: err.message }
  }
  throw new Error('expected a HookdError, but nothing was thrown')
}

/** Whether `promise` is still pending once everything already queued has run. */
async function pending(promise: Promise<unknown>): Promise<boolean> {
  const marker = Symbol('pending')
  return (await Promise.race([promise, new Promise((resolve) => setImmediate(() => resolve(marker)))])) === marker
}

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value))
const question = { title: 'Delete build/?', body: 'rm -rf build' }

describe('forwarding', () => {
  it('forwards an allowed call with its id, seq, hook and point, and hands the hook the host\'s checked value', async () => {
    const { broker: b, forwarded, decisions } = await broker()
    const first = b.call(3, 'guard', 'beforeToolExecute', 'file.read', ['notes.txt'])
    const second = b.call(3, 'audit', 'beforeToolExecute', 'file.exists', ['x'])
    expect(forwarded).toEqual([
      { id: 1, seq: 3, hook: 'guard', point: 'beforeToolExecute', capability: 'file.read', args: ['notes.txt'] },
      { id: 2, seq: 3, hook: 'audit', point: 'beforeToolExecute', capability: 'file.exists', args: ['x'] },
    ])
    b.answerFromHost(2, { value: json(false) })
    b.answerFromHost(1, { value: json('the notes') })
    expect(await first).toEqual({ ok: true, value: 'the notes' })
    expect(await second).toEqual({ ok: true, value: false })
    expect(decisions).toEqual([['file.read', 'allowed'], ['file.exists', 'allowed']])
  })

  it('refuses what the policy or the tenant refuses, and what no record names, without reaching the link', async () => {
    const { broker: b, forwarded, decisions } = await broker({ policy: { file: 'none' }, tenant: { refusal: (c) => (c === 'notify' ? 'the tenant allows no notices' : undefined) } })
    expect(await b.call(1, 'h', 'afterRun', 'file.read', ['a.txt'])).toEqual({ ok: false, code: 'denied', message: "ctx.file.read('a.txt') refused: this session allows no file access" })
    expect(await b.call(1, 'h', 'afterRun', 'notify', [{ title: 'hi' }])).toEqual({ ok: false, code: 'denied', message: 'the tenant allows no notices' })
    expect(await b.call(1, 'h', 'afterRun', 'shell.run', ['ls'])).toEqual({ ok: false, code: 'invalid', message: "ctx has no capability 'shell.run'" })
    expect(await b.call(1, 'h', 'afterRun', 'file.exists', [42])).toMatchObject({ ok: false, code: 'invalid', message: expect.stringMatching(/^ctx\.file\.exists: invalid arguments\[0\]: /) })
    expect(forwarded).toEqual([])
    expect(decisions).toEqual([['file.read', 'denied'], ['notify', 'denied'], ['shell.run', 'invalid'], ['file.exists', 'invalid']])
  })

  it('answers a call the host leaves unanswered as timed out at the tenant\'s ceiling, and drops the late answer', async () => {
    const { broker: b } = await broker({ tenant: { waits: { capabilityMs: 20 } } })
    const reply = b.call(1, 'h', 'afterRun', 'file.read', ['a.txt'])
    expect(await reply).toEqual({ ok: false, code: 'timeout', message: 'ctx.file.read: the host did not answer within 20 ms' })
    b.answerFromHost(1, { value: json('late') })
    b.answerFromHost(1, { value: json('later still') })
  })

  it('cancels the waiting calls of one point call, and answers every waiting call unavailable on abort', async () => {
    const { broker: b } = await broker()
    const one = b.call(1, 'h', 'afterRun', 'file.read', ['a.txt'])
    const two = b.call(2, 'h', 'afterRun', 'file.read', ['b.txt'])
    b.cancel(1)
    expect(await one).toEqual({ ok: false, code: 'cancelled', message: 'the host cancelled this point call' })
    expect(await pending(two)).toBe(true)
    b.abort()
    expect(await two).toEqual({ ok: false, code: 'unavailable', message: 'the host disconnected' })
  })

  it('takes the link\'s own answer (the front door), and a rejection as failed', async () => {
    const { broker: b } = await broker({
      link: (c) => {
        const [path] = c.args as [string]
        return path === 'gone.txt' ? Promise.reject(new Error('the socket closed')) : Promise.resolve({ ok: true, value: `read ${path}` })
      },
    })
    expect(await b.call(1, 'h', 'afterRun', 'file.read', ['a.txt'])).toEqual({ ok: true, value: 'read a.txt' })
    expect(await b.call(1, 'h', 'afterRun', 'file.read', ['gone.txt'])).toEqual({ ok: false, code: 'failed', message: 'Error: the socket closed' })
  })
})

describe('the host\'s answers', () => {
  /** A broker with one call of `capability` waiting at `point`; `answer` feeds the host's answer. */
  async function waiting(capability: string, args: unknown, point = 'beforeToolExecute'): Promise<{ b: CapabilityBroker; reply: Promise<CapabilityReply>; answer(a: HostAnswer): void }> {
    const { broker: b } = await broker({ tenant: { limits: { ...DEFAULT_LIMITS, jsonDepth: 3 } } })
    b.begin(1)
    const reply = b.call(1, 'guard', point, capability, args)
    return { b, reply, answer: (a) => b.answerFromHost(1, a) }
  }

  const refusals: Array<[string, string, unknown, HostAnswer, string, string?]> = [
    ['a value that is not JSON', 'file.read', ['a.txt'], { value: Buffer.from('{nope') }, "capability_result 1 (ctx.file.read of hook 'guard'): the value is not valid JSON (Expected property name or '}' in JSON at position 1)"],
    ['a value nested past the tenant\'s depth', 'file.list', ['.'], { value: json([[[['deep']]]]) }, "capability_result 1 (ctx.file.list of hook 'guard'): the value is nested too deep (more than 3 levels of arrays and objects); flatten it"],
    ['a value of the wrong type', 'confirm', [question], { value: json('yes') }, "capability_result 1 (ctx.confirm of hook 'guard'): the value: Invalid input: expected boolean, received string; ctx.confirm is answered with true or false"],
    ['an empty value', 'file.exists', ['a'], { value: Buffer.alloc(0) }, "capability_result 1 (ctx.file.exists of hook 'guard') has an empty value; answer with the value as JSON (true or false), or with an error"],
    ['neither a value nor an error', 'file.read', ['a.txt'], {}, "capability_result 1 (ctx.file.read of hook 'guard') has neither a value nor an error; answer with the value as JSON (the text as a JSON string), or with an error"],
    ['deferred on another capability than confirm', 'file.read', ['a.txt'], { value: json('x'), deferred: true }, "capability_result 1 (ctx.file.read of hook 'guard'): deferred is only for ctx.confirm, not ctx.file.read; answer without it"],
    [
      'deferred on a confirm outside a gate',
      'confirm',
      [question],
      { value: json(true), deferred: true },
      "capability_result 1 (ctx.confirm of hook 'guard'): deferred is only for a confirm at a gate point (beforeToolExecute, tool:gate, mcp:tool:gate, child:tool:gate, permission:request, config:change), where the agent's own prompt can decide the call, and this one was made at afterRun; answer true or false without it",
      'afterRun',
    ],
    ['deferred with an error', 'confirm', [question], { error: { code: 'denied', message: 'no' }, deferred: true }, "capability_result 1 (ctx.confirm of hook 'guard'): deferred goes with the value true (yes, left to the agent's own prompt), not with an error; send the error without it"],
    ['deferred with false', 'confirm', [question], { value: json(false), deferred: true }, "capability_result 1 (ctx.confirm of hook 'guard'): deferred goes with the value true (yes, left to the agent's own prompt); answer false without deferred"],
  ]

  it.each(refusals)('refuses %s as INVALID_ARGUMENT, naming the call; the hook never sees it', async (_, capability, args, answer, message, point) => {
    const w = await waiting(capability, args, point)
    expect(hookdError(() => w.answer(answer))).toEqual({ code: 'invalid-argument', message })
    // The call still waits: the stream ends on the throw, and the session's abort answers it.
    expect(await pending(w.reply)).toBe(true)
    w.b.abort()
    expect(await w.reply).toMatchObject({ ok: false, code: 'unavailable' })
  })

  it('refuses an answer to an id it never gave as FAILED_PRECONDITION, and drops one to an id already answered', async () => {
    const w = await waiting('file.read', ['a.txt'])
    expect(hookdError(() => w.b.answerFromHost(7, { value: json('x') }))).toEqual({
      code: 'failed-precondition',
      message: 'capability_result 7 answers no capability call of this session (the last call made has id 1)',
    })
    expect(hookdError(() => w.b.answerFromHost(0, { value: json('x') })).code).toBe('failed-precondition')
    w.answer({ value: json('the text') })
    expect(await w.reply).toEqual({ ok: true, value: 'the text' })
    w.answer({ value: Buffer.from('{not even JSON') })
  })

  it('hands the hook an error answer with the host\'s code passed on and its message clipped', async () => {
    const own = await waiting('file.read', ['a.txt'])
    own.answer({ error: { code: 'EACCES', message: 'x'.repeat(MESSAGE_CHARS + 5) } })
    expect(await own.reply).toEqual({ ok: false, code: 'EACCES', message: `${'x'.repeat(MESSAGE_CHARS)}... (5 more characters)` })
    const empty = await waiting('file.read', ['a.txt'])
    empty.answer({ error: { code: '', message: 'no' } })
    expect(await empty.reply).toEqual({ ok: false, code: 'failed', message: 'no' })
  })

  it('takes a confirm\'s yes deferred at a gate: the hook sees a plain yes, the point call\'s record says asked and host-deferred', async () => {
    const { broker: b } = await broker()
    const asks = b.begin(5)
    const reply = b.call(5, 'guard', 'tool:gate', 'confirm', [{ ...question, title: 't'.repeat(300) }])
    b.answerFromHost(1, { value: json(true), deferred: true })
    expect(await reply).toEqual({ ok: true, value: true })
    expect(asks).toEqual({ autoConfirms: [], asked: [{ hook: 'guard', title: `${'t'.repeat(256)}... (44 more characters)`, body: 'rm -rf build' }], hostDeferred: true, shadowAsks: new Set() })
    // A plain yes is no deferral, whatever its object holds besides.
    const plain = b.call(5, 'guard', 'tool:gate', 'confirm', [question])
    b.answer(2, { ok: true, value: true, deferred: true } as CapabilityReply)
    expect(await plain).toEqual({ ok: true, value: true })
    expect(asks.asked).toHaveLength(1)
  })
})

describe('a point call\'s record', () => {
  it('answers confirm in a non-interactive run by auto-approve, without the link, and records each for the trace', async () => {
    const { broker: b, forwarded } = await broker({ open: { interactive: false, autoApprove: true } })
    const asks = b.begin(1)
    expect(await b.call(1, 'guard', 'beforeToolExecute', 'confirm', [question])).toEqual({ ok: true, value: true })
    expect(await b.call(1, 'audit', 'beforeToolExecute', 'confirm', [{ title: 'Only a title' }])).toEqual({ ok: true, value: true })
    expect(asks.autoConfirms).toEqual([
      { hook: 'guard', confirm: { title: 'Delete build/?', body: 'rm -rf build', approved: true } },
      { hook: 'audit', confirm: { title: 'Only a title', body: '', approved: true } },
    ])
    expect(forwarded).toEqual([])
    // After the point call ended, nothing more is recorded for it.
    b.end(1)
    expect(await b.call(1, 'guard', 'beforeToolExecute', 'confirm', [question])).toEqual({ ok: true, value: true })
    expect(asks.autoConfirms).toHaveLength(2)
  })

  it('records the confirms the link left to the agent\'s prompt, at most 16 per point call, apart from other calls', async () => {
    const { broker: b } = await broker({ link: () => Promise.resolve({ ok: true, value: true, deferred: true }) })
    const first = b.begin(1)
    const other = b.begin(2)
    for (let i = 0; i < 20; i++) expect(await b.call(1, `h${i}`, 'beforeToolExecute', 'confirm', [{ title: `q${i}` }])).toEqual({ ok: true, value: true })
    expect(first.asked).toHaveLength(16)
    expect(first.asked[15]).toEqual({ hook: 'h15', title: 'q15', body: '' })
    expect(first.hostDeferred).toBe(false)
    expect(other).toEqual({ autoConfirms: [], asked: [], hostDeferred: false, shadowAsks: new Set() })
  })
})
