import { afterAll, beforeAll, expect, it } from 'vitest'
import { EXAMPLE_HOOKS, type Running, sessionOptions, startSidecar } from '../../test/support/sidecar.js'

let running: Running
beforeAll(async () => {
  running = await startSidecar({ hooks: EXAMPLE_HOOKS })
})
afterAll(() => running?.stop())

it('upper-cases tool results and keeps isError', async () => {
  const session = await running.client.openSession(sessionOptions(['shout', 'https-only']))
  const call = { id: 'c1', name: 'shell', arguments: { command: 'echo hi' } }
  const out = await session.call('afterToolExecute', { call, result: { text: 'hi there', isError: true } })
  expect(out.result).toEqual({ text: 'HI THERE', isError: true })
  session.abandon()
})
