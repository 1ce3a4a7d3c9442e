/**
 * A TypeScript hook with its own files and an npm package, served by a real sidecar from its folder
 * (issue 19 item 4): bundled at load, diagnostics at the author's file and line, and rebuilt on a
 * change of the entry, a file it imports, or its packages (an npm install rewrites
 * node_modules/.package-lock.json). A broken edit keeps the last good bundle serving.
 */
import { rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sharedEsbuildPid } from '../../src/sidecar/hooks/esbuild-supervisor.js'
import { esbuildChildren, slowFiles, untilBusy } from '../support/esbuild.js'
import { type Running, addFiles, sessionOptions, startSidecar, writeTree } from '../support/sidecar.js'
import { waitFor, waitForHook } from './support.js'

const INDEX_TS = `import shout from 'shout'
import { verdict } from './lib/verdict'

type Call = { id: string; name: string; arguments: Record<string, unknown> }

export default {
  beforeToolExecute(ctx: { log(...v: unknown[]): void }, call: Call) {
    if (call.name === 'explode') throw new Error('exploded on purpose')
    return verdict(shout(call.name))
  },
}
`

const verdict = (tag: string): string => `export function verdict(name: string) {\n  return { allow: false, reason: name + ' ${tag}' }\n}\n`
const shoutPackage = (suffix: string): Record<string, string> => ({
  'typed/node_modules/shout/package.json': '{"name": "shout", "version": "1.0.0", "main": "index.js"}',
  'typed/node_modules/shout/index.js': `module.exports = function shout(s) { return s.toUpperCase() + ${JSON.stringify(suffix)} }\n`,
  'typed/node_modules/.package-lock.json': JSON.stringify({ name: 'typed', lockfileVersion: 3, packages: { 'node_modules/shout': { version: suffix } } }),
})

let root: string
let running: Running

beforeAll(async () => {
  root = await writeTree({
    'typed/index.ts': INDEX_TS,
    'typed/lib/verdict.ts': verdict('v1'),
    'typed/package.json': '{"dependencies": {"shout": "1.0.0"}}',
    ...shoutPackage('!'),
  })
  running = await startSidecar({ hooks: root, workers: 1 })
}, 60_000)

afterAll(async () => {
  await running?.stop()
  if (root) await rm(root, { recursive: true, force: true })
})

async function reason(): Promise<string | undefined> {
  const session = await running.client.openSession(sessionOptions(['typed']))
  try {
    const out = await session.call('beforeToolExecute', { id: 'c1', name: 'shell', arguments: {} })
    return out.result.reason
  } finally {
    session.abandon()
  }
}

const until = (want: string): Promise<string> => waitFor(`the reason '${want}'`, async () => ((await reason()) === want ? want : undefined), 30_000)

describe('a bundled hook under hookd serve', () => {
  it('is served from index.ts with its own files and its package', async () => {
    expect(running.sidecar.loadDiagnostics).toEqual([])
    expect(await reason()).toBe('SHELL! v1')
  })

  it("reports a throw at the author's TypeScript file and line", async () => {
    const session = await running.client.openSession(sessionOptions(['typed']))
    const out = await session.call('beforeToolExecute', { id: 'c2', name: 'explode', arguments: {} })
    session.abandon()
    expect(out.diagnostics).toHaveLength(1)
    expect(out.diagnostics[0]).toMatchObject({ hook: 'typed', kind: 'throw', file: 'typed/index.ts', line: 8, message: expect.stringContaining('Error: exploded on purpose') })
  })

  it('rebuilds when a file it imports changes', async () => {
    await writeFile(join(root, 'typed', 'lib', 'verdict.ts'), verdict('v2'))
    await until('SHELL! v2')
  })

  it('rebuilds when npm installs another version of its package', async () => {
    for (const [file, text] of Object.entries(shoutPackage('?'))) await writeFile(join(root, file), text)
    await until('SHELL? v2')
  })

  it('keeps the last good bundle serving through a broken edit, naming the file and line', async () => {
    await writeFile(join(root, 'typed', 'lib', 'verdict.ts'), 'export function verdict(name: string) {\n  return { allow: false, reason: name + \n}\n')
    const stale = await waitForHook(running, 'typed', (h) => h.status === 'stale', 'stale after a broken edit')
    expect(stale.lastError).toMatchObject({ file: 'typed/lib/verdict.ts', line: 3 })
    expect(await reason()).toBe('SHELL? v2')
    await writeFile(join(root, 'typed', 'lib', 'verdict.ts'), verdict('v3'))
    await until('SHELL? v3')
  })

  it('loads an edit whose rebuild had esbuild killed under it: the next read of the folder gets a fresh esbuild', async () => {
    const pid = sharedEsbuildPid()
    expect(esbuildChildren()).toContain(pid)
    await addFiles(join(root, 'typed', 'lib'), slowFiles())
    await writeFile(join(root, 'typed', 'lib', 'verdict.ts'), `import './slow-a'\nimport './slow-b'\nimport './slow-c'\n${verdict('v4')}`)
    await untilBusy(pid as number)
    process.kill(pid as number, 'SIGKILL')
    await until('SHELL? v4')
    expect(sharedEsbuildPid()).not.toBe(pid)
  })
})
