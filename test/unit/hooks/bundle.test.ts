/**
 * Bundling hook folders (src/sidecar/hooks/bundle.ts): what gets bundled, what the script exports, where
 * a line of the bundle came from, and every way out of the folder refused with a message that says what
 * to do instead.
 */
import { execFileSync } from 'node:child_process'
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { BUNDLE_MAX_BYTES, bundleHook, bundlePlan, mapPosition } from '../../../src/sidecar/hooks/bundle.js'
import { sharedEsbuildPid } from '../../../src/sidecar/hooks/esbuild-supervisor.js'
import { SOURCE_MAX_BYTES as HOOK_SOURCE_MAX_BYTES } from '../../../src/sidecar/hooks/hook-folder.js'
import { esbuildChildren, slowHook, untilBusy, untilGone } from '../../support/esbuild.js'
import { writeTree } from '../../support/sidecar.js'

const temps: string[] = []
const LINKS = 'hookd does not follow symbolic links in hook folders (a development setup may pass hookd serve --allow-symlinks)'
afterAll(() => Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true }))))

async function tree(files: Record<string, string>): Promise<string> {
  const dir = await writeTree(files)
  temps.push(dir)
  return dir
}

/** Evaluates a bundle as the isolate's wrapper does: a function of (module, exports). */
function exportsOf(source: string): Record<string, unknown> {
  const module = { exports: {} as unknown }
  new Function('module', 'exports', source)(module, module.exports)
  return module.exports as Record<string, unknown>
}

type Handler = (ctx: unknown, ...args: unknown[]) => unknown

const TINY_PACKAGE = {
  'node_modules/tiny/package.json': '{"name": "tiny", "version": "1.0.0", "main": "index.js"}',
  'node_modules/tiny/index.js': 'module.exports = function shout(s) { return s.toUpperCase() }\n',
}

const TS_HOOK = `import shout from 'tiny'
import { twice } from './lib/twice'

interface Call { name: string; arguments: Record<string, unknown> }

export default {
  beforeToolExecute(ctx: unknown, call: Call) {
    if (call.name === 'boom') throw new Error('boom')
    return { reason: twice(shout(call.name)) }
  },
}
`

describe('bundleHook', () => {
  it('bundles a TypeScript hook with its own files and an npm package into one CommonJS script', async () => {
    const dir = await tree({
      'index.ts': TS_HOOK,
      'lib/twice.ts': 'export function twice(s: string): string {\n  return s + s\n}\n',
      'package.json': '{"dependencies": {"tiny": "1.0.0"}}',
      ...TINY_PACKAGE,
    })
    const out = await bundleHook(dir)
    if (!out.ok) throw new Error(out.message)
    expect(out.entry).toBe('index.ts')
    expect(out.inputs.sort()).toEqual(['index.ts', 'lib/twice.ts', 'node_modules/tiny/index.js', 'node_modules/tiny/package.json', 'package.json'])
    const hook = exportsOf(out.source)
    expect(Object.keys(hook)).toEqual(['beforeToolExecute'])
    expect((hook.beforeToolExecute as Handler)({}, { name: 'ls', arguments: {} })).toEqual({ reason: 'LSLS' })

    // The line that throws maps back to the author's file and line.
    const line = out.source.split('\n').findIndex((l) => l.includes('throw new Error("boom")')) + 1
    expect(line).toBeGreaterThan(9)
    expect(mapPosition(out.sourceMap, line)).toEqual({ file: 'index.ts', line: 8 })
    const twiceLine = out.source.split('\n').findIndex((l) => l.includes('return s + s')) + 1
    expect(mapPosition(out.sourceMap, twiceLine)).toEqual({ file: 'lib/twice.ts', line: 2 })
  })

  it('makes export default and named exports the exports, and keeps the default object itself when it is alone', async () => {
    const both = await bundleHook(
      await tree({ 'index.mjs': 'export default { beforeRun() { return 1 } }\nexport function afterRun() { return 2 }\n' }),
    )
    if (!both.ok) throw new Error(both.message)
    expect(Object.keys(exportsOf(both.source)).sort()).toEqual(['afterRun', 'beforeRun'])

    const alone = await bundleHook(
      await tree({ 'index.ts': 'const hook = { n: 3, beforeRun(this: { n: number }) { return this.n } }\nexport default hook\n' }),
    )
    if (!alone.ok) throw new Error(alone.message)
    const hook = exportsOf(alone.source)
    expect((hook.beforeRun as Handler).call(hook, {})).toBe(3)
  })

  it('bundles an index.js that requires its own files, and one with package.json dependencies', async () => {
    const dir = await tree({ 'index.js': "const { greet } = require('./greet.js')\nmodule.exports = { beforeRun: () => greet() }\n", 'greet.js': "exports.greet = () => 'hi'\n" })
    const out = await bundleHook(dir)
    if (!out.ok) throw new Error(out.message)
    expect((exportsOf(out.source).beforeRun as Handler)({})).toBe('hi')
  })

  it('reads no tsconfig.json above the folder (its "paths" could point outside)', async () => {
    const outer = await tree({
      'tsconfig.json': '{"compilerOptions": {"baseUrl": ".", "paths": {"secret": ["./secret.ts"]}}}',
      'secret.ts': 'export const s = "SECRET"\n',
      'hook/index.ts': "import { s } from 'secret'\nexport default { beforeRun() { return s } }\n",
    })
    const out = await bundleHook(join(outer, 'hook'))
    expect(out).toMatchObject({ ok: false, file: 'index.ts', line: 1, message: expect.stringContaining("cannot find the package 'secret'") })
  })

  it('reports a syntax error at its file and line in the author source', async () => {
    const dir = await tree({ 'index.ts': 'export default {\n  beforeRun() {\n    return (\n  },\n}\n' })
    expect(await bundleHook(dir)).toMatchObject({ ok: false, file: 'index.ts', line: 4, message: expect.stringContaining('Unexpected') })
  })

  it('caps the bundle at 1 MiB, the cap of any index.js, and names the heaviest inputs', async () => {
    expect(BUNDLE_MAX_BYTES).toBe(HOOK_SOURCE_MAX_BYTES)
    const dir = await tree({
      'index.ts': "import { big } from './data'\nexport default { beforeRun() { return big.length } }\n",
      'data.ts': `export const big = ${JSON.stringify('x'.repeat(5000))}\n`,
    })
    const out = await bundleHook(dir, { maxBytes: 4000 })
    expect(out.ok).toBe(false)
    if (out.ok) return
    expect(out.message).toMatch(/^the bundled hook is \d+ bytes, over the 4000 bytes hookd loads; the largest parts are data\.ts \(5 KiB\), index\.ts/)
  })

  it('bounds the number and size of the files it reads', async () => {
    const many = await tree({ 'index.ts': "import './a'\nimport './b'\nexport default { beforeRun() {} }\n", 'a.ts': 'export {}\n', 'b.ts': 'export {}\n' })
    expect(await bundleHook(many, { limits: { maxFiles: 2 } })).toMatchObject({ ok: false, message: expect.stringContaining('more than 2 files') })
    const big = await tree({ 'index.ts': "import { x } from './x'\nexport default { beforeRun() { return x } }\n", 'x.ts': `export const x = '${'y'.repeat(2000)}'\n` })
    expect(await bundleHook(big, { limits: { maxFileBytes: 1000 } })).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^cannot bundle x\.ts: it is \d+ bytes, over the 1000 bytes hookd reads/),
    })
  })

  it('refuses a file nested deeper than the limit before esbuild parses it, wherever it is, naming its line', async () => {
    const deep = (n: number): string => `${'['.repeat(n)}${']'.repeat(n)}`
    const said = (file: string, line: number): string =>
      `${file}: brackets and arrow functions nest deeper than 256 levels at line ${line}; hookd refuses such a file before bundling it: flatten the code, build deep data at run time, or read it from a .json file with ctx.file`
    const dir = await tree({
      'index.ts': "import { a } from './lib/a'\nimport b from 'p'\nimport c from './data.json'\nexport default { beforeRun() { return [a, b, c] } }\n",
      'lib/a.ts': `export const a = 1\n\nexport const x = ${deep(300)}\n`,
      'node_modules/p/index.js': `module.exports = 2\n`,
      'data.json': `{"ok": true}\n`,
    })
    expect(await bundleHook(dir)).toEqual({ ok: false, file: 'lib/a.ts', line: 3, message: said('lib/a.ts', 3) })
    await writeFile(join(dir, 'lib', 'a.ts'), `export const a = ${deep(256)}\n`)
    await writeFile(join(dir, 'node_modules', 'p', 'index.js'), `module.exports = 2\n${'a => '.repeat(300)}1\n`)
    expect(await bundleHook(dir)).toEqual({ ok: false, file: 'node_modules/p/index.js', line: 2, message: said('node_modules/p/index.js', 2) })
    await writeFile(join(dir, 'node_modules', 'p', 'index.js'), `module.exports = 2\n`)
    await writeFile(join(dir, 'data.json'), deep(1000))
    expect(await bundleHook(dir)).toEqual({ ok: false, file: 'data.json', line: 1, message: said('data.json', 1) })
    // 256 levels are bundled.
    await writeFile(join(dir, 'data.json'), '[1]')
    expect(await bundleHook(dir)).toMatchObject({ ok: true })
  })

  it('refuses a file that is not a regular file', async () => {
    const dir = await tree({ 'index.ts': "import { x } from './pipe.js'\nexport default { beforeRun() { return x } }\n" })
    execFileSync('mkfifo', [join(dir, 'pipe.js')])
    expect(await bundleHook(dir)).toMatchObject({ ok: false, message: 'cannot bundle pipe.js: it is not a regular file (a FIFO)' })
  })
})

describe('bundleHook outlives its esbuild process', () => {
  const ORDINARY = { 'index.ts': 'const n: number = 1\nexport default { beforeRun() { return n } }\n' }
  const KILLED = "esbuild's process was killed (SIGKILL) while it bundled this hook; hookd starts a fresh esbuild for the next load: save the hook again"

  /** The shared esbuild process, started by an ordinary bundle, and checked to be a child of this process. */
  async function sharedProcess(): Promise<number> {
    expect((await bundleHook(await tree(ORDINARY))).ok).toBe(true)
    const pid = sharedEsbuildPid()
    expect(esbuildChildren()).toContain(pid)
    return pid as number
  }

  it('a build whose esbuild process is killed fails naming the kill, and the next build gets a fresh process', async () => {
    const pid = await sharedProcess()
    const pending = bundleHook(await tree(slowHook()))
    await untilBusy(pid)
    process.kill(pid, 'SIGKILL')
    expect(await pending).toEqual({ ok: false, file: 'index.ts', message: KILLED })
    const next = await bundleHook(await tree(ORDINARY))
    expect(next.ok).toBe(true)
    expect(sharedEsbuildPid()).not.toBe(pid)
    expect(esbuildChildren()).toContain(sharedEsbuildPid())
  })

  it('builds that shared the killed process are built again, each in a process of its own, and succeed', async () => {
    const pid = await sharedProcess()
    const pending = Promise.all([bundleHook(await tree(slowHook())), bundleHook(await tree(slowHook()))])
    await untilBusy(pid)
    process.kill(pid, 'SIGKILL')
    const [first, second] = await pending
    for (const out of [first, second]) {
      if (!out?.ok) throw new Error(`not built: ${out?.message}`)
      // What the second attempt read, once each: the first attempt's reads are not counted.
      expect(out.inputs.sort()).toEqual(['index.ts', 'slow-a.ts', 'slow-b.ts', 'slow-c.ts'])
    }
  })

  it('a build past its deadline ends its process, so esbuild stops; the build beside it is built again', async () => {
    const pid = await sharedProcess()
    const [late, beside] = await Promise.all([bundleHook(await tree(slowHook()), { timeoutMs: 300 }), bundleHook(await tree(slowHook()))])
    expect(late).toEqual({ ok: false, file: 'index.ts', message: 'bundling took longer than 300 ms and was stopped; import less' })
    expect(beside.ok).toBe(true)
    await untilGone(pid)
  })

  it('a file that crashes esbuild fails its own build, naming the crash; saved again, it is built in a process of its own', async () => {
    const bang = await tree({ 'index.ts': `export default ${'!'.repeat(300_000)}1\n` })
    const crashed = {
      ok: false,
      file: 'index.ts',
      message:
        "esbuild crashed (fatal error: stack overflow) bundling this hook alone: one of its files is more than esbuild's parser can take (a chain of hundreds of thousands of operators, calls or statements, say); split it up, or keep data in a .json file read with ctx.file",
    }
    const pid = await sharedProcess()
    expect(await bundleHook(bang)).toEqual(crashed)
    await untilGone(pid)
    // The second time, the shared process and the builds in it are left alone.
    const fresh = await sharedProcess()
    const [again, beside] = await Promise.all([bundleHook(bang), bundleHook(await tree(slowHook()))])
    expect(again).toEqual(crashed)
    expect(beside.ok).toBe(true)
    expect(sharedEsbuildPid()).toBe(fresh)
  })
})

describe('bundleHook keeps every import inside the hook folder', () => {
  const refusal = async (files: Record<string, string>, setup?: (dir: string) => Promise<void>) => {
    const outer = await tree({ 'other/x.js': 'module.exports = 1\n', 'node_modules/evil/index.js': "module.exports = 'evil'\n", ...files })
    await setup?.(outer)
    const out = await bundleHook(join(outer, 'hook'))
    if (out.ok) throw new Error('bundled, but should have been refused')
    return out
  }

  it('refuses a relative import that leaves the folder', async () => {
    expect(await refusal({ 'hook/index.js': "const x = require('../other/x.js')\nmodule.exports = { beforeRun: () => x }\n" })).toEqual({
      ok: false,
      file: 'index.js',
      line: 1,
      message: "'../other/x.js' (imported by index.js) leads outside the hook's folder; a hook may import only its own files",
    })
  })

  it('refuses an absolute path', async () => {
    expect(await refusal({ 'hook/index.ts': "import x from '/etc/hostname'\nexport default { beforeRun: () => x }\n" })).toMatchObject({
      file: 'index.ts',
      line: 1,
      message: "'/etc/hostname' is an absolute path; a hook imports only files inside its own folder, by a relative path such as './lib.js'",
    })
  })

  it('refuses an entry file that is a link out of the folder', async () => {
    const out = await refusal({}, async (outer) => {
      await mkdir(join(outer, 'hook'))
      await symlink(join(outer, 'other', 'x.js'), join(outer, 'hook', 'index.js'))
    })
    expect(out.message).toBe(`'./index.js' is reached through index.js, a symbolic link; ${LINKS}`)
  })

  it('refuses a symbolic link, wherever it leads', async () => {
    const out = await refusal({ 'hook/index.ts': "import x from './link.js'\nexport default { beforeRun: () => x }\n" }, (outer) =>
      symlink(join(outer, 'other', 'x.js'), join(outer, 'hook', 'link.js')),
    )
    expect(out.message).toBe(`'./link.js' (imported by index.ts) is reached through link.js, a symbolic link; ${LINKS}`)
    // The same words when the link leads to nothing: a refusal tells nothing of what exists outside.
    const dangling = await refusal({ 'hook/index.ts': "import x from './link.js'\nexport default { beforeRun: () => x }\n" }, (outer) =>
      symlink(join(outer, 'other', 'missing.js'), join(outer, 'hook', 'link.js')),
    )
    expect(dangling.message).toBe(out.message)
  })

  it("refuses a package found in a node_modules above the folder, not in the hook's own", async () => {
    expect(await refusal({ 'hook/index.ts': "import evil from 'evil'\nexport default { beforeRun: () => evil }\n" })).toMatchObject({
      file: 'index.ts',
      line: 1,
      message:
        "cannot find the package 'evil' (imported by index.ts) in the hook's node_modules; run npm install in the hook's folder (hookd never uses packages outside it)",
    })
  })

  it('refuses Node built-ins, saying why and what to use instead, wherever they are imported', async () => {
    const fs = await refusal({ 'hook/index.ts': "import { readFileSync } from 'fs'\nexport default { beforeRun: () => readFileSync('x') }\n" })
    expect(fs.message).toBe("'fs' is a Node built-in module, and hooks run in a sandbox without Node: read and write files in the workdir with ctx.file.read/write/append/exists/list")
    const path = await refusal({ 'hook/index.js': "const { join } = require('node:path')\nmodule.exports = { beforeRun: () => join('a') }\n" })
    expect(path.message).toMatch(/^'node:path' is a Node built-in module, and hooks run in a sandbox without Node: work on paths as strings/)
    const spawn = await refusal({
      'hook/index.ts': "import { run } from 'runner'\nexport default { beforeRun: () => run() }\n",
      'hook/node_modules/runner/index.js': "const cp = require('child_process')\nexports.run = () => cp.execSync('id')\n",
    })
    expect(spawn).toMatchObject({ file: 'node_modules/runner/index.js', line: 1, message: expect.stringContaining("'child_process' is a Node built-in module") })
    expect(spawn.message).toContain('hooks cannot start programs')
  })

  it('allows a built-in name when the folder has its own pure-JavaScript package of that name', async () => {
    const dir = await tree({
      'index.ts': "import { EventEmitter } from 'events'\nexport default { beforeRun: () => typeof EventEmitter }\n",
      'node_modules/events/package.json': '{"name": "events", "main": "events.js"}',
      'node_modules/events/events.js': 'exports.EventEmitter = function EventEmitter() {}\n',
    })
    const out = await bundleHook(dir)
    if (!out.ok) throw new Error(out.message)
    expect((exportsOf(out.source).beforeRun as Handler)({})).toBe('function')
  })

  it('refuses native addons', async () => {
    const out = await refusal({
      'hook/index.ts': "import addon from './addon.node'\nexport default { beforeRun: () => addon }\n",
      'hook/addon.node': 'not really a binary',
    })
    expect(out.message).toBe("'./addon.node' (imported by index.ts) is a native Node addon (addon.node); the sandbox runs JavaScript only: use a pure-JavaScript package")
  })

  it('says which package is missing from node_modules', async () => {
    const dir = await tree({ 'index.ts': "import get from 'lodash/get'\nexport default { beforeRun: () => get }\n" })
    expect(await bundleHook(dir)).toMatchObject({
      ok: false,
      file: 'index.ts',
      line: 1,
      message: "cannot find the package 'lodash' (imported by index.ts) in the hook's node_modules; run npm install in the hook's folder (hookd never uses packages outside it)",
    })
  })
})

describe('bundleHook resolves imports itself', () => {
  const run = async (files: Record<string, string>, options: Parameters<typeof bundleHook>[1] = {}) => {
    const out = await bundleHook(await tree(files), options)
    if (!out.ok) throw new Error(out.message)
    return (exportsOf(out.source).beforeRun as Handler)({})
  }

  it("follows a package's exports: conditions in order, patterns, and the require condition for require()", async () => {
    const pkg = {
      'node_modules/p/package.json': JSON.stringify({
        name: 'p',
        exports: { '.': { node: './node.js', import: './esm.mjs', require: './cjs.js', default: './esm.mjs' }, './feature/*': './features/*.js' },
      }),
      'node_modules/p/esm.mjs': "export default 'esm'\n",
      'node_modules/p/cjs.js': "module.exports = 'cjs'\n",
      'node_modules/p/node.js': "module.exports = require('fs')\n",
      'node_modules/p/features/x.js': "module.exports = 'feature x'\n",
    }
    expect(await run({ ...pkg, 'index.ts': "import p from 'p'\nimport x from 'p/feature/x'\nexport default { beforeRun: () => [p, x] }\n" })).toEqual(['esm', 'feature x'])
    expect(await run({ ...pkg, 'index.js': "const p = require('p')\nmodule.exports = { beforeRun: () => p }\n" })).toBe('cjs')
  })

  it('says when a package exports nothing hookd can use, or not the subpath asked for', async () => {
    const nodeOnly = await tree({
      'index.ts': "import p from 'p'\nexport default { beforeRun: () => p }\n",
      'node_modules/p/package.json': JSON.stringify({ exports: { node: './node.js' } }),
      'node_modules/p/node.js': 'module.exports = 1\n',
    })
    expect(await bundleHook(nodeOnly)).toMatchObject({
      ok: false,
      message: "'p' (imported by index.ts): the package 'p' offers '.' only for node, none of which hookd bundles for (it runs a plain JavaScript engine: use a package that runs in browsers or anywhere)",
    })
    const hidden = await tree({
      'index.ts': "import x from 'p/internal'\nexport default { beforeRun: () => x }\n",
      'node_modules/p/package.json': JSON.stringify({ exports: { '.': './index.js', './internal': null } }),
      'node_modules/p/index.js': 'module.exports = 1\n',
      'node_modules/p/internal.js': 'module.exports = 2\n',
    })
    expect(await bundleHook(hidden)).toMatchObject({ ok: false, message: "'p/internal' (imported by index.ts): the package 'p' does not export './internal'" })
  })

  it("reads './x.js' as './x.ts', and a folder as its index file", async () => {
    expect(
      await run({
        'index.ts': "import { a } from './lib/a.js'\nimport b from './lib'\nexport default { beforeRun: () => a + b }\n",
        'lib/a.ts': "export const a = 'a'\n",
        'lib/index.ts': "export default 'b'\n",
      }),
    ).toBe('ab')
  })

  it('follows links only when the operator opted in (followSymlinks)', async () => {
    const outer = await tree({ 'shared/value.ts': "export default 'shared'\n", 'hook/index.ts': "import v from './lib/value'\nexport default { beforeRun: () => v }\n" })
    await symlink(join(outer, 'shared'), join(outer, 'hook', 'lib'))
    expect(await bundleHook(join(outer, 'hook'))).toMatchObject({ ok: false, message: expect.stringContaining('is reached through lib, a symbolic link') })
    const followed = await bundleHook(join(outer, 'hook'), { followSymlinks: true })
    if (!followed.ok) throw new Error(followed.message)
    expect((exportsOf(followed.source).beforeRun as Handler)({})).toBe('shared')
  })
})

describe('bundlePlan', () => {
  it('leaves a plain CommonJS index.js alone: the fast path', () => {
    expect(bundlePlan({ names: ['index.js', 'hook.json'], indexJs: "module.exports = { beforeRun() { const importance = 1; return { export: importance } } }\n" })).toEqual({ kind: 'plain' })
    expect(bundlePlan({ names: ['index.js'], indexJs: 'exports.beforeRun = function () {}\nexports .afterRun = () => {}\nimportance = 1\n' })).toEqual({ kind: 'plain' })
  })

  it('bundles TypeScript, ES modules, literal requires and folders with dependencies, saying why', () => {
    expect(bundlePlan({ names: ['index.ts'] })).toEqual({ kind: 'bundle', entry: 'index.ts', why: 'it is TypeScript' })
    expect(bundlePlan({ names: ['index.mjs'] })).toEqual({ kind: 'bundle', entry: 'index.mjs', why: 'it is an ES module' })
    expect(bundlePlan({ names: ['index.js'], indexJs: 'export default {}\n' })).toMatchObject({ kind: 'bundle', why: 'it uses import or export' })
    expect(bundlePlan({ names: ['index.js'], indexJs: "import x from 'y'\nmodule.exports = x\n" })).toMatchObject({ kind: 'bundle', why: 'it uses import or export' })
    for (const text of ['export function beforeRun() {}\n', 'export const beforeRun = () => {}\n', 'const beforeRun = () => {}\nexport { beforeRun }\n', "import './setup.js'\n"]) {
      expect(bundlePlan({ names: ['index.js'], indexJs: text })).toMatchObject({ kind: 'bundle', why: 'it uses import or export' })
    }
    expect(bundlePlan({ names: ['index.js'], indexJs: "const p = require('path')\n" })).toMatchObject({ kind: 'bundle', why: 'it requires other files or packages' })
    expect(bundlePlan({ names: ['index.js', 'package.json'], indexJs: 'module.exports = {}', packageJson: '{"dependencies": {"a": "1"}}' })).toMatchObject({
      kind: 'bundle',
      why: 'package.json declares dependencies',
    })
    expect(bundlePlan({ names: ['index.js', 'package.json'], indexJs: 'module.exports = {}', packageJson: '{"type": "module"}' })).toMatchObject({ kind: 'bundle' })
    expect(bundlePlan({ names: ['index.js', 'package.json'], indexJs: 'module.exports = {}', packageJson: '{"name": "x"}' })).toEqual({ kind: 'plain' })
  })

  it('refuses two entry files, and a package.json that is not an object of JSON', () => {
    expect(bundlePlan({ names: ['index.js', 'index.ts'] })).toEqual({
      kind: 'error',
      file: 'index.js',
      message: 'the hook folder has index.js and index.ts; keep one entry file (hookd bundles index.ts itself: no compiled index.js is needed)',
    })
    expect(bundlePlan({ names: ['index.ts', 'package.json'], packageJson: '{"dependencies": ' })).toMatchObject({
      kind: 'error',
      file: 'package.json',
      message: expect.stringMatching(/^package\.json is not valid JSON .*; fix it, or remove package\.json/),
    })
    expect(bundlePlan({ names: ['hook.json'] })).toEqual({ kind: 'none' })
  })
})

describe('mapPosition', () => {
  it('maps by line and column, and answers undefined for places without a source', () => {
    // Line 1: column 0 -> a.ts line 1; column 10 -> b.ts line 5. Line 2: nothing. Line 3: one-field segment.
    const map = JSON.stringify({ version: 3, sources: ['a.ts', 'b.ts'], mappings: 'AAAA,UCIA;;A' })
    expect(mapPosition(map, 1)).toEqual({ file: 'a.ts', line: 1 })
    expect(mapPosition(map, 1, 12)).toEqual({ file: 'b.ts', line: 5 })
    expect(mapPosition(map, 2)).toBeUndefined()
    expect(mapPosition(map, 3)).toBeUndefined()
    expect(mapPosition(map, 99)).toBeUndefined()
    expect(mapPosition('not a map', 1)).toBeUndefined()
  })
})
