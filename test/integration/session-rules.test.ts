/**
 * The rules of a Session stream (issue 15), through real gRPC on a real socket: afterRun runs once,
 * host seqs start at 1, capability answers are checked one way, the workdir is absolute, pushed
 * diagnostics follow `opened`, and the host library says a session ended earlier, and why.
 */
import { status } from '@grpc/grpc-js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HookdError, type HostSession } from '../../src/host/index.js'
import { RawClient, type RawStream, callFrame, encodeHostMessage, openFrame } from '../support/raw-session.js'
import { type Running, hook, sessionOptions, startSidecar, writeTree } from '../support/sidecar.js'

let running: Running
let raw: RawClient

const CALL = { id: 'c1', name: 'shell', arguments: { command: 'ls' } }
const PAYLOAD = JSON.stringify(CALL)
const END = JSON.stringify({ reason: 'end_turn' })

beforeAll(async () => {
  const root = await writeTree({
    'notifier/index.js': hook({ afterRun: `(ctx, e) => { ctx.notify({ title: 'done', body: e.reason }) }` }),
    'asker/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ arguments: { yes: ctx.confirm({ title: 'ok?' }) } })` }),
    'reader/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ arguments: { text: ctx.file.read('notes.txt') } })` }),
    'echo/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ arguments: { ...c.arguments, echoed: true } })` }),
    'broken/index.js': 'module.exports = {\n  beforeToolExecute(ctx, call) {\n    return {\n',
  })
  running = await startSidecar({ hooks: root, watch: false })
  raw = new RawClient(running.address)
})

afterAll(async () => {
  raw?.close()
  await running?.stop()
})

/** A session whose ctx.notify calls are counted. */
async function counted(hooks: string[]): Promise<{ session: HostSession; notes: string[] }> {
  const notes: string[] = []
  const session = await running.client.openSession(sessionOptions(hooks, { capabilities: { notify: (m) => void notes.push(`${m.title}: ${m.body}`) } }))
  return { session, notes }
}

function kinds(end: { messages: Array<{ kind?: string }> }): Array<string | undefined> {
  return end.messages.map((m) => m.kind)
}

function capabilityId(message: Awaited<ReturnType<RawStream['next']>>): number {
  const call = message?.capabilityCall as { id?: unknown } | undefined
  if (typeof call?.id !== 'number') throw new Error('expected a capabilityCall')
  return call.id
}

describe('afterRun runs exactly once per session', () => {
  it('an explicit afterRun call runs it; close then does not, and answers with that call’s result', async () => {
    const { session, notes } = await counted(['notifier'])
    const ran = await session.call('afterRun', { reason: 'interrupted' })
    expect(notes).toEqual(['done: interrupted'])
    const closed = await session.close('end_turn')
    expect(notes).toEqual(['done: interrupted'])
    expect(closed).toEqual(ran)
  })

  it('close runs it when the host did not', async () => {
    const { session, notes } = await counted(['notifier'])
    await session.close('end_turn')
    expect(notes).toEqual(['done: end_turn'])
  })

  it('a second afterRun call is FAILED_PRECONDITION, naming the first', async () => {
    const end = await raw.exchange([openFrame({ hooks: ['notifier'] }), callFrame(1, 'afterRun', END), callFrame(2, 'afterRun', END)])
    expect(end.code).toBe(status.FAILED_PRECONDITION)
    expect(end.details).toBe('afterRun already ran in this session (point call seq 1); it runs once per session, and close does not run it again')
  })

  it('a close sent while the explicit afterRun still runs waits for it and runs nothing more', async () => {
    const stream = raw.session()
    stream.write(openFrame({ hooks: ['notifier'] }))
    stream.write(callFrame(1, 'afterRun', END))
    stream.write(encodeHostMessage({ close: { reason: 'error' } }))
    // The hook's ctx.notify waits on the host: answer it, so that the afterRun can finish.
    const notify = await stream.next('capabilityCall')
    stream.write(encodeHostMessage({ capabilityResult: { id: capabilityId(notify), value: Buffer.from('null') } }))
    const end = await stream.ended
    expect(end.code).toBe(status.OK)
    const closed = end.messages.find((m) => m.kind === 'closed')?.closed as { result: { seq: number; point: string } }
    expect(closed.result).toMatchObject({ seq: 1, point: 'afterRun' })
    // The hook's notify went to the host once (taken above): no second afterRun asked again.
    expect(kinds(end)).toEqual(['opened', 'result', 'closed'])
  })

  it('agent:done, which afterRun hooks serve on a zidane host, counts: close does not run them again', async () => {
    const { session, notes } = await counted(['notifier'])
    await session.call('agent:done', { reason: 'end_turn' })
    await session.close('end_turn')
    expect(notes).toEqual(['done: end_turn'])
  })
})

describe('host sequence numbers', () => {
  it('seq 0 is INVALID_ARGUMENT: host seqs start at 1 (0 is the afterRun that close runs)', async () => {
    const end = await raw.exchange([openFrame({ hooks: ['echo'] }), callFrame(0, 'beforeToolExecute', PAYLOAD)])
    expect(end.code).toBe(status.INVALID_ARGUMENT)
    expect(end.details).toBe('point call seq 0 is not allowed: a host numbers its calls from 1 (seq 0 is the afterRun that close runs)')
  })
})

describe('a capability answer that does not fit', () => {
  /** Opens an interactive session whose hook asks for `hooks`' capability, and answers it with `answer`. */
  async function answerWith(hookName: string, answer: Record<string, unknown>) {
    const stream = raw.session()
    stream.write(openFrame({ hooks: [hookName], interactive: true }))
    stream.write(callFrame(1, 'beforeToolExecute', PAYLOAD))
    const asked = await stream.next('capabilityCall')
    stream.write(encodeHostMessage({ capabilityResult: { id: capabilityId(asked), ...answer } }))
    return stream.ended
  }

  it.each([
    ['a value that is not JSON', 'asker', { value: Buffer.from('yes!') }, `capability_result 1 (ctx.confirm of hook 'asker'): the value is not valid JSON (Unexpected token 'y', "yes!" is not valid JSON)`],
    ['a confirm answered with a string', 'asker', { value: Buffer.from('"yes"') }, "capability_result 1 (ctx.confirm of hook 'asker'): the value: Invalid input: expected boolean, received string; ctx.confirm is answered with true or false"],
    ['a confirm answered with null', 'asker', { value: Buffer.from('null') }, "capability_result 1 (ctx.confirm of hook 'asker'): the value: Invalid input: expected boolean, received null; ctx.confirm is answered with true or false"],
    ['a file.read answered with a number', 'reader', { value: Buffer.from('42') }, "capability_result 1 (ctx.file.read of hook 'reader'): the value: Invalid input: expected string, received number; ctx.file.read is answered with the text as a JSON string"],
    ['an empty value', 'asker', { value: Buffer.alloc(0) }, "capability_result 1 (ctx.confirm of hook 'asker') has an empty value; answer with the value as JSON (true or false), or with an error"],
    ['neither a value nor an error', 'asker', {}, "capability_result 1 (ctx.confirm of hook 'asker') has neither a value nor an error; answer with the value as JSON (true or false), or with an error"],
  ])('%s ends the session with INVALID_ARGUMENT naming the capability call', async (_what, hookName, answer, details) => {
    const end = await answerWith(hookName, answer)
    expect(end.code).toBe(status.INVALID_ARGUMENT)
    expect(end.details).toBe(details)
    // The call it belonged to gets no result: the session is over.
    expect(kinds(end)).not.toContain('result')
  })
})

describe('the workdir', () => {
  it.each([
    ['relative', 'proj/src', "open.workdir 'proj/src' is not an absolute path; give the run's working directory as an absolute path (ctx.workdir, and the folder file capabilities are confined to)"],
    ['empty', '', "open.workdir is empty; give the run's working directory as an absolute path (ctx.workdir, and the folder file capabilities are confined to)"],
  ])('a %s workdir fails the open with INVALID_ARGUMENT', async (_what, workdir, details) => {
    const end = await raw.exchange([openFrame({ hooks: ['echo'], workdir })])
    expect(end.code).toBe(status.INVALID_ARGUMENT)
    expect(end.details).toBe(details)
    expect(kinds(end)).toEqual([])
  })

  it('the host library refuses to open with a relative workdir, and so does Invoke', async () => {
    const opened = await running.client.openSession(sessionOptions(['echo'], { workdir: 'proj' })).catch((err: unknown) => err)
    expect(opened).toBeInstanceOf(HookdError)
    expect((opened as HookdError).code).toBe('invalid-argument')
    const invoked = await running.client.invoke(sessionOptions(['echo'], { workdir: 'proj' }), 'beforeToolExecute', CALL).catch((err: unknown) => err)
    expect((invoked as HookdError).message).toBe(
      "open.workdir 'proj' is not an absolute path; give the run's working directory as an absolute path (ctx.workdir, and the folder file capabilities are confined to)",
    )
  })
})

describe('pushed diagnostics', () => {
  it('come after opened: a declared hook that did not load is reported once the session is open', async () => {
    const stream = raw.session()
    stream.write(openFrame({ hooks: ['broken', 'echo'] }))
    stream.end()
    const end = await stream.ended
    expect(end.code).toBe(status.OK)
    expect(kinds(end)).toEqual(['opened', 'diagnostic'])
    expect(end.messages[1]?.diagnostic).toMatchObject({ hook: 'broken', kind: 'LOAD' })
  })
})

describe('the host library after a session ended', () => {
  it('rejects later calls with "the session ended earlier: <why>", for a close', async () => {
    const session = await running.client.openSession(sessionOptions(['echo']))
    await session.close()
    const later = await session.call('beforeToolExecute', CALL).catch((err: unknown) => err)
    expect(later).toBeInstanceOf(HookdError)
    expect((later as HookdError).code).toBe('failed-precondition')
    expect((later as HookdError).message).toBe('the session ended earlier: the host closed it')
    const again = await session.close().catch((err: unknown) => err)
    expect((again as HookdError).message).toBe('the session ended earlier: the host closed it')
  })

  it('and for a session the sidecar ended: the first call gets the reason, later ones say it ended earlier, and why', async () => {
    const session = await running.client.openSession(sessionOptions(['echo']))
    // A payload that does not fit the point ends the stream with INVALID_ARGUMENT.
    const first = await session.call('beforeToolExecute', { id: 'c1' } as never).catch((err: unknown) => err)
    expect((first as HookdError).code).toBe('invalid-argument')
    const why = (first as HookdError).message
    const later = await session.call('beforeToolExecute', CALL).catch((err: unknown) => err)
    expect((later as HookdError).code).toBe('failed-precondition')
    expect((later as HookdError).message).toBe(`the session ended earlier: ${why}`)
  })
})
