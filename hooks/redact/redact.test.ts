import { afterAll, beforeAll, expect, it } from 'vitest'
import { EXAMPLE_HOOKS, type Running, sessionOptions, startSidecar } from '../../test/support/sidecar.js'

let running: Running
beforeAll(async () => {
  running = await startSidecar({ hooks: EXAMPLE_HOOKS })
})
afterAll(() => running?.stop())

it('masks 16-digit numbers in the model text and leaves thinking and shorter numbers alone', async () => {
  const session = await running.client.openSession(sessionOptions(['redact']))
  const out = await session.call('afterModelResponse', {
    text: 'Card 4111111111111111, order 12345, long 12345678901234567.',
    thinking: 'the card is 4111111111111111',
    toolCalls: [],
  })
  expect(out.result).toEqual({
    text: 'Card [redacted], order 12345, long 12345678901234567.',
    thinking: 'the card is 4111111111111111',
  })
  session.abandon()
})
