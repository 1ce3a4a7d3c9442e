import { afterAll, beforeAll, expect, it } from 'vitest'
import { EXAMPLE_HOOKS, type Running, sessionOptions, startSidecar } from '../../test/support/sidecar.js'

let running: Running
beforeAll(async () => {
  running = await startSidecar({ hooks: EXAMPLE_HOOKS })
})
afterAll(() => running?.stop())

it("appends today's date to the system prompt, built from the request's own prompt", async () => {
  const session = await running.client.openSession(sessionOptions(['today']))
  const before = new Date().toISOString().slice(0, 10)
  const out = await session.call('beforeModelRequest', { system: 'You are careful.', model: 'm', messages: [] })
  const after = new Date().toISOString().slice(0, 10)
  expect([`You are careful.\n\nToday is ${before}.`, `You are careful.\n\nToday is ${after}.`]).toContain(out.result.system)
  // Each turn starts from the request's prompt, so the date is never added twice.
  const again = await session.call('beforeModelRequest', { system: 'You are careful.', model: 'm', messages: [] })
  expect(again.result.system.match(/Today is/g)).toHaveLength(1)
  session.abandon()
})
