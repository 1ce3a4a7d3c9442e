import { afterAll, beforeAll, expect, it } from 'vitest'
import { EXAMPLE_HOOKS, type Running, sessionOptions, startSidecar } from '../../test/support/sidecar.js'

let running: Running
beforeAll(async () => {
  running = await startSidecar({ hooks: EXAMPLE_HOOKS })
})
afterAll(() => running?.stop())

it('rewrites http:// URLs to https:// and keeps the other arguments', async () => {
  const session = await running.client.openSession(sessionOptions(['https-only']))
  const out = await session.call('beforeToolExecute', { id: 'c1', name: 'http', arguments: { url: 'http://example.com/a?b=1', method: 'GET' } })
  expect(out.result).toEqual({ allow: true, arguments: { url: 'https://example.com/a?b=1', method: 'GET' } })
  expect(out.trace[0]?.outcome).toBe('changed')
  const untouched = await session.call('beforeToolExecute', { id: 'c2', name: 'shell', arguments: { command: 'ls' } })
  expect(untouched.result.arguments).toEqual({ command: 'ls' })
  expect(untouched.trace[0]?.outcome).toBe('no-opinion')
  session.abandon()
})
