/**
 * Deep JSON at every trust boundary: a hook's answer, a host's payload, a host's capability answer, a
 * hook's capability arguments, hook.json, an event point's mutated field. An isolate's thread builds
 * values nested far deeper than a Node main thread can serialize again (~4,000 here); each must end as a
 * diagnostic or a status that says so, and the same sidecar answers an ordinary call right after.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import * as grpc from '@grpc/grpc-js'
import type { Running } from '../support/sidecar.js'
import { sessionOptions } from '../support/sidecar.js'
import { RawClient, callFrame, encodeHostMessage, openFrame } from '../support/raw-session.js'
import { CALL, UNCHANGED, expectServing, failed, runHooks, startHostile } from './support.js'

const DEEP = ['deep-return', 'deep-mutate', 'deep-capability-args', 'deep-confirm', 'deep-config']
const TOO_DEEP = 'is nested too deep (more than 64 levels of arrays and objects); flatten it'

let running: Running

beforeAll(async () => {
  // Roomy CPU and wall-time limits, and 1 MiB answers: only the depth may stop these hooks.
  running = await startHostile({ only: DEEP, limits: { cpuMs: 10_000, wallMs: 20_000, resultBytes: 1024 * 1024 } })
})

afterAll(async () => {
  await running?.stop()
})

/** A document nested `depth` deep, as text (building it as a value would overflow this test's own stack). */
function deepText(depth: number, inner = '1'): string {
  return '{"a":'.repeat(depth) + inner + '}'.repeat(depth)
}

describe('what a hook sends', () => {
  it('deep-return: an answer nested 6,000 deep is an invalid result, and the sidecar lives', async () => {
    const run = await runHooks(running, ['deep-return'])
    expect(run.diagnostics).toEqual([
      failed('deep-return', 'invalid-result', `the returned value ${TOO_DEEP}; the hook was skipped`),
    ])
    expect(run.result).toEqual(UNCHANGED)
    await expectServing(running)
  })

  it('deep-mutate: an event point mutated with a field nested 6,000 deep is an invalid result', async () => {
    const session = await running.client.openSession(sessionOptions(['deep-mutate']))
    try {
      const out = await session.call('tool:transform', { callId: 'c1', name: 'shell', input: { command: 'ls' }, result: 'ok' })
      expect(out.diagnostics).toEqual([
        {
          hook: 'deep-mutate',
          point: 'tool:transform',
          kind: 'invalid-result',
          message: `hook 'deep-mutate' tool:transform: the returned value ${TOO_DEEP}; the hook was skipped`,
          file: 'deep-mutate/index.js',
          version: expect.any(String),
        },
      ])
      expect(out.result).toEqual({})
    } finally {
      session.abandon()
    }
    await expectServing(running)
  })

  it('deep-capability-args: capability arguments nested 6,000 deep are refused inside the hook', async () => {
    const notified: string[] = []
    const run = await runHooks(running, ['deep-capability-args'], { capabilities: { notify: (m) => void notified.push(m.title) } })
    expect(run.diagnostics).toEqual([
      failed('deep-capability-args', 'throw', `Error: ctx.notify: the argument list ${TOO_DEEP}`, 6),
    ])
    expect(notified).toEqual([])
    expect(run.result).toEqual(UNCHANGED)
    await expectServing(running)
  })
})

describe('what a host sends', () => {
  it('a payload nested 6,000 deep ends the stream with INVALID_ARGUMENT before any hook runs', async () => {
    const raw = new RawClient(running.address)
    try {
      const payload = `{"id":"c1","name":"shell","arguments":${deepText(6000)}}`
      const end = await raw.exchange([openFrame({ hooks: ['deep-return', 'deep-confirm'] }), callFrame(1, 'beforeToolExecute', payload)])
      expect(end.code).toBe(grpc.status.INVALID_ARGUMENT)
      expect(end.details).toBe(`beforeToolExecute payload ${TOO_DEEP}`)
    } finally {
      raw.close()
    }
    await expectServing(running)
  })

  it('a capability answer nested 6,000 deep ends the stream with INVALID_ARGUMENT naming the call', async () => {
    const raw = new RawClient(running.address)
    try {
      const stream = raw.session()
      stream.write(openFrame({ hooks: ['deep-confirm'], interactive: true }))
      await stream.next('opened')
      stream.write(callFrame(1, 'beforeToolExecute', JSON.stringify(CALL)))
      const asked = await stream.next('capabilityCall')
      expect(asked?.capabilityCall).toMatchObject({ id: 1, capability: 'confirm', hook: 'deep-confirm' })
      stream.write(encodeHostMessage({ capabilityResult: { id: 1, value: Buffer.from(deepText(6000, 'true')) } }))
      const end = await stream.ended
      expect(end.code).toBe(grpc.status.INVALID_ARGUMENT)
      expect(end.details).toBe(`capability_result 1 (ctx.confirm of hook 'deep-confirm'): the value ${TOO_DEEP}`)
    } finally {
      raw.close()
    }
    await expectServing(running)
  })
})

describe('what a hook folder holds', () => {
  it('deep-config: a hook.json nested 6,000 deep does not load, and says why', async () => {
    const listed = (await running.client.listHooks()).find((h) => h.name === 'deep-config')
    expect(listed?.status).toBe('broken')
    expect(listed?.lastError?.message).toBe(`hook.json ${TOO_DEEP}. The hook is skipped until it loads; fix deep-config/hook.json and save it`)
    await expectServing(running)
  })
})
