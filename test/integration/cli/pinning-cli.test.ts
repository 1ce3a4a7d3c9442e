/**
 * hookd lock, trust, keygen, sign and check as users run them (in this process): what each prints,
 * the files it writes, its exit status; and `hookd serve --locked` / `--require-signed` as a process
 * would run them: a held hook reported once on stderr while the locked version keeps answering.
 */
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runInProcess, serveInProcess } from '../../support/processes.js'
import { HookdClient } from '../../../src/host/index.js'
import { sessionOptions } from '../../support/sidecar.js'

let dir: string
const guard = (reason: string): string => `module.exports = { beforeToolExecute() { return { allow: false, reason: ${JSON.stringify(reason)} } } }\n`

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hookd-pin-cli-'))
  await mkdir(join(dir, 'hooks', 'guard'), { recursive: true })
  await writeFile(join(dir, 'hooks', 'guard', 'index.js'), guard('locked says no'))
  await writeFile(join(dir, 'hooks', 'guard', 'hook.json'), '{"onError": "refuse", "permissions": {"files": "read", "paths": ["src/**"], "decide": {"refuse": true}}}\n')
})

afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('every new command answers --help', () => {
  it.each(['lock', 'trust', 'keygen', 'sign', 'bundle'])('hookd %s --help', async (command) => {
    const ran = await runInProcess([command, '--help'])
    expect(ran.code).toBe(0)
    expect(ran.stdout).toMatch(new RegExp(`^Usage: hookd ${command} `))
  })

  it('says what to do when the arguments are missing', async () => {
    expect(await runInProcess(['trust'], { cwd: dir })).toMatchObject({ code: 2, stderr: expect.stringContaining('name the hooks to approve, e.g. hookd trust guard') })
    expect(await runInProcess(['sign', 'hooks/guard'], { cwd: dir })).toMatchObject({ code: 2, stderr: expect.stringContaining('pass the private key: hookd sign --key FILE HOOK') })
    expect(await runInProcess(['keygen'], { cwd: dir })).toMatchObject({ code: 2, stderr: expect.stringContaining('hookd keygen --out FILE') })
    expect(await runInProcess(['serve', '--require-signed'], { cwd: dir })).toMatchObject({ code: 2, stderr: expect.stringContaining('--require-signed needs --trusted-keys FILE') })
    expect(await runInProcess(['serve', '--hooks-from', 'http://example.com/b.json', '--trusted-keys', 'x'], { cwd: dir })).toMatchObject({ code: 2, stderr: expect.stringContaining('plain HTTP to another machine') })
  })
})

describe('hookd lock, trust and check', () => {
  it('locks every hook beside the folder, and says what changed on the next run', async () => {
    const ran = await runInProcess(['lock'], { cwd: dir })
    expect(ran).toMatchObject({ code: 0, stdout: `guard: locked (new)\nwrote ${join(dir, 'hookd.lock')}: 1 hook(s) locked\n` })
    const lock = JSON.parse(await readFile(join(dir, 'hookd.lock'), 'utf8')) as { hooks: Record<string, { digest: string; files: Record<string, string>; permissions: string }> }
    expect(Object.keys(lock.hooks.guard?.files ?? {})).toEqual(['hook.json', 'index.js'])
    expect(lock.hooks.guard?.permissions).toBe('{"decide":{"refuse":true},"files":"read","paths":["src/**"]}')
    expect((await runInProcess(['lock'], { cwd: dir })).stdout).toContain('guard: unchanged')
  })

  it('hookd check warns of a hook changed since the lock, and fails with --locked', async () => {
    await writeFile(join(dir, 'hooks', 'guard', 'index.js'), guard('edited says no'))
    const warned = await runInProcess(['check'], { cwd: dir })
    expect(warned.code).toBe(0)
    expect(warned.stdout).toMatch(/hooks\/guard\/index\.js: warning: hook 'guard' changed since .*hookd\.lock \(digest sha256:[0-9a-f]{64}, locked sha256:[0-9a-f]{64}\): index\.js changed; permissions unchanged\n  hint: review the change and approve it with hookd trust guard \(or hookd lock\); 'hookd serve --locked' holds it until then/)
    const failed = await runInProcess(['check', '--locked'], { cwd: dir })
    expect(failed.code).toBe(1)
    expect(failed.stdout).toMatch(/hooks\/guard\/index\.js: error: hook 'guard' changed since/)
  })

  it('hookd serve --locked keeps serving the locked version, reports the change once, and serves the approved one', async () => {
    await writeFile(join(dir, 'hooks', 'guard', 'index.js'), guard('locked says no'))
    const serving = await serveInProcess(['--locked', '--listen', `unix:${join(dir, 's.sock')}`, '--workers', '1'], { cwd: dir })
    const client = await HookdClient.connect(serving.address)
    const reason = async (): Promise<string> => {
      const session = await client.openSession(sessionOptions(['guard']))
      try {
        return String(((await session.call('beforeToolExecute', { id: 'c', name: 'shell', arguments: {} })).result as { reason: string }).reason)
      } finally {
        session.abandon()
      }
    }
    try {
      expect(await reason()).toBe('locked says no')
      await writeFile(join(dir, 'hooks', 'guard', 'index.js'), guard('edited says no'))
      const held = async (): Promise<boolean> => /changed since .*hookd\.lock/.test(serving.output.stderr)
      for (let i = 0; i < 400 && !(await held()); i++) await new Promise((ok) => setTimeout(ok, 25))
      expect(serving.output.stderr).toMatch(/hook 'guard' failed to reload: guard\/index\.js: hook 'guard' changed since .*hookd\.lock \(digest sha256:[0-9a-f]{64}, locked sha256:[0-9a-f]{64}\): index\.js changed; permissions unchanged\. Still serving version/)
      expect(await reason()).toBe('locked says no')
      expect(serving.output.stderr.match(/changed since/g)?.length).toBe(1)
      expect(await runInProcess(['trust', 'guard'], { cwd: dir })).toMatchObject({ code: 0, stdout: expect.stringContaining('guard: changed: index.js') })
      for (let i = 0; i < 400 && (await reason()) !== 'edited says no'; i++) await new Promise((ok) => setTimeout(ok, 25))
      expect(await reason()).toBe('edited says no')
    } finally {
      client.close()
      await serving.stop()
    }
  })
})

describe('hookd keygen and sign', () => {
  it('makes a key pair, signs a hook and the lock, and serve --require-signed serves it', async () => {
    const made = await runInProcess(['keygen', '--out', 'team.pem'], { cwd: dir })
    expect(made.stdout).toMatch(/^wrote .*team\.pem \(private: keep it secret\) and .*team\.pem\.pub; key ed25519:[0-9a-f]{32}\n$/)
    expect((await stat(join(dir, 'team.pem'))).mode & 0o777).toBe(0o600)
    expect(await runInProcess(['keygen', '--out', 'team.pem'], { cwd: dir })).toMatchObject({ code: 1, stderr: expect.stringContaining('hookd keygen does not replace a key') })
    const signed = await runInProcess(['sign', '--key', 'team.pem', 'hooks/guard'], { cwd: dir })
    expect(signed.stdout).toMatch(/^signed guard \(sha256:[0-9a-f]{64}, hook\.json, index\.js\) with ed25519:[0-9a-f]{32}: wrote hooks\/guard\/hook\.sig\n$/)
    expect((await runInProcess(['sign', '--key', 'team.pem', '--lock'], { cwd: dir })).stdout).toMatch(/^signed .*hookd\.lock \(sha256:[0-9a-f]{64}, 1 hooks\) with ed25519:[0-9a-f]{32}: wrote .*hookd\.lock\.sig\n$/)
    const serving = await serveInProcess(['--trusted-keys', 'team.pem.pub', '--require-signed', '--listen', `unix:${join(dir, 't.sock')}`, '--workers', '1', '--no-watch'], { cwd: dir })
    try {
      expect(serving.output.stderr).not.toMatch(/failed to load/)
    } finally {
      await serving.stop()
    }
    // Another key's public key trusts nothing here: the load error names the signer's fingerprint.
    await runInProcess(['keygen', '--out', 'other.pem'], { cwd: dir })
    const refused = await serveInProcess(['--trusted-keys', 'other.pem.pub', '--require-signed', '--listen', `unix:${join(dir, 'u.sock')}`, '--workers', '1', '--no-watch'], { cwd: dir })
    try {
      expect(refused.output.stderr).toMatch(/hookd: hook 'guard' failed to load \(guard\/hook\.sig\): hook 'guard' is refused \(--require-signed\): it is signed by a key that is not trusted \(ed25519:[0-9a-f]{32}\)/)
    } finally {
      await refused.stop()
    }
  })
})
