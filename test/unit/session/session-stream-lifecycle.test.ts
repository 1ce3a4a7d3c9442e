/**
 * How a Session stream ends, in memory (test/support/memory-session.ts): close runs afterRun once and
 * answers with its result; a cancel refuses the gate it cancels; a host that half-closes, abandons
 * the stream or is drained away stops what still runs; and the host library says, for every later
 * call, that the session ended earlier, and why.
 */
import { status } from '@grpc/grpc-js'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { HookdError, type HostSession } from '../../../src/host/index.js'
import { CUT, DRAINING } from '../../../src/sidecar/grpc/open-streams.js'
import { FAILURE_TEXT } from '../../../src/sidecar/runners/failure-text.js'
import { callFrame, encodeHostMessage, openFrame } from '../../support/raw-session.js'
import { type Deferred, deferred, exporting, fails, nothing, returns, until } from '../fakes.js'
import { type StreamWorld, closeStreamWorlds, streamWorld } from './stream-world.js'

const CALL = { id: 'c1', name: 'shell', arguments: { command: 'rm -rf build' } }
const END = JSON.stringify({ reason: 'end_turn' })

let w: StreamWorld
/** The human the `guard` hook asks: never answers unless a test answers for it. */
let human: Deferred<boolean>
let asked: Deferred<void>

afterEach(closeStreamWorlds)

beforeEach(async () => {
  w = await streamWorld({
    notifier: { index: exporting('afterRun') },
    guard: { index: exporting('beforeToolExecute') },
    audit: { index: exporting('beforeToolExecute') },
    echo: { index: exporting('beforeToolExecute') },
  })
  human = deferred<boolean>()
  asked = deferred()
  w.runner.script('notifier', async (r) => {
    await r.onCapability('notify', [{ title: 'done', body: (r.args[0] as { reason: string }).reason }])
    return nothing()
  })
  // Asks before rm -rf and refuses on a no; a cancelled invocation reports so, as every runner does.
  w.runner.script('guard', async (r) => {
    const reply = await r.onCapability('confirm', [{ title: 'Dangerous command', body: (r.args[0] as typeof CALL).arguments.command }])
    if (r.signal?.aborted) return fails('cancelled', FAILURE_TEXT.cancelled())
    if (!reply.ok) return fails('throw', `Error: ${reply.message}`)
    return reply.value ? nothing() : returns({ allow: false, reason: 'refused by the user' })
  })
  w.runner.script('audit', () => nothing())
  w.runner.script('echo', () => returns({ reason: 'echoed' }))
})

/** A session whose ctx.notify calls are counted. */
async function counted(hooks: string[]): Promise<{ session: HostSession; notes: string[] }> {
  const notes: string[] = []
  const session = await w.open(hooks, { capabilities: { notify: (m) => void notes.push(`${m.title}: ${m.body}`) } })
  return { session, notes }
}

/** A session whose confirm questions go to `human`. */
function guarded(hooks: string[], extra: Parameters<StreamWorld['open']>[1] = {}): Promise<HostSession> {
  return w.open(hooks, { interactive: true, ...extra, capabilities: { confirm: () => (asked.resolve(), human.promise) } })
}

describe('afterRun runs exactly once per session', () => {
  it('close runs it when the host did not, with the reason, and answers with its result', async () => {
    const { session, notes } = await counted(['notifier'])
    const closed = await session.close('interrupted')
    expect(notes).toEqual(['done: interrupted'])
    expect(closed).toMatchObject({ result: {}, trace: [expect.objectContaining({ hook: 'notifier', outcome: 'no-opinion' })], decisionId: expect.any(String) })
    expect(w.runner.callsOf('notifier').map((c) => c.args)).toEqual([[{ reason: 'interrupted' }]])
  })

  it('an explicit afterRun call runs it; close then does not, and answers with that call’s result', async () => {
    const { session, notes } = await counted(['notifier'])
    const ran = await session.call('afterRun', { reason: 'interrupted' })
    expect(notes).toEqual(['done: interrupted'])
    expect(await session.close('end_turn')).toEqual(ran)
    expect(notes).toEqual(['done: interrupted'])
  })

  it('agent:done, which afterRun hooks serve on a zidane host, counts: close does not run them again', async () => {
    const { session, notes } = await counted(['notifier'])
    await session.call('agent:done', { reason: 'end_turn' })
    await session.close('end_turn')
    expect(notes).toEqual(['done: end_turn'])
  })

  it('a second afterRun call is FAILED_PRECONDITION, naming the first, even while the first still runs', async () => {
    // The first afterRun's ctx.notify is never answered: it is still running when the second arrives.
    const end = await w.sidecar.exchange([openFrame({ hooks: ['notifier'] }), callFrame(1, 'afterRun', END), callFrame(2, 'afterRun', END)])
    expect(end.code).toBe(status.FAILED_PRECONDITION)
    expect(end.details).toBe('afterRun already ran in this session (point call seq 1); it runs once per session, and close does not run it again')
    expect(end.messages.map((m) => m.kind)).toEqual(['opened', 'capabilityCall'])
  })

  it('a close sent while the explicit afterRun still runs waits for it and runs nothing more', async () => {
    const stream = w.raw()
    stream.write(openFrame({ hooks: ['notifier'] }))
    stream.write(callFrame(1, 'afterRun', END))
    stream.write(encodeHostMessage({ close: { reason: 'error' } }))
    // The hook's ctx.notify waits on the host: answer it, so that the afterRun can finish.
    const notify = (await stream.next('capabilityCall'))?.capabilityCall as { id: number }
    stream.write(encodeHostMessage({ capabilityResult: { id: notify.id, value: Buffer.from('null') } }))
    const end = await stream.ended
    expect(end.code).toBe(status.OK)
    expect(end.messages.map((m) => m.kind)).toEqual(['opened', 'result', 'closed'])
    expect((end.messages[2]?.closed as { result: unknown }).result).toMatchObject({ seq: 1, point: 'afterRun' })
    expect(w.runner.callsOf('notifier')).toHaveLength(1)
  })
})

describe('the host library after a session ended', () => {
  it('rejects later calls with "the session ended earlier: <why>", for a close', async () => {
    const session = await w.open(['echo'])
    await session.close()
    expect(session.isEnded).toBe(true)
    for (const later of [() => session.call('beforeToolExecute', CALL), () => session.close(), () => session.reportOutcome({ decisionId: 'd', outcome: 'allowed', via: 'PostToolUse' })]) {
      const err = await later().catch((e: unknown) => e)
      expect(err).toBeInstanceOf(HookdError)
      expect(err).toMatchObject({ code: 'failed-precondition', message: 'the session ended earlier: the host closed it' })
    }
  })

  it('and for a session the sidecar ended: the first call gets the reason, later ones say it ended earlier, and why', async () => {
    const session = await w.open(['echo'])
    const endedWith = new Promise<HookdError>((resolve) => session.onEnd(resolve))
    // A payload that does not fit the point ends the stream with INVALID_ARGUMENT.
    const first = await session.call('beforeToolExecute', { id: 'c1' } as never).catch((err: unknown) => err)
    expect(first).toMatchObject({ code: 'invalid-argument', message: 'beforeToolExecute payload.name: Invalid input: expected string, received undefined' })
    expect(await endedWith).toBe(first)
    const later = await session.call('beforeToolExecute', CALL).catch((err: unknown) => err)
    expect(later).toMatchObject({ code: 'failed-precondition', message: `the session ended earlier: ${(first as HookdError).message}` })
  })
})

describe('a cancelled gate', () => {
  /** Calls beforeToolExecute on a session whose guard asks a human who never answers, and cancels it then. */
  async function cancelWhileAsking(hooks: string[], extra: Parameters<StreamWorld['open']>[1] = {}) {
    const session = await guarded(hooks, extra)
    const abort = new AbortController()
    const pending = session.call('beforeToolExecute', CALL, { signal: abort.signal })
    await asked.promise
    abort.abort()
    const out = await pending
    await session.close()
    return out
  }

  it('comes back refused by hookd, saying it was cancelled, when cancelled while its guard waits on confirm', async () => {
    const out = await cancelWhileAsking(['guard', 'audit'])
    expect(out.result).toEqual({ allow: false, reason: "hookd refused the call: hook 'guard' could not decide (the call was cancelled)", refusedBy: 'hookd', arguments: CALL.arguments })
    // The refusal stops the chain: audit is not consulted.
    expect(out.trace.map((t) => [t.hook, t.outcome])).toEqual([['guard', 'cancelled'], ['audit', 'not-run']])
    // The hook's confirm was answered by the cancel, and its invocation was told to stop.
    const [invocation] = w.runner.callsOf('guard')
    expect(invocation?.capabilities.map((c) => c.reply)).toEqual([{ ok: false, code: 'cancelled', message: 'the host cancelled this point call' }])
  })

  it('comes back refused even when the session fails open', async () => {
    const out = await cancelWhileAsking(['guard', 'audit'], { onError: 'skip' })
    expect(out.result).toEqual({ allow: false, reason: 'hookd refused the call: the host cancelled it before its hooks decided', refusedBy: 'hookd', arguments: CALL.arguments })
    expect(out.trace.map((t) => [t.hook, t.outcome])).toEqual([['guard', 'cancelled'], ['audit', 'cancelled']])
  })

  it('a cancel of a call already answered changes nothing', async () => {
    const session = await w.open(['echo'])
    const abort = new AbortController()
    const out = await session.call('beforeToolExecute', CALL, { signal: abort.signal })
    abort.abort()
    expect(out.result).toEqual({ allow: true, reason: 'echoed', arguments: CALL.arguments })
    expect((await session.call('beforeToolExecute', CALL)).result).toEqual(out.result)
    await session.close()
  })
})

describe('a host that goes away', () => {
  it('half-closed without close: the stream ends OK, afterRun is not run, and what runs is stopped', async () => {
    const stream = w.raw()
    stream.write(openFrame({ hooks: ['guard', 'notifier'], interactive: true }))
    stream.write(callFrame(1, 'beforeToolExecute', JSON.stringify(CALL)))
    await stream.next('capabilityCall')
    stream.end()
    const end = await stream.ended
    expect(end.code).toBe(status.OK)
    // (The capability call was read above.) No result, no afterRun's `closed`.
    expect(end.messages.map((m) => m.kind)).toEqual(['opened'])
    await until(() => w.runner.callsOf('guard')[0]?.capabilities.length === 1)
    expect(w.runner.callsOf('guard')[0]?.capabilities[0]?.reply).toEqual({ ok: false, code: 'unavailable', message: 'the host disconnected' })
    expect(w.runner.callsOf('notifier')).toEqual([])
    expect(w.sidecar.streams.size).toBe(0)
  })

  it('abandoned: its calls reject at once, the sidecar stops the running hook, and serves others', async () => {
    const session = await guarded(['guard'])
    const pending = session.call('beforeToolExecute', CALL).catch((err: unknown) => err)
    await asked.promise
    session.abandon()
    expect(await pending).toMatchObject({ code: 'cancelled', message: 'the session was abandoned by the host' })
    await until(() => w.runner.callsOf('guard')[0]?.capabilities.length === 1)
    expect(w.runner.callsOf('guard')[0]?.capabilities[0]?.reply).toEqual({ ok: false, code: 'unavailable', message: 'the host disconnected' })
    await until(() => w.sidecar.streams.size === 0)
    const other = await w.open(['echo'])
    expect((await other.call('beforeToolExecute', CALL)).result).toMatchObject({ reason: 'echoed' })
    await other.close()
  })
})

describe('a draining sidecar', () => {
  it('ends an idle session at once, lets a running call finish, runs no new call, and refuses new sessions', async () => {
    const idle = await w.open(['echo'])
    const idleEnded = new Promise<HookdError>((resolve) => idle.onEnd(resolve))
    const busy = await guarded(['guard'])
    const running = busy.call('beforeToolExecute', CALL)
    await asked.promise
    const drained = w.sidecar.streams.drain()

    expect(await idleEnded).toMatchObject({ code: 'unavailable', message: DRAINING })
    expect(await idle.call('beforeToolExecute', CALL).catch((err: unknown) => err)).toMatchObject({ message: `the session ended earlier: ${DRAINING}` })
    expect(await w.open(['echo']).catch((err: unknown) => err)).toMatchObject({ code: 'unavailable', message: DRAINING })

    const refused = busy.call('beforeToolExecute', { ...CALL, id: 'c2' }).catch((err: unknown) => err)
    human.resolve(true)
    expect((await running).result).toEqual({ allow: true, arguments: CALL.arguments })
    expect(await refused).toMatchObject({ code: 'unavailable', message: DRAINING })
    await drained
    expect(w.sidecar.streams.size).toBe(0)
  })

  it('cuts what still runs when the grace period ends, with UNAVAILABLE saying so', async () => {
    const busy = await guarded(['guard'])
    const running = busy.call('beforeToolExecute', CALL).catch((err: unknown) => err)
    await asked.promise
    void w.sidecar.streams.drain()
    w.sidecar.streams.abortAll()
    expect(await running).toMatchObject({ code: 'unavailable', message: CUT })
  })
})
