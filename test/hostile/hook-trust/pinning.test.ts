/**
 * Attacks on what is pinned (src/sidecar/pinning/): a hook edited after `hookd lock` while the sidecar
 * serves --locked (the locked version keeps serving), a hook whose new version asks for more permissions
 * (held even without --locked), and signatures that must not make a hook trusted: one made over other
 * bytes, one by a key not trusted, one for content that changed after signing, none at all. Each
 * asserts the exact load error and that the registry still serves the version it trusted.
 */
import { generateKeyPairSync } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { Admission, type PinningOptions } from '../../../src/sidecar/pinning/admission.js'
import { lockHooks } from '../../../src/sidecar/pinning/lock-hooks.js'
import { fingerprint, signStatement } from '../../../src/sidecar/pinning/signing.js'
import { Registry } from '../../../src/sidecar/hooks/registry.js'
import { DEFAULT_LIMITS } from '../../../src/sidecar/limits.js'
import { FakeLoader, FakeRunner, type HooksRoot, exporting, hooksFolder } from '../../unit/fakes.js'

let folder: HooksRoot
const registries: Registry[] = []

beforeEach(async () => {
  folder = await hooksFolder({ guard: { index: exporting('beforeToolExecute'), json: { onError: 'refuse', permissions: { files: 'read', paths: ['src/**'] } } } })
})

afterEach(async () => {
  for (const r of registries.splice(0)) await r.close()
  await folder.dispose()
})

async function registry(pinning: PinningOptions): Promise<Registry> {
  const admission = await Admission.open(folder.root, { lockFile: join(folder.root, 'hookd.lock'), ...pinning })
  const r = new Registry(folder.root, { loader: new FakeLoader(), runner: new FakeRunner(), limits: DEFAULT_LIMITS, retryRemotes: false, admission, report: () => {} })
  registries.push(r)
  await r.loadAll()
  return r
}

const lockFile = (): string => join(folder.root, 'hookd.lock')

describe('a hook edited after locking, served --locked', () => {
  it('keeps serving the locked version, and says once what changed', async () => {
    await lockHooks(folder.root, { lockFile: lockFile() })
    const r = await registry({ locked: true })
    const locked = r.get('guard')
    expect(locked?.digest).toMatch(/^sha256:[0-9a-f]{64}$/)
    await folder.write({ guard: { index: `${exporting('beforeToolExecute')}// now it lets everything through\n`, json: { onError: 'refuse', permissions: { files: 'read', paths: ['src/**'] } } } })
    const failed = await r.loadOne('guard')
    expect(failed?.kind).toBe('load')
    expect(failed?.message).toMatch(/^hook 'guard' failed to reload: guard\/index\.js: hook 'guard' changed since .*hookd\.lock \(digest sha256:[0-9a-f]{64}, locked sha256:[0-9a-f]{64}\): index\.js changed; permissions unchanged\. Still serving version [0-9a-f]{12} .*approve it with hookd trust guard/)
    expect(r.get('guard')).toBe(locked)
    expect(r.list()[0]).toMatchObject({ name: 'guard', status: 'stale', digest: locked?.digest })
    // The same files again: not announced again.
    const events: unknown[] = []
    r.subscribe((e) => events.push(e))
    await r.recheck()
    expect(events).toEqual([])
    // Approved (hookd trust): the registry judges again when asked and serves the new version.
    await lockHooks(folder.root, { lockFile: lockFile(), only: ['guard'] })
    const admission = await Admission.open(folder.root, { lockFile: lockFile(), locked: true })
    const again = new Registry(folder.root, { loader: new FakeLoader(), runner: new FakeRunner(), limits: DEFAULT_LIMITS, admission, report: () => {} })
    registries.push(again)
    expect(await again.loadAll()).toEqual([])
    expect(again.get('guard')?.digest).not.toBe(locked?.digest)
  })

  it('does not load a hook that is not in the lock at all', async () => {
    await lockHooks(folder.root, { lockFile: lockFile() })
    await folder.write({ sneaky: { index: exporting('beforeRun') } })
    const r = await registry({ locked: true })
    expect(r.get('sneaky')).toBeUndefined()
    expect(r.list().find((h) => h.name === 'sneaky')?.lastError?.message).toMatch(/^hook 'sneaky' is not in .*hookd\.lock \(hookd serve --locked serves only locked hooks\)\. The hook is skipped until it loads; review it and approve it with hookd trust sneaky/)
    expect(r.get('guard')).toBeDefined()
  })

  it('picks an approval up from the lock file while it serves', async () => {
    await lockHooks(folder.root, { lockFile: lockFile() })
    const r = await registry({ locked: true, pollMs: 50 })
    await r.watch({ settleMs: 50 })
    const locked = r.get('guard')
    await folder.write({ guard: { index: `${exporting('beforeToolExecute')}//v2\n`, json: { onError: 'refuse', permissions: { files: 'read', paths: ['src/**'] } } } })
    await r.loadOne('guard')
    expect(r.get('guard')).toBe(locked)
    await lockHooks(folder.root, { lockFile: lockFile(), only: ['guard'] })
    for (let i = 0; i < 200 && r.get('guard') === locked; i++) await new Promise((ok) => setTimeout(ok, 25))
    expect(r.get('guard')?.source).toContain('//v2')
  })
})

describe('a version that asks for more permissions', () => {
  it('is held against its locked version even without --locked', async () => {
    await lockHooks(folder.root, { lockFile: lockFile() })
    const r = await registry({})
    const locked = r.get('guard')
    await folder.write({ guard: { index: exporting('beforeToolExecute'), json: { onError: 'refuse', permissions: { files: 'read', paths: ['src/**', '**'] } } } })
    const failed = await r.loadOne('guard')
    expect(failed?.message).toContain(`hook 'guard' is held: this version asks for more permissions than its locked version: file paths ** (hookd.lock: {"files":"read","paths":["src/**"]}; this version: {"files":"read","paths":["src/**","**"]})`)
    expect(r.get('guard')).toBe(locked)
    // Narrower is not held.
    await folder.write({ guard: { index: exporting('beforeToolExecute'), json: { onError: 'refuse', permissions: { files: 'read', paths: [] } } } })
    expect(await r.loadOne('guard')).toBeUndefined()
  })

  it('is held against the version serving now when the hook is not locked', async () => {
    const r = await registry({})
    const serving = r.get('guard')
    await folder.write({ guard: { index: exporting('beforeToolExecute'), json: { onError: 'refuse', permissions: { files: 'read', paths: ['src/**'], decide: { refuse: true } } } } })
    expect((await r.loadOne('guard'))?.message).toContain("this version asks for more permissions than its serving version: refuses calls (now: {\"files\":\"read\",\"paths\":[\"src/**\"]}; this version: {\"decide\":{\"refuse\":true},\"files\":\"read\",\"paths\":[\"src/**\"]})")
    expect(r.get('guard')).toBe(serving)
  })
})

describe('--require-signed', () => {
  const trusted = generateKeyPairSync('ed25519')
  const other = generateKeyPairSync('ed25519')
  const keys = new Map([[fingerprint(trusted.publicKey), trusted.publicKey]])

  async function sign(name: string, key = trusted.privateKey, digest?: string): Promise<void> {
    const files = await new Registry(folder.root, { loader: new FakeLoader(), runner: new FakeRunner(), limits: DEFAULT_LIMITS }).read(name)
    await writeFile(join(folder.root, name, 'hook.sig'), signStatement({ signs: 'hook', name, digest: digest ?? (files.content?.digest as string) }, key))
  }

  it('serves a hook signed by a trusted key', async () => {
    await sign('guard')
    const r = await registry({ requireSigned: true, trustedKeys: keys })
    expect(r.get('guard')).toBeDefined()
  })

  it('refuses an unsigned hook, saying so', async () => {
    const r = await registry({ requireSigned: true, trustedKeys: keys })
    expect(r.get('guard')).toBeUndefined()
    expect(r.list()[0]?.lastError?.message).toMatch(/^hook 'guard' is refused \(--require-signed\): it is unsigned \(no hook\.sig\)\. The hook is skipped/)
  })

  it('refuses a hook signed by a key it does not trust, naming the key', async () => {
    await sign('guard', other.privateKey)
    const r = await registry({ requireSigned: true, trustedKeys: keys })
    expect(r.get('guard')).toBeUndefined()
    expect(r.list()[0]?.lastError?.message).toContain(`it is signed by a key that is not trusted (${fingerprint(other.publicKey)})`)
  })

  it('refuses a signature made over other bytes', async () => {
    await sign('guard')
    const sig = JSON.parse(await readFile(join(folder.root, 'guard', 'hook.sig'), 'utf8')) as Record<string, string>
    const files = await new Registry(folder.root, { loader: new FakeLoader(), runner: new FakeRunner(), limits: DEFAULT_LIMITS }).read('guard')
    // The statement claims this hook's digest; the signature is the trusted key's, over another statement.
    const elsewhere = JSON.parse(signStatement({ signs: 'hook', name: 'guard', digest: `sha256:${'0'.repeat(64)}` }, trusted.privateKey)) as Record<string, string>
    await writeFile(join(folder.root, 'guard', 'hook.sig'), JSON.stringify({ ...sig, digest: files.content?.digest, signature: elsewhere.signature }))
    const r = await registry({ requireSigned: true, trustedKeys: keys })
    expect(r.get('guard')).toBeUndefined()
    expect(r.list()[0]?.lastError?.message).toContain(`hook.sig's signature does not verify with key ${fingerprint(trusted.publicKey)}: it was made over other bytes or edited`)
  })

  it('refuses a hook changed after signing, and keeps its signed version serving', async () => {
    await sign('guard')
    const r = await registry({ requireSigned: true, trustedKeys: keys })
    const signed = r.get('guard')
    expect(signed).toBeDefined()
    await folder.write({ guard: { index: `${exporting('beforeToolExecute')}// edited\n`, json: { onError: 'refuse', permissions: { files: 'read', paths: ['src/**'] } } } })
    const failed = await r.loadOne('guard')
    expect(failed?.message).toMatch(/hook 'guard' is refused \(--require-signed\): it changed after signing: key ed25519:[0-9a-f]{32} signed sha256:[0-9a-f]{64}, the files are now sha256:[0-9a-f]{64}/)
    expect(r.get('guard')).toBe(signed)
  })
})
