/**
 * What is pinned, in memory: the content digest (order, paths, no mtimes), the lock file's text
 * (canonical, stable) and its refusals (line and field named), and asksForMore's table.
 */
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { asksForMore } from '../../../src/sidecar/pinning/asks-for-more.js'
import { canonicalJson } from '../../../src/sidecar/pinning/canonical-json.js'
import { changedFiles, hookContent } from '../../../src/sidecar/pinning/content-digest.js'
import { lockEntry, lockPathFor, lockText, parseLock, readLock, writeLock } from '../../../src/sidecar/pinning/lock-file.js'

const A = 'a'.repeat(64)
const B = 'b'.repeat(64)

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hookd-lock-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('the content digest', () => {
  it('is the same whatever order the files were read in, and changes with any path or byte', () => {
    const one = hookContent([{ path: 'index.js', sha256: A }, { path: 'hook.json', sha256: B }])
    const two = hookContent([{ path: 'hook.json', sha256: B }, { path: 'index.js', sha256: A }])
    expect(one).toEqual(two)
    expect(one.files.map((f) => f.path)).toEqual(['hook.json', 'index.js'])
    expect(one.digest).toMatch(/^sha256:[0-9a-f]{64}$/)
    expect(hookContent([{ path: 'index.js', sha256: B }, { path: 'hook.json', sha256: A }]).digest).not.toBe(one.digest)
    expect(hookContent([{ path: 'lib.js', sha256: A }, { path: 'hook.json', sha256: B }]).digest).not.toBe(one.digest)
  })

  it('says which files changed, came or went', () => {
    expect(changedFiles([{ path: 'index.js', sha256: A }, { path: 'old.js', sha256: A }], [{ path: 'index.js', sha256: B }, { path: 'new.js', sha256: A }])).toEqual(['index.js', 'new.js (new)', 'old.js (gone)'])
  })
})

describe('hookd.lock', () => {
  it('lives beside the hooks folder', () => {
    expect(lockPathFor('/p/hooks')).toBe('/p/hookd.lock')
    expect(lockPathFor('/p/hooks/')).toBe('/p/hookd.lock')
    expect(lockPathFor('/p/hooks', '/elsewhere/x.lock')).toBe('/elsewhere/x.lock')
  })

  it('is canonical: keys sorted, two-space indent, a final newline, the same bytes however it was built', () => {
    const entry = lockEntry(hookContent([{ path: 'index.js', sha256: A }]), canonicalJson({ z: 1, a: [2] }))
    const text = lockText({ hooks: { zeta: entry, alpha: entry }, hookdLock: 1 })
    expect(text).toBe(lockText({ hookdLock: 1, hooks: { alpha: entry, zeta: entry } }))
    expect(text.startsWith('{\n  "hookdLock": 1,\n  "hooks": {\n    "alpha": {\n      "digest": "sha256:')).toBe(true)
    expect(text).toContain('"permissions": "{\\"a\\":[2],\\"z\\":1}"')
    expect(text.endsWith('}\n')).toBe(true)
    expect(parseLock(text, 'hookd.lock').hooks.alpha).toEqual(entry)
  })

  it('refuses a wrong field, naming the file, the line and the field', () => {
    const entry = lockEntry(hookContent([{ path: 'index.js', sha256: A }]), undefined)
    const text = lockText({ hookdLock: 1, hooks: { guard: { ...entry, digest: 'md5:1' } } })
    expect(() => parseLock(text, 'hookd.lock')).toThrow(/^hookd\.lock:5: hooks\.guard\.digest: expected "sha256:" and 64 hex digits; write it again with hookd lock \(or fix that field\)$/)
    expect(() => parseLock('{"hookdLock": 2, "hooks": {}}', 'hookd.lock')).toThrow(/^hookd\.lock:1: hookdLock: expected 1: this hookd reads hookd\.lock version 1/)
    expect(() => parseLock('{"hookdLock": 1, "hooks": {}, "extra": 1}', 'hookd.lock')).toThrow(/extra/)
    expect(() => parseLock('{"hookdLock": 1, "hooks": {"g": {"digest": "sha256:' + A + '", "files": {"../x": "' + A + '"}}}}', 'hookd.lock')).toThrow(/^hookd\.lock:1: hooks\.g\.files\.\.\.\/x: .*; write it again with hookd lock/)
    expect(() => parseLock('{"hookdLock": 1,', 'hookd.lock')).toThrow(/hookd\.lock/)
  })

  it('is written through a rename, and never through a link', async () => {
    const path = join(dir, 'hookd.lock')
    await writeLock(path, { hookdLock: 1, hooks: {} })
    expect((await readLock(path))?.lock).toEqual({ hookdLock: 1, hooks: {} })
    const target = join(dir, 'target')
    await writeFile(target, 'mine')
    const linked = join(dir, 'linked.lock')
    await symlink(target, linked)
    await expect(writeLock(linked, { hookdLock: 1, hooks: {} })).rejects.toThrow(/linked\.lock is a symbolic link; hookd does not write through links/)
    await expect(readLock(linked)).rejects.toThrow(/is a symbolic link; hookd reads only a regular file as a lock file/)
    expect(await readLock(join(dir, 'none.lock'))).toBeUndefined()
  })
})

describe('asksForMore', () => {
  // hook.json "permissions" as written, in canonical JSON: what hookd.lock records.
  const p = (v: unknown): string => canonicalJson(v)
  it.each([
    ['the same', p({ files: 'read', paths: ['src/**'] }), p({ files: 'read', paths: ['src/**'] }), []],
    ['the same, written in another order', p({ env: ['B', 'A'] }), p({ env: ['A', 'B'] }), []],
    ['fewer paths', p({ files: 'read', paths: ['src/**', 'docs/**'] }), p({ files: 'read', paths: ['src/**'] }), []],
    ['fewer origins', p({ origins: ['https://a.example', 'https://b.example'] }), p({ origins: ['https://a.example'] }), []],
    ['a new path', p({ files: 'read', paths: ['src/**'] }), p({ files: 'read', paths: ['src/**', '**'] }), ['file paths **']],
    ['writes where it read', p({ files: 'read' }), p({ files: 'read-write' }), ['reads and writes files (was: reads files)']],
    ['a new decision', p({ decide: { refuse: true } }), p({ decide: { refuse: true, approve: true } }), ['approves calls the agent would ask its person about']],
    ['a decision dropped', p({ decide: { refuse: true, rewriteResults: true } }), p({ decide: { refuse: true } }), []],
    ['permissions where there were none: narrower than anything', undefined, p({ files: 'read' }), []],
    ['none where there were some: whatever the session allows', p({ files: 'read' }), undefined, ['declares no permissions, so it may do whatever the session allows']],
    ['none both times', undefined, undefined, []],
    ['a locked block that does not read as one (edited by hand)', p({ files: ['src/'] }), p({ files: 'read' }), ['its locked permissions do not read as a permissions block']],
    ['text that is not JSON', '{', p({ files: 'read' }), ['its locked permissions do not read as a permissions block']],
  ])('%s', (_what, locked, next, more) => {
    expect(asksForMore(locked, next)).toEqual(more)
  })
})
