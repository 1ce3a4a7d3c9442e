/**
 * One hook's record in the registry (src/sidecar/hooks/hook-record.ts), step by step: served, a failed
 * edit that keeps the last good version, removal and its tombstone, the source maps kept for calls in
 * flight, the folders of a bundle, and when the record holds nothing worth keeping.
 */
import { describe, expect, it } from 'vitest'
import type { HookFiles } from '../../../src/sidecar/hooks/hook-folder.js'
import { HookRecord } from '../../../src/sidecar/hooks/hook-record.js'
import type { LoadedHook } from '../../../src/sidecar/hooks/kinds/hook-kind.js'
import type { SourceMap } from '../../../src/sidecar/hooks/source-map.js'
import { FakeRunner } from '../fakes.js'

const runner = new FakeRunner()

function version(v: string, loadedAtMs = 1_700_000_000_000): LoadedHook {
  return { name: 'g', version: v, filename: 'g/index.js', source: 'x', config: {}, points: new Set(['afterRun']), unknownExports: [], loadedAtMs, runner, onError: 'default' }
}

const map = (file: string): SourceMap => ({ version: 3, sources: [file], mappings: 'AAAA' })

function files(over: Partial<HookFiles>): HookFiles {
  return { name: 'g', present: true, digest: 'd', ...over }
}

describe('a hook record', () => {
  it('serves, keeps the last good version through a failed edit, and says which in its info', () => {
    const record = new HookRecord('g')
    expect([record.present, record.empty]).toEqual([false, true])
    const v1 = version('v1')
    expect(record.serve(v1, 'd1', undefined)).toMatchObject({ type: 'loaded', hook: v1, diagnostic: { kind: 'reload', message: "hook 'g' loaded version v1" } })
    const failed = record.fail('d2', 'Error: boom', 'g/index.js', 2, { skipped: 'fix it', stale: 'fix it again' }, 'refuse')
    expect(failed).toEqual({
      type: 'failed',
      name: 'g',
      served: v1,
      diagnostic: {
        hook: 'g',
        point: '',
        kind: 'load',
        message: "hook 'g' failed to reload: g/index.js:2: Error: boom. Still serving version v1 (loaded 2023-11-14T22:13:20.000Z); fix it again",
        file: 'g/index.js',
        line: 2,
        version: 'v1',
      },
    })
    expect([record.served, record.digest, record.onError, record.lastError]).toEqual([v1, 'd2', 'refuse', failed.diagnostic])
    expect(record.info()).toEqual({ name: 'g', version: 'v1', points: ['afterRun'], status: 'stale', loadedAtMs: v1.loadedAtMs, lastError: failed.diagnostic })
    const v2 = version('v2')
    expect(record.serve(v2, 'd3', undefined)).toMatchObject({ type: 'loaded', previous: v1, diagnostic: { message: "hook 'g' reloaded: now serving version v2 (was v1)" } })
    expect(record.info()).toEqual({ name: 'g', version: 'v2', points: ['afterRun'], status: 'ready', loadedAtMs: v2.loadedAtMs })
  })

  it('leaves a tombstone of the version it served when the folder goes, and forgets it when the folder is back', () => {
    const record = new HookRecord('g')
    const v1 = version('v1')
    record.serve(v1, 'd1', undefined)
    expect(record.remove('/hooks')).toMatchObject({ type: 'removed', last: v1, diagnostic: { kind: 'hook-removed', version: 'v1' } })
    expect([record.present, record.served, record.removed, record.digest, record.empty]).toEqual([false, undefined, v1, undefined, false])
    expect(record.remove('/hooks')).toBeUndefined()
    record.fail('d2', 'g/index.js is empty', 'g/index.js', undefined, undefined, 'default')
    expect([record.present, record.served, record.removed]).toEqual([true, undefined, undefined])
    expect(record.info().status).toBe('broken')
    // Removed again, it never served since it came back: nothing left worth keeping.
    expect(record.remove('/hooks')).toMatchObject({ type: 'removed', diagnostic: { kind: 'hook-removed' } })
    expect(record.empty).toBe(true)
  })

  it('keeps the source maps of the version served and of the one before it, no older', () => {
    const record = new HookRecord('g')
    record.serve(version('v1'), 'd1', map('a.ts'))
    record.serve(version('v2'), 'd2', map('b.ts'))
    expect([record.sourceMap('v1')?.sources, record.sourceMap('v2')?.sources]).toEqual([['a.ts'], ['b.ts']])
    record.serve(version('v3'), 'd3', undefined)
    expect([record.sourceMap('v1'), record.sourceMap('v2')?.sources, record.sourceMap('v3')]).toEqual([undefined, ['b.ts'], undefined])
    record.serve(version('v4'), 'd4', map('d.ts'))
    expect([record.sourceMap('v2'), record.sourceMap('v4')?.sources]).toEqual([undefined, ['d.ts']])
  })

  it('knows the folders of its last bundle, keeps them through a failed bundle, and drops them for a plain script', () => {
    const record = new HookRecord('g')
    const bundle = { entry: 'index.ts', sourceMap: '{}', inputs: ['index.ts', 'lib/rules/a.ts', 'node_modules/x/index.js', 'lib/b.ts'] }
    expect([...(record.bundledAs(files({ bundle })) ?? [])]).toEqual(['lib', 'lib/rules'])
    expect(record.bundledAs(files({ bundleError: { message: 'no', file: 'index.ts' } }))).toBeUndefined()
    expect([record.bundled, [...record.bundleFolders]]).toEqual([true, ['lib', 'lib/rules']])
    record.bundledAs(files({ source: 'exports.afterRun = 1' }))
    expect([record.bundled, [...record.bundleFolders]]).toEqual([false, []])
    // A folder whose first bundle fails is bundled (every source file may change it), with no folders yet.
    const fresh = new HookRecord('h')
    fresh.bundledAs(files({ name: 'h', bundleError: { message: 'no', file: 'index.ts' } }))
    expect([fresh.bundled, [...fresh.bundleFolders]]).toEqual([true, []])
  })
})
