/**
 * The registry (src/sidecar/hooks/registry.ts) over temporary hook folders, with a fake loader: what it
 * serves, the versions, load diagnostics, stale versions, removals, events and load concurrency.
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { versionOf } from '../../../src/sidecar/hooks/hook-files.js'
import { SOURCE_MAX_BYTES as HOOK_SOURCE_MAX_BYTES } from '../../../src/sidecar/hooks/hook-folder.js'
import type { AuthorRunner } from '../../../src/sidecar/hooks/author-runner.js'
import { Registry, type RegistryEvent, type RegistryOptions } from '../../../src/sidecar/hooks/registry.js'
import { DEFAULT_LIMITS } from '../../../src/sidecar/limits.js'
import { FakeLoader, FakeRunner, type HookFolder, type HooksRoot, exporting, hooksFolder, until } from '../fakes.js'

let folder: HooksRoot
let loader: FakeLoader
let runner: FakeRunner
const registries: Registry[] = []

beforeEach(async () => {
  folder = await hooksFolder()
  loader = new FakeLoader()
  runner = new FakeRunner()
})

afterEach(async () => {
  for (const r of registries.splice(0)) await r.close()
  await folder.dispose()
})

function registry(options: Partial<RegistryOptions> = {}): Registry {
  const r = new Registry(folder.root, { loader, runner, limits: DEFAULT_LIMITS, retryRemotes: false, ...options })
  registries.push(r)
  return r
}

/** A registry over `hooks`, every folder loaded, with the load diagnostics. */
async function loaded(hooks: Record<string, HookFolder>, options: Partial<RegistryOptions> = {}): Promise<{ r: Registry; diagnostics: Awaited<ReturnType<Registry['loadAll']>> }> {
  await folder.write(hooks)
  const r = registry(options)
  return { r, diagnostics: await r.loadAll() }
}

function events(r: Registry): RegistryEvent[] {
  const seen: RegistryEvent[] = []
  r.subscribe((e) => seen.push(e))
  return seen
}

describe('loading', () => {
  it('serves every hook folder that loads, with its points, config, runner and source', async () => {
    const guard = exporting('beforeToolExecute', 'afterRun')
    const { r, diagnostics } = await loaded({
      guard: { index: guard, json: { config: { level: 2 }, description: 'careful' } },
      audit: { index: exporting('afterToolExecute', 'helper') },
    })
    expect(diagnostics).toEqual([])
    const hook = r.get('guard')
    expect(hook).toMatchObject({ name: 'guard', filename: 'guard/index.js', source: guard, config: { level: 2 }, unknownExports: [] })
    expect([...(hook?.points ?? [])]).toEqual(['beforeToolExecute', 'afterRun'])
    // The given runner, through the registry's AuthorRunner (source maps and hints for failures).
    expect((hook?.runner as AuthorRunner).inner).toBe(runner)
    expect(r.get('audit')?.unknownExports).toEqual(['helper'])
    expect(r.get('audit')?.config).toEqual({})
    expect(r.list().map((h) => [h.name, h.status, h.points, h.lastError])).toEqual([
      ['audit', 'ready', ['afterToolExecute'], undefined],
      ['guard', 'ready', ['beforeToolExecute', 'afterRun'], undefined],
    ])
    expect(loader.loads.map((l) => [l.name, l.filename, l.source])).toEqual(
      expect.arrayContaining([['guard', 'guard/index.js', guard], ['audit', 'audit/index.js', exporting('afterToolExecute', 'helper')]]),
    )
  })

  it('lists only folders with a hook name: no files, no dot folders', async () => {
    await folder.write({ good: { index: exporting('afterRun') }, '.hidden': { index: exporting('afterRun') } })
    await writeFile(join(folder.root, 'stray.js'), 'exports.afterRun = 1')
    const r = registry()
    expect(await r.names()).toEqual(['good'])
    await r.loadAll()
    expect(r.list().map((h) => h.name)).toEqual(['good'])
  })

  it('fails with NOT_FOUND naming the folder when the root cannot be read', async () => {
    const r = new Registry(`${folder.root}/missing`, { loader, runner, limits: DEFAULT_LIMITS })
    registries.push(r)
    await expect(r.loadAll()).rejects.toMatchObject({
      code: 'not-found',
      message: expect.stringMatching(new RegExp(`^cannot read the hooks folder ${folder.root}/missing: .*; pass --hooks DIR with a folder of hooks$`)),
    })
  })
})

describe('versions', () => {
  it('names a version by a content hash of index.js and hook.json', async () => {
    const source = exporting('afterRun')
    const { r } = await loaded({ plain: { index: source }, configured: { index: source, json: { config: { a: 1 } } }, twin: { index: source } })
    const plain = r.get('plain')?.version
    expect(plain).toMatch(/^[0-9a-f]{12}$/)
    expect(plain).toBe(versionOf(source, undefined))
    expect(r.get('twin')?.version).toBe(plain)
    expect(r.get('configured')?.version).not.toBe(plain)
  })

  it('changes the version when index.js or hook.json changes, and does not load the same files twice', async () => {
    const { r } = await loaded({ g: { index: exporting('afterRun') } })
    const v1 = r.get('g')?.version
    expect(await r.loadOne('g')).toBeUndefined()
    expect(loader.loads).toHaveLength(1)

    await folder.write({ g: { index: exporting('afterRun', 'beforeRun') } })
    await r.loadOne('g')
    const v2 = r.get('g')?.version
    expect(v2).not.toBe(v1)

    await folder.write({ g: { index: exporting('afterRun', 'beforeRun'), json: { config: { on: true } } } })
    await r.loadOne('g')
    expect(r.get('g')?.version).not.toBe(v2)
    expect(r.get('g')?.config).toEqual({ on: true })
    expect(loader.loads).toHaveLength(3)
  })

  it('drops a load that ends after a newer snapshot of the folder was applied', async () => {
    const { r } = await loaded({ g: { index: exporting('afterRun') } })
    const seen = events(r)
    const release = loader.hold()
    await folder.write({ g: { index: exporting('beforeRun') } })
    const older = r.loadOne('g')
    await until(() => loader.loads.length === 2)
    await folder.write({ g: { index: exporting('beforeRun', 'afterRun') } })
    const newer = r.loadOne('g')
    await until(() => loader.loads.length === 3)
    release()
    await Promise.all([older, newer])
    expect([...(r.get('g')?.points ?? [])]).toEqual(['beforeRun', 'afterRun'])
    // Only the newer version was announced.
    expect(seen.map((e) => [e.type, e.type === 'loaded' ? [...e.hook.points] : undefined])).toEqual([['loaded', ['beforeRun', 'afterRun']]])
  })
  it('drops a load that ends after its folder was removed and came back, however new the record', async () => {
    const { r } = await loaded({})
    const seen = events(r)
    const release = loader.hold()
    await folder.write({ g: { index: exporting('beforeRun') } })
    const first = r.loadOne('g')
    await until(() => loader.loads.length === 1)
    await folder.remove('g')
    expect(await r.loadOne('g')).toBeUndefined()
    await folder.write({ g: { index: exporting('beforeRun', 'afterRun') } })
    const again = r.loadOne('g')
    await until(() => loader.loads.length === 2)
    release()
    await Promise.all([first, again])
    expect([...(r.get('g')?.points ?? [])]).toEqual(['beforeRun', 'afterRun'])
    // The folder never served before its removal: nothing to announce but the version that came back.
    expect(seen.map((e) => [e.type, e.type === 'loaded' ? [...e.hook.points] : undefined])).toEqual([['loaded', ['beforeRun', 'afterRun']]])
  })
})

describe('load diagnostics', () => {
  it('reports hook.json that is not JSON with its file and line, and skips the hook', async () => {
    const { r, diagnostics } = await loaded({ g: { index: exporting('afterRun'), json: '{\n  "config": {\n    "a": 1,\n  }\n}' } })
    expect(diagnostics).toEqual([
      {
        hook: 'g',
        point: '',
        kind: 'load',
        message: expect.stringMatching(/^hook\.json is not valid JSON \(.+\)\. The hook is skipped until it loads; fix g\/hook\.json and save it$/),
        file: 'g/hook.json',
        line: 4,
      },
    ])
    expect(r.get('g')).toBeUndefined()
    expect(r.has('g')).toBe(true)
    expect(r.list()).toEqual([{ name: 'g', version: '', points: [], status: 'broken', loadedAtMs: 0, lastError: diagnostics[0] }])
    expect(loader.loads).toEqual([])
  })

  it('reports a key hook.json may not hold, at its line', async () => {
    const { diagnostics } = await loaded({ g: { index: exporting('afterRun'), json: '{\n  "config": {},\n  "confg": 1\n}' } })
    expect(diagnostics[0]).toMatchObject({ file: 'g/hook.json', line: 3 })
    expect(diagnostics[0]?.message).toMatch(/^hook\.json is invalid: .*"confg".* \(it may hold "config", "description", "remote", "onError", "tools", "permissions" and "mode"\)\. The hook is skipped/)
  })

  it('reports an empty index.js without loading it', async () => {
    const { diagnostics } = await loaded({ g: { index: '  \n' } })
    expect(diagnostics).toEqual([
      {
        hook: 'g',
        point: '',
        kind: 'load',
        message:
          'g/index.js is empty; it must export the points it handles, e.g. module.exports = { beforeToolExecute(ctx, call) {} }. The hook is skipped until it loads; fix g/index.js and save it',
        file: 'g/index.js',
      },
    ])
    expect(loader.loads).toEqual([])
  })

  it('reports an index.js over 1 MiB without loading it, and loads one of exactly 1 MiB', async () => {
    const head = exporting('afterRun')
    const over = head + ' '.repeat(HOOK_SOURCE_MAX_BYTES - head.length + 1)
    const { r, diagnostics } = await loaded({ big: { index: over }, fits: { index: over.slice(0, -1) } })
    expect(diagnostics.map((d) => [d.hook, d.file, d.message])).toEqual([
      [
        'big',
        'big/index.js',
        'big/index.js is 1048577 bytes, over the 1048576 bytes hookd reads; bundle or minify it, or move data it reads to ctx.file. The hook is skipped until it loads; fix big/index.js and save it',
      ],
    ])
    expect(loader.loads.map((l) => l.name)).toEqual(['fits'])
    expect(r.get('fits')).toBeDefined()
  })

  it('reports a folder with neither index.js nor a remote hook.json', async () => {
    const { diagnostics } = await loaded({ g: { json: { config: {} } } })
    expect(diagnostics[0]?.message).toBe(
      `hook 'g' has no index.js; create g/index.js (or index.ts, index.mjs) exporting its points, or make it a remote hook by naming its server in g/hook.json ("remote": "unix:PATH" or "HOST:PORT"). The hook is skipped until it loads; fix g/index.js and save it`,
    )
  })

  it('reports what the loader said, with its line', async () => {
    loader.script('g', { ok: false, message: 'SyntaxError: Unexpected token )', line: 7 })
    const { diagnostics } = await loaded({ g: { index: `${exporting('afterRun')}${'\n'.repeat(6)}x = ((1)\n` } })
    expect(diagnostics).toEqual([
      {
        hook: 'g',
        point: '',
        kind: 'load',
        message: 'SyntaxError: Unexpected token ). The hook is skipped until it loads; fix g/index.js and save it',
        file: 'g/index.js',
        line: 7,
      },
    ])
  })

  it('refuses a hook that exports no point, suggesting the point it probably meant, at the export\'s line', async () => {
    const source = '// a guard\n\nexports.beforeToolExecut = function () {}\nexports.helper = 1\n'
    const { r, diagnostics } = await loaded({ g: { index: source } })
    expect(diagnostics).toEqual([
      {
        hook: 'g',
        point: '',
        kind: 'load',
        message:
          "the hook exports no hook point; it exports 'beforeToolExecut' (did you mean 'beforeToolExecute'?), 'helper'; export at least one, e.g. module.exports = { beforeToolExecute(ctx, call) {} }. The hook is skipped until it loads; fix g/index.js and save it",
        file: 'g/index.js',
        line: 3,
      },
    ])
    expect(r.get('g')).toBeUndefined()
  })

  it('refuses a hook that exports nothing at all', async () => {
    loader.script('g', { ok: true, exports: [] })
    const { diagnostics } = await loaded({ g: { index: 'module.exports = {}' } })
    expect(diagnostics[0]?.message).toMatch(/^the hook exports no hook point; export at least one, /)
    expect(diagnostics[0]?.line).toBeUndefined()
  })

  it('returns the same diagnostic again for unchanged broken files, without loading them again', async () => {
    loader.script('g', { ok: false, message: 'ReferenceError: x is not defined', line: 1 })
    const { r, diagnostics } = await loaded({ g: { index: exporting('afterRun') } })
    expect(await r.loadOne('g')).toBe(diagnostics[0])
    expect(loader.loads).toHaveLength(1)
  })
})

describe('stale versions', () => {
  it('keeps serving the older version when an edit fails to load, and says so', async () => {
    const { r } = await loaded({ g: { index: exporting('afterRun') } })
    const good = r.get('g')
    if (!good) throw new Error('g did not load')
    const seen = events(r)

    await folder.write({ g: { index: '' } })
    const d = await r.loadOne('g')
    const expected = {
      hook: 'g',
      point: '',
      kind: 'load',
      message: `hook 'g' failed to reload: g/index.js: g/index.js is empty; it must export the points it handles, e.g. module.exports = { beforeToolExecute(ctx, call) {} }. Still serving version ${good.version} (loaded ${new Date(good.loadedAtMs).toISOString()}); fix g/index.js and save it again`,
      file: 'g/index.js',
      version: good.version,
    }
    expect(d).toEqual(expected)
    expect(r.get('g')).toBe(good)
    expect(r.list()[0]).toMatchObject({ name: 'g', status: 'stale', version: good.version, lastError: expected })
    expect(seen).toEqual([{ type: 'failed', name: 'g', served: good, diagnostic: expected }])
  })

  it('names the line of a failed reload, and serves the fixed version when the edit is fixed', async () => {
    const { r } = await loaded({ g: { index: exporting('afterRun') } })
    const v1 = r.get('g')?.version
    const seen = events(r)
    loader.script('g', (hook) => (hook.source.includes('beforeRun') ? { ok: true, exports: ['beforeRun'] } : { ok: false, message: 'Error: boom', line: 2 }))

    await folder.write({ g: { index: `${exporting('afterRun')}throw new Error('boom')\n` } })
    expect((await r.loadOne('g'))?.message).toMatch(new RegExp(`^hook 'g' failed to reload: g/index.js:2: Error: boom\\. Still serving version ${v1} `))

    await folder.write({ g: { index: exporting('beforeRun') } })
    expect(await r.loadOne('g')).toBeUndefined()
    const v2 = r.get('g')?.version
    expect(r.list()[0]).toMatchObject({ status: 'ready', version: v2, points: ['beforeRun'] })
    expect(r.list()[0]?.lastError).toBeUndefined()
    expect(seen.map((e) => [e.type, e.diagnostic.kind, e.diagnostic.message])).toEqual([
      ['failed', 'load', expect.any(String)],
      ['loaded', 'reload', `hook 'g' reloaded: now serving version ${v2} (was ${v1})`],
    ])
  })

  it('says a hook loads again when its files return to the version it serves', async () => {
    const source = exporting('afterRun')
    const { r } = await loaded({ g: { index: source } })
    const v1 = r.get('g')?.version
    const seen = events(r)
    await folder.write({ g: { index: '' } })
    await r.loadOne('g')
    await folder.write({ g: { index: source } })
    await r.loadOne('g')
    expect(seen.at(-1)?.diagnostic).toEqual({ hook: 'g', point: '', kind: 'reload', message: `hook 'g' loads again: serving version ${v1}`, file: 'g/index.js', version: v1 })
  })
})

describe('removal', () => {
  it('stops serving a removed hook, keeps its last version as a tombstone and announces it', async () => {
    const { r } = await loaded({ g: { index: exporting('afterRun') }, other: { index: exporting('afterRun') } })
    const last = r.get('g')
    const seen = events(r)
    await folder.remove('g')
    expect(await r.loadOne('g')).toBeUndefined()
    expect(r.has('g')).toBe(false)
    expect(r.get('g')).toBeUndefined()
    expect(r.removed('g')).toBe(last)
    expect(r.list().map((h) => h.name)).toEqual(['other'])
    expect(seen).toEqual([
      {
        type: 'removed',
        name: 'g',
        last,
        diagnostic: {
          hook: 'g',
          point: '',
          kind: 'hook-removed',
          message: `hook 'g' was removed (its folder ${folder.root}/g is gone); sessions that declared it skip it from now on, and new sessions cannot declare it. Restore the folder to serve it again`,
          version: last?.version,
        },
      },
    ])
  })

  it('forgets the tombstone when the folder comes back', async () => {
    const { r } = await loaded({ g: { index: exporting('afterRun') } })
    await folder.remove('g')
    await r.loadOne('g')
    await folder.write({ g: { index: exporting('afterRun') } })
    await r.loadOne('g')
    expect(r.removed('g')).toBeUndefined()
    expect(r.get('g')).toBeDefined()
  })

  it('leaves no tombstone for a hook that never loaded', async () => {
    const { r } = await loaded({ g: { index: '' } })
    const seen = events(r)
    await folder.remove('g')
    await r.loadOne('g')
    expect(r.removed('g')).toBeUndefined()
    expect(r.has('g')).toBe(false)
    expect(seen.map((e) => e.type === 'removed' && e.last)).toEqual([undefined])
    expect(seen[0]?.diagnostic.version).toBeUndefined()
  })

  it('does nothing for a folder that never existed', async () => {
    const { r } = await loaded({})
    const seen = events(r)
    expect(await r.loadOne('ghost')).toBeUndefined()
    expect(seen).toEqual([])
  })
})

describe('events', () => {
  it('announces a first load to subscribers, until they unsubscribe', async () => {
    await folder.write({ g: { index: exporting('afterRun') } })
    const r = registry()
    const seen: RegistryEvent[] = []
    const unsubscribe = r.subscribe((e) => seen.push(e))
    await r.loadAll()
    const version = r.get('g')?.version
    expect(seen).toEqual([
      { type: 'loaded', name: 'g', hook: r.get('g'), diagnostic: { hook: 'g', point: '', kind: 'reload', message: `hook 'g' loaded version ${version}`, file: 'g/index.js', version } },
    ])
    unsubscribe()
    await folder.write({ g: { index: exporting('beforeRun') } })
    await r.loadOne('g')
    expect(seen).toHaveLength(1)
  })

  it('tells every subscriber even when one throws', async () => {
    await folder.write({ g: { index: exporting('afterRun') } })
    const r = registry()
    const heard: string[] = []
    r.subscribe(() => {
      heard.push('first')
      throw new Error('a broken stream')
    })
    r.subscribe((e) => heard.push(`second:${e.type}`))
    await r.loadAll()
    expect(heard).toEqual(['first', 'second:loaded'])
  })
})

describe('remote hooks', () => {
  it('refuses a remote address that allowRemote does not allow, with its reason and the line of "remote"', async () => {
    const asked: unknown[] = []
    const allowRemote: RegistryOptions['allowRemote'] = (address) => {
      asked.push(address)
      return `remote hooks are not allowed at ${address.target}`
    }
    const { r, diagnostics } = await loaded({ r: { json: '{\n  "description": "py",\n  "remote": "127.0.0.1:1"\n}' } }, { allowRemote })
    expect(asked).toEqual([{ text: '127.0.0.1:1', target: '127.0.0.1:1' }])
    // The message is the refusal itself: a connection attempt would have failed with another one.
    expect(diagnostics).toEqual([
      { hook: 'r', point: '', kind: 'load', message: 'remote hooks are not allowed at 127.0.0.1:1. The hook is skipped until it loads', file: 'r/hook.json', line: 3 },
    ])
    expect(r.get('r')).toBeUndefined()
  })

  it('shows allowRemote a relative unix path made absolute against the hook folder', async () => {
    const asked: string[] = []
    await loaded({ r: { json: { remote: 'unix:../sockets/./hook.sock' } } }, { allowRemote: (a) => (asked.push(a.target), 'no') })
    expect(asked).toEqual([`unix:${folder.root}/sockets/hook.sock`])
  })

  it('refuses a folder that is both a remote hook and a sandboxed one', async () => {
    const { diagnostics } = await loaded({ r: { index: exporting('afterRun'), json: { remote: '127.0.0.1:1' } } }, { allowRemote: () => 'never asked' })
    expect(diagnostics[0]).toMatchObject({
      file: 'r/hook.json',
      message: expect.stringMatching(/^hook\.json declares a remote hook, and r\/index\.js exists too; .*: remove one\. The hook is skipped/),
    })
  })
})

describe('hook kinds', () => {
  it('has the kind that claims a folder load it: a remote hook is never loaded in the sandbox, a sandboxed one is', async () => {
    const { diagnostics } = await loaded({ s: { index: exporting('afterRun') }, r: { json: { remote: '127.0.0.1:1' } } }, { allowRemote: () => 'not here' })
    expect(loader.loads.map((l) => l.name)).toEqual(['s'])
    expect(diagnostics.map((d) => [d.hook, d.file, d.message])).toEqual([['r', 'r/hook.json', 'not here. The hook is skipped until it loads']])
  })

  it('keeps hook.json\'s onError with a failure of any kind, and with the last failure when hook.json is unreadable', async () => {
    const { r } = await loaded({ r: { json: { remote: '127.0.0.1:1', onError: 'refuse' } }, s: { index: '', json: { onError: 'skip' } } }, { allowRemote: () => 'no' })
    expect([r.onErrorOf('r'), r.onErrorOf('s')]).toEqual(['refuse', 'skip'])
    await folder.write({ s: { index: '', json: '{ not json' } })
    await r.loadOne('s')
    expect(r.onErrorOf('s')).toBe('skip')
    expect(r.onErrorOf('missing')).toBe('default')
  })
})

describe('load concurrency', () => {
  const five = Object.fromEntries(['a', 'b', 'c', 'd', 'e'].map((n) => [n, { index: exporting('afterRun') }]))

  it.each([
    [undefined, 2],
    [1, 1],
    [3, 3],
  ])('runs at most loadConcurrency=%s loads at once (%s)', async (loadConcurrency, limit) => {
    await folder.write(five)
    const r = registry(loadConcurrency === undefined ? {} : { loadConcurrency })
    const release = loader.hold()
    const all = r.loadAll()
    await until(() => loader.active === limit)
    // Give the other loads every chance to start, were the registry not holding them back.
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(loader.active).toBe(limit)
    release()
    expect(await all).toEqual([])
    expect(loader.loads).toHaveLength(5)
    expect(loader.maxActive).toBe(limit)
    expect(r.list().map((h) => h.status)).toEqual(['ready', 'ready', 'ready', 'ready', 'ready'])
  })
})
