/**
 * Hook folders that lie: symbolic links (a folder, an index.js, a hook.json pointing at another tenant's
 * secrets or anywhere), FIFOs where files should be (at start-up and appearing later), huge sparse
 * files, and a FIFO in the workdir a hook reads. Each test asserts the exact refusal, that nothing of a
 * link's target leaks, and that the same sidecar answers an ordinary call after.
 */
import { execFileSync } from 'node:child_process'
import { mkdir, mkdtemp, rm, symlink, truncate, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { runInProcess } from '../support/processes.js'
import { type Running, startSidecar } from '../support/sidecar.js'
import { CALL, expectServing, failed, runHooks } from './support.js'

const ORDINARY = 'module.exports = { beforeToolExecute(ctx, call) { return { arguments: { ...call.arguments, ordinary: true } } } }\n'
const LEAKY = 'module.exports = { beforeToolExecute(ctx) { return { reason: JSON.stringify(ctx.config) } } }\n'
const SECRET = 'sk-tenant-b-0123456789'
const LINKS = "; hookd does not follow symbolic links in hook folders (a development setup may pass hookd serve --allow-symlinks). The hook is skipped until it loads"

let scratch: string
let hooks: string
let running: Running

async function hook(name: string, files: Record<string, string>): Promise<void> {
  await mkdir(join(hooks, name), { recursive: true })
  for (const [file, text] of Object.entries(files)) await writeFile(join(hooks, name, file), text)
}

function mkfifo(path: string): void {
  execFileSync('mkfifo', [path])
}

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'hookd-folders-'))
  hooks = join(scratch, 'tenant-a')
  const other = join(scratch, 'tenant-b', 'secret')
  await mkdir(other, { recursive: true })
  await writeFile(join(other, 'hook.json'), JSON.stringify({ config: { apiKey: SECRET } }))
  await writeFile(join(other, 'index.js'), LEAKY)
  await writeFile(join(scratch, 'passwd'), 'root:x:0:0:root:/root:/bin/bash\n')

  await hook('ordinary', { 'index.js': ORDINARY })
  // tenant A's hook.json linked to tenant B's: it would read B's secret config.
  await hook('leak-config', { 'index.js': LEAKY })
  await symlink(join(other, 'hook.json'), join(hooks, 'leak-config', 'hook.json'))
  // A hook.json linked to any file: its JSON parse error would quote the file's first bytes.
  await hook('leak-parse', { 'index.js': ORDINARY })
  await symlink(join(scratch, 'passwd'), join(hooks, 'leak-parse', 'hook.json'))
  // The whole hook folder is a link into another tenant's hooks.
  await symlink(other, join(hooks, 'linked-folder'))
  // index.js is a link.
  await mkdir(join(hooks, 'linked-index'))
  await symlink(join(other, 'index.js'), join(hooks, 'linked-index', 'index.js'))
  // A FIFO as index.js, and as hook.json: reading either once blocked start-up for good.
  await mkdir(join(hooks, 'fifo-index'))
  mkfifo(join(hooks, 'fifo-index', 'index.js'))
  await hook('fifo-config', { 'index.js': ORDINARY })
  mkfifo(join(hooks, 'fifo-config', 'hook.json'))
  // Eight 500 MB sparse index.js files: once read whole, in parallel, before the size cap.
  for (let i = 0; i < 8; i++) {
    await mkdir(join(hooks, `sparse-${i}`))
    await writeFile(join(hooks, `sparse-${i}`, 'index.js'), '')
    await truncate(join(hooks, `sparse-${i}`, 'index.js'), 500 * 1024 * 1024)
  }
  // Reads a FIFO in its workdir through the host's default handler.
  await hook('reads-pipe', {
    'index.js': "module.exports = { beforeToolExecute(ctx) { return { reason: ctx.file.read('pipe') } } }\n",
  })
  running = await startSidecar({ hooks, workers: 1, limits: { wallMs: 20_000, cpuMs: 5000 } })
})

afterAll(async () => {
  await running?.stop()
  if (scratch) await rm(scratch, { recursive: true, force: true })
})

async function status(name: string): Promise<{ status: string | undefined; message: string }> {
  const listed = (await running.client.listHooks()).find((h) => h.name === name)
  return { status: listed?.status, message: listed?.lastError?.message ?? '' }
}

describe('symbolic links', () => {
  it("a hook.json linked to another tenant's is refused, and the secret never shows", async () => {
    expect(await status('leak-config')).toEqual({ status: 'broken', message: `leak-config/hook.json is a symbolic link${LINKS}; fix leak-config/hook.json and save it` })
    const run = await runHooks(running, ['leak-config', 'ordinary'])
    expect(JSON.stringify(run)).not.toContain(SECRET)
    await expectServing(running)
  })

  it("a hook.json linked to any file is refused without quoting it", async () => {
    const { status: s, message } = await status('leak-parse')
    expect(s).toBe('broken')
    expect(message).toBe(`leak-parse/hook.json is a symbolic link${LINKS}; fix leak-parse/hook.json and save it`)
    expect(message).not.toContain('root:x')
  })

  it('links are followed only when a single-tenant setup opts in (--allow-symlinks), never with tenants', async () => {
    const linked = await mkdtemp(join(tmpdir(), 'hookd-linked-'))
    try {
      await symlink(join(scratch, 'tenant-b', 'secret'), join(linked, 'linked'))
      const refused = await runInProcess(['check', linked])
      expect(refused.code).toBe(1)
      expect(refused.stdout).toContain('the hook folder linked is a symbolic link')
      const followed = await runInProcess(['check', linked, '--allow-symlinks'])
      expect(followed.stdout).not.toContain('symbolic link')
      expect(followed.code).toBe(0)
      const tenants = await runInProcess(['serve', '--tenants', join(linked, 'tenants.json'), '--allow-symlinks'])
      expect(tenants.code).toBe(2)
      expect(tenants.stderr).toContain("--allow-symlinks cannot be used with --tenants: one tenant's link could read another tenant's files")
    } finally {
      await rm(linked, { recursive: true, force: true })
    }
  })

  it('a hook folder that is a link, and an index.js that is a link, are refused', async () => {
    expect(await status('linked-folder')).toEqual({ status: 'broken', message: `the hook folder linked-folder is a symbolic link${LINKS}; fix linked-folder/index.js and save it` })
    expect(await status('linked-index')).toEqual({ status: 'broken', message: `linked-index/index.js is a symbolic link${LINKS}; fix linked-index/index.js and save it` })
    await expectServing(running)
  })
})

describe('special and huge files', () => {
  it('FIFOs as index.js or hook.json do not block start-up: they are refused as what they are', async () => {
    expect(await status('fifo-index')).toEqual({
      status: 'broken',
      message: 'fifo-index/index.js is not a regular file (a FIFO); hookd reads only regular files in a hook folder. The hook is skipped until it loads; fix fifo-index/index.js and save it',
    })
    expect(await status('fifo-config')).toEqual({
      status: 'broken',
      message: 'fifo-config/hook.json is not a regular file (a FIFO); hookd reads only regular files in a hook folder. The hook is skipped until it loads; fix fifo-config/hook.json and save it',
    })
  })

  it('a FIFO that appears later does not stop hot reload', async () => {
    await mkdir(join(hooks, 'late-fifo'))
    mkfifo(join(hooks, 'late-fifo', 'index.js'))
    await vi.waitFor(async () => expect((await status('late-fifo')).status).toBe('broken'), { timeout: 20_000, interval: 100 })
    // Hot reload still works for the next edit.
    await hook('late-ordinary', { 'index.js': ORDINARY })
    await vi.waitFor(async () => expect((await status('late-ordinary')).status).toBe('ready'), { timeout: 20_000, interval: 100 })
    await expectServing(running)
  })

  it('eight 500 MB sparse index.js files cost a stat each, and are refused with their size', async () => {
    for (let i = 0; i < 8; i++) {
      expect(await status(`sparse-${i}`)).toEqual({
        status: 'broken',
        message: `sparse-${i}/index.js is 524288000 bytes, over the 1048576 bytes hookd reads; bundle or minify it, or move data it reads to ctx.file. The hook is skipped until it loads; fix sparse-${i}/index.js and save it`,
      })
    }
    await expectServing(running)
  })

  it("a FIFO in the workdir: the host's ctx.file.read refuses it instead of blocking", async () => {
    const workdir = join(scratch, 'work')
    await mkdir(workdir)
    mkfifo(join(workdir, 'pipe'))
    const run = await runHooks(running, ['reads-pipe'], { workdir })
    expect(run.diagnostics).toEqual([
      { ...failed('reads-pipe', 'capability-denied', "Error: ctx.file.read('pipe') refused: it is not a regular file", 1), file: 'reads-pipe/index.js' },
    ])
    expect(run.result).toEqual({ allow: true, arguments: CALL.arguments })
    await expectServing(running)
  })
})
