/**
 * Hostile hooks that try to reach past what ctx lends them: files outside the workdir (by '..', by an
 * absolute path, through a symbolic link), a refused origin, environment variables the session does not
 * allow. Each test asserts the exact diagnostic, that nothing of the target leaked into the result, and
 * that the sidecar answers an ordinary call right after.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Running } from '../support/sidecar.js'
import { UNCHANGED, expectServing, failed, runHooks, startHostile } from './support.js'

let running: Running
let scratch: string
let workdir: string

beforeAll(async () => {
  running = await startHostile()
  scratch = await mkdtemp(join(tmpdir(), 'hookd-reach-'))
  workdir = join(scratch, 'work')
  const secrets = join(scratch, 'secrets')
  await mkdir(workdir)
  await mkdir(secrets)
  await writeFile(join(secrets, 'secret.txt'), 'TOP SECRET')
  await symlink(secrets, join(workdir, 'outside'))
})

afterAll(async () => {
  await running?.stop()
  if (scratch) await rm(scratch, { recursive: true, force: true })
})

describe('files outside the workdir', () => {
  it("path-dotdot: '..' is refused before the call leaves the sandbox", async () => {
    const run = await runHooks(running, ['path-dotdot'], { workdir })
    expect(run.diagnostics).toEqual([
      failed('path-dotdot', 'capability-denied', "Error: ctx.file.read('../../../../etc/passwd') refused: the path leads outside the workdir", 4),
    ])
    expect(run.result).toEqual(UNCHANGED)
    await expectServing(running)
  })

  it('path-absolute: an absolute path is refused', async () => {
    const run = await runHooks(running, ['path-absolute'], { workdir })
    expect(run.diagnostics).toEqual([
      failed(
        'path-absolute',
        'capability-denied',
        "Error: ctx.file.read('/etc/passwd') refused: absolute paths are refused; use a path relative to the workdir",
        4,
      ),
    ])
    expect(run.result).toEqual(UNCHANGED)
    await expectServing(running)
  })

  it('path-symlink: a symbolic link that leads outside is refused by the host', async () => {
    const run = await runHooks(running, ['path-symlink'], { workdir })
    expect(run.diagnostics).toEqual([
      failed(
        'path-symlink',
        'capability-denied',
        "Error: ctx.file.read('outside/secret.txt') refused: the path leads outside the workdir through a symbolic link",
        4,
      ),
    ])
    expect(JSON.stringify(run)).not.toContain('TOP SECRET')
    expect(run.result).toEqual(UNCHANGED)
    await expectServing(running)
  })
})

describe('network and environment', () => {
  it('fetch-refused: an origin the session does not allow is refused', async () => {
    const run = await runHooks(running, ['fetch-refused'], { workdir, policy: { httpOrigins: ['https://example.com'] } })
    expect(run.diagnostics).toEqual([
      failed(
        'fetch-refused',
        'capability-denied',
        "Error: ctx.http.fetch('http://169.254.169.254/latest/meta-data/') refused: origin http://169.254.169.254 is not allowed (allowed origins: https://example.com)",
        4,
      ),
    ])
    expect(run.result).toEqual(UNCHANGED)
    await expectServing(running)
  })

  it('env-snoop: only allowlisted variables are visible, frozen, and nothing else holds any', async () => {
    const run = await runHooks(running, ['env-snoop'], {
      workdir,
      policy: { env: ['HOOKD_VISIBLE'] },
      env: { HOOKD_VISIBLE: 'yes', HOOKD_SECRET: 'no' },
    })
    expect(run.diagnostics).toEqual([])
    expect(run.result).toEqual({
      allow: true,
      arguments: {
        env: { HOOKD_VISIBLE: 'yes' },
        keys: ['HOOKD_VISIBLE'],
        secret: 'absent',
        frozen: true,
        process: 'undefined',
        globalEnv: 'undefined',
      },
    })
    await expectServing(running)
  })
})
