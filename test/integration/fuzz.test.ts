/**
 * A bounded, deterministic fuzz of the Session stream: a few thousand random and mutated HostMessage
 * frames (seeded, so a failure replays), sent on many short streams. Every stream must end with a status
 * that blames the client (never INTERNAL or UNKNOWN, which would be hookd's fault), none may hang, and
 * afterwards the sidecar must still answer a well-behaved host.
 */
import { status } from '@grpc/grpc-js'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { POINT_NAMES } from '../../src/protocol/points/points.js'
import { RawClient, type StreamEnd, callFrame, encodeHostMessage, openFrame } from '../support/raw-session.js'
import { type Running, hook, sessionOptions, startSidecar, writeTree } from '../support/sidecar.js'

const SEED = 0x5eed_4b1d
const MAX_FRAMES = 3000
const TIME_BUDGET_MS = 20_000
const CONCURRENCY = 8
const STREAM_TIMEOUT_MS = 10_000

/** Statuses that say the client was wrong (or, for OK, that nothing was). */
const ALLOWED = new Set([
  status.OK,
  status.INVALID_ARGUMENT,
  status.FAILED_PRECONDITION,
  status.NOT_FOUND,
  status.RESOURCE_EXHAUSTED,
])

let running: Running
let raw: RawClient

beforeAll(async () => {
  const root = await writeTree({
    'echo/index.js': hook({
      beforeToolExecute: `(ctx, c) => ({ arguments: { ...c.arguments, echoed: true } })`,
      afterToolExecute: `(ctx, call, result) => ({ text: String(result.text).slice(0, 100) })`,
      beforeModelRequest: `(ctx, r) => ({ system: String(r.system).slice(0, 100) })`,
    }),
    'asker/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ arguments: { yes: ctx.confirm({ title: 'fuzz?' }) } })` }),
  })
  running = await startSidecar({ hooks: root, limits: { cpuMs: 500, wallMs: 2000 }, waits: { confirmMs: 500, capabilityMs: 500 } })
  raw = new RawClient(running.address)
})

afterAll(async () => {
  raw?.close()
  await running?.stop()
})

/** mulberry32: small, seedable, good enough to pick frames. */
function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

it('survives thousands of random and mutated frames, then answers a well-behaved host', async () => {
  const random = prng(SEED)
  const int = (n: number): number => Math.floor(random() * n)
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T
  const bytes = (n: number): Buffer => Buffer.from(Array.from({ length: n }, () => int(256)))
  const text = (): string =>
    pick(['', 'echo', 'asker', 'ghost', '\u0000', 'é✓😀', 'x'.repeat(int(300)), '{', '{}', '[]', 'null', '"s"', '1e999'])
  const payloads = [
    JSON.stringify({ id: 'c', name: 'shell', arguments: {} }),
    JSON.stringify({ id: 7, name: 'shell', arguments: [] }),
    JSON.stringify({ call: { id: 'c', name: 'n', arguments: {} }, result: { text: 't', isError: false } }),
    JSON.stringify({ system: 's', model: 'm', messages: [] }),
    '{"__proto__": {"polluted": true}, "id": "c", "name": "n", "arguments": {}}',
    '{"id": "c", "name": "n", "arguments": {"deep": ' + '['.repeat(500) + ']'.repeat(500) + '}}',
    'not json',
    '',
  ]
  const valid = [
    openFrame({ hooks: ['echo'] }),
    openFrame({ hooks: ['echo', 'asker'], interactive: true }),
    openFrame({ hooks: ['ghost'] }),
    callFrame(1, 'beforeToolExecute', payloads[0] as string),
    callFrame(2, 'afterToolExecute', payloads[2] as string),
    callFrame(3, 'beforeModelRequest', payloads[3] as string),
    encodeHostMessage({ capabilityResult: { id: 1, value: Buffer.from('true') } }),
    encodeHostMessage({ capabilityResult: { id: 1, error: { code: 'denied', message: 'no' } } }),
    encodeHostMessage({ cancel: { seq: 1 } }),
    encodeHostMessage({ close: { reason: 'end_turn' } }),
  ]

  /** A structurally valid HostMessage with random contents. */
  const structured = (): Buffer => {
    switch (int(5)) {
      case 0:
        return openFrame({
          protocolVersion: pick([1, 1, 1, 0, 2, 4294967295]),
          sessionId: text(),
          hooks: Array.from({ length: int(4) }, () => pick(['echo', 'asker', 'ghost', 'echo', text()])),
          interactive: random() < 0.5,
          autoApprove: random() < 0.5,
          workdir: text(),
          env: random() < 0.5 ? {} : { [text() || 'K']: text() },
          policy: random() < 0.5 ? null : { file: pick(['FILE_ACCESS_NONE', 'FILE_ACCESS_READ']), httpOrigins: [text()], env: [text()], denyConfirm: random() < 0.5 },
        })
      case 1:
        return callFrame(pick([0, 1, 2, 1, 2 ** 32, 2 ** 53 - 1]), pick([...POINT_NAMES, text()]), pick(payloads))
      case 2:
        return encodeHostMessage({
          capabilityResult: random() < 0.5 ? { id: int(5), value: Buffer.from(pick(payloads)) } : { id: int(5), error: { code: text(), message: text() } },
        })
      case 3:
        return encodeHostMessage({ cancel: { seq: int(5) } })
      default:
        return encodeHostMessage({ close: { reason: text() } })
    }
  }

  const mutate = (frame: Buffer): Buffer => {
    let out = Buffer.from(frame)
    for (let n = 1 + int(4); n > 0; n--) {
      const at = out.length ? int(out.length) : 0
      switch (int(6)) {
        case 0: // flip a bit
          if (out.length) out[at] = (out[at] as number) ^ (1 << int(8))
          break
        case 1: // set a byte
          if (out.length) out[at] = int(256)
          break
        case 2: // truncate
          out = out.subarray(0, at)
          break
        case 3: // insert random bytes
          out = Buffer.concat([out.subarray(0, at), bytes(1 + int(4)), out.subarray(at)])
          break
        case 4: // duplicate a slice
          out = Buffer.concat([out, out.subarray(at, at + 1 + int(16))])
          break
        default: // append another frame's bytes (two messages glued into one)
          out = Buffer.concat([out, pick(valid)])
      }
    }
    return out
  }

  const frame = (): Buffer => {
    const r = random()
    if (r < 0.25) return bytes(int(48))
    if (r < 0.6) return mutate(pick(valid))
    if (r < 0.85) return structured()
    return pick(valid)
  }

  /** One stream: sometimes a valid open first, then 1..4 fuzzed frames, then a half-close. */
  const streams: Buffer[][] = []
  for (let total = 0; total < MAX_FRAMES; ) {
    const frames = random() < 0.5 ? [pick(valid.slice(0, 2))] : []
    for (let n = 1 + int(4); n > 0; n--) frames.push(frame())
    streams.push(frames)
    total += frames.length
  }

  const counts = new Map<number, number>()
  const unexpected: string[] = []
  const deadline = Date.now() + TIME_BUDGET_MS
  let sent = 0
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < streams.length && Date.now() < deadline) {
      const index = next++
      const frames = streams[index] as Buffer[]
      const stream = raw.session()
      for (const f of frames) stream.write(f)
      stream.end()
      sent += frames.length
      let timer: NodeJS.Timeout | undefined
      const timeout = new Promise<StreamEnd>((resolve) => {
        timer = setTimeout(() => {
          stream.cancel()
          resolve({ code: -1 as status, details: `stream ${index} did not end within ${STREAM_TIMEOUT_MS} ms`, messages: [] })
        }, STREAM_TIMEOUT_MS)
      })
      const end = await Promise.race([stream.ended, timeout])
      clearTimeout(timer)
      counts.set(end.code, (counts.get(end.code) ?? 0) + 1)
      if (!ALLOWED.has(end.code)) unexpected.push(`stream ${index}: ${status[end.code] ?? end.code}: ${end.details}`)
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))

  expect(unexpected).toEqual([])
  // The budget bounds the run; it must still have covered a fair share of the frames.
  expect(sent).toBeGreaterThan(500)
  expect(counts.get(status.INVALID_ARGUMENT) ?? 0).toBeGreaterThan(0)

  // The sidecar still serves.
  const session = await running.client.openSession(sessionOptions(['echo']))
  const out = await session.call('beforeToolExecute', { id: 'c1', name: 'shell', arguments: { command: 'ls' } })
  expect(out.result).toEqual({ allow: true, arguments: { command: 'ls', echoed: true } })
  await session.close()
  expect((await running.client.listHooks()).map((h) => h.name)).toEqual(['asker', 'echo'])
  expect(running.sidecar.pool.pids().length).toBeGreaterThan(0)
})
