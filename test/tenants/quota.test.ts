/**
 * Per-tenant quotas over real gRPC: concurrent invocations and invocations per second. Invoke over quota
 * fails with RESOURCE_EXHAUSTED; a Session stream is not ended: the call is answered with a `quota`
 * diagnostic, gates refused. Another tenant is not affected.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { HookdError } from '../../src/host/index.js'
import { hook, sessionOptions } from '../support/sidecar.js'
import { type TenantFixture, startTenants, toolCall } from './support.js'

const asker = hook({ beforeToolExecute: `(ctx, c) => ({ arguments: { answer: ctx.confirm({ title: 'go?' }) } })` })
const tagger = hook({
  beforeToolExecute: `(ctx, c) => ({ arguments: { tagged: true } })`,
  beforeModelRequest: `(ctx, r) => ({ system: r.system + ' +tag' })`,
})

let t: TenantFixture

beforeAll(async () => {
  t = await startTenants([
    { id: 'one-at-a-time', hooks: { 'asker/index.js': asker, 'tagger/index.js': tagger }, limits: { concurrentInvocations: 1 } },
    { id: 'slow-rate', hooks: { 'tagger/index.js': tagger }, limits: { invocationsPerSecond: 2 } },
    { id: 'free', hooks: { 'tagger/index.js': tagger } },
  ])
})

afterAll(async () => {
  await t?.stop()
})

/** A confirm handler that holds its answer until released. */
function heldConfirm(): { asked: Promise<void>; release(answer: boolean): void; handler(): Promise<boolean> } {
  let release!: (answer: boolean) => void
  let asked!: () => void
  const answer = new Promise<boolean>((resolve) => (release = resolve))
  const wasAsked = new Promise<void>((resolve) => (asked = resolve))
  return {
    asked: wasAsked,
    release: (a) => release(a),
    handler: () => {
      asked()
      return answer
    },
  }
}

describe('concurrent invocations', () => {
  it('refuses a second call while one runs: RESOURCE_EXHAUSTED for Invoke, a quota answer on a stream', async () => {
    const client = await t.client('one-at-a-time')
    const held = heldConfirm()
    const busy = await client.openSession(sessionOptions(['asker', 'tagger'], { interactive: true, capabilities: { confirm: held.handler } }))
    const running = busy.call('beforeToolExecute', toolCall)
    await held.asked

    const invoked = (await client.invoke(sessionOptions(['tagger']), 'beforeToolExecute', toolCall).catch((e: unknown) => e)) as HookdError
    expect(invoked.code).toBe('resource-exhausted')
    expect(invoked.message).toBe("tenant 'one-at-a-time' is over its limit of 1 concurrent invocation; retry when one of its calls has finished")

    // On the stream: answered at once, no hook ran, the gate refused with the quota as its reason.
    const other = await client.openSession(sessionOptions(['tagger']))
    const gate = await other.call('beforeToolExecute', toolCall)
    expect(gate.result).toEqual({
      allow: false,
      reason: "tenant 'one-at-a-time' is over its limit of 1 concurrent invocation; retry when one of its calls has finished",
      refusedBy: 'hookd',
      arguments: toolCall.arguments,
    })
    expect(gate.diagnostics).toEqual([
      {
        hook: '',
        point: 'beforeToolExecute',
        kind: 'quota',
        message: "tenant 'one-at-a-time' is over its limit of 1 concurrent invocation; retry when one of its calls has finished; no hook ran and the call was refused",
      },
    ])
    expect(gate.trace).toEqual([expect.objectContaining({ hook: 'tagger', outcome: 'not-run' })])
    // A point that is not a gate comes back unchanged.
    const transform = await other.call('beforeModelRequest', { system: 'S', model: 'm', messages: [] })
    expect(transform.result).toEqual({ system: 'S' })
    expect(transform.diagnostics.map((d) => d.kind)).toEqual(['quota'])

    // Another tenant is not affected.
    const free = await (await t.client('free')).invoke(sessionOptions(['tagger']), 'beforeToolExecute', toolCall)
    expect(free.result.arguments).toEqual({ tagged: true })

    held.release(true)
    expect((await running).result.arguments).toEqual({ tagged: true })
    // The stream went on, and with the first call done the next one runs.
    expect(other.isEnded).toBe(false)
    const after = await other.call('beforeToolExecute', toolCall)
    expect(after.result).toEqual({ allow: true, arguments: { tagged: true } })
    expect(after.diagnostics).toEqual([])
    await other.close()
    await busy.close()
  })
})

describe('invocations per second', () => {
  it('refuses calls past the rate with RESOURCE_EXHAUSTED naming the quota', async () => {
    const client = await t.client('slow-rate')
    const outcomes = await Promise.all(
      Array.from({ length: 6 }, () =>
        client.invoke(sessionOptions(['tagger']), 'beforeToolExecute', toolCall).then(
          () => 'ok',
          (e: HookdError) => `${e.code}: ${e.message}`,
        ),
      ),
    )
    const refused = outcomes.filter((o) => o !== 'ok')
    expect(outcomes.filter((o) => o === 'ok').length).toBeGreaterThan(0)
    expect(refused.length).toBeGreaterThan(0)
    expect(new Set(refused)).toEqual(new Set(["resource-exhausted: tenant 'slow-rate' is over its limit of 2 invocations per second; retry in a moment"]))
  })
})
