import { afterAll, beforeAll, expect, it } from 'vitest'
import { EXAMPLE_HOOKS, type Running, sessionOptions, startSidecar } from '../../test/support/sidecar.js'

let running: Running
beforeAll(async () => {
  running = await startSidecar({ hooks: EXAMPLE_HOOKS })
})
afterAll(() => running?.stop())

const rm = { id: 'c1', name: 'shell', arguments: { command: 'rm -rf /tmp/x' } }

it('refuses rm -rf when the human says no', async () => {
  const session = await running.client.openSession(sessionOptions(['guard'], { interactive: true, capabilities: { confirm: () => false } }))
  const out = await session.call('beforeToolExecute', rm)
  expect(out.result).toEqual({ allow: false, reason: 'refused by the user', refusedBy: 'guard', arguments: rm.arguments })
  session.abandon()
})

it('lets rm -rf through when the human says yes, and asks with the command', async () => {
  const asked: string[] = []
  const session = await running.client.openSession(
    sessionOptions(['guard'], { interactive: true, capabilities: { confirm: (m) => (asked.push(`${m.title}: ${m.body}`), true) } }),
  )
  expect((await session.call('beforeToolExecute', rm)).result.allow).toBe(true)
  expect(asked).toEqual(['Dangerous command: rm -rf /tmp/x'])
  session.abandon()
})

it('follows auto-approve when nobody is there to ask, and ignores harmless commands', async () => {
  const strict = await running.client.openSession(sessionOptions(['guard'], { autoApprove: false }))
  expect((await strict.call('beforeToolExecute', rm)).result.allow).toBe(false)
  expect((await strict.call('beforeToolExecute', { ...rm, arguments: { command: 'ls -la' } })).result.allow).toBe(true)
  const lenient = await running.client.openSession(sessionOptions(['guard'], { autoApprove: true }))
  expect((await lenient.call('beforeToolExecute', rm)).result.allow).toBe(true)
  strict.abandon()
  lenient.abandon()
})

it('notifies when the run finishes', async () => {
  const notes: string[] = []
  const session = await running.client.openSession(sessionOptions(['guard'], { capabilities: { notify: (m) => void notes.push(`${m.title}: ${m.body}`) } }))
  await session.close('interrupted')
  expect(notes).toEqual(['rienda: run finished: interrupted'])
})
