import { afterAll, beforeAll, expect, it } from 'vitest'
import type { LogLineData } from '../../src/host/index.js'
import { EXAMPLE_HOOKS, type Running, sessionOptions, startSidecar } from '../../test/support/sidecar.js'

let running: Running
beforeAll(async () => {
  running = await startSidecar({ hooks: EXAMPLE_HOOKS })
})
afterAll(() => running?.stop())

it('logs each tool call and notifies how the run ended', async () => {
  const logs: LogLineData[] = []
  const notes: string[] = []
  const session = await running.client.openSession(
    sessionOptions(['audit'], {
      sessionId: 'run-42',
      capabilities: { log: (l) => logs.push(l), notify: (m, o) => void notes.push(`${o.hook} ${m.title}: ${m.body}`) },
    }),
  )
  const out = await session.call('beforeToolExecute', { id: 'c9', name: 'read_file', arguments: { path: 'a' } })
  expect(out.result.allow).toBe(true)
  expect(logs.map((l) => [l.hook, l.message])).toEqual([['audit', 'tool call c9 read_file']])
  await session.close('end_turn')
  expect(notes).toEqual(['audit audit: session run-42 ended: end_turn'])
})
