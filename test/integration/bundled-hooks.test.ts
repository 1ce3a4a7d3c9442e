/**
 * A bundled hook runs in the real sandbox like a hand-written index.js: its exports are found through
 * `module.exports` in the isolate's wrapper, and the line of a throw, mapped through the bundle's source
 * map, is the line in the author's TypeScript.
 */
import { rm } from 'node:fs/promises'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { bundleHook, mapPosition } from '../../src/sidecar/hooks/bundle.js'
import { type Running, sessionOptions, startSidecar, writeTree } from '../support/sidecar.js'

const HOOK_TS = `import slug from 'tiny-slug'
import { verdict } from './lib/verdict'

type Call = { id: string; name: string; arguments: Record<string, unknown> }

export default {
  beforeToolExecute(ctx: { log(...v: unknown[]): void }, call: Call) {
    ctx.log('slug', slug(call.name))
    if (call.name === 'explode') throw new Error('exploded on purpose')
    return verdict(call)
  },
}
`

let running: Running
let sourceMap = ''
const temps: string[] = []

beforeAll(async () => {
  const folder = await writeTree({
    'index.ts': HOOK_TS,
    'lib/verdict.ts': "export function verdict(call: { name: string }) {\n  return call.name === 'shell' ? { allow: false, reason: 'no shells' } : undefined\n}\n",
    'package.json': '{"dependencies": {"tiny-slug": "1.0.0"}}',
    'node_modules/tiny-slug/package.json': '{"name": "tiny-slug", "version": "1.0.0", "module": "index.mjs"}',
    'node_modules/tiny-slug/index.mjs': "export default function slug(s) { return s.toLowerCase().replace(/[^a-z0-9]+/g, '-') }\n",
  })
  const bundled = await bundleHook(folder)
  if (!bundled.ok) throw new Error(bundled.message)
  sourceMap = bundled.sourceMap
  const root = await writeTree({ 'typed/index.js': bundled.source })
  temps.push(folder, root)
  running = await startSidecar({ hooks: root, watch: false })
})

afterAll(async () => {
  await running?.stop()
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })))
})

it('runs a bundled TypeScript hook with an npm package in the sandbox', async () => {
  const logs: string[] = []
  const session = await running.client.openSession(sessionOptions(['typed'], { capabilities: { log: (line) => void logs.push(line.message) } }))
  expect(session.hooks.map((h) => [h.name, h.points])).toEqual([['typed', ['beforeToolExecute']]])
  const out = await session.call('beforeToolExecute', { id: 'c1', name: 'shell', arguments: { command: 'ls' } })
  expect(out.result).toEqual({ allow: false, reason: 'no shells', refusedBy: 'typed', arguments: { command: 'ls' } })
  expect(out.diagnostics).toEqual([])
  expect(logs).toEqual(['slug shell'])
  session.abandon()
})

it("maps a throw's line through the source map to the author's TypeScript", async () => {
  const session = await running.client.openSession(sessionOptions(['typed']))
  const out = await session.call('beforeToolExecute', { id: 'c2', name: 'explode', arguments: {} })
  expect(out.diagnostics).toHaveLength(1)
  const [d] = out.diagnostics
  expect(d).toMatchObject({ hook: 'typed', kind: 'throw', file: 'typed/index.js', message: expect.stringContaining('Error: exploded on purpose') })
  expect(d?.line).toBeGreaterThan(9)
  expect(mapPosition(sourceMap, d?.line ?? 0)).toEqual({ file: 'index.ts', line: 9 })
  session.abandon()
})
