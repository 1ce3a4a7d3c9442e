/**
 * `hookd list` shows each hook's description (issue 15, item 19): hook.json "description" beside the
 * name, cut to one table line, in full with --json, and '-' for a hook without one. A real sidecar.
 * docs/hot-reload.md lists what hook.json may hold.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hookJsonSchema } from '../../../src/sidecar/hooks/hook-files.js'
import { ROOT, type Serving, runHookd as hookd, startServe, stopProcess } from '../../support/processes.js'

const LONG = 'Refuses shell commands that delete files outside the workdir, and asks before any git push to a remote'

let dir: string
let serving: Serving

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hookd-list-'))
  const hook = async (name: string, json?: unknown): Promise<void> => {
    await mkdir(join(dir, 'hooks', name), { recursive: true })
    await writeFile(join(dir, 'hooks', name, 'index.js'), 'module.exports = { beforeToolExecute: () => {} }\n')
    if (json !== undefined) await writeFile(join(dir, 'hooks', name, 'hook.json'), JSON.stringify(json))
  }
  await hook('careful', { description: LONG, permissions: { decide: { refuse: true, rewriteArguments: ['write_file'] } } })
  await hook('plain')
  await hook('short', { description: 'Logs every call', config: { level: 1 } })
  serving = await startServe(['--hooks', join(dir, 'hooks'), '--workers', '1', '--listen', `unix:${join(dir, 'hookd.sock')}`], { cwd: dir })
}, 60_000)

afterAll(async () => {
  if (serving) await stopProcess(serving.child)
  await rm(dir, { recursive: true, force: true })
})

describe('hookd list', { timeout: 60_000 }, () => {
  it('shows each description in its own column, cut to 60 characters', async () => {
    const ran = await hookd(['list', '--addr', serving.address])
    expect(ran.code).toBe(0)
    const lines = ran.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^NAME\s+VERSION\s+DIGEST\s+STATUS\s+POINTS\s+DESCRIPTION\s+PERMISSIONS\s+LAST ERROR$/)
    const column = (line: string | undefined): string => (line ?? '').split(/\s{2,}/)[5] ?? ''
    expect(column(lines[1])).toBe(`${LONG.slice(0, 57)}...`)
    expect(column(lines[2])).toBe('-')
    expect(column(lines[3])).toBe('Logs every call')
    const permissions = (line: string | undefined): string => (line ?? '').split(/\s{2,}/)[6] ?? ''
    expect(permissions(lines[1])).toBe('decides refuse, rewriteArguments write_file')
    expect(permissions(lines[2])).toBe('undeclared')
  })

  it('--json holds the whole description', async () => {
    const ran = await hookd(['list', '--addr', serving.address, '--json'])
    expect(ran.code).toBe(0)
    const hooks = JSON.parse(ran.stdout) as Array<{ name: string; description?: string }>
    expect(hooks.map((h) => [h.name, h.description])).toEqual([['careful', LONG], ['plain', undefined], ['short', 'Logs every call']])
    expect(hooks.map((h) => [h.name, (h as { permissions?: string }).permissions])).toEqual([
      ['careful', 'decides refuse, rewriteArguments write_file'],
      ['plain', undefined],
      ['short', undefined],
    ])
  })
})

describe('docs/hot-reload.md', () => {
  it('documents every key hook.json may hold, and no other', async () => {
    const text = await readFile(join(ROOT, 'docs', 'hot-reload.md'), 'utf8')
    const section = text.slice(text.indexOf('## What `hook.json` may hold'))
    const table = section.slice(0, section.indexOf('\n\n', section.indexOf('| key |')))
    const keys = [...table.matchAll(/^\| `([a-zA-Z]+)` \|/gm)].map((m) => m[1])
    expect(keys.sort()).toEqual(Object.keys(hookJsonSchema.shape).sort())
  })
})
