/**
 * `hookd serve --floor DIR` as an operator runs it (in-process): what it says on stderr, the floor
 * hot-reloaded while a session stays open (the session's next call runs the new version, and a floor
 * hook added while it is open runs too), and the folders it refuses, with the words it uses.
 */
import { rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { HookdClient } from '../../../src/host/index.js'
import { type ServingInProcess, runInProcess, serveInProcess } from '../../support/processes.js'
import { addFiles, hook, sessionOptions, writeTree } from '../../support/sidecar.js'

const curl = { id: 'c1', name: 'shell', arguments: { command: 'curl x | sh' } }

describe('hookd serve --floor', () => {
  let dir: string
  let serving: ServingInProcess
  let client: HookdClient

  beforeAll(async () => {
    dir = await writeTree({
      'floor/00-guard/index.js': hook({ beforeToolExecute: `(ctx, c) => undefined` }),
      'hooks/allow/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ allow: true })` }),
    })
    serving = await serveInProcess(['--hooks', 'hooks', '--floor', 'floor', '--listen', `unix:${join(dir, 'hookd.sock')}`, '--workers', '1'], { cwd: dir })
    client = await HookdClient.connect(serving.address)
  }, 60_000)

  afterAll(async () => {
    client?.close()
    await serving?.stop()
    if (dir) await rm(dir, { recursive: true, force: true })
  })

  it('says what the floor serves, and reloads it under an open session', async () => {
    expect(serving.output.stderr).toContain(`hookd: floor: serving 1 floor hook(s) from ${join(dir, 'floor')}, first in every session: 00-guard`)
    const session = await client.openSession(sessionOptions(['allow']))
    try {
      expect((await session.call('beforeToolExecute', curl)).result).toMatchObject({ allow: true })
      await writeFile(join(dir, 'floor', '00-guard', 'index.js'), hook({ beforeToolExecute: `(ctx, c) => /curl/.test(c.arguments.command) ? { allow: false, reason: 'floor v2' } : undefined` }))
      await vi.waitFor(() => expect(serving.output.stderr).toMatch(/hookd: floor: hook '00-guard' reloaded: now serving version/), { timeout: 20_000, interval: 50 })
      expect((await session.call('beforeToolExecute', curl)).result).toEqual({ allow: false, reason: 'floor v2', refusedBy: '00-guard', arguments: curl.arguments })
      // A floor hook added while the session is open runs in it too, in name order.
      await addFiles(join(dir, 'floor'), { '05-log/index.js': hook({ beforeToolExecute: `(ctx, c) => { ctx.log('05 saw it') }` }) })
      await vi.waitFor(() => expect(serving.output.stderr).toContain("hookd: floor: hook '05-log' loaded version"), { timeout: 20_000, interval: 50 })
      const out = await session.call('beforeToolExecute', { ...curl, id: 'c2', arguments: { command: 'ls' } })
      expect(out.trace.map((t) => t.hook)).toEqual(['00-guard', '05-log', 'allow'])
    } finally {
      await session.close().catch(() => {})
    }
  })

  it('refuses a floor that is the hooks folder, or is not there, saying what to give instead', async () => {
    const same = await runInProcess(['serve', '--hooks', 'hooks', '--floor', 'hooks', '--listen', `unix:${join(dir, 'other.sock')}`], { cwd: dir })
    expect(same.code).not.toBe(0)
    expect(same.stderr).toContain('is the hooks folder itself; give the floor a folder of its own')
    const missing = await runInProcess(['serve', '--hooks', 'hooks', '--floor', 'nowhere', '--listen', `unix:${join(dir, 'other.sock')}`], { cwd: dir })
    expect(missing.code).not.toBe(0)
    expect(missing.stderr).toContain(`cannot read the floor folder ${join(dir, 'nowhere')}`)
    const help = await runInProcess(['serve', '--help'])
    expect(help.stdout).toContain("--floor DIR              the operator's floor: a hooks folder of its own whose hooks run first at")
  })
})
