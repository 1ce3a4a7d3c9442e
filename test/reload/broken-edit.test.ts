/**
 * A broken edit keeps the last good version serving: a typo in a guard must never switch the guard off.
 * The sessions that use the hook are told (pushed diagnostics), and ListHooks shows READY / STALE / BROKEN.
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Running, sessionOptions, startSidecar, writeTree } from '../support/sidecar.js'
import { Prober, Pushed, guard, indexOf, shellCall, waitFor, waitForHook } from './support.js'

let running: Running
let root: string

// Line 3 of this file is where the syntax error is.
const SYNTAX_ERROR = `module.exports = {\n  beforeToolExecute(ctx, call) {\n    return { allow: false, reason: 'typo' ]\n  },\n}\n`

beforeAll(async () => {
  root = await writeTree({
    'guard/index.js': guard('v1'),
    'typo-export/index.js': guard('typo-v1'),
    'configured/index.js': `module.exports = { beforeToolExecute: (ctx) => ({ allow: false, reason: ctx.config.reason }) }\n`,
    'configured/hook.json': JSON.stringify({ config: { reason: 'from-config' } }),
    'late/index.js': `module.exports = {\n  beforeToolExecute(ctx, call) {\n    return { allow: false reason: 'late' }\n  },\n}\n`,
    'bystander/index.js': guard('bystander'),
  })
  running = await startSidecar({ hooks: root })
})

afterAll(async () => {
  await running?.stop()
})

describe('a syntax error in a guard, then a fix', () => {
  it('keeps the old guard refusing meanwhile, reports the error pushed and listed, then serves the fix', async () => {
    const v1 = await waitForHook(running, 'guard', (h) => h.status === 'ready', 'ready')
    const pushed = new Pushed()
    const session = await running.client.openSession(sessionOptions(['guard'], { capabilities: { diagnostic: pushed.handler } }))
    const prober = new Prober(session)
    await prober.until('v1')

    await writeFile(indexOf(root, 'guard'), SYNTAX_ERROR)
    const failed = await pushed.wait('load of guard', (d) => d.kind === 'load' && d.hook === 'guard')
    expect(failed).toMatchObject({ hook: 'guard', kind: 'load', file: 'guard/index.js', line: 3, version: v1.version })
    expect(failed.message).toMatch(/^hook 'guard' failed to reload: guard\/index\.js:3: SyntaxError/)
    expect(failed.message).toContain(`Still serving version ${v1.version}`)
    expect(failed.message).toContain('fix guard/index.js and save it again')

    // While the file is broken, the last good version keeps answering, and traces say which ran.
    const during = await session.call('beforeToolExecute', shellCall)
    expect(during.result).toMatchObject({ allow: false, reason: 'v1' })
    expect(during.trace).toEqual([expect.objectContaining({ hook: 'guard', version: v1.version, outcome: 'refused' })])
    const stale = await waitForHook(running, 'guard', (h) => h.status === 'stale', 'stale')
    expect(stale).toMatchObject({ version: v1.version, points: ['beforeToolExecute'], loadedAtMs: v1.loadedAtMs })
    expect(stale.lastError).toMatchObject({ kind: 'load', file: 'guard/index.js', line: 3, version: v1.version })

    await writeFile(indexOf(root, 'guard'), guard('v2'))
    const reloaded = await pushed.wait('reload of guard', (d) => d.kind === 'reload' && d.hook === 'guard')
    await prober.until('v2')
    const answers = await prober.stop()
    expect(answers.filter((a) => a !== 'refused:v1' && a !== 'refused:v2')).toEqual([])

    const ready = await waitForHook(running, 'guard', (h) => h.status === 'ready', 'ready again')
    expect(ready.version).not.toBe(v1.version)
    expect(ready.lastError).toBeUndefined()
    expect(ready.loadedAtMs).toBeGreaterThanOrEqual(v1.loadedAtMs)
    expect(reloaded).toMatchObject({ kind: 'reload', version: ready.version, file: 'guard/index.js' })
    expect(reloaded.message).toBe(`hook 'guard' reloaded: now serving version ${ready.version} (was ${v1.version})`)
    const after = await session.call('beforeToolExecute', shellCall)
    expect(after.trace[0]?.version).toBe(ready.version)
    session.abandon()
  })

  it('treats an edit that leaves no hook point (a typo in the only export) as broken, with the closest point name', async () => {
    const v1 = await waitForHook(running, 'typo-export', (h) => h.status === 'ready', 'ready')
    const pushed = new Pushed()
    const session = await running.client.openSession(sessionOptions(['typo-export'], { capabilities: { diagnostic: pushed.handler } }))
    await writeFile(
      indexOf(root, 'typo-export'),
      `module.exports = {\n  beforeToolExecut(ctx, call) {\n    return { allow: true }\n  },\n}\n`,
    )
    const failed = await pushed.wait('load of typo-export', (d) => d.kind === 'load')
    expect(failed).toMatchObject({ file: 'typo-export/index.js', line: 2, version: v1.version })
    expect(failed.message).toContain("'beforeToolExecut' (did you mean 'beforeToolExecute'?)")
    expect((await session.call('beforeToolExecute', shellCall)).result).toMatchObject({ allow: false, reason: 'typo-v1' })
    session.abandon()
  })

  it('keeps serving when hook.json breaks, naming hook.json and the line', async () => {
    const v1 = await waitForHook(running, 'configured', (h) => h.status === 'ready', 'ready')
    const pushed = new Pushed()
    const session = await running.client.openSession(sessionOptions(['configured'], { capabilities: { diagnostic: pushed.handler } }))
    await writeFile(join(root, 'configured', 'hook.json'), '{\n  "config": { "reason": "x" },\n  "descripton": "typo"\n}\n')
    const failed = await pushed.wait('load of configured', (d) => d.kind === 'load')
    expect(failed).toMatchObject({ file: 'configured/hook.json', line: 3, version: v1.version })
    expect(failed.message).toContain('hook.json is invalid')
    expect((await session.call('beforeToolExecute', shellCall)).result.reason).toBe('from-config')

    await writeFile(join(root, 'configured', 'hook.json'), '{ "config": { "reason": "x" }, }')
    const bad = await pushed.wait('invalid JSON', (d) => d.kind === 'load' && d.message.includes('not valid JSON'))
    expect(bad).toMatchObject({ file: 'configured/hook.json', line: 1, version: v1.version })
    expect((await session.call('beforeToolExecute', shellCall)).result.reason).toBe('from-config')
    session.abandon()
  })
})

describe('a hook broken at start-up', () => {
  it('is reported at open and skipped, listed BROKEN, and served once fixed', async () => {
    const broken = await waitForHook(running, 'late', (h) => h.status === 'broken', 'broken')
    expect(broken.version).toBe('')
    expect(broken.lastError).toMatchObject({ kind: 'load', file: 'late/index.js', line: 3 })
    expect(broken.lastError?.version).toBeUndefined()
    expect(broken.lastError?.message).toContain('The hook is skipped until it loads')

    const pushed = new Pushed()
    const session = await running.client.openSession(sessionOptions(['late'], { capabilities: { diagnostic: pushed.handler } }))
    await pushed.wait('load at open', (d) => d.kind === 'load' && d.hook === 'late')
    const skipped = await session.call('beforeToolExecute', shellCall)
    expect(skipped.result.allow).toBe(true)
    expect(skipped.trace).toEqual([])

    await writeFile(indexOf(root, 'late'), guard('late'))
    const loaded = await pushed.wait('late loaded', (d) => d.kind === 'reload' && d.hook === 'late')
    expect(loaded.message).toBe(`hook 'late' loaded version ${loaded.version}`)
    const out = await session.call('beforeToolExecute', shellCall)
    expect(out.result).toMatchObject({ allow: false, reason: 'late' })
    expect((await running.client.listHooks()).find((h) => h.name === 'late')).toMatchObject({ status: 'ready', version: loaded.version })
    session.abandon()
  })
})

describe('pushed diagnostics', () => {
  it('go only to sessions that declared the hook, and stop when a session ends', async () => {
    const registry = running.sidecar.registry as unknown as { listeners: Set<unknown> }
    // Sessions abandoned by earlier tests end on the sidecar a moment later.
    await waitFor('earlier sessions to end', () => (registry.listeners.size === 0 ? true : undefined))
    const baseline = 0
    const user = new Pushed()
    const other = new Pushed()
    const users = await running.client.openSession(sessionOptions(['bystander'], { capabilities: { diagnostic: user.handler } }))
    const others = await running.client.openSession(sessionOptions(['guard'], { capabilities: { diagnostic: other.handler } }))
    expect(registry.listeners.size).toBe(baseline + 2)

    await writeFile(indexOf(root, 'bystander'), guard('bystander-2'))
    await user.wait('reload of bystander', (d) => d.kind === 'reload' && d.hook === 'bystander')
    await writeFile(indexOf(root, 'bystander'), '}')
    await user.wait('load failure of bystander', (d) => d.kind === 'load' && d.hook === 'bystander')
    expect(other.all).toEqual([])

    await users.close()
    others.abandon()
    await waitFor('both subscriptions to end', () => (registry.listeners.size === baseline ? true : undefined))
  })

  it('stops for a session whose host drops the stream', async () => {
    const registry = running.sidecar.registry as unknown as { listeners: Set<unknown> }
    await waitFor('earlier sessions to end', () => (registry.listeners.size === 0 ? true : undefined))
    const baseline = 0
    const session = await running.client.openSession(sessionOptions(['bystander']))
    expect(registry.listeners.size).toBe(baseline + 1)
    session.abandon()
    await waitFor('the subscription to end', () => (registry.listeners.size === baseline ? true : undefined))
  })
})

describe('ListHooks', () => {
  it('shows name, version, points, status and last error for every hook', async () => {
    await writeFile(indexOf(root, 'bystander'), guard('bystander-3'))
    const hooks = await waitFor('bystander ready', async () => {
      const list = await running.client.listHooks()
      return list.find((h) => h.name === 'bystander')?.status === 'ready' ? list : undefined
    })
    expect(hooks.map((h) => h.name)).toEqual(['bystander', 'configured', 'guard', 'late', 'typo-export'])
    for (const h of hooks) {
      expect(h.version).toMatch(/^[0-9a-f]{12}$/)
      expect(h.points).toEqual(['beforeToolExecute'])
      expect(h.loadedAtMs).toBeGreaterThan(0)
    }
    expect(Object.fromEntries(hooks.map((h) => [h.name, h.status]))).toEqual({
      bystander: 'ready',
      configured: 'stale',
      guard: 'ready',
      late: 'ready',
      'typo-export': 'stale',
    })
    expect(hooks.find((h) => h.name === 'configured')?.lastError?.file).toBe('configured/hook.json')
  })
})
