/**
 * Malformed protocol input on a real socket, sent as raw frames: each gets the gRPC status that says
 * what was wrong (the session stream ends with it), and the sidecar goes on serving everyone else.
 */
import { status } from '@grpc/grpc-js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { POINT_NAMES } from '../../src/protocol/points.js'
import { RawClient, type RawStream, callFrame, encodeHostMessage, openFrame } from '../support/raw-session.js'
import { type Running, hook, sessionOptions, startSidecar, writeTree } from '../support/sidecar.js'

let running: Running
let raw: RawClient

const CALL = { id: 'c1', name: 'shell', arguments: { command: 'ls' } }
const CONFIRM_CEILING_MS = 300

beforeAll(async () => {
  const root = await writeTree({
    'echo/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ arguments: { ...c.arguments, echoed: true } })` }),
    'asker/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ arguments: { yes: ctx.confirm({ title: 'ok?' }) } })` }),
    'slow-after/index.js': hook({ afterRun: `(ctx) => { const t = Date.now(); while (Date.now() - t < 200) {} }` }),
  })
  running = await startSidecar({ hooks: root, waits: { confirmMs: CONFIRM_CEILING_MS } })
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

describe('payloads', () => {
  it('bad JSON: INVALID_ARGUMENT naming the point and the JSON error', async () => {
    const end = await raw.exchange([OPEN_ECHO, callFrame(1, 'beforeToolExecute', '{"id": "c1", oops')])
    expect(end.code).toBe(status.INVALID_ARGUMENT)
    expect(end.details).toBe(
      "beforeToolExecute payload is not valid JSON (Expected double-quoted property name in JSON at position 13)",
    )
    await expectServing()
  })

  it('an empty payload: INVALID_ARGUMENT', async () => {
    const end = await raw.exchange([OPEN_ECHO, callFrame(1, 'beforeToolExecute', '')])
    expect(end.code).toBe(status.INVALID_ARGUMENT)
    expect(end.details).toBe('beforeToolExecute payload is empty; send a UTF-8 JSON document')
    await expectServing()
  })

  it('wrong types in the payload: INVALID_ARGUMENT naming the field', async () => {
    const end = await raw.exchange([OPEN_ECHO, callFrame(1, 'beforeToolExecute', JSON.stringify({ ...CALL, id: 7 }))])
    expect(end.code).toBe(status.INVALID_ARGUMENT)
    expect(end.details).toBe('beforeToolExecute payload.id: Invalid input: expected string, received number')
    await expectServing()
  })

  it('an unknown point: INVALID_ARGUMENT naming the closest point, or the step points and where the rest are', async () => {
    const far = await raw.exchange([OPEN_ECHO, callFrame(1, 'beforeEverything', PAYLOAD)])
    expect(far.code).toBe(status.INVALID_ARGUMENT)
    expect(far.details).toBe(
      "unknown point 'beforeEverything'; the step points are beforeRun, afterRun, beforeModelRequest, afterModelResponse, beforeToolExecute, afterToolExecute; docs/points.md lists the event points",
    )
    const near = await raw.exchange([OPEN_ECHO, callFrame(1, 'beforeToolExecut', PAYLOAD)])
    expect(near.details).toBe("unknown point 'beforeToolExecut'; did you mean 'beforeToolExecute'?")
    const long = await raw.exchange([OPEN_ECHO, callFrame(1, 'x'.repeat(5000), PAYLOAD)])
    expect(long.details).toBe(`unknown point '${'x'.repeat(64)}...'; the step points are beforeRun, afterRun, beforeModelRequest, afterModelResponse, beforeToolExecute, afterToolExecute; docs/points.md lists the event points`)
    await expectServing()
  })

  it('an oversized frame: RESOURCE_EXHAUSTED', async () => {
    const big = JSON.stringify({ ...CALL, arguments: { blob: 'x'.repeat(9 * 1024 * 1024) } })
    const end = await raw.exchange([OPEN_ECHO, callFrame(1, 'beforeToolExecute', big)])
    expect(end.code).toBe(status.RESOURCE_EXHAUSTED)
    expect(end.details).toMatch(/^Received message larger than max \(\d+ vs 8388608\)$/)
    await expectServing()
  })
})

describe('frames', () => {
  it('a frame that is not protobuf: INVALID_ARGUMENT, not INTERNAL', async () => {
    // Field 2 (call) as a length-delimited value that runs past the end of the frame.
    const end = await raw.exchange([OPEN_ECHO, Buffer.from([0x12, 0x40, 0x01])])
    expect(end.code).toBe(status.INVALID_ARGUMENT)
    expect(end.details).toBe(
      'a frame sent to /hookd.v1.HookExecutor/Session is not a valid protobuf message of the request type (index out of range); send frames encoded from proto/hookd/v1/hookd.proto',
    )
    await expectServing()
  })

  it('wrong protobuf types: a string where the seq number goes is INVALID_ARGUMENT', async () => {
    // call { seq: (length-delimited "12") }: field 1 of PointCall sent with the wrong wire type.
    const frame = Buffer.from([0x12, 0x04, 0x0a, 0x02, 0x31, 0x32])
    const end = await raw.exchange([OPEN_ECHO, frame])
    expect(end.code).toBe(status.INVALID_ARGUMENT)
    expect(end.details).toMatch(/^a frame sent to \/hookd\.v1\.HookExecutor\/Session is not a valid protobuf message/)
    await expectServing()
  })

  it('an empty HostMessage: INVALID_ARGUMENT', async () => {
    const end = await raw.exchange([encodeHostMessage({})])
    expect(end.code).toBe(status.INVALID_ARGUMENT)
    expect(end.details).toBe('a HostMessage must set exactly one of open, call, capability_result, cancel, close, outcome')
    await expectServing()
  })

  it('a seq beyond 2^53: INVALID_ARGUMENT naming the field', async () => {
    const end = await raw.exchange([OPEN_ECHO, encodeHostMessage({ call: { seq: '18446744073709551615', point: 'beforeToolExecute', payload: Buffer.from(PAYLOAD) } })])
    expect(end.code).toBe(status.INVALID_ARGUMENT)
    expect(end.details).toBe('HostMessage.call.seq: Too big: expected int to be <=9007199254740991')
    await expectServing()
  })

  it('a unary Invoke that is not protobuf: INVALID_ARGUMENT', async () => {
    const reply = await raw.invoke(Buffer.from([0x0a, 0x7f]))
    expect(reply.code).toBe(status.INVALID_ARGUMENT)
    expect(reply.details).toMatch(/^a frame sent to \/hookd\.v1\.HookExecutor\/Invoke is not a valid protobuf message/)
    await expectServing()
  })
})

describe('order', () => {
  it('a call before open: FAILED_PRECONDITION', async () => {
    const end = await raw.exchange([callFrame(1, 'beforeToolExecute', PAYLOAD)])
    expect(end.code).toBe(status.FAILED_PRECONDITION)
    expect(end.details).toBe("'call' arrived before the session was opened; send 'open' first")
    await expectServing()
  })

  it('a second open: FAILED_PRECONDITION', async () => {
    const end = await raw.exchange([OPEN_ECHO, OPEN_ECHO])
    expect(end.code).toBe(status.FAILED_PRECONDITION)
    expect(end.details).toBe('the session is already open; send open only once')
    expect(end.messages.map((m) => m.kind)).toEqual(['opened'])
    await expectServing()
  })

  it('a duplicated seq: INVALID_ARGUMENT', async () => {
    const end = await raw.exchange([OPEN_ECHO, callFrame(1, 'beforeToolExecute', PAYLOAD), callFrame(1, 'beforeToolExecute', PAYLOAD)])
    expect(end.code).toBe(status.INVALID_ARGUMENT)
    expect(end.details).toBe('point call seq 1 was already used in this session; use a new seq for every call')
    await expectServing()
  })

  it('an answer to a capability call never made: FAILED_PRECONDITION', async () => {
    const end = await raw.exchange([OPEN_ECHO, encodeHostMessage({ capabilityResult: { id: 42, value: Buffer.from('true') } })])
    expect(end.code).toBe(status.FAILED_PRECONDITION)
    expect(end.details).toBe('capability_result 42 answers no capability call of this session (the last call made has id 0)')
    await expectServing()
  })

  it('a capability answer that is not JSON: INVALID_ARGUMENT', async () => {
    const stream = raw.session()
    stream.write(openFrame({ hooks: ['asker'], interactive: true }))
    stream.write(callFrame(1, 'beforeToolExecute', PAYLOAD))
    const asked = await stream.next('capabilityCall')
    stream.write(encodeHostMessage({ capabilityResult: { id: capabilityId(asked), value: Buffer.from('yes!') } }))
    const end = await stream.ended
    expect(end.code).toBe(status.INVALID_ARGUMENT)
    expect(end.details).toBe("capability_result 1 (ctx.confirm of hook 'asker'): the value is not valid JSON (Unexpected token 'y', \"yes!\" is not valid JSON)")
    await expectServing()
  })

  it('a late answer (after the wait ceiling) is dropped, and the session goes on', async () => {
    const stream = raw.session()
    stream.write(openFrame({ hooks: ['asker'], interactive: true }))
    stream.write(callFrame(1, 'beforeToolExecute', PAYLOAD))
    const first = await stream.next('capabilityCall')
    const timedOut = await stream.next('result')
    expect(diagnosticMessages(timedOut)).toEqual([
      `hook 'asker' beforeToolExecute: Error: ctx.confirm: the host did not answer within ${CONFIRM_CEILING_MS} ms`,
    ])
    // The human answers at last: too late, and no harm done.
    stream.write(encodeHostMessage({ capabilityResult: { id: capabilityId(first), value: Buffer.from('true') } }))
    stream.write(callFrame(2, 'beforeToolExecute', PAYLOAD))
    const second = await stream.next('capabilityCall')
    stream.write(encodeHostMessage({ capabilityResult: { id: capabilityId(second), value: Buffer.from('true') } }))
    const answered = await stream.next('result')
    expect(diagnosticMessages(answered)).toEqual([])
    expect(JSON.parse(String(resultOf(answered).result))).toEqual({ allow: true, arguments: { yes: true } })
    stream.end()
    const end = await stream.ended
    expect(end.code).toBe(status.OK)
    await expectServing()
  })

  it('an unsupported protocol version: FAILED_PRECONDITION', async () => {
    const end = await raw.exchange([openFrame({ protocolVersion: 99, hooks: ['echo'] })])
    expect(end.code).toBe(status.FAILED_PRECONDITION)
    expect(end.details).toMatch(/^protocol_version 99 is not supported; this sidecar \(hookd [^)]+\) speaks version 1$/)
    await expectServing()
  })

  it('a second close while the first runs: FAILED_PRECONDITION', async () => {
    const close = encodeHostMessage({ close: { reason: 'end_turn' } })
    // slow-after's afterRun keeps the first close running while the second arrives.
    const end = await raw.exchange([openFrame({ hooks: ['slow-after'] }), close, close])
    expect(end.code).toBe(status.FAILED_PRECONDITION)
    expect(end.details).toBe('the session is already closed or closing; send close once')
    await expectServing()
  })

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

function capabilityId(message: Awaited<ReturnType<RawStream['next']>>): number {
  const call = message?.capabilityCall as { id?: unknown } | undefined
  if (typeof call?.id !== 'number') throw new Error('expected a capabilityCall')
  return call.id
}

function resultOf(message: Awaited<ReturnType<RawStream['next']>>): { result: Buffer; diagnostics: Array<{ message: string }> } {
  const result = message?.result as { result: Buffer; diagnostics: Array<{ message: string }> } | undefined
  if (!result) throw new Error('expected a result')
  return result
}

function diagnosticMessages(message: Awaited<ReturnType<RawStream['next']>>): string[] {
  return resultOf(message).diagnostics.map((d) => d.message)
}
