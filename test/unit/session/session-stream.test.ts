/**
 * The Session stream machine (src/sidecar/grpc/session-stream.ts) in memory, through the host library
 * and as raw frames (test/support/memory-session.ts; hooks are the fake runner's scripts): `opened`
 * comes first, then what the open pushed; point calls are answered by seq; log lines reach the host
 * while the hook runs; every protocol mistake ends the stream with the status that says what was
 * wrong, and the same sidecar then serves a well-behaved host.
 */
import { status } from '@grpc/grpc-js'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type Diagnostic, HookdError, type LogLineData } from '../../../src/host/index.js'
import { HOOKD_VERSION, PROTOCOL_VERSION } from '../../../src/protocol/version.js'
import { type RawSidecarMessage, callFrame, encodeHostMessage, openFrame } from '../../support/raw-session.js'
import { deferred, exporting, returns, until } from '../fakes.js'
import { type StreamWorld, closeStreamWorlds, streamWorld } from './stream-world.js'

const CALL = { id: 'c1', name: 'shell', arguments: { command: 'ls' } }
const PAYLOAD = JSON.stringify(CALL)
const ECHOED = { allow: true, arguments: { ...CALL.arguments, echoed: true } }

let w: StreamWorld

afterEach(closeStreamWorlds)

beforeEach(async () => {
  w = await streamWorld(
    {
      echo: { index: exporting('beforeToolExecute') },
      asker: { index: exporting('beforeToolExecute') },
      broken: { index: exporting('beforeToolExecute') },
      slow: { index: exporting('beforeToolExecute') },
    },
    { loader: (l) => l.script('broken', { ok: false, message: 'SyntaxError: Unexpected end of input', line: 3 }) },
  )
  w.runner.script('echo', (r) => returns({ arguments: { ...(r.args[0] as typeof CALL).arguments, echoed: true } }))
  w.runner.script('asker', async (r) => {
    const reply = await r.onCapability('confirm', [{ title: 'ok?' }])
    return returns({ arguments: { yes: reply.ok ? reply.value : reply.message } })
  })
})

/** The sidecar still serves a well-behaved host, and tracks no stream that ended. */
async function expectServing(): Promise<void> {
  const session = await w.open(['echo'])
  const out = await session.call('beforeToolExecute', CALL)
  expect(out.result).toEqual(ECHOED)
  expect(out.diagnostics).toEqual([])
  await session.close()
  await until(() => w.sidecar.streams.size === 0)
}

const kinds = (messages: RawSidecarMessage[]): Array<string | undefined> => messages.map((m) => m.kind)
const OPEN_ECHO = openFrame({ hooks: ['echo'] })

describe('open', () => {
  it("answers 'opened' first: the session id, each declared hook, the versions, and that it takes outcome reports", async () => {
    const end = await w.sidecar.exchange([openFrame({ sessionId: 'run-7', hooks: ['asker', 'echo'] })])
    expect(end.code).toBe(status.OK)
    expect(end.messages).toEqual([
      {
        kind: 'opened',
        opened: {
          sessionId: 'run-7',
          hooks: ['asker', 'echo'].map((name) => ({
            name,
            version: w.registry.get(name)?.version,
            points: ['beforeToolExecute'],
            status: 'HOOK_STATUS_READY',
            lastError: null,
            loadedAtMs: expect.any(Number),
            description: '',
            digest: w.registry.get(name)?.digest,
            permissions: '',
          })),
          sidecarVersion: HOOKD_VERSION,
          protocolVersion: PROTOCOL_VERSION,
          askOutcomes: true,
        },
      },
    ])
  })

  it('the host library reads it: the session id, the hooks in declared order, askOutcomes', async () => {
    const session = await w.open(['echo', 'asker'], { sessionId: 'run-8' })
    expect(session.id).toBe('run-8')
    expect(session.hooks.map((h) => [h.name, h.status, h.points])).toEqual([
      ['echo', 'ready', ['beforeToolExecute']],
      ['asker', 'ready', ['beforeToolExecute']],
    ])
    expect(session.askOutcomes).toBe(true)
    expect(session.subscribedPoints()).toContain('beforeToolExecute')
    await session.close()
  })

  it('pushes the diagnostics of the open after opened: a declared hook that did not load', async () => {
    const end = await w.sidecar.exchange([openFrame({ hooks: ['broken', 'echo'] })])
    expect(end.code).toBe(status.OK)
    expect(kinds(end.messages)).toEqual(['opened', 'diagnostic'])
    expect(end.messages[1]?.diagnostic).toMatchObject({ hook: 'broken', kind: 'LOAD', file: 'broken/index.js' })
    // The host library has the session before it hears about it; a broken hook subscribes it to every gate.
    const pushed: Diagnostic[] = []
    const session = await w.open(['broken', 'echo'], { capabilities: { diagnostic: (d) => pushed.push(d) } })
    expect(session.hooks.map((h) => h.status)).toEqual(['broken', 'ready'])
    await until(() => pushed.length === 1)
    expect(pushed[0]).toMatchObject({
      hook: 'broken',
      kind: 'load',
      message:
        'SyntaxError: the file ends before its code is complete: a {, ( or [ is never closed, or the last statement is cut off. The hook is skipped until it loads; fix broken/index.js and save it',
    })
    expect(session.subscribedPoints()).toContain('tool:gate')
    await session.close()
  })

  it("pushes the registry's news about a declared hook while the session is open, and none about others", async () => {
    const echoNews: Diagnostic[] = []
    const otherNews: Diagnostic[] = []
    const echoing = await w.open(['echo'], { capabilities: { diagnostic: (d) => echoNews.push(d) } })
    const other = await w.open(['asker'], { capabilities: { diagnostic: (d) => otherNews.push(d) } })
    await w.folder.write({ echo: { index: `${exporting('beforeToolExecute')}// edited\n` } })
    await w.registry.loadOne('echo')
    await until(() => echoNews.length === 1)
    expect(echoNews[0]).toMatchObject({ hook: 'echo', kind: 'reload', version: w.registry.get('echo')?.version })
    await echoing.close()
    await other.close()
    expect(otherNews).toEqual([])
  })

  it.each([
    ['an unknown hook: NOT_FOUND, naming it, the folder and the hooks there', { hooks: ['echo', 'ecko'] }, status.NOT_FOUND, (): string => `unknown hook 'ecko' in ${w.folder.root} (available: asker, broken, echo, slow)`],
    ['a relative workdir: INVALID_ARGUMENT', { hooks: ['echo'], workdir: 'proj/src' }, status.INVALID_ARGUMENT, (): string => "open.workdir 'proj/src' is not an absolute path; give the run's working directory as an absolute path (ctx.workdir, and the folder file capabilities are confined to)"],
    ['an empty workdir: INVALID_ARGUMENT', { hooks: ['echo'], workdir: '' }, status.INVALID_ARGUMENT, (): string => "open.workdir is empty; give the run's working directory as an absolute path (ctx.workdir, and the folder file capabilities are confined to)"],
    ['an unsupported protocol version: FAILED_PRECONDITION', { protocolVersion: 99, hooks: ['echo'] }, status.FAILED_PRECONDITION, (): string => `protocol_version 99 is not supported; this sidecar (hookd ${HOOKD_VERSION}) speaks version 1`],
  ])('refuses %s, before opened', async (_what, open, code, details) => {
    const end = await w.sidecar.exchange([openFrame(open)])
    expect({ code: end.code, details: end.details, kinds: kinds(end.messages) }).toEqual({ code, details: details(), kinds: [] })
    await expectServing()
  })

  it('the host library fails the open with the HookdError the sidecar ended it with', async () => {
    const opened = await w.open(['echo'], { workdir: 'proj' }).catch((err: unknown) => err)
    expect(opened).toBeInstanceOf(HookdError)
    expect(opened).toMatchObject({ code: 'invalid-argument', message: expect.stringMatching(/^open\.workdir 'proj' is not an absolute path/) })
    const unknown = await w.open(['nope']).catch((err: unknown) => err)
    expect(unknown).toMatchObject({ code: 'not-found', message: expect.stringMatching(/^unknown hook 'nope' in /) })
  })
})

describe('point calls', () => {
  it('are answered by seq with the chained result, its trace and a decision id', async () => {
    const stream = w.raw()
    stream.write(OPEN_ECHO)
    stream.write(callFrame(5, 'beforeToolExecute', PAYLOAD))
    const result = (await stream.next('result'))?.result as { seq: number; point: string; result: Buffer; trace: Array<{ hook: string; outcome: string }>; decisionId: string }
    expect(result).toMatchObject({ seq: 5, point: 'beforeToolExecute', diagnostics: [], decisionId: expect.stringMatching(/^[0-9a-f-]{36}$/) })
    expect(JSON.parse(String(result.result))).toEqual(ECHOED)
    expect(result.trace).toEqual([expect.objectContaining({ hook: 'echo', outcome: 'HOOK_OUTCOME_CHANGED' })])
    stream.end()
    expect((await stream.ended).code).toBe(status.OK)
  })

  it('run side by side: each result goes to its own call, in the order they finish', async () => {
    const release = deferred()
    w.runner.script('slow', async () => {
      await release.promise
      return returns({ reason: 'slow at last' })
    })
    const session = await w.open(['slow'])
    const first = session.call('beforeToolExecute', { ...CALL, id: 'first' })
    await until(() => w.runner.calls.length === 1)
    const second = session.call('afterRun', { reason: 'end_turn' })
    expect((await second).result).toEqual({})
    release.resolve()
    expect((await first).result).toEqual({ allow: true, reason: 'slow at last', arguments: CALL.arguments })
    await session.close()
  })

  it("carry the hook's log lines to the host while it still runs", async () => {
    const seen = deferred()
    w.runner.script('slow', async (r) => {
      r.onLog('working on it')
      await seen.promise
      r.onLog('done')
      return returns({})
    })
    const lines: LogLineData[] = []
    const session = await w.open(['slow'], { capabilities: { log: (line) => (lines.push(line), seen.resolve()) } })
    await session.call('beforeToolExecute', CALL)
    expect(lines).toEqual([
      { seq: 1, hook: 'slow', point: 'beforeToolExecute', message: 'working on it', timeMs: expect.any(Number) },
      { seq: 1, hook: 'slow', point: 'beforeToolExecute', message: 'done', timeMs: expect.any(Number) },
    ])
    await session.close()
  })
})

describe('protocol mistakes end the stream with the status that says what was wrong', () => {
  const FAR = 'the step points are beforeRun, afterRun, beforeModelRequest, afterModelResponse, beforeToolExecute, afterToolExecute; docs/points.md lists the event points'
  it.each([
    ['a payload that is not JSON', [OPEN_ECHO, callFrame(1, 'beforeToolExecute', '{"id": "c1", oops')], status.INVALID_ARGUMENT, 'beforeToolExecute payload is not valid JSON (Expected double-quoted property name in JSON at position 13)', ['opened']],
    ['an empty payload', [OPEN_ECHO, callFrame(1, 'beforeToolExecute', '')], status.INVALID_ARGUMENT, 'beforeToolExecute payload is empty; send a UTF-8 JSON document', ['opened']],
    ['wrong types in the payload', [OPEN_ECHO, callFrame(1, 'beforeToolExecute', JSON.stringify({ ...CALL, id: 7 }))], status.INVALID_ARGUMENT, 'beforeToolExecute payload.id: Invalid input: expected string, received number', ['opened']],
    ['an unknown point far from any', [OPEN_ECHO, callFrame(1, 'beforeEverything', PAYLOAD)], status.INVALID_ARGUMENT, `unknown point 'beforeEverything'; ${FAR}`, ['opened']],
    ['an unknown point near one', [OPEN_ECHO, callFrame(1, 'beforeToolExecut', PAYLOAD)], status.INVALID_ARGUMENT, "unknown point 'beforeToolExecut'; did you mean 'beforeToolExecute'?", ['opened']],
    ['an unknown point 5000 characters long', [OPEN_ECHO, callFrame(1, 'x'.repeat(5000), PAYLOAD)], status.INVALID_ARGUMENT, `unknown point '${'x'.repeat(64)}...'; ${FAR}`, ['opened']],
    ['a frame that is not protobuf', [OPEN_ECHO, Buffer.from([0x12, 0x40, 0x01])], status.INVALID_ARGUMENT, 'a frame sent to /hookd.v1.HookExecutor/Session is not a valid protobuf message of the request type (index out of range); send frames encoded from proto/hookd/v1/hookd.proto', ['opened']],
    ['a string where the seq number goes', [OPEN_ECHO, Buffer.from([0x12, 0x04, 0x0a, 0x02, 0x31, 0x32])], status.INVALID_ARGUMENT, expect.stringMatching(/^a frame sent to \/hookd\.v1\.HookExecutor\/Session is not a valid protobuf message of the request type \(/), ['opened']],
    ['an empty HostMessage', [encodeHostMessage({})], status.INVALID_ARGUMENT, 'a HostMessage must set exactly one of open, call, capability_result, cancel, close, outcome', []],
    ['a seq beyond 2^53', [OPEN_ECHO, encodeHostMessage({ call: { seq: '18446744073709551615', point: 'beforeToolExecute', payload: Buffer.from(PAYLOAD) } })], status.INVALID_ARGUMENT, 'HostMessage.call.seq: Too big: expected int to be <=9007199254740991', ['opened']],
    ['seq 0 (the afterRun that close runs)', [OPEN_ECHO, callFrame(0, 'beforeToolExecute', PAYLOAD)], status.INVALID_ARGUMENT, 'point call seq 0 is not allowed: a host numbers its calls from 1 (seq 0 is the afterRun that close runs)', ['opened']],
    ['a seq used twice', [OPEN_ECHO, callFrame(1, 'beforeToolExecute', PAYLOAD), callFrame(1, 'beforeToolExecute', PAYLOAD)], status.INVALID_ARGUMENT, 'point call seq 1 was already used in this session; use a new seq for every call', ['opened', 'result']],
    ['a call before open', [callFrame(1, 'beforeToolExecute', PAYLOAD)], status.FAILED_PRECONDITION, "'call' arrived before the session was opened; send 'open' first", []],
    ['a second open', [OPEN_ECHO, OPEN_ECHO], status.FAILED_PRECONDITION, 'the session is already open; send open only once', ['opened']],
    ['an answer to a capability call never made', [OPEN_ECHO, encodeHostMessage({ capabilityResult: { id: 42, value: Buffer.from('true') } })], status.FAILED_PRECONDITION, 'capability_result 42 answers no capability call of this session (the last call made has id 0)', ['opened']],
  ])('%s', async (_what, frames, code, details, answered) => {
    const end = await w.sidecar.exchange(frames)
    expect({ code: end.code, details: end.details }).toEqual({ code, details })
    // Nothing after the mistake was answered.
    expect(kinds(end.messages)).toEqual(answered)
    await expectServing()
  })

  it('a second close while the first runs: FAILED_PRECONDITION', async () => {
    const release = deferred()
    w.runner.script('slow', async () => {
      await release.promise
      return returns(undefined)
    })
    await w.folder.write({ slow: { index: exporting('afterRun') } })
    await w.registry.loadOne('slow')
    const close = encodeHostMessage({ close: { reason: 'end_turn' } })
    const stream = w.raw()
    for (const frame of [openFrame({ hooks: ['slow'] }), close, close]) stream.write(frame)
    const end = await stream.ended
    release.resolve()
    expect({ code: end.code, details: end.details }).toEqual({ code: status.FAILED_PRECONDITION, details: 'the session is already closed or closing; send close once' })
    await expectServing()
  })

  it('many broken streams at once do not disturb a well-behaved session', async () => {
    const session = await w.open(['echo'])
    const broken = Array.from({ length: 50 }, (_, i) => w.sidecar.exchange(i % 2 ? [callFrame(1, 'beforeToolExecute', PAYLOAD)] : [OPEN_ECHO, callFrame(1, 'nope', '{}')]))
    expect((await session.call('beforeToolExecute', CALL)).result).toEqual(ECHOED)
    expect(new Set((await Promise.all(broken)).map((e) => e.code))).toEqual(new Set([status.INVALID_ARGUMENT, status.FAILED_PRECONDITION]))
    await session.close()
    await expectServing()
  })
})
