/**
 * Hook folders that come and go while the sidecar runs: a removed folder, a new folder, one that comes
 * back. And an invocation keeps the version that was current when it started.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HookdError } from '../../src/host/index.js'
import { type Running, addFiles, hook, sessionOptions, startSidecar, writeTree } from '../support/sidecar.js'
import { Pushed, guard, indexOf, shellCall, waitFor, waitForHook } from './support.js'

let running: Running
let root: string

const GOES = hook({
  beforeToolExecute: `(ctx, c) => ({ arguments: { ...c.arguments, goes: true } })`,
  afterRun: `(ctx, e) => { ctx.log('goes afterRun') }`,
})
const STAYS = hook({ beforeToolExecute: `(ctx, c) => ({ arguments: { ...c.arguments, stays: true } })` })

beforeAll(async () => {
  root = await writeTree({
    'goes/index.js': GOES,
    'stays/index.js': STAYS,
    'returns/index.js': guard('returns-v1'),
    'pinned/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ allow: ctx.confirm({ title: 'v1?' }), reason: 'pinned-v1' })` }),
  })
  running = await startSidecar({ hooks: root })
})

afterAll(async () => {
  await running?.stop()
})

describe('a hook folder removed while a session uses it', () => {
  it('reports hook-removed on each point the hook handled, skips it, and refuses new sessions naming it', async () => {
    const goes = await waitForHook(running, 'goes', (h) => h.status === 'ready', 'ready')
    const pushed = new Pushed()
    const session = await running.client.openSession(sessionOptions(['goes', 'stays'], { capabilities: { diagnostic: pushed.handler } }))
    expect((await session.call('beforeToolExecute', shellCall)).result.arguments).toMatchObject({ goes: true, stays: true })

    await rm(join(root, 'goes'), { recursive: true })
    const removed = await pushed.wait('hook-removed for goes', (d) => d.kind === 'hook-removed')
    expect(removed).toMatchObject({ hook: 'goes', point: '', version: goes.version })
    expect(removed.message).toContain(`hook 'goes' was removed (its folder ${join(root, 'goes')} is gone)`)

    const out = await session.call('beforeToolExecute', shellCall)
    expect(out.result.arguments).toEqual({ ...shellCall.arguments, stays: true })
    expect(out.diagnostics).toEqual([
      expect.objectContaining({ hook: 'goes', point: 'beforeToolExecute', kind: 'hook-removed', version: goes.version, file: 'goes/index.js' }),
    ])
    expect(out.diagnostics[0]?.message).toContain('was removed while this session used it; skipped')
    expect(out.trace).toEqual([
      expect.objectContaining({ hook: 'goes', version: goes.version, outcome: 'failed' }),
      expect.objectContaining({ hook: 'stays', outcome: 'changed' }),
    ])
    // A point the hook never handled gets no diagnostic.
    const request = await session.call('beforeModelRequest', { system: 'S', model: 'm', messages: [] })
    expect(request.diagnostics).toEqual([])
    // And neither does every later call go quiet: each one that would have run it is reported.
    const again = await session.call('beforeToolExecute', shellCall)
    expect(again.diagnostics.map((d) => d.kind)).toEqual(['hook-removed'])

    const err = await running.client.openSession(sessionOptions(['goes'])).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(HookdError)
    expect((err as HookdError).code).toBe('not-found')
    expect((err as HookdError).message).toContain("unknown hook 'goes'")
    expect((await running.client.listHooks()).map((h) => h.name)).not.toContain('goes')

    const closed = await session.close('end_turn')
    expect(closed.diagnostics).toEqual([expect.objectContaining({ hook: 'goes', point: 'afterRun', kind: 'hook-removed' })])
  })

  it('serves a folder that comes back to the sessions that declared it', async () => {
    const v1 = await waitForHook(running, 'returns', (h) => h.status === 'ready', 'ready')
    const pushed = new Pushed()
    const session = await running.client.openSession(sessionOptions(['returns'], { capabilities: { diagnostic: pushed.handler } }))
    await rm(join(root, 'returns'), { recursive: true })
    await pushed.wait('removed', (d) => d.kind === 'hook-removed')
    expect((await session.call('beforeToolExecute', shellCall)).diagnostics.map((d) => d.kind)).toEqual(['hook-removed'])

    await addFiles(root, { 'returns/index.js': guard('returns-v2') })
    const back = await pushed.wait('loaded again', (d) => d.kind === 'reload')
    expect(back.version).not.toBe(v1.version)
    const out = await session.call('beforeToolExecute', shellCall)
    expect(out.result).toMatchObject({ allow: false, reason: 'returns-v2' })
    expect(out.diagnostics).toEqual([])
    session.abandon()
  })
})

describe('a new hook folder', () => {
  it('is available to sessions opened after it appears', async () => {
    const before = await running.client.openSession(sessionOptions(['fresh'])).catch((e: unknown) => e)
    expect((before as HookdError).code).toBe('not-found')

    await addFiles(root, { 'fresh/index.js': guard('fresh') })
    const listed = await waitForHook(running, 'fresh', (h) => h.status === 'ready', 'ready')
    expect(listed.points).toEqual(['beforeToolExecute'])
    const session = await running.client.openSession(sessionOptions(['fresh', 'stays']))
    const out = await session.call('beforeToolExecute', shellCall)
    expect(out.result).toMatchObject({ allow: false, reason: 'fresh' })
    expect(out.trace[0]).toMatchObject({ hook: 'fresh', version: listed.version })
    session.abandon()
  })

  it('is picked up when the folder is created first and index.js written later', async () => {
    await mkdir(join(root, 'slow-start'))
    await waitForHook(running, 'slow-start', (h) => h.status === 'broken', 'listed broken while empty')
    await writeFile(indexOf(root, 'slow-start'), guard('slow-start'))
    const ready = await waitForHook(running, 'slow-start', (h) => h.status === 'ready', 'ready')
    expect(ready.lastError).toBeUndefined()
  })

  it('ignores folders whose names cannot be hooks', async () => {
    await addFiles(root, { '.hidden/index.js': guard('hidden'), 'has space/index.js': guard('space') })
    await addFiles(root, { 'marker/index.js': guard('marker') })
    await waitForHook(running, 'marker', (h) => h.status === 'ready', 'ready')
    const names = (await running.client.listHooks()).map((h) => h.name)
    expect(names).not.toContain('.hidden')
    expect(names).not.toContain('has space')
  })
})

describe('an invocation in flight during a reload', () => {
  it('finishes on the version current when it started; the next call runs the new one', async () => {
    const v1 = await waitForHook(running, 'pinned', (h) => h.status === 'ready', 'ready')
    let v2Version = ''
    const session = await running.client.openSession(
      sessionOptions(['pinned'], {
        interactive: true,
        capabilities: {
          // The hook is waiting on this answer while the file changes and the new version is swapped in.
          confirm: async () => {
            await writeFile(
              indexOf(root, 'pinned'),
              hook({ beforeToolExecute: `(ctx, c) => ({ allow: false, reason: 'pinned-v2' })` }),
            )
            const v2 = await waitForHook(running, 'pinned', (h) => h.version !== v1.version && h.status === 'ready', 'v2 served')
            v2Version = v2.version
            return false
          },
        },
      }),
    )
    const first = await session.call('beforeToolExecute', shellCall)
    expect(v2Version).not.toBe('')
    expect(first.result).toMatchObject({ allow: false, reason: 'pinned-v1' })
    expect(first.trace[0]).toMatchObject({ version: v1.version })
    const second = await session.call('beforeToolExecute', shellCall)
    expect(second.result).toMatchObject({ allow: false, reason: 'pinned-v2' })
    expect(second.trace[0]).toMatchObject({ version: v2Version })
    session.abandon()
  })
})

it('stops watching when the sidecar stops', async () => {
  const tree = await writeTree({ 'one/index.js': guard('one') })
  const other = await startSidecar({ hooks: tree })
  const watcher = (other.sidecar.registry as unknown as { watcher: unknown }).watcher
  expect(watcher).toBeDefined()
  await other.stop()
  expect((other.sidecar.registry as unknown as { watcher: unknown }).watcher).toBeUndefined()
  await rm(tree, { recursive: true, force: true })
})

it('can be turned off', async () => {
  const tree = await writeTree({ 'one/index.js': guard('one') })
  const other = await startSidecar({ hooks: tree, watch: false })
  expect((other.sidecar.registry as unknown as { watcher: unknown }).watcher).toBeUndefined()
  expect((await other.client.listHooks()).map((h) => h.name)).toEqual(['one'])
  await other.stop()
  await rm(tree, { recursive: true, force: true })
})
