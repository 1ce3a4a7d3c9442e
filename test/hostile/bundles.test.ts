/**
 * Hook folders that hookd bundles (TypeScript, ES modules, npm packages) and that try to reach outside
 * themselves through the bundler: a dependency linked to another tenant's hook, FIFOs where the bundler
 * reads (a package's package.json, a source file, a package.json beside or above the hook), huge sparse
 * files, imports that climb out of the folder by a relative path or through a package's "exports" and
 * "main", a bundle over the size cap, Node built-ins, and files that kill esbuild's process (nested
 * 450,000 brackets deep, or a chain of 300,000 operators). Each test asserts the exact refusal, that
 * nothing of the other tenant's files shows, and that the same sidecar serves an ordinary bundled hook
 * after.
 *
 * The sidecar must start at all: esbuild's own resolver once read package.json files itself, and a FIFO
 * among them (even one above the hooks folder) blocked the bundle, and so start-up, for good.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync, readdirSync } from 'node:fs'
import { mkdir, mkdtemp, rm, symlink, truncate, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { DEFAULT_BUNDLE_LIMITS } from '../../src/sidecar/hooks/bundle.js'
import { type Running, sessionOptions, startSidecar } from '../support/sidecar.js'
import { type TenantFixture, startTenants } from '../tenants/support.js'
import { CALL } from './support.js'

const SECRET = 'sk-tenant-b-0123456789'
const LINKS = 'hookd does not follow symbolic links in hook folders (a development setup may pass hookd serve --allow-symlinks)'
const SKIPPED = 'The hook is skipped until it loads'

let scratch: string
let hooks: string
let running: Running

async function files(root: string, tree: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(tree)) {
    await mkdir(dirname(join(root, path)), { recursive: true })
    await writeFile(join(root, path), text)
  }
}

function mkfifo(path: string): void {
  execFileSync('mkfifo', [path])
}

/** A TypeScript hook whose beforeToolExecute passes on what `from` (a package or file) exports. */
function usesDependency(from: string): string {
  return `import value from '${from}'\n\nexport default {\n  beforeToolExecute() {\n    return { arguments: { value: String(value) } }\n  },\n}\n`
}

const ORDINARY_TS = `interface Call { arguments: Record<string, unknown> }

export default {
  beforeToolExecute(ctx: unknown, call: Call) {
    return { arguments: { ...call.arguments, ordinary: true } }
  },
}
`

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'hookd-bundles-'))
  hooks = join(scratch, 'tenant-a')
  // Tenant B's hook, beside tenant A's hooks folder: its code holds a secret.
  await files(join(scratch, 'tenant-b', 'secret'), {
    'index.js': `module.exports = ${JSON.stringify(SECRET)}\n`,
    'package.json': '{"name": "secret", "main": "index.js"}',
  })
  await files(hooks, {
    'ordinary/index.ts': ORDINARY_TS,
    // A dependency that is a link into tenant B's hook.
    'link-dep/index.ts': usesDependency('p'),
    'link-dep/package.json': '{"dependencies": {"p": "1.0.0"}}',
    // A link that stays inside the folder is refused too: links are not followed at all.
    'link-inside/index.ts': usesDependency('./lib/value'),
    'link-inside/real/value.ts': 'export default 1\n',
    // A FIFO as a package's package.json, as a source file, and as package.json files that esbuild's own
    // resolver used to read (beside a source file, and above the hook folders).
    'fifo-pkg/index.ts': usesDependency('p'),
    'fifo-pkg/node_modules/p/index.js': 'module.exports = 1\n',
    'fifo-source/index.ts': usesDependency('./lib/value'),
    'fifo-beside/index.ts': usesDependency('./lib/value'),
    'fifo-beside/lib/value.ts': 'export default "beside"\n',
    // Huge sparse files: a source file and a package.json.
    'huge-source/index.ts': usesDependency('p'),
    'huge-source/node_modules/p/package.json': '{"name": "p", "main": "index.js"}',
    'huge-pkg/index.ts': usesDependency('p'),
    'huge-pkg/node_modules/p/index.js': 'module.exports = 1\n',
    // Imports that climb out: by a relative path, through a package's "exports" and "main", and to a
    // package that only a node_modules above the folder holds.
    'climb/index.ts': usesDependency('../../tenant-b/secret/index.js'),
    'exports-out/index.ts': usesDependency('p'),
    'exports-out/node_modules/p/package.json': '{"name": "p", "exports": "../../../../tenant-b/secret/index.js"}',
    'main-out/index.ts': usesDependency('p'),
    'main-out/node_modules/p/package.json': '{"name": "p", "main": "../../../../tenant-b/secret/index.js"}',
    'node_modules/above/index.js': `module.exports = ${JSON.stringify(SECRET)}\n`,
    'above/index.ts': usesDependency('above'),
    // A bundle over the cap of any hook's script.
    'too-big/index.ts': "import { big } from './data'\n\nexport default { beforeToolExecute() { return { arguments: { big: big.slice(0, 3) } } } }\n",
    'too-big/data.ts': `export const big = ${JSON.stringify('x'.repeat(1100 * 1024))}\n`,
    // Source-map comments that name files outside the folder: esbuild read them on its own, past the
    // plugin, and quoted their first bytes in the error (a secret), read /dev/zero until it died, or
    // blocked on a FIFO. And an import built from a template string, which esbuild globbed outside.
    'map-secret/index.ts': `${ORDINARY_TS}//# sourceMappingURL=../../tenant-b/secret/index.js\n`,
    'map-secret-abs/index.mjs': `export default { beforeToolExecute() { return { arguments: { mapped: true } } } }\n/*# sourceMappingURL=file://SCRATCH/tenant-b/secret/index.js */\n`,
    'map-zero/index.ts': `${ORDINARY_TS}//# sourceMappingURL=../../../../../../../../dev/zero\n`,
    'map-fifo/index.ts': `${ORDINARY_TS}//# sourceMappingURL=../../fifo\n`,
    'map-inline/index.ts': '/*# sourceMappingURL=../../fifo */ export default { beforeToolExecute() { return { arguments: { inline: true } } } }\n',
    'template/index.ts': 'export default { async beforeToolExecute(ctx: unknown, call: { name: string }) { await import(`../../tenant-b/${call.name}`) } }\n',
    // Node's own modules.
    'builtin/index.ts': "import { readFileSync } from 'node:fs'\n\nexport default { beforeToolExecute() { return { arguments: { passwd: readFileSync('/etc/passwd', 'utf8') } } } }\n",
  })
  await mkdir(join(hooks, 'link-dep', 'node_modules'))
  await symlink(join(scratch, 'tenant-b', 'secret'), join(hooks, 'link-dep', 'node_modules', 'p'))
  await symlink('real', join(hooks, 'link-inside', 'lib'))
  mkfifo(join(hooks, 'fifo-pkg', 'node_modules', 'p', 'package.json'))
  await mkdir(join(hooks, 'fifo-source', 'lib'))
  mkfifo(join(hooks, 'fifo-source', 'lib', 'value.ts'))
  mkfifo(join(hooks, 'fifo-beside', 'lib', 'package.json'))
  mkfifo(join(hooks, 'package.json'))
  mkfifo(join(scratch, 'package.json'))
  mkfifo(join(scratch, 'fifo'))
  const abs = join(hooks, 'map-secret-abs', 'index.mjs')
  await writeFile(abs, readFileSync(abs, 'utf8').replace('SCRATCH', scratch.slice(1)))
  await writeFile(join(hooks, 'huge-source', 'node_modules', 'p', 'index.js'), '')
  await truncate(join(hooks, 'huge-source', 'node_modules', 'p', 'index.js'), 1024 * 1024 * 1024)
  await writeFile(join(hooks, 'huge-pkg', 'node_modules', 'p', 'package.json'), '')
  await truncate(join(hooks, 'huge-pkg', 'node_modules', 'p', 'package.json'), 1024 * 1024 * 1024)
  running = await startSidecar({ hooks, workers: 1, limits: { wallMs: 20_000, cpuMs: 5000 } })
}, 120_000)

afterAll(async () => {
  await running?.stop()
  if (scratch) await rm(scratch, { recursive: true, force: true })
})

async function status(name: string): Promise<{ status: string | undefined; message: string; file: string | undefined; line: number | undefined }> {
  const listed = (await running.client.listHooks()).find((h) => h.name === name)
  return { status: listed?.status, message: listed?.lastError?.message ?? '', file: listed?.lastError?.file, line: listed?.lastError?.line }
}

async function run(hook: string): Promise<{ result: unknown; text: string }> {
  const session = await running.client.openSession(sessionOptions([hook]))
  try {
    const out = await session.call('beforeToolExecute', CALL)
    return { result: out.result, text: JSON.stringify(out) }
  } finally {
    session.abandon()
  }
}

async function expectServing(): Promise<void> {
  const out = await run('ordinary')
  expect(out.result).toEqual({ allow: true, arguments: { ...CALL.arguments, ordinary: true } })
}

describe('links', () => {
  it("a dependency linked to another tenant's hook is refused, and its code never shows", async () => {
    const s = await status('link-dep')
    expect(s).toEqual({
      status: 'broken',
      file: 'link-dep/index.ts',
      line: 1,
      message: `'p' (imported by index.ts) is reached through node_modules/p, a symbolic link; ${LINKS}. ${SKIPPED}; fix link-dep/index.ts and save it`,
    })
    expect((await run('link-dep')).text).not.toContain(SECRET)
    await expectServing()
  })

  it('a link that stays inside the folder is refused as well', async () => {
    expect(await status('link-inside')).toMatchObject({
      status: 'broken',
      message: `'./lib/value' (imported by index.ts) is reached through lib, a symbolic link; ${LINKS}. ${SKIPPED}; fix link-inside/index.ts and save it`,
    })
  })
})

describe('special and huge files', () => {
  it("a FIFO as a package's package.json or as a source file is refused as what it is", async () => {
    expect(await status('fifo-pkg')).toMatchObject({
      status: 'broken',
      file: 'fifo-pkg/index.ts',
      line: 1,
      message: `cannot read node_modules/p/package.json (for 'p', imported by index.ts): it is not a regular file (a FIFO). ${SKIPPED}; fix fifo-pkg/index.ts and save it`,
    })
    expect(await status('fifo-source')).toMatchObject({
      status: 'broken',
      message: `cannot bundle lib/value.ts: it is not a regular file (a FIFO). ${SKIPPED}; fix fifo-source/lib/value.ts and save it`,
    })
    await expectServing()
  })

  it('FIFOs named package.json beside a source file and above the hooks are never read', async () => {
    expect((await status('fifo-beside')).status).toBe('ready')
    expect((await run('fifo-beside')).result).toEqual({ allow: true, arguments: { value: 'beside' } })
  })

  it('a 1 GB sparse source file or package.json costs a stat, and is refused with its size', async () => {
    expect(await status('huge-source')).toMatchObject({
      status: 'broken',
      message: `cannot bundle node_modules/p/index.js: it is 1073741824 bytes, over the 4194304 bytes hookd reads. ${SKIPPED}; fix huge-source/node_modules/p/index.js and save it`,
    })
    expect(await status('huge-pkg')).toMatchObject({
      status: 'broken',
      message: `cannot read node_modules/p/package.json (for 'p', imported by index.ts): it is 1073741824 bytes, over the 262144 bytes hookd reads. ${SKIPPED}; fix huge-pkg/index.ts and save it`,
    })
    await expectServing()
  })
})

describe('imports that leave the folder', () => {
  it('a relative import that climbs out is refused before anything outside is looked at', async () => {
    expect(await status('climb')).toMatchObject({
      status: 'broken',
      file: 'climb/index.ts',
      line: 1,
      message: `'../../tenant-b/secret/index.js' (imported by index.ts) leads outside the hook's folder; a hook may import only its own files. ${SKIPPED}; fix climb/index.ts and save it`,
    })
    expect((await run('climb')).text).not.toContain(SECRET)
  })

  it('a package whose "exports" or "main" points outside itself is refused', async () => {
    expect(await status('exports-out')).toMatchObject({
      status: 'broken',
      message: `'p' (imported by index.ts): node_modules/p/package.json "exports" leads outside the package; hookd bundles only a package's own files. ${SKIPPED}; fix exports-out/index.ts and save it`,
    })
    expect(await status('main-out')).toMatchObject({
      status: 'broken',
      message: `'p' (imported by index.ts): node_modules/p/package.json "main" leads outside the package; hookd bundles only a package's own files. ${SKIPPED}; fix main-out/index.ts and save it`,
    })
    expect((await run('main-out')).text).not.toContain(SECRET)
  })

  it('a package that only a node_modules above the hook folder holds is not found', async () => {
    expect((await status('above')).message).toBe(
      `cannot find the package 'above' (imported by index.ts) in the hook's node_modules; run npm install in the hook's folder (hookd never uses packages outside it). ${SKIPPED}; fix above/index.ts and save it`,
    )
  })
})

describe('what esbuild would read on its own', () => {
  it("a source-map comment naming another tenant's file, /dev/zero or a FIFO is never read: the hook loads and runs", async () => {
    for (const hook of ['map-secret', 'map-zero', 'map-fifo']) {
      expect(await status(hook)).toMatchObject({ status: 'ready', message: '' })
      const out = await run(hook)
      expect(out.result).toEqual({ allow: true, arguments: { ...CALL.arguments, ordinary: true } })
      expect(out.text).not.toContain(SECRET)
    }
    // A block comment is blanked only up to its end: the code after it on the line still runs.
    expect((await run('map-inline')).result).toEqual({ allow: true, arguments: { inline: true } })
    expect(await status('map-secret-abs')).toMatchObject({ status: 'ready', message: '' })
    expect((await run('map-secret-abs')).text).not.toContain(SECRET)
    await expectServing()
  })

  it('an import built from a template string is refused without a look outside the folder', async () => {
    const s = await status('template')
    expect(s.status).toBe('broken')
    expect(s.message).toMatch(/^Could not resolve import\("\.\.\/\.\.\/tenant-b\/\*\*\/\*"\)\. The hook is skipped until it loads/)
    expect(s.message).not.toContain('secret')
    await expectServing()
  })
})

describe('what the bundle may hold', () => {
  it('a bundle over the cap of any hook script is refused, naming its largest parts', async () => {
    const s = await status('too-big')
    expect(s.status).toBe('broken')
    expect(s.message).toMatch(/^the bundled hook is \d+ bytes, over the 1048576 bytes hookd loads; the largest parts are data\.ts \(1100 KiB\), index\.ts/)
  })

  it('Node built-ins are refused at bundle time, saying why and what to use instead', async () => {
    expect(await status('builtin')).toMatchObject({
      status: 'broken',
      file: 'builtin/index.ts',
      line: 1,
      message: `'node:fs' is a Node built-in module, and hooks run in a sandbox without Node: read and write files in the workdir with ctx.file.read/write/append/exists/list. ${SKIPPED}; fix builtin/index.ts and save it`,
    })
  })
})

describe('hot reload', () => {
  it('a FIFO that appears in a dependency later keeps the last good version serving', async () => {
    const dir = join(hooks, 'late')
    await files(dir, { 'index.ts': usesDependency('./lib/value'), 'lib/value.ts': 'export default "first"\n' })
    await vi.waitFor(async () => expect((await status('late')).status).toBe('ready'), { timeout: 30_000, interval: 100 })
    await rm(join(dir, 'lib', 'value.ts'))
    mkfifo(join(dir, 'lib', 'value.ts'))
    await vi.waitFor(async () => expect((await status('late')).status).toBe('stale'), { timeout: 30_000, interval: 100 })
    expect((await status('late')).message).toContain('cannot bundle lib/value.ts: it is not a regular file (a FIFO)')
    expect((await run('late')).result).toEqual({ allow: true, arguments: { value: 'first' } })
    await expectServing()
  })
})

/** The inotify watches this process holds (the sidecar runs in it): one per watched folder. */
function inotifyWatches(): number {
  let count = 0
  for (const fd of readdirSync('/proc/self/fdinfo')) {
    try {
      count += readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8').split('\n').filter((l) => l.startsWith('inotify wd:')).length
    } catch {
      // The descriptor closed while we looked.
    }
  }
  return count
}

describe('watching', () => {
  it('folders that hold no file of the bundle cost no watch, however many a hook folder holds', async () => {
    const dir = join(hooks, 'many')
    await files(dir, { 'index.ts': usesDependency('./lib/value'), 'lib/value.ts': 'export default "many"\n' })
    await vi.waitFor(async () => expect((await run('many')).result).toEqual({ allow: true, arguments: { value: 'many' } }), { timeout: 30_000, interval: 100 })
    const before = inotifyWatches()
    for (let i = 0; i < 200; i++) {
      await mkdir(join(dir, 'junk', String(i)), { recursive: true })
      await mkdir(join(dir, 'lib', `deep${i}`, 'deeper'), { recursive: true })
    }
    // Let the watcher see (and leave alone) what was made, then check it still follows the bundle's files.
    await writeFile(join(dir, 'lib', 'value.ts'), 'export default "more"\n')
    await vi.waitFor(async () => expect((await run('many')).result).toEqual({ allow: true, arguments: { value: 'more' } }), { timeout: 30_000, interval: 100 })
    expect(inotifyWatches() - before).toBeLessThan(20)
  })
})

/**
 * One tenant's source that kills esbuild (issue 27 item 7): a 900 KB index.ts of nested brackets once
 * overflowed the stack of esbuild's one service process, which esbuild's API never restarts, so no
 * tenant could load a TypeScript hook after. The same for a file the nesting check lets through but
 * whose chain of operators is as deep. Two tenants of one sidecar: Mallory's saves must not cost Alice a
 * load, at the same time or after.
 */
describe("a source that kills esbuild does not stop another tenant's loads", () => {
  let t: TenantFixture

  beforeAll(async () => {
    t = await startTenants([
      { id: 'alice', hooks: { 'ordinary/index.ts': ORDINARY_TS } },
      { id: 'mallory', hooks: { 'ordinary/index.ts': ORDINARY_TS } },
    ])
  }, 60_000)

  afterAll(async () => {
    await t?.stop()
  })

  async function listed(tenant: string, name: string): Promise<{ status: string | undefined; message: string; file: string | undefined; line: number | undefined }> {
    const hook = (await (await t.client(tenant)).listHooks()).find((h) => h.name === name)
    return { status: hook?.status, message: hook?.lastError?.message ?? '', file: hook?.lastError?.file, line: hook?.lastError?.line }
  }

  async function answer(tenant: string, name: string): Promise<unknown> {
    const session = await (await t.client(tenant)).openSession(sessionOptions([name]))
    try {
      return (await session.call('beforeToolExecute', CALL)).result
    } finally {
      session.abandon()
    }
  }

  const ORDINARY_ANSWER = { allow: true, arguments: { ...CALL.arguments, ordinary: true } }

  /** Alice saves a new TypeScript hook; it loads and serves. */
  async function aliceSaves(name: string): Promise<void> {
    await files(join(t.dir, 'hooks', 'alice', name), { 'index.ts': ORDINARY_TS })
    await vi.waitFor(async () => expect((await listed('alice', name)).status).not.toBe(undefined), { timeout: 30_000, interval: 50 })
    await vi.waitFor(async () => expect(await listed('alice', name)).toEqual({ status: 'ready', message: '', file: undefined, line: undefined }), { timeout: 30_000, interval: 50 })
    expect(await answer('alice', name)).toEqual(ORDINARY_ANSWER)
  }

  it('a 900 KB index.ts of nested brackets is refused before esbuild sees it, naming the line and the limit', async () => {
    const depth = 450 * 1024
    const deep = `export default ${'['.repeat(depth)}${']'.repeat(depth)}\n`
    expect(deep.length).toBeGreaterThan(900 * 1024)
    // Mallory saves it as Alice saves a hook of her own.
    await Promise.all([files(join(t.dir, 'hooks', 'mallory', 'deep'), { 'index.ts': deep }), aliceSaves('same-time')])
    await vi.waitFor(async () => expect((await listed('mallory', 'deep')).status).toBe('broken'), { timeout: 30_000, interval: 50 })
    expect(await listed('mallory', 'deep')).toEqual({
      status: 'broken',
      file: 'deep/index.ts',
      line: 1,
      message: `index.ts: brackets and arrow functions nest deeper than ${DEFAULT_BUNDLE_LIMITS.maxDepth} levels at line 1; hookd refuses such a file before bundling it: flatten the code, build deep data at run time, or read it from a .json file with ctx.file. ${SKIPPED}; fix deep/index.ts and save it`,
    })
    await aliceSaves('after-deep')
    expect(await answer('mallory', 'ordinary')).toEqual(ORDINARY_ANSWER)
  })

  it('a chain of operators deep enough to crash esbuild fails only its own load, saying so', async () => {
    // Mallory saves it as Alice saves a hook of her own: had esbuild crashed under Alice's build, it is built again.
    await Promise.all([files(join(t.dir, 'hooks', 'mallory', 'bang'), { 'index.ts': `export default ${'!'.repeat(300_000)}1\n` }), aliceSaves('same-time-bang')])
    await vi.waitFor(async () => expect((await listed('mallory', 'bang')).status).toBe('broken'), { timeout: 30_000, interval: 50 })
    const bang = await listed('mallory', 'bang')
    expect(bang).toMatchObject({ status: 'broken', file: 'bang/index.ts' })
    expect(bang.message).toMatch(/^esbuild crashed \(fatal error: stack overflow\) bundling this hook alone: /)
    await aliceSaves('after-bang')
    expect(await answer('alice', 'ordinary')).toEqual(ORDINARY_ANSWER)
  })
})
