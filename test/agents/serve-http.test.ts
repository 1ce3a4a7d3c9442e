/**
 * `hookd serve --http` as users run it: the ready lines, the token file it makes and keeps, the flags it
 * refuses; and the front door of a sidecar with tenants, where each tenant's own token is the key. The
 * first start is the built command, as a process; the restart that keeps the token and the refusals run
 * in-process (main(argv, io)).
 */
import { HOOKD_VERSION } from '../../src/protocol/version.js'
import { execFile } from 'node:child_process'
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { request } from 'node:http'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { Sidecar } from '../../src/sidecar/sidecar.js'
import { hashToken, newToken } from '../../src/sidecar/tenancy/tenant-token.js'
import { ROOT, runInProcess, serveInProcess, startServe, stopProcess } from '../support/processes.js'
import { EXAMPLE_HOOKS, hook, writeTree } from '../support/sidecar.js'

describe('hookd serve --http', () => {
  it('serves the front door beside gRPC, with a token made 0600 on the first start and kept after', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hookd-serve-http-'))
    const args = ['--hooks', EXAMPLE_HOOKS, '--listen', `unix:${join(dir, 'hookd.sock')}`, '--http', '0', '--workers', '1']
    try {
      const first = await startServe(args, { cwd: dir })
      const url = /^hookd: http on (http:\/\/127\.0\.0\.1:\d+)$/m.exec(first.output.stderr)?.[1] as string
      expect(url).toBeDefined()
      expect(first.output.stderr).toContain(`hookd: made the HTTP token in ${join(dir, '.hookd', 'http-token')} (mode 0600)`)
      expect((await stat(join(dir, '.hookd'))).mode & 0o777).toBe(0o700)
      expect((await stat(join(dir, '.hookd', 'http-token'))).mode & 0o777).toBe(0o600)
      expect((await readFile(join(dir, '.hookd', 'http-url'), 'utf8')).trim()).toBe(url)
      // git never shows (or commits) the state folder's token.
      expect(await readFile(join(dir, '.hookd', '.gitignore'), 'utf8')).toMatch(/^\*$/m)
      const token = (await readFile(join(dir, '.hookd', 'http-token'), 'utf8')).trim()
      expect(token).toMatch(/^hkd_[A-Za-z0-9_-]{43}$/)
      expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ status: 'serving', version: HOOKD_VERSION })
      const described = await fetch(`${url}/claude-code/guard`, { headers: { authorization: `Bearer ${token}` } })
      expect(described.status).toBe(200)
      expect(await stopProcess(first.child)).toBe(0)

      const second = await serveInProcess(args, { cwd: dir })
      expect(second.output.stderr).toMatch(/^hookd: http on http:\/\/127\.0\.0\.1:\d+$/m)
      expect(second.output.stderr).not.toContain('made the HTTP token')
      expect((await readFile(join(dir, '.hookd', 'http-token'), 'utf8')).trim()).toBe(token)
      expect(await second.stop()).toBe(0)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }, 120_000)

  it('refuses a token file others can read, a network address without --insecure, and http flags without --http', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hookd-serve-http-'))
    try {
      const open = await runInProcess(['serve', '--http', '0.0.0.0:7390'], { cwd: dir })
      expect(open.code).toBe(2)
      expect(open.stderr).toContain('refusing to serve HTTP on 0.0.0.0:7390: the front door has no TLS')
      const budget = await runInProcess(['serve', '--http-tenant-mb', '5'], { cwd: dir })
      expect(budget.code).toBe(2)
      expect(budget.stderr).toContain('apply to --http, as do --http-tenant-mb, --http-total-mb and --http-hosts')
      const port = await runInProcess(['serve', '--http', '0', '--http-hosts', 'hookd.example:80'], { cwd: dir })
      expect(port.code).toBe(2)
      expect(port.stderr).toContain("--http-hosts takes host names or addresses without a port (hookd.example.com,10.0.0.5); got 'hookd.example:80'")
      const idle = await runInProcess(['serve', '--http-idle-ms', '5'], { cwd: dir })
      expect(idle.code).toBe(2)
      expect(idle.stderr).toContain('--http-token-file and --http-idle-ms apply to --http')
      await writeFile(join(dir, 'token'), `${newToken()}\n`)
      await chmod(join(dir, 'token'), 0o644)
      const readable = await runInProcess(
        ['serve', '--hooks', EXAMPLE_HOOKS, '--listen', `unix:${join(dir, 'hookd.sock')}`, '--http', '0', '--http-token-file', 'token', '--workers', '1'],
        { cwd: dir },
      )
      expect(readable.code).toBe(1)
      expect(readable.stderr).toContain(`${join(dir, 'token')} can be read or changed by other users (mode 0644, hookd makes it 0600), so hookd does not trust it as its own state`)
      expect(readable.stderr).toContain(`'chmod 600 ${join(dir, 'token')}'`)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }, 60_000)
})

/** The compiled shim, as an agent runs it (asynchronously: the sidecar it posts to runs in this process). */
function runShim(args: string[], input: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(join(ROOT, 'build', 'hookd-hook'), args, { encoding: 'utf8' }, (err, stdout, stderr) =>
      resolve({ status: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
    )
    child.stdin?.end(input)
  })
}

describe('hookd serve --http with its bounds', () => {
  it('--http-tenant-mb refuses an event past it before reading it; --http-hosts adds names a request may be addressed to', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hookd-serve-http-bounds-'))
    const args = ['--hooks', EXAMPLE_HOOKS, '--listen', `unix:${join(dir, 'hookd.sock')}`, '--http', '0', '--workers', '1', '--http-tenant-mb', '1', '--http-hosts', 'hookd.example,Other.Example']
    const serving = await serveInProcess(args, { cwd: dir, ready: /^hookd: http on (http:\/\/127\.0\.0\.1:\d+)$/m })
    try {
      const url = serving.address
      const token = (await readFile(join(dir, '.hookd', 'http-token'), 'utf8')).trim()
      const big = await fetch(`${url}/claude-code/guard`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: 'x'.repeat(2 * 1024 * 1024) })
      expect(big.status).toBe(429)
      expect(((await big.json()) as { error: string }).error).toContain("this one's 2.0 MiB would pass the budget of 1.0 MiB; retry when calls have finished (slow hooks hold their events), or raise it (hookd serve --http-tenant-mb)")
      // The shim's request is refused before its proof is checked, and the refusal still proves it came from hookd.
      const shim = await runShim(['--token-file', join(dir, '.hookd', 'http-token'), `${url}/claude-code/guard`], JSON.stringify({ pad: 'x'.repeat(2 * 1024 * 1024) }))
      expect(shim.status).toBe(2)
      expect(shim.stderr).toContain('hookd answered HTTP 429: over the byte budget per tenant')
      const { port } = new URL(url)
      const status = (host: string): Promise<number> =>
        new Promise((resolve, reject) => {
          const req = request({ host: '127.0.0.1', port, path: '/healthz', headers: { host } }, (res) => {
            res.resume()
            resolve(res.statusCode ?? 0)
          })
          req.on('error', reject)
          req.end()
        })
      expect(await status(`hookd.example:${port}`)).toBe(200)
      expect(await status(`other.example:${port}`)).toBe(200)
      expect(await status(`elsewhere.example:${port}`)).toBe(421)
    } finally {
      await serving.stop()
      await rm(dir, { recursive: true, force: true })
    }
  }, 60_000)
})

describe('the front door of a sidecar with tenants', () => {
  it("takes each tenant's own token, runs that tenant's hooks, and refuses the rest", async () => {
    const acmeToken = newToken()
    const betaToken = newToken()
    const acme = await writeTree({
      'no-ls/index.js': hook({ beforeToolExecute: `function (ctx, call) { return { allow: false, reason: 'acme says no' } }` }),
      'reader/index.js': hook({ beforeToolExecute: `function (ctx) { try { ctx.file.read('notes.txt') } catch (e) { return { allow: false, reason: e.message } } }` }),
    })
    const beta = await writeTree({ 'other/index.js': hook({ beforeToolExecute: 'function () {}' }) })
    const dir = await mkdtemp(join(tmpdir(), 'hookd-http-tenants-'))
    const file = join(dir, 'tenants.json')
    await writeFile(file, JSON.stringify({ tenants: [{ id: 'acme', tokenHash: hashToken(acmeToken), hooks: acme, policy: { file: 'read' } }, { id: 'beta', tokenHash: hashToken(betaToken), hooks: beta }] }))
    const sidecar = await Sidecar.create({ tenants: { file, watch: false }, workers: 1, watch: false })
    try {
      const url = await sidecar.listenHttp('127.0.0.1', 0, { report: () => {}, budget: { tenantBytes: 4096 } })
      const event = { session_id: 's', cwd: dir, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls' } }
      const post = async (path: string, token: string): Promise<{ status: number; json: Record<string, unknown> }> => {
        const res = await fetch(`${url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: JSON.stringify(event) })
        return { status: res.status, json: (await res.json()) as Record<string, unknown> }
      }
      expect((await post('/claude-code/no-ls', acmeToken)).json).toEqual({
        hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'acme says no' },
      })
      // The tenant's agent runs on its own machine: its cwd is a name here, and its files are not hookd's to read.
      const remote = await fetch(`${url}/claude-code/reader`, {
        method: 'POST',
        headers: { authorization: `Bearer ${acmeToken}` },
        body: JSON.stringify({ ...event, cwd: '/home/acme-dev/project-not-on-this-machine' }),
      })
      expect(((await remote.json()) as { hookSpecificOutput: Record<string, unknown> }).hookSpecificOutput.permissionDecisionReason).toBe(
        "ctx.file.read('notes.txt') refused: this sidecar serves tenants, whose agents' files are on their own machines, not hookd's; hooks of HTTP sessions get no file access here",
      )
      const foreign = await post('/claude-code/no-ls', betaToken)
      expect((foreign.json.hookSpecificOutput as Record<string, unknown>).permissionDecisionReason).toBe(
        "hookd could not check this call, so it is refused: unknown hook 'no-ls' in tenant 'beta''s hooks (available: other)",
      )
      // Each tenant's bytes count against its own budget: acme's too-large event says so, beta's small one passes.
      const big = await fetch(`${url}/claude-code/no-ls`, { method: 'POST', headers: { authorization: `Bearer ${acmeToken}` }, body: JSON.stringify({ ...event, pad: 'x'.repeat(5000) }) })
      expect(big.status).toBe(429)
      expect(((await big.json()) as { error: string }).error).toMatch(/^over the byte budget per tenant: the events of tenant 'acme' waiting on their hooks hold 0 bytes, and this one's \d\.\d KiB would pass the budget of 4\.0 KiB/)
      expect((await post('/claude-code/other', betaToken)).json).toEqual({})
      const stranger = await post('/claude-code/no-ls', newToken())
      expect(stranger.status).toBe(401)
      expect(stranger.json.error).toContain('the bearer token matches no tenant of this sidecar')
      // The shim proves a tenant's token without sending it, and checks the answer's proof.
      const tokenFile = join(dir, 'acme-token')
      await writeFile(tokenFile, `${acmeToken}\n`, { mode: 0o600 })
      const shim = await runShim(['--token-file', tokenFile, `${url}/claude-code/no-ls`], JSON.stringify(event))
      expect(shim.status, shim.stderr).toBe(0)
      expect(JSON.parse(shim.stdout)).toEqual({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'acme says no' } })
      await writeFile(tokenFile, `${newToken()}\n`, { mode: 0o600 })
      const unknown = await runShim(['--token-file', tokenFile, `${url}/claude-code/no-ls`], JSON.stringify(event))
      expect(unknown.status).toBe(2)
      expect(unknown.stderr).toContain('refused the token (HTTP 401)')
    } finally {
      await sidecar.stop()
      for (const d of [acme, beta, dir]) await rm(d, { recursive: true, force: true })
    }
  }, 60_000)
})
