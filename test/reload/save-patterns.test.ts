/**
 * Hot reload under editors' save patterns, with real files and a real watcher: every call made while a
 * file is being saved is answered by the old version or the new one, never by a half-written file and
 * never by "no hook"; and the new version is served once the save is done.
 */
import { mkdir, open, readFile, unlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Running, sessionOptions, startSidecar, writeTree } from '../support/sidecar.js'
import { Prober, SAVE_PATTERNS, guard, indexOf, shellCall, sleep, waitFor, waitForHook } from './support.js'

let running: Running
let root: string
let generation = 0

beforeAll(async () => {
  root = await writeTree({ 'guard/index.js': guard('v0') })
  running = await startSidecar({ hooks: root })
})

afterAll(async () => {
  await running?.stop()
})

/** Saves the guard's next version with `save` while a session keeps calling it. */
async function saveWhileProbing(save: (file: string, text: string) => Promise<void>): Promise<{ before: string; after: string; answers: string[] }> {
  const before = `v${generation}`
  generation += 1
  const after = `v${generation}`
  const session = await running.client.openSession(sessionOptions(['guard']))
  const prober = new Prober(session)
  await prober.until(before)
  await save(indexOf(root, 'guard'), guard(after))
  await prober.until(after)
  const answers = await prober.stop()
  session.abandon()
  return { before, after, answers }
}

/** Every answer is a refusal by the old or the new version, and once the new one answered, never the old. */
function expectNoGap(answers: string[], before: string, after: string): void {
  const unexpected = answers.filter((a) => a !== `refused:${before}` && a !== `refused:${after}`)
  expect(unexpected).toEqual([])
  const firstNew = answers.indexOf(`refused:${after}`)
  expect(answers.slice(firstNew)).not.toContain(`refused:${before}`)
}

describe('each save pattern', () => {
  for (const [pattern, save] of Object.entries(SAVE_PATTERNS)) {
    it(`serves the new version after a ${pattern} save, with no call seeing anything in between`, async () => {
      const { before, after, answers } = await saveWhileProbing(save)
      expectNoGap(answers, before, after)
      const listed = await waitForHook(running, 'guard', (h) => h.status === 'ready', 'ready')
      expect(listed.lastError).toBeUndefined()
    })
  }

  it('serves a rename-over save (write a temp file, rename it onto index.js) and reports the new version in traces', async () => {
    const { after } = await saveWhileProbing(SAVE_PATTERNS['temp file then rename'] as (f: string, t: string) => Promise<void>)
    const listed = await waitForHook(running, 'guard', (h) => h.status === 'ready', 'ready')
    const session = await running.client.openSession(sessionOptions(['guard']))
    const out = await session.call('beforeToolExecute', shellCall)
    expect(out.result.reason).toBe(after)
    expect(out.trace).toEqual([expect.objectContaining({ hook: 'guard', version: listed.version, outcome: 'refused' })])
    session.abandon()
  })
})

describe('slow saves: the file is empty or missing for a while', () => {
  it('keeps the last good guard refusing while index.js is truncated, and marks it stale', async () => {
    const before = `v${generation}`
    generation += 1
    const after = `v${generation}`
    const session = await running.client.openSession(sessionOptions(['guard']))
    const prober = new Prober(session)
    await prober.until(before)
    await writeFile(indexOf(root, 'guard'), '')
    const stale = await waitForHook(running, 'guard', (h) => h.status === 'stale', 'stale while empty')
    expect(stale.lastError?.message).toContain('guard/index.js is empty')
    await writeFile(indexOf(root, 'guard'), guard(after))
    await prober.until(after)
    expectNoGap(await prober.stop(), before, after)
    session.abandon()
    await waitForHook(running, 'guard', (h) => h.status === 'ready' && !h.lastError, 'ready again')
  })

  it('keeps the last good guard refusing while index.js is deleted, then serves the re-created file', async () => {
    const before = `v${generation}`
    generation += 1
    const after = `v${generation}`
    const session = await running.client.openSession(sessionOptions(['guard']))
    const prober = new Prober(session)
    await prober.until(before)
    const file = indexOf(root, 'guard')
    await unlink(file)
    const stale = await waitForHook(running, 'guard', (h) => h.status === 'stale', 'stale while missing')
    expect(stale.lastError?.message).toContain('has no index.js')
    await writeFile(file, guard(after))
    await prober.until(after)
    expectNoGap(await prober.stop(), before, after)
    session.abandon()
  })

  it('never serves a prefix of a file written in pieces, even one that would load', async () => {
    const before = `v${generation}`
    generation += 1
    const after = `v${generation}`
    // The first line alone is a valid hook that has no opinion: serving it would switch the guard off.
    const text = `module.exports = { beforeToolExecute() {} }\nmodule.exports.beforeToolExecute = () => ({ allow: false, reason: ${JSON.stringify(after)} })\n`
    const cut = text.indexOf('\n') + 1
    const { answers } = await (async () => {
      const session = await running.client.openSession(sessionOptions(['guard']))
      const prober = new Prober(session)
      await prober.until(before)
      const handle = await open(indexOf(root, 'guard'), 'w')
      await handle.write(text.slice(0, cut))
      await sleep(10)
      await handle.write(text.slice(cut))
      await handle.close()
      await prober.until(after)
      const result = await prober.stop()
      session.abandon()
      return { answers: result }
    })()
    expectNoGap(answers, before, after)
  })
})

describe('other files in a hook folder', () => {
  it('do not hold a reload back, even when one of them changes all the time', async () => {
    const before = `v${generation}`
    generation += 1
    const after = `v${generation}`
    let writing = true
    const appender = (async () => {
      for (let i = 0; writing; i++) {
        await writeFile(join(root, 'guard', 'notes.log'), `line ${i}\n`, { flag: 'a' })
        await sleep(20)
      }
    })()
    try {
      const session = await running.client.openSession(sessionOptions(['guard']))
      const prober = new Prober(session)
      await prober.until(before)
      await writeFile(indexOf(root, 'guard'), guard(after))
      await prober.until(after)
      expectNoGap(await prober.stop(), before, after)
      session.abandon()
    } finally {
      writing = false
      await appender
    }
  })
})

describe('hook.json', () => {
  it('reloads when only hook.json changes, with a new version and the new config', async () => {
    await mkdir(join(root, 'config-reader'), { recursive: true })
    await writeFile(join(root, 'config-reader', 'hook.json'), JSON.stringify({ config: { word: 'one' } }))
    await writeFile(
      join(root, 'config-reader', 'index.js'),
      'module.exports = { beforeToolExecute: (ctx) => ({ allow: false, reason: ctx.config.word }) }\n',
    )
    const first = await waitForHook(running, 'config-reader', (h) => h.status === 'ready', 'ready')
    const session = await running.client.openSession(sessionOptions(['config-reader']))
    expect((await session.call('beforeToolExecute', shellCall)).result.reason).toBe('one')

    await SAVE_PATTERNS['temp file then rename']?.(join(root, 'config-reader', 'hook.json'), JSON.stringify({ config: { word: 'two' } }))
    const second = await waitForHook(running, 'config-reader', (h) => h.version !== first.version && h.status === 'ready', 'a new version')
    const out = await waitFor('the new config', async () => {
      const r = await session.call('beforeToolExecute', shellCall)
      return r.result.reason === 'two' ? r : undefined
    })
    expect(out.trace[0]?.version).toBe(second.version)
    expect(await readFile(join(root, 'config-reader', 'index.js'), 'utf8')).toContain('ctx.config.word')
    session.abandon()
  })
})
