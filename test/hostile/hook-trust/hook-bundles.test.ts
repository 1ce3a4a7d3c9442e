/**
 * `hookd serve --hooks-from URL` against a local server (src/sidecar/bundles/): a good update swaps in
 * whole, and nothing unverified is ever served: a bad signature, a bundle whose digests match but whose
 * signature is another key's, a truncated download, a path climbing out of its folder, a huge bundle,
 * a server that is down (and a restart while it is down serves the last good bundle from disk). Each
 * refusal keeps the revision serving, asserted by an ordinary call after it.
 */
import { generateKeyPairSync } from 'node:crypto'
import { type Server, createServer } from 'node:http'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { makeBundle } from '../../../src/sidecar/bundles/bundle-format.js'
import { canonicalJson } from '../../../src/sidecar/pinning/canonical-json.js'
import { hookContent, sha256Hex } from '../../../src/sidecar/pinning/content-digest.js'
import { type LockFile, lockEntry } from '../../../src/sidecar/pinning/lock-file.js'
import { fingerprint, readTrustedKeys } from '../../../src/sidecar/pinning/signing.js'
import type { BundleSource, PollOutcome } from '../../../src/sidecar/bundles/bundle-source.js'
import { type Running, sessionOptions, startSidecar } from '../../support/sidecar.js'
import { runInProcess, serveInProcess } from '../../support/processes.js'
import { freePort, getJson, scrape } from '../../observability/support.js'

const trusted = generateKeyPairSync('ed25519')
const other = generateKeyPairSync('ed25519')
const keys = new Map([[fingerprint(trusted.publicKey), trusted.publicKey]])

/** A guard that refuses every call with `reason`. */
const guard = (reason: string): string => `module.exports = { beforeToolExecute() { return { allow: false, reason: ${JSON.stringify(reason)} } } }\n`

/** A bundle of hook files (path → text) made the way hookd bundle makes one. */
function bundleOf(revision: string, hooks: Record<string, string>, key = trusted.privateKey): string {
  const files = new Map(Object.entries(hooks).map(([p, t]) => [p, Buffer.from(t)]))
  const lock: LockFile = { hookdLock: 1, hooks: {} }
  const byHook = new Map<string, Array<{ path: string; sha256: string }>>()
  for (const [path, data] of files) {
    const [hook, ...rest] = path.split('/')
    byHook.set(hook as string, [...(byHook.get(hook as string) ?? []), { path: rest.join('/'), sha256: sha256Hex(data) }])
  }
  for (const [hook, list] of byHook) lock.hooks[hook] = lockEntry(hookContent(list), undefined)
  return makeBundle(revision, lock, files, key)
}

/** What the local server answers; `body` may be cut short with `truncate`. */
const served: { body: string; status: number; truncate?: number; etag?: string; requests: number } = { body: '', status: 200, requests: 0 }
let server: Server
let url: string
let state: string
let running: Running | undefined

async function refusal(r: Running): Promise<string> {
  const session = await r.client.openSession(sessionOptions(['guard']))
  try {
    const out = await session.call('beforeToolExecute', { id: 'c1', name: 'shell', arguments: { command: 'ls' } })
    return String((out.result as { reason?: unknown }).reason)
  } finally {
    session.abandon()
  }
}

/** A failed poll's message ('' for any other outcome). */
function messageOf(out: PollOutcome): string {
  return out.kind === 'failed' ? out.message : ''
}

/** The sidecar's bundle source: the tests poll it when they choose (its own poll is an hour away). */
function bundleSourceOf(r: Running): BundleSource {
  const source = r.sidecar.bundles
  if (!source) throw new Error('the sidecar has no bundle source')
  return source
}

beforeAll(async () => {
  server = createServer((req, res) => {
    served.requests += 1
    if (served.etag && req.headers['if-none-match'] === served.etag) {
      res.writeHead(304).end()
      return
    }
    const body = Buffer.from(served.body)
    res.writeHead(served.status, { 'content-length': body.length, ...(served.etag ? { etag: served.etag } : {}) })
    if (served.truncate !== undefined) {
      res.write(body.subarray(0, served.truncate))
      res.socket?.destroy()
      return
    }
    res.end(body)
  })
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  const address = server.address() as { port: number }
  url = `http://127.0.0.1:${address.port}/bundle.json`
  state = await mkdtemp(join(tmpdir(), 'hookd-bundles-'))
})

afterAll(async () => {
  await running?.stop()
  server.closeAllConnections()
  await new Promise<void>((ok) => server.close(() => ok()))
  await rm(state, { recursive: true, force: true })
})

describe('hookd serve --hooks-from', () => {
  const lines: string[] = []
  let source: BundleSource

  it('serves a good bundle, by revision, with its digest in every decision record', async () => {
    served.body = bundleOf('r1', { 'guard/index.js': guard('r1 says no') })
    const audit = join(state, 'audit.jsonl')
    running = await startSidecar({ hooksFrom: { url, stateDir: join(state, 'bundles'), trustedKeys: keys, pollMs: 3_600_000 }, report: (l) => lines.push(l), audit: { to: audit } })
    source = bundleSourceOf(running)
    expect(running.sidecar.registry.revision).toBe('r1')
    expect(await refusal(running)).toBe('r1 says no')
    const line = JSON.parse((await readFile(audit, 'utf8')).trim().split('\n').at(-1) as string) as { revision?: string; hooks: Array<{ hook: string; digest?: string }> }
    expect(line).toMatchObject({ revision: 'r1', hooks: [{ hook: 'guard', digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) }] })
    expect(lines.at(-1)).toMatch(/^serving revision r1 of the hooks bundle from http:\/\/127\.0\.0\.1:\d+\/bundle\.json \(signed by ed25519:[0-9a-f]{32}, 1 hooks\)$/)
    expect(running.sidecar.registry.list()[0]?.digest).toMatch(/^sha256:[0-9a-f]{64}$/)
  })

  it('swaps a good update in whole', async () => {
    served.body = bundleOf('r2', { 'guard/index.js': guard('r2 says no'), 'guard/hook.json': '{"onError": "refuse"}' })
    expect(await source.poll()).toEqual({ kind: 'updated', revision: 'r2' })
    expect(await refusal(running as Running)).toBe('r2 says no')
  })

  it('refuses a bundle whose signature was made over other bytes', async () => {
    const good = JSON.parse(bundleOf('r3', { 'guard/index.js': guard('r3 must not serve') })) as { payload: string; signature: Record<string, unknown> }
    const elsewhere = JSON.parse(bundleOf('r3', { 'guard/index.js': guard('something else') })) as { signature: Record<string, unknown> }
    // The payload of one, the signature (statement and signature) of another: the digest it states is not the payload's.
    served.body = canonicalJson({ hookdBundle: 1, payload: good.payload, signature: elsewhere.signature })
    const out = await source.poll()
    expect(out.kind).toBe('failed')
    expect(messageOf(out)).toMatch(/^the bundle is refused: it changed after signing: key ed25519:[0-9a-f]{32} signed sha256:[0-9a-f]{64}, the files are now sha256:[0-9a-f]{64}/)
    // A statement edited to claim this payload: the signature no longer verifies.
    served.body = canonicalJson({ hookdBundle: 1, payload: good.payload, signature: { ...elsewhere.signature, digest: good.signature.digest } })
    expect(messageOf(await source.poll())).toMatch(/^the bundle is refused: the bundle's signature's signature does not verify with key ed25519:[0-9a-f]{32}: it was made over other bytes or edited/)
    expect(await refusal(running as Running)).toBe('r2 says no')
    expect(running?.sidecar.registry.revision).toBe('r2')
  })

  it('refuses a bundle whose digests all match but is signed by another key, naming the key', async () => {
    served.body = bundleOf('r4', { 'guard/index.js': guard('r4 must not serve') }, other.privateKey)
    const out = await source.poll()
    expect(messageOf(out)).toBe(`the bundle is refused: it is signed by a key that is not trusted (${fingerprint(other.publicKey)}); add that public key to the trusted keys, or sign it with a trusted key`)
    expect(await refusal(running as Running)).toBe('r2 says no')
  })

  it('refuses a truncated download', async () => {
    served.body = bundleOf('r5', { 'guard/index.js': guard('r5 must not serve') })
    served.truncate = 100
    const out = await source.poll()
    delete served.truncate
    expect(out.kind).toBe('failed')
    expect(messageOf(out)).toMatch(/truncated download/)
    expect(await refusal(running as Running)).toBe('r2 says no')
  })

  it('refuses a bundle with a path climbing out of its folder, writing nothing of it', async () => {
    const escape = JSON.parse(bundleOf('r6', { 'guard/index.js': guard('r6') })) as { payload: string }
    const payload = JSON.parse(Buffer.from(escape.payload, 'base64').toString()) as { files: Record<string, string>; lock: LockFile; revision: string }
    payload.files['guard/../../escaped.js'] = Buffer.from('pwned').toString('base64')
    // Signed by the trusted key: the path check, not the signature, must stop it.
    const files = new Map(Object.entries(payload.files).map(([p, b]) => [p, Buffer.from(b, 'base64')]))
    served.body = makeBundle('r6', payload.lock, files, trusted.privateKey)
    const out = await source.poll()
    expect(messageOf(out)).toBe("the bundle's file 'guard/../../escaped.js' climbs out of its folder or has an empty segment ('..', '.', '//'); nothing of it is used")
    await expect(readFile(join(state, 'escaped.js'))).rejects.toThrow(/ENOENT/)
    await expect(readFile(join(state, 'bundles', 'escaped.js'))).rejects.toThrow(/ENOENT/)
    expect(await refusal(running as Running)).toBe('r2 says no')
  })

  it('refuses a huge bundle before reading it', async () => {
    const small = await startSidecar({ hooksFrom: { url, stateDir: join(state, 'small'), trustedKeys: keys, pollMs: 3_600_000, maxBytes: 2048 }, report: () => {} })
    try {
      served.body = bundleOf('r7', { 'guard/index.js': `${guard('r7')}//${'x'.repeat(10_000)}\n` })
      const out = await bundleSourceOf(small).poll()
      expect(messageOf(out)).toMatch(/offers \d+ bytes, over the 2048 bytes hookd takes \(--bundle-max-bytes\); nothing was read/)
      expect(small.sidecar.registry.revision).toBeUndefined()
    } finally {
      await small.stop()
    }
  })

  it('keeps serving when the server is down, and serves the last good bundle after a restart', async () => {
    served.status = 503
    expect(messageOf(await source.poll())).toMatch(/answered HTTP 503/)
    served.status = 200
    await running?.stop()
    running = undefined
    // The server is down altogether now: nothing listens at the URL.
    const down = `http://127.0.0.1:1/bundle.json`
    const again = await startSidecar({ hooksFrom: { url: down, stateDir: join(state, 'bundles'), trustedKeys: keys, pollMs: 3_600_000 }, report: (l) => lines.push(l) })
    running = again
    expect(again.sidecar.registry.revision).toBe('r2')
    expect(await refusal(again)).toBe('r2 says no')
    expect(lines.join('\n')).toContain('serving revision r2 of the hooks bundle, kept from before the restart')
    expect(lines.at(-1)).toMatch(/^the hooks bundle from http:\/\/127\.0\.0\.1:1\/bundle\.json is not taken: cannot fetch .*; still serving revision r2$/)
  })

  it('does not serve a kept bundle that no longer verifies after a restart', async () => {
    await running?.stop()
    running = undefined
    const kept = join(state, 'bundles')
    const name = (await readFile(join(kept, 'current'), 'utf8')).trim()
    const text = await readFile(join(kept, `${name}.bundle`), 'utf8')
    await writeFile(join(kept, `${name}.bundle`), text.replace(/"payload":"./, (m) => `${m.slice(0, -1)}${m.at(-1) === 'A' ? 'B' : 'A'}`))
    const lines2: string[] = []
    running = await startSidecar({ hooksFrom: { url: 'http://127.0.0.1:1/bundle.json', stateDir: kept, trustedKeys: keys, pollMs: 3_600_000 }, report: (l) => lines2.push(l) })
    expect(running.sidecar.registry.revision).toBeUndefined()
    expect(lines2[0]).toMatch(/^the last good bundle in .* does not verify any more, so it is not served: the bundle is refused/)
  })
})

describe('hookd bundle DIR', () => {
  it('builds a bundle of what is locked, which the sidecar takes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hookd-bundle-cli-'))
    try {
      await mkdir(join(dir, 'hooks', 'guard'), { recursive: true })
      await writeFile(join(dir, 'hooks', 'guard', 'index.js'), guard('from the CLI'))
      expect((await runInProcess(['keygen', '--out', 'key.pem'], { cwd: dir })).code).toBe(0)
      const unlocked = await runInProcess(['bundle', 'hooks', '--key', 'key.pem', '--revision', 'c1'], { cwd: dir })
      expect(unlocked).toMatchObject({ code: 1, stderr: expect.stringMatching(/there is no lock at .*hookd\.lock; review the hooks and run hookd lock --hooks hooks, then bundle/) })
      expect((await runInProcess(['lock'], { cwd: dir })).stdout).toContain('guard: locked (new)')
      const made = await runInProcess(['bundle', 'hooks', '--key', 'key.pem', '--revision', 'c1', '--out', 'b.json'], { cwd: dir })
      expect(made.stdout).toMatch(/wrote .*b\.json: revision c1, 1 hook\(s\), 1 file\(s\), \d+ bytes, signed by ed25519:[0-9a-f]{32}/)
      served.body = await readFile(join(dir, 'b.json'), 'utf8')
      await writeFile(join(dir, 'trusted.pem'), await readFile(join(dir, 'key.pem.pub')))
      const cli = await startSidecar({ hooksFrom: { url, stateDir: join(dir, 'state'), trustedKeys: await readTrustedKeys(join(dir, 'trusted.pem')), pollMs: 3_600_000 }, report: () => {} })
      try {
        expect(cli.sidecar.registry.revision).toBe('c1')
        expect(await refusal(cli)).toBe('from the CLI')
      } finally {
        await cli.stop()
      }
      // An edit after locking is refused by hookd bundle, naming the hook.
      await writeFile(join(dir, 'hooks', 'guard', 'index.js'), guard('edited'))
      const edited = await runInProcess(['bundle', 'hooks', '--key', 'key.pem', '--revision', 'c2'], { cwd: dir })
      expect(edited).toMatchObject({ code: 1, stderr: expect.stringContaining("hook 'guard' changed since") })
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})

describe('the revision served, as an operator sees it', () => {
  it('is on /readyz and in hookd_bundle_revision_info', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hookd-bundle-ops-'))
    try {
      await writeFile(join(dir, 'trusted.pem'), trusted.publicKey.export({ type: 'spki', format: 'pem' }) as string)
      served.body = bundleOf('ops-1', { 'guard/index.js': guard('ops') })
      delete served.etag
      const port = await freePort()
      const serving = await serveInProcess(
        ['--hooks-from', url, '--trusted-keys', 'trusted.pem', '--bundle-state', 'state', '--listen', `unix:${join(dir, 'h.sock')}`, '--workers', '1', '--metrics', `127.0.0.1:${port}`],
        { cwd: dir },
      )
      try {
        expect(await getJson(`http://127.0.0.1:${port}/readyz`)).toEqual({ status: 200, body: { status: 'ready', revision: 'ops-1' } })
        const metrics = await scrape(`http://127.0.0.1:${port}/metrics`)
        expect(metrics.get('hookd_bundle_revision_info{tenant="",revision="ops-1"}')).toBe(1)
        expect(serving.output.stderr).toMatch(/hookd: serving revision ops-1 of the hooks bundle from http:\/\/127\.0\.0\.1:\d+\/bundle\.json/)
      } finally {
        await serving.stop()
      }
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
