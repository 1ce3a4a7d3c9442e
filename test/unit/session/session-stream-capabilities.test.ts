/**
 * Capability calls round trip over the Session stream in memory: the session checks each against its
 * policy, the stream carries the allowed ones to the host library, whose handlers (its defaults, or
 * the host's) answer, and the hook gets the reply. A refusal in the sidecar never reaches the host; a
 * host's handler failing fails the one call; a host that does not answer in time is a timeout, and
 * its late answer is dropped. What a hook does with a reply inside its sandbox (a thrown Error, a
 * capability-denied diagnostic) is the real worker's, tested in test/integration/capabilities/capabilities.test.ts.
 */
import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { status } from '@grpc/grpc-js'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type CallOrigin, CapabilityError, type CapabilityHandlers, type HostSession, MAX_REPLY_BYTES, type Message, type SessionOptions, workdirFiles } from '../../../src/host/index.js'
import type { CapabilityReply } from '../../../src/sidecar/runners/hook-runner.js'
import { callFrame, encodeHostMessage, openFrame } from '../../support/raw-session.js'
import { exporting, returns } from '../fakes.js'
import { type StreamWorld, closeStreamWorlds, streamWorld } from './stream-world.js'
import { FILE_REFUSALS } from '../../support/file-refusals.js'

const CALL = { id: 'c1', name: 'shell', arguments: { command: 'ls' } }

let w: StreamWorld
let outside = ''

beforeAll(async () => {
  outside = await mkdtemp(join(tmpdir(), 'hookd-unit-outside-'))
  await writeFile(join(outside, 'secret.txt'), 'outside secret')
})

afterAll(async () => {
  await rm(outside, { recursive: true, force: true })
})

afterEach(closeStreamWorlds)

beforeEach(async () => {
  w = await streamWorld({ probe: { index: exporting('beforeToolExecute') }, env: { index: exporting('beforeToolExecute') } }, { waits: { capabilityMs: 300, confirmMs: 300 } })
  // Makes the call its point call names ({cap, args}) and answers with the reply it got.
  w.runner.script('probe', async (r) => {
    const { cap, args } = (r.args[0] as { arguments: { cap: string; args: unknown[] } }).arguments
    return returns({ arguments: await r.onCapability(cap, args) })
  })
  w.runner.script('env', (r) => returns({ arguments: { env: r.ctx.env } }))
  // The workdir: notes.txt, sub/{a,b}.txt, an inner link and links that lead outside.
  await writeFile(join(w.workdir, 'notes.txt'), 'the notes')
  await mkdir(join(w.workdir, 'sub'))
  await writeFile(join(w.workdir, 'sub', 'a.txt'), 'A')
  await writeFile(join(w.workdir, 'sub', 'b.txt'), 'B')
  await symlink('sub', join(w.workdir, 'inner'))
  await symlink(outside, join(w.workdir, 'escape-dir'))
  await symlink(join(outside, 'secret.txt'), join(w.workdir, 'escape-file'))
  await symlink(join(outside, 'created-through-link.txt'), join(w.workdir, 'dangling'))
})

function open(extra: Partial<SessionOptions> = {}): Promise<HostSession> {
  return w.open(['probe'], extra)
}

/** One capability call through the probe hook: the reply the hook got. */
async function probe(session: HostSession, cap: string, ...args: unknown[]): Promise<CapabilityReply> {
  const out = await session.call('beforeToolExecute', { id: 'p', name: 'probe', arguments: { cap, args } })
  expect(out.diagnostics).toEqual([])
  return out.result.arguments as unknown as CapabilityReply
}

describe('ctx.confirm', () => {
  it("waits for the host's handler and gives the hook the human's answer, with who asked", async () => {
    const asked: Array<{ message: Message; origin: CallOrigin }> = []
    const answers = [true, false]
    const session = await open({ interactive: true, capabilities: { confirm: async (message, origin) => (asked.push({ message, origin }), answers.shift() as boolean) } })
    expect(await probe(session, 'confirm', { title: 'Run it?', body: 'shell' })).toEqual({ ok: true, value: true })
    expect(await probe(session, 'confirm', { title: 'Really?' })).toEqual({ ok: true, value: false })
    expect(asked).toEqual([
      { message: { title: 'Run it?', body: 'shell' }, origin: { hook: 'probe', point: 'beforeToolExecute', seq: 1 } },
      { message: { title: 'Really?' }, origin: { hook: 'probe', point: 'beforeToolExecute', seq: 2 } },
    ])
    await session.close()
  })

  it('is answered by auto-approve when the session is not interactive, without asking the host; the trace says so', async () => {
    let asked = 0
    const confirm = (): boolean => (asked++, false)
    for (const autoApprove of [true, false]) {
      const session = await open({ interactive: false, autoApprove, capabilities: { confirm } })
      const out = await session.call('beforeToolExecute', { id: 'p', name: 'probe', arguments: { cap: 'confirm', args: [{ title: 'Go?', body: 'rm' }] } })
      expect(out.result.arguments).toEqual({ ok: true, value: autoApprove })
      expect(out.trace).toEqual([expect.objectContaining({ hook: 'probe', autoConfirms: [{ title: 'Go?', body: 'rm', approved: autoApprove }] })])
      await session.close()
    }
    expect(asked).toBe(0)
  })

  it('is refused in the sidecar when the policy denies it: the host is never asked', async () => {
    let asked = 0
    const session = await open({ interactive: true, autoApprove: true, policy: { confirm: false }, capabilities: { confirm: () => (asked++, true) } })
    expect(await probe(session, 'confirm', { title: 'Deploy?' })).toEqual({ ok: false, code: 'denied', message: "ctx.confirm({ title: 'Deploy?' }) refused: this session does not allow ctx.confirm" })
    expect(asked).toBe(0)
    await session.close()
  })

  it("a handler's CapabilityError reaches the hook with its code; any other throw is 'failed'", async () => {
    const errors = [new CapabilityError('denied', 'the operator said no'), new Error('the terminal went away')]
    const session = await open({ interactive: true, capabilities: { confirm: () => Promise.reject(errors.shift()) } })
    expect(await probe(session, 'confirm', { title: 'A?' })).toEqual({ ok: false, code: 'denied', message: 'the operator said no' })
    expect(await probe(session, 'confirm', { title: 'B?' })).toEqual({ ok: false, code: 'failed', message: 'the terminal went away' })
    await session.close()
  })
})

describe('ctx.notify', () => {
  it("reaches the host's handler with who sent it; the hook gets null", async () => {
    const notes: Array<[Message, CallOrigin]> = []
    const session = await open({ capabilities: { notify: (m, o) => void notes.push([m, o]) } })
    expect(await probe(session, 'notify', { title: 'done', body: 'all good' })).toEqual({ ok: true, value: null })
    expect(notes).toEqual([[{ title: 'done', body: 'all good' }, { hook: 'probe', point: 'beforeToolExecute', seq: 1 }]])
    await session.close()
  })
})

describe('ctx.file, served by the host library\'s default handlers (workdirFiles)', () => {
  it('reads, writes, appends, checks and lists inside the workdir', async () => {
    const session = await open()
    expect(await probe(session, 'file.write', 'out/new.txt', 'one\n')).toEqual({ ok: true, value: null })
    expect(await probe(session, 'file.append', 'out/new.txt', 'two\n')).toEqual({ ok: true, value: null })
    expect(await probe(session, 'file.read', 'out/new.txt')).toEqual({ ok: true, value: 'one\ntwo\n' })
    expect(await probe(session, 'file.read', 'inner/a.txt')).toEqual({ ok: true, value: 'A' })
    expect(await probe(session, 'file.read', 'sub/../notes.txt')).toEqual({ ok: true, value: 'the notes' })
    expect(await probe(session, 'file.exists', 'sub')).toEqual({ ok: true, value: true })
    expect(await probe(session, 'file.exists', 'missing.txt')).toEqual({ ok: true, value: false })
    expect(await probe(session, 'file.list')).toEqual({ ok: true, value: ['dangling', 'escape-dir', 'escape-file', 'inner', 'notes.txt', 'out', 'sub'] })
    expect(await probe(session, 'file.list', 'sub')).toEqual({ ok: true, value: ['a.txt', 'b.txt'] })
    expect(await readFile(join(w.workdir, 'out', 'new.txt'), 'utf8')).toBe('one\ntwo\n')
    await session.close()
  })

  it('reports a missing file with its system code, the capability and the path', async () => {
    const session = await open()
    expect(await probe(session, 'file.read', 'missing.txt')).toEqual({ ok: false, code: 'ENOENT', message: "ctx.file.read('missing.txt') failed: no such file or directory" })
    expect(await probe(session, 'file.list', 'notes.txt')).toMatchObject({ ok: false, code: 'ENOTDIR' })
    await session.close()
  })

  const refusals = FILE_REFUSALS

  it.each(refusals)('refuses %s(%j), saying what and why; a refusal in the sidecar never reaches the host', async (cap, args, why, by) => {
    const files = workdirFiles(w.workdir)
    const reached: string[] = []
    // The host's own handlers, counted.
    const counted: CapabilityHandlers['file'] = {
      read: (p, o) => (reached.push(p), files.read(p, o)),
      write: (p, t, o) => (reached.push(p), files.write(p, t, o)),
      exists: (p, o) => (reached.push(p), files.exists(p, o)),
      list: (p, o) => (reached.push(p), files.list(p, o)),
    }
    const session = await open({ capabilities: { file: counted } })
    expect(await probe(session, cap, ...args)).toEqual({ ok: false, code: 'denied', message: `ctx.${cap}('${String(args[0])}') refused: ${why}` })
    expect(reached).toEqual(by === 'sidecar' ? [] : [args[0]])
    await session.close()
    await expect(stat(join(outside, 'created-through-link.txt'))).rejects.toMatchObject({ code: 'ENOENT' })
    await expect(stat(join(outside, 'planted.txt'))).rejects.toMatchObject({ code: 'ENOENT' })
  })

  it("with policy 'none' refuses every file capability, with 'read' every write, in the sidecar", async () => {
    const none = await open({ policy: { file: 'none' } })
    for (const [cap, args] of [['file.read', ['notes.txt']], ['file.exists', ['notes.txt']], ['file.list', ['.']], ['file.write', ['new.txt', 'x']], ['file.append', ['new.txt', 'x']]] as const) {
      expect(await probe(none, cap, ...args)).toEqual({ ok: false, code: 'denied', message: `ctx.${cap}('${args[0]}') refused: this session allows no file access` })
    }
    await none.close()
    const read = await open({ policy: { file: 'read' } })
    expect(await probe(read, 'file.read', 'notes.txt')).toEqual({ ok: true, value: 'the notes' })
    expect(await probe(read, 'file.write', 'notes.txt', 'overwritten')).toEqual({ ok: false, code: 'denied', message: "ctx.file.write('notes.txt') refused: this session allows reading files only" })
    expect(await readFile(join(w.workdir, 'notes.txt'), 'utf8')).toBe('the notes')
    await read.close()
  })

  it('refuses arguments of the wrong shape as invalid, naming the argument, before the host sees them', async () => {
    let reached = 0
    const session = await open({ capabilities: { file: { read: async () => (reached++, '') } } })
    expect(await probe(session, 'file.read', 42)).toMatchObject({ ok: false, code: 'invalid', message: expect.stringMatching(/^ctx\.file\.read: invalid arguments\[0\]: /) })
    expect(reached).toBe(0)
    await session.close()
  })

  it('fails one call, not the session, when a host answer is too big to send back', async () => {
    const session = await open({ capabilities: { file: { read: async () => 'x'.repeat(MAX_REPLY_BYTES) } } })
    expect(await probe(session, 'file.read', 'huge.txt')).toEqual({
      ok: false,
      code: 'limit',
      message: `ctx.file.read: the host's answer is ${MAX_REPLY_BYTES + 2} bytes, over the limit of ${MAX_REPLY_BYTES}`,
    })
    expect(await probe(session, 'file.exists', 'notes.txt')).toEqual({ ok: true, value: true })
    await session.close()
  })
})

describe('ctx.http.fetch', () => {
  const ORIGIN = 'http://127.0.0.1:8123'

  it("is served by the host's handler for an allowed origin, with the hook's options", async () => {
    const asked: Array<[string, unknown]> = []
    const session = await open({
      policy: { httpOrigins: [`${ORIGIN}/`] },
      capabilities: { fetch: async (url, init) => (asked.push([url, init]), { status: 201, headers: { 'x-served-by': 'host' }, body: 'made' }) },
    })
    expect(await probe(session, 'http.fetch', `${ORIGIN}/echo?q=1`, { method: 'POST', headers: { 'x-hook': 'probe' }, body: 'hello' })).toEqual({
      ok: true,
      value: { status: 201, headers: { 'x-served-by': 'host' }, body: 'made' },
    })
    expect(asked).toEqual([[`${ORIGIN}/echo?q=1`, { method: 'POST', headers: { 'x-hook': 'probe' }, body: 'hello' }]])
    await session.close()
  })

  it('is refused by policy in the sidecar: an origin not allowed, a URL that is not http(s), any origin by default; the handler is never called', async () => {
    const handled: string[] = []
    const fetch = async (url: string) => (handled.push(url), { status: 200, headers: {}, body: 'should not happen' })
    const session = await open({ policy: { httpOrigins: [ORIGIN] }, capabilities: { fetch } })
    expect(await probe(session, 'http.fetch', 'http://127.0.0.1:9/secret')).toEqual({
      ok: false,
      code: 'denied',
      message: `ctx.http.fetch('http://127.0.0.1:9/secret') refused: origin http://127.0.0.1:9 is not allowed (allowed origins: ${ORIGIN})`,
    })
    expect(await probe(session, 'http.fetch', 'file:///etc/passwd')).toEqual({
      ok: false,
      code: 'denied',
      message: "ctx.http.fetch('file:///etc/passwd') refused: only absolute http:// and https:// URLs can be fetched",
    })
    await session.close()
    const closed = await open({ capabilities: { fetch } })
    expect(await probe(closed, 'http.fetch', `${ORIGIN}/`)).toMatchObject({ ok: false, code: 'denied', message: expect.stringContaining('(allowed origins: none)') })
    await closed.close()
    expect(handled).toEqual([])
  })

  it('refuses options of the wrong shape as invalid', async () => {
    const session = await open({ policy: { httpOrigins: [ORIGIN] } })
    expect(await probe(session, 'http.fetch', `${ORIGIN}/`, { method: 'GET /evil' })).toMatchObject({ ok: false, code: 'invalid', message: expect.stringContaining('method must be an HTTP method name') })
    await session.close()
  })
})

describe('ctx.env', () => {
  it('holds only the names the policy allows, of those the host offers', async () => {
    const session = await w.open(['env'], { env: { HOOKD_T_VISIBLE: 'shown', HOOKD_T_SECRET: 'hidden' }, policy: { env: ['HOOKD_T_VISIBLE', 'HOOKD_T_ABSENT'] } })
    expect((await session.call('beforeToolExecute', CALL)).result.arguments).toEqual({ env: { HOOKD_T_VISIBLE: 'shown' } })
    await session.close()
  })

  it('is filtered in the sidecar too, whatever a host sends', async () => {
    const stream = w.raw()
    stream.write(openFrame({ hooks: ['env'], env: { HOOKD_T_A: 'a', HOOKD_T_B: 'b', HOOKD_T_C: 'c' }, policy: { env: ['HOOKD_T_B'] } }))
    stream.write(callFrame(1, 'beforeToolExecute', JSON.stringify(CALL)))
    const result = (await stream.next('result'))?.result as { result: Buffer }
    expect(JSON.parse(String(result.result))).toMatchObject({ arguments: { env: { HOOKD_T_B: 'b' } } })
    stream.cancel()
    await stream.ended
  })
})

describe('an answer that does not fit ends the session with INVALID_ARGUMENT naming the capability call', () => {
  it.each([
    ['a value that is not JSON', 'confirm', { value: Buffer.from('yes!') }, `capability_result 1 (ctx.confirm of hook 'probe'): the value is not valid JSON (Unexpected token 'y', "yes!" is not valid JSON)`],
    ['a confirm answered with a string', 'confirm', { value: Buffer.from('"yes"') }, "capability_result 1 (ctx.confirm of hook 'probe'): the value: Invalid input: expected boolean, received string; ctx.confirm is answered with true or false"],
    ['a confirm answered with null', 'confirm', { value: Buffer.from('null') }, "capability_result 1 (ctx.confirm of hook 'probe'): the value: Invalid input: expected boolean, received null; ctx.confirm is answered with true or false"],
    ['a file.read answered with a number', 'file.read', { value: Buffer.from('42') }, "capability_result 1 (ctx.file.read of hook 'probe'): the value: Invalid input: expected string, received number; ctx.file.read is answered with the text as a JSON string"],
    ['an empty value', 'confirm', { value: Buffer.alloc(0) }, "capability_result 1 (ctx.confirm of hook 'probe') has an empty value; answer with the value as JSON (true or false), or with an error"],
    ['neither a value nor an error', 'confirm', {}, "capability_result 1 (ctx.confirm of hook 'probe') has neither a value nor an error; answer with the value as JSON (true or false), or with an error"],
  ])('%s', async (_what, cap, answer, details) => {
    const stream = w.raw()
    stream.write(openFrame({ hooks: ['probe'], interactive: true, workdir: w.workdir }))
    const args = cap === 'confirm' ? [{ title: 'ok?' }] : ['notes.txt']
    stream.write(callFrame(1, 'beforeToolExecute', JSON.stringify({ id: 'p', name: 'probe', arguments: { cap, args } })))
    const asked = (await stream.next('capabilityCall'))?.capabilityCall as { id: number; capability: string }
    expect(asked).toMatchObject({ id: 1, capability: cap })
    stream.write(encodeHostMessage({ capabilityResult: { id: asked.id, ...answer } }))
    const end = await stream.ended
    expect({ code: end.code, details: end.details }).toEqual({ code: status.INVALID_ARGUMENT, details })
    // The call it belonged to gets no result: the session is over, and the hook never saw the answer.
    expect(end.messages.map((m) => m.kind)).toEqual(['opened'])
    expect(w.runner.callsOf('probe')[0]?.capabilities[0]?.reply).toEqual({ ok: false, code: 'unavailable', message: 'the host disconnected' })
    const session = await open()
    expect(await probe(session, 'file.exists', 'notes.txt')).toEqual({ ok: true, value: true })
    await session.close()
  })
})

describe("the host's wait ceilings", () => {
  it('a call the host does not answer in time is a timeout for the hook; the late answer is dropped and the session goes on', async () => {
    let late: ((yes: boolean) => void) | undefined
    const session = await open({ interactive: true, capabilities: { confirm: () => new Promise<boolean>((resolve) => (late = resolve)) } })
    expect(await probe(session, 'confirm', { title: 'ok?' })).toEqual({ ok: false, code: 'timeout', message: 'ctx.confirm: the host did not answer within 300 ms' })
    late?.(true)
    expect(await probe(session, 'file.exists', 'notes.txt')).toEqual({ ok: true, value: true })
    expect(session.isEnded).toBe(false)
    await session.close()
  })
})
