/**
 * The in-memory Session call (test/support/memory-session.ts) against grpc-js on a real socket: the
 * same exchanges through both, and each end sees the same events in the same order with the same
 * values (decoded messages, statuses with their code, details and message, the server's 'end' and
 * 'cancelled'). The in-memory tests of the stream machine (test/unit/session/session-stream*.test.ts) are as
 * good as this likeness, so it is checked here, where grpc-js itself answers.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as grpc from '@grpc/grpc-js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PROTOCOL_VERSION } from '../../src/protocol/version.js'
import { hookExecutorService } from '../../src/protocol/wire.js'
import { UndecodableFrame, withTolerantDecoding } from '../../src/sidecar/grpc/frames.js'
import { MAX_MESSAGE_BYTES, sessionCall } from '../support/memory-session.js'
import { callFrame, encodeHostMessage, openFrame } from '../support/raw-session.js'

/** What one end saw, in order. */
type Seen = Array<[string, unknown?]>

/** The server's side of an exchange: reacts to each frame it gets. */
type Serve = (call: ServerCall, message: unknown, index: number) => void

/** What both kinds of server call offer the scripts. */
interface ServerCall {
  write(frame: unknown): unknown
  end(): unknown
  emit(event: 'error', status: { code: grpc.status; details: string }): unknown
}

/** What both kinds of client call offer the scripts. */
interface ClientCall {
  write(frame: unknown): unknown
  end(): unknown
  cancel(): void
}

interface Exchange {
  /** Run by the host once the call exists, and again (`after`) once the server has answered `afterMessages`. */
  host(call: ClientCall): void
  afterMessages?: number
  after?(call: ClientCall): void
  serve: Serve
}

/** Records a server call's events; resolves when it is over for the handler ('cancelled'). */
function watchServer(call: NodeJS.EventEmitter & ServerCall, serve: Serve, seen: Seen): Promise<void> {
  let index = 0
  call.on('data', (message: unknown) => {
    seen.push(['data', message instanceof UndecodableFrame ? { undecodable: message.describe() } : message])
    serve(call, message, index++)
  })
  call.on('end', () => seen.push(['end']))
  call.on('error', (err: { code?: unknown; details?: unknown }) => seen.push(['error', { code: err.code, details: err.details }]))
  return new Promise((resolve) => call.on('cancelled', () => (seen.push(['cancelled']), resolve())))
}

/** Records a client call's events; resolves at its status. */
function watchClient(call: NodeJS.EventEmitter & ClientCall, exchange: Exchange, seen: Seen): Promise<void> {
  let messages = 0
  call.on('data', (message: unknown) => {
    seen.push(['data', message])
    if (++messages === exchange.afterMessages) exchange.after?.(call)
  })
  call.on('error', (err: grpc.ServiceError) => seen.push(['error', { code: err.code, details: err.details, message: err.message }]))
  call.on('end', () => seen.push(['end']))
  const status = new Promise<void>((resolve) =>
    call.on('status', (s: grpc.StatusObject) => {
      seen.push(['status', { code: s.code, details: s.details }])
      // What follows the status at once ('end') is part of the exchange too.
      setImmediate(resolve)
    }),
  )
  exchange.host(call)
  return status
}

const SERVICE = hookExecutorService()
const SESSION = SERVICE.Session as grpc.MethodDefinition<unknown, unknown>
let server: grpc.Server
let client: grpc.Client
let dir = ''
let serveNext: { serve: Serve; seen: Seen; done: (p: Promise<void>) => void } | undefined

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hookd-memory-session-'))
  // As sidecar.ts makes its server: the same message limit, the same tolerant decoding.
  server = new grpc.Server({ 'grpc.max_receive_message_length': MAX_MESSAGE_BYTES })
  server.addService(withTolerantDecoding(SERVICE), {
    Session: (call: grpc.ServerDuplexStream<unknown, unknown>) => {
      const next = serveNext
      serveNext = undefined
      if (!next) throw new Error('no exchange is waiting for this call')
      next.done(watchServer(call, next.serve, next.seen))
    },
    Invoke: () => {},
    ListHooks: () => {},
  })
  const address = `unix:${join(dir, 'grpc.sock')}`
  await new Promise<void>((resolve, reject) => server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())))
  client = new grpc.Client(address, grpc.credentials.createInsecure(), { 'grpc.max_receive_message_length': MAX_MESSAGE_BYTES })
})

afterAll(async () => {
  client?.close()
  server?.forceShutdown()
  if (dir) await rm(dir, { recursive: true, force: true })
})

/** The exchange through grpc-js: what the host's end and the server's end saw. */
async function overGrpc(exchange: Exchange, raw = false): Promise<{ host: Seen; sidecar: Seen }> {
  const host: Seen = []
  const sidecar: Seen = []
  let served!: Promise<void>
  const handled = new Promise<void>((resolve) => {
    serveNext = { serve: exchange.serve, seen: sidecar, done: (p) => (served = p, resolve()) }
  })
  const call = client.makeBidiStreamRequest(
    SESSION.path,
    raw ? (frame: Buffer) => frame : SESSION.requestSerialize,
    SESSION.responseDeserialize,
  ) as unknown as NodeJS.EventEmitter & ClientCall
  const status = watchClient(call, exchange, host)
  await handled
  await Promise.all([status, served])
  return { host, sidecar }
}

/** The same exchange in memory. */
async function inMemory(exchange: Exchange): Promise<{ host: Seen; sidecar: Seen }> {
  const host: Seen = []
  const sidecar: Seen = []
  const pair = sessionCall()
  const served = watchServer(pair.sidecar, exchange.serve, sidecar)
  await Promise.all([watchClient(pair.host, exchange, host), served])
  return { host, sidecar }
}

async function expectAlike(exchange: Exchange, raw = false): Promise<{ host: Seen; sidecar: Seen }> {
  const real = await overGrpc(exchange, raw)
  const memory = await inMemory(exchange)
  expect(memory).toEqual(real)
  return real
}

const OPEN = { open: { protocolVersion: PROTOCOL_VERSION, sessionId: 's', hooks: ['a'], workdir: '/w' } }
const OPENED = { opened: { sessionId: 's', hooks: [{ name: 'a', version: 'v1', points: ['beforeRun'], status: 'HOOK_STATUS_READY' }], sidecarVersion: '0', protocolVersion: 1, askOutcomes: true } }
const RESULT = { result: { seq: 1, point: 'beforeRun', result: Buffer.from('{}'), diagnostics: [], trace: [], durationUs: 5, decisionId: 'd1' } }

describe('the in-memory Session call behaves as grpc-js does', () => {
  it('carries frames both ways as proto-loader decodes them; the server ends with OK and is then told it is over', async () => {
    const seen = await expectAlike({
      host: (call) => {
        call.write(OPEN)
        call.write({ call: { seq: 1, point: 'beforeRun', payload: Buffer.from('{"prompt":"hi"}') } })
      },
      serve: (call, _message, i) => {
        if (i === 0) call.write(OPENED)
        if (i === 1) {
          call.write(RESULT)
          call.end()
        }
      },
    })
    // Defaults filled in, the oneof named: what the stream machine validates.
    expect(seen.sidecar[0]).toEqual(['data', expect.objectContaining({ kind: 'open', open: expect.objectContaining({ agentId: '', env: {}, onError: 'ON_ERROR_DEFAULT' }) })])
    expect(seen.host.map(([event]) => event)).toEqual(['data', 'data', 'status', 'end'])
    expect(seen.sidecar.map(([event]) => event)).toEqual(['data', 'data', 'cancelled'])
  })

  it("an 'error' emitted by the server is the status the host gets, after what was written before it", async () => {
    const seen = await expectAlike({
      host: (call) => call.write(OPEN),
      serve: (call) => {
        call.write(OPENED)
        call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: 'open.workdir is empty' })
      },
    })
    expect(seen.host).toEqual([
      ['data', expect.objectContaining({ kind: 'opened' })],
      ['error', { code: grpc.status.INVALID_ARGUMENT, details: 'open.workdir is empty', message: '3 INVALID_ARGUMENT: open.workdir is empty' }],
      ['status', { code: grpc.status.INVALID_ARGUMENT, details: 'open.workdir is empty' }],
      ['end'],
    ])
  })

  it("the host's half-close is the server's 'end'", async () => {
    await expectAlike({
      host: (call) => {
        call.write(OPEN)
        call.end()
      },
      serve: (call, message) => {
        if ((message as { kind?: string }).kind === 'open') setTimeout(() => call.end(), 20)
      },
    })
  })

  it("the host's cancel ends the call with CANCELLED, and the server is told", async () => {
    const seen = await expectAlike({
      host: (call) => call.write(OPEN),
      afterMessages: 1,
      after: (call) => call.cancel(),
      serve: (call) => void call.write(OPENED),
    })
    expect(seen.host.slice(1)).toEqual([
      ['error', { code: grpc.status.CANCELLED, details: 'Cancelled on client', message: '1 CANCELLED: Cancelled on client' }],
      ['status', { code: grpc.status.CANCELLED, details: 'Cancelled on client' }],
      ['end'],
    ])
    expect(seen.sidecar.map(([event]) => event)).toEqual(['data', 'end', 'cancelled'])
  })

  it('a frame over the message limit ends the call with RESOURCE_EXHAUSTED before the server sees it', async () => {
    const seen = await expectAlike({
      host: (call) => {
        call.write(OPEN)
        call.write({ call: { seq: 1, point: 'beforeRun', payload: Buffer.alloc(MAX_MESSAGE_BYTES, 'x') } })
      },
      serve: (call, _message, i) => {
        if (i === 0) call.write(OPENED)
      },
    })
    expect(seen.host.map(([event]) => event)).toEqual(['data', 'error', 'status', 'end'])
    expect(seen.host[2]).toEqual(['status', { code: grpc.status.RESOURCE_EXHAUSTED, details: expect.stringMatching(/^Received message larger than max \(\d+ vs 8388608\)$/) }])
    expect(seen.sidecar.map(([event]) => event)).toEqual(['data', 'cancelled'])
  })

  it('raw frames: one protobuf cannot decode reaches the server as an UndecodableFrame, saying why', async () => {
    const seen = await expectAlike(
      {
        host: (call) => {
          call.write(openFrame({ hooks: ['a'] }))
          call.write(Buffer.from([0x12, 0x40, 0x01]))
          call.write(callFrame(1, 'beforeRun', '{}'))
          call.write(encodeHostMessage({}))
        },
        serve: (call, _message, i) => {
          if (i === 3) call.end()
        },
      },
      true,
    )
    expect(seen.sidecar[1]).toEqual(['data', { undecodable: expect.stringContaining('(index out of range)') }])
    expect(seen.sidecar[3]).toEqual(['data', {}])
  })
})
