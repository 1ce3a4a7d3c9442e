/**
 * Malformed protocol input on a real socket, where the socket is the point: a frame over gRPC's
 * message limit (the sidecar's server sets it), frames protobuf cannot decode (hook-executor.ts gives
 * its service tolerant decoding), a unary Invoke, many broken streams at once on one server. Each gets
 * the gRPC status that says what was wrong, and the sidecar goes on serving everyone else. Every other
 * protocol mistake of the Session stream is tested in memory (test/unit/session/session-stream.test.ts).
 */
import { status } from '@grpc/grpc-js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HookdError } from '../../src/host/index.js'
import { RawClient, callFrame, openFrame } from '../support/raw-session.js'
import { type Running, hook, sessionOptions, startSidecar, writeTree } from '../support/sidecar.js'

let running: Running
let raw: RawClient

const CALL = { id: 'c1', name: 'shell', arguments: { command: 'ls' } }

beforeAll(async () => {
  const root = await writeTree({
    'echo/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ arguments: { ...c.arguments, echoed: true } })` }),
  })
  running = await startSidecar({ hooks: root })
  raw = new RawClient(running.address)
})

afterAll(async () => {
  raw?.close()
  await running?.stop()
})

/** The sidecar still serves a well-behaved host. */
async function expectServing(): Promise<void> {
  const session = await running.client.openSession(sessionOptions(['echo']))
  const out = await session.call('beforeToolExecute', CALL)
  expect(out.result).toEqual({ allow: true, arguments: { ...CALL.arguments, echoed: true } })
  expect(out.diagnostics).toEqual([])
  await session.close()
}

const OPEN_ECHO = openFrame({ hooks: ['echo'] })
const PAYLOAD = JSON.stringify(CALL)

describe('frames', () => {
  it('an oversized frame: RESOURCE_EXHAUSTED', async () => {
    const big = JSON.stringify({ ...CALL, arguments: { blob: 'x'.repeat(9 * 1024 * 1024) } })
    const end = await raw.exchange([OPEN_ECHO, callFrame(1, 'beforeToolExecute', big)])
    expect(end.code).toBe(status.RESOURCE_EXHAUSTED)
    expect(end.details).toMatch(/^Received message larger than max \(\d+ vs 8388608\)$/)
    await expectServing()
  })

  it('a frame that is not protobuf: INVALID_ARGUMENT, not INTERNAL', async () => {
    // Field 2 (call) as a length-delimited value that runs past the end of the frame.
    const end = await raw.exchange([OPEN_ECHO, Buffer.from([0x12, 0x40, 0x01])])
    expect(end.code).toBe(status.INVALID_ARGUMENT)
    expect(end.details).toBe(
      'a frame sent to /hookd.v1.HookExecutor/Session is not a valid protobuf message of the request type (index out of range); send frames encoded from proto/hookd/v1/hookd.proto',
    )
    await expectServing()
  })

  it('a unary Invoke that is not protobuf: INVALID_ARGUMENT', async () => {
    const reply = await raw.invoke(Buffer.from([0x0a, 0x7f]))
    expect(reply.code).toBe(status.INVALID_ARGUMENT)
    expect(reply.details).toMatch(/^a frame sent to \/hookd\.v1\.HookExecutor\/Invoke is not a valid protobuf message/)
    await expectServing()
  })
})

describe('open', () => {
  it('the host library refuses to open with a relative workdir, and so does Invoke', async () => {
    const opened = await running.client.openSession(sessionOptions(['echo'], { workdir: 'proj' })).catch((err: unknown) => err)
    expect(opened).toBeInstanceOf(HookdError)
    expect((opened as HookdError).code).toBe('invalid-argument')
    const invoked = await running.client.invoke(sessionOptions(['echo'], { workdir: 'proj' }), 'beforeToolExecute', CALL).catch((err: unknown) => err)
    expect((invoked as HookdError).code).toBe('invalid-argument')
    expect((invoked as HookdError).message).toBe(
      "open.workdir 'proj' is not an absolute path; give the run's working directory as an absolute path (ctx.workdir, and the folder file capabilities are confined to)",
    )
  })
})

describe('order', () => {
  it('many broken streams at once do not disturb a well-behaved session', async () => {
    const session = await running.client.openSession(sessionOptions(['echo']))
    const broken = Array.from({ length: 50 }, (_, i) =>
      raw.exchange(i % 2 ? [callFrame(1, 'beforeToolExecute', PAYLOAD)] : [OPEN_ECHO, callFrame(1, 'nope', '{}')]),
    )
    const out = await session.call('beforeToolExecute', CALL)
    expect(out.result).toEqual({ allow: true, arguments: { ...CALL.arguments, echoed: true } })
    const codes = new Set((await Promise.all(broken)).map((e) => e.code))
    expect([...codes].sort()).toEqual([status.INVALID_ARGUMENT, status.FAILED_PRECONDITION].sort())
    await session.close()
    await expectServing()
  })
})
