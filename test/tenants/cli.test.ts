/**
 * The tenant-facing parts of the hookd command, as a user runs them: exit codes, stdout and stderr.
 * The commands run in-process (main(argv, io); `hookd serve` until stopped as SIGTERM would), except the
 * tenant sidecar that writes its audit log to stdout: a real `hookd serve` process, stopped by SIGTERM.
 */
import { type ChildProcess, execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HookdClient } from '../../src/host/index.js'
import { waitFor } from '../reload/support.js'
import { runInProcess as inProcess, type ServingInProcess, serveInProcess, startServe, stopProcess } from '../support/processes.js'
import { EXAMPLE_HOOKS, sessionOptions } from '../support/sidecar.js'

/** Stops `hookd serve` with SIGTERM (a process, or one in-process); resolves with its exit code and what it printed on stderr. */
async function stopped(serving: ChildProcess | ServingInProcess, output: { stderr: string }): Promise<string> {
  const code = 'stop' in serving ? await serving.stop('SIGTERM') : await stopProcess(serving)
  return `exit ${code}${code ? `: ${output.stderr}` : ''}`
}

let cwd: string

beforeAll(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'hookd-tenant-cli-'))
})

afterAll(async () => {
  await rm(cwd, { recursive: true, force: true })
})

describe('hookd serve on TCP', () => {
  it('refuses TCP without tenants unless --insecure, saying why and what to pass', async () => {
    const ran = await inProcess(['serve', '--hooks', EXAMPLE_HOOKS, '--listen', '127.0.0.1:0'], { cwd })
    expect(ran.code).toBe(2)
    expect(ran.stderr).toContain('hookd serve: refusing to serve TCP (127.0.0.1:0) without tenants')
    expect(ran.stderr).toContain('Pass --tenants FILE to require a token per tenant, or --insecure')
  })

  it('serves TCP without tenants with --insecure', async () => {
    const serving = await serveInProcess(['--workers', '1', '--hooks', EXAMPLE_HOOKS, '--listen', '127.0.0.1:0', '--insecure'], { cwd })
    try {
      expect(serving.address).toMatch(/^127\.0\.0\.1:\d+$/)
      const client = await HookdClient.connect(serving.address)
      expect((await client.listHooks()).map((h) => h.name)).toContain('guard')
      client.close()
    } finally {
      expect(await stopped(serving, serving.output)).toBe('exit 0')
    }
  })

  it('refuses flags that do not go together', async () => {
    const [both, half, unixTls] = await Promise.all([
      inProcess(['serve', '--hooks', 'x', '--tenants', 'y.json'], { cwd }),
      inProcess(['serve', '--listen', '127.0.0.1:0', '--insecure', '--tls-cert', 'c.pem'], { cwd }),
      inProcess(['serve', '--tls-cert', 'c.pem', '--tls-key', 'k.pem'], { cwd }),
    ])
    expect(both.code).toBe(2)
    expect(both.stderr).toContain("--hooks cannot be combined with --tenants: each tenant's hooks folder is set in the tenants file")
    expect(half.code).toBe(2)
    expect(half.stderr).toContain('--tls-cert and --tls-key go together')
    expect(unixTls.code).toBe(2)
    expect(unixTls.stderr).toContain('are for TCP addresses')
  })
})

describe('hookd serve --tenants', () => {
  it('serves each tenant by its token and writes the audit log to stdout', async () => {
    const made = await inProcess(['tenant', 'token', '--json'], { cwd })
    const { token, tokenHash } = JSON.parse(made.stdout) as { token: string; tokenHash: string }
    await writeFile(join(cwd, 'tenants.json'), JSON.stringify({ tenants: [{ id: 'acme', tokenHash, hooks: EXAMPLE_HOOKS, policy: { file: 'read' } }] }))
    const { child, address, output } = await startServe(['--tenants', 'tenants.json', '--listen', '127.0.0.1:0', '--audit', '-'], { cwd })
    try {
      const anonymous = await HookdClient.connect(address)
      expect(await anonymous.listHooks().catch((e: unknown) => e)).toMatchObject({ code: 'unauthenticated' })
      anonymous.close()
      const client = await HookdClient.connect(address, { token })
      const result = await client.invoke(sessionOptions(['https-only']), 'beforeToolExecute', { id: 'c1', name: 'http', arguments: { url: 'http://a.b' } })
      expect(result.result).toEqual({ allow: true, arguments: { url: 'https://a.b' } })
      client.close()
      const line = await waitFor('an audit line on stdout', () => output.stdout.split('\n').find((l) => l.includes(result.decisionId as string)))
      expect(JSON.parse(line)).toMatchObject({ tenant: 'acme', point: 'beforeToolExecute', decision: { allow: true } })
      expect(output.stderr).toContain('hookd: serving 1 tenant(s): acme')
    } finally {
      expect(await stopped(child, output)).toBe('exit 0')
    }
  })

  it('refuses to start on a bad tenants file, pointing at the bad entry', async () => {
    const hash = `sha256:${'a'.repeat(64)}`
    await mkdir(join(cwd, 'h'), { recursive: true })
    await writeFile(
      join(cwd, 'bad.json'),
      JSON.stringify({
        tenants: [
          { id: 'a', tokenHash: hash, hooks: 'h' },
          { id: 'b', tokenHash: `sha256:${'b'.repeat(64)}`, hooks: 'h' },
          { id: 'c', tokenHash: `sha256:${'c'.repeat(64)}`, hooks: 'h', limits: { cpuMs: 1.5 } },
        ],
      }),
    )
    const ran = await inProcess(['serve', '--tenants', 'bad.json'], { cwd })
    expect(ran.code).toBe(1)
    expect(ran.stderr).toContain('hookd serve: tenants file bad.json: tenants[2].limits.cpuMs: expected a positive integer')

    await writeFile(join(cwd, 'typo.json'), JSON.stringify({ tenants: [{ id: 'a', tokenhash: hash, hooks: 'h' }] }))
    const typo = await inProcess(['tenant', 'check', 'typo.json'], { cwd })
    expect(typo.code).toBe(1)
    expect(typo.stderr).toContain("tenants[0]: unknown field 'tokenhash'")
    expect(typo.stderr).toContain('tenants[0].tokenHash: missing')

    await writeFile(join(cwd, 'good.json'), JSON.stringify({ tenants: [{ id: 'a', tokenHash: hash, hooks: 'h' }] }))
    const good = await inProcess(['tenant', 'check', 'good.json'], { cwd })
    expect(good.code).toBe(0)
    expect(good.stdout).toBe('good.json: 1 tenant(s) (a), all good\n')
  })
})

describe('hookd tenant token', () => {
  it('prints a new token, its sha256 hash and the entry to paste', async () => {
    const ran = await inProcess(['tenant', 'token', '--id', 'acme', '--hooks', 'hooks/acme'], { cwd })
    expect(ran.code).toBe(0)
    const token = /^token:\s+(hkd_[A-Za-z0-9_-]{43})$/m.exec(ran.stdout)?.[1] as string
    const hash = /^tokenHash:\s+(sha256:[0-9a-f]{64})$/m.exec(ran.stdout)?.[1]
    expect(token).toBeDefined()
    expect(hash).toBe(`sha256:${createHash('sha256').update(token).digest('hex')}`)
    expect(ran.stdout).toContain(`{"id":"acme","tokenHash":"${hash}","hooks":"hooks/acme","limits":{},"policy":{"file":"none"}}`)
    const again = await inProcess(['tenant', 'token', '--json'], { cwd })
    expect((JSON.parse(again.stdout) as { token: string }).token).not.toBe(token)
  })

  it('documents itself and the new serve flags', async () => {
    const [help, serveHelp, bad] = await Promise.all([inProcess(['tenant', '--help'], { cwd }), inProcess(['serve', '--help'], { cwd }), inProcess(['tenant', 'mint'], { cwd })])
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('hookd tenant token [--id ID] [--hooks DIR] [--json]')
    for (const flag of ['--tenants FILE', '--insecure', '--tls-cert FILE', '--tls-key FILE', '--audit FILE|-', '--audit-payloads', '--slots N']) {
      expect(serveHelp.stdout).toContain(flag)
    }
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("unknown subcommand 'mint'; use 'token' or 'check'")
  })
})

describe('hookd list and invoke against a tenant sidecar', () => {
  const openssl = ['/usr/bin/openssl', '/usr/local/bin/openssl', '/bin/openssl'].find(existsSync)
  const call = ['--hook', 'https-only', '--point', 'beforeToolExecute', '--payload', '{"id":"c1","name":"http","arguments":{"url":"http://a.b"}}']

  it.skipIf(!openssl)('take --token (or HOOKD_TOKEN) and --tls-ca, and say which is missing', async () => {
    execFileSync(openssl as string, [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(cwd, 'key.pem'), '-out', join(cwd, 'cert.pem'), '-days', '1',
      '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ], { stdio: 'ignore' })
    const { token, tokenHash } = JSON.parse((await inProcess(['tenant', 'token', '--json'], { cwd })).stdout) as { token: string; tokenHash: string }
    await writeFile(join(cwd, 'tls-tenants.json'), JSON.stringify({ tenants: [{ id: 'acme', tokenHash, hooks: EXAMPLE_HOOKS }] }))
    const serving = await serveInProcess(['--tenants', 'tls-tenants.json', '--listen', '127.0.0.1:0', '--tls-cert', 'cert.pem', '--tls-key', 'key.pem'], { cwd })
    const addr = serving.address
    try {
      const tls = ['--addr', addr, '--tls-ca', 'cert.pem']
      // All at once: the one without TLS waits out its connect timeout (5 s) before it fails.
      const [listed, fromEnv, invoked, named, noToken, wrongToken, noTls] = await Promise.all([
        inProcess(['list', ...tls, '--token', token, '--json'], { cwd }),
        inProcess(['list', ...tls], { cwd, env: { HOOKD_TOKEN: token } }),
        inProcess(['invoke', ...tls, '--token', token, ...call], { cwd }),
        inProcess(['list', ...tls, '--tls-server-name', 'localhost', '--token', token], { cwd }),
        inProcess(['list', ...tls], { cwd }),
        inProcess(['invoke', ...tls, ...call], { cwd, env: { HOOKD_TOKEN: 'hkd_wrong' } }),
        inProcess(['list', '--addr', addr, '--token', token], { cwd }),
      ])
      expect(listed.code, listed.stderr).toBe(0)
      expect((JSON.parse(listed.stdout) as Array<{ name: string }>).map((h) => h.name)).toContain('https-only')
      expect(fromEnv.code, fromEnv.stderr).toBe(0)
      expect(fromEnv.stdout).toMatch(/^NAME +VERSION +DIGEST +STATUS/)
      expect(fromEnv.stdout).toContain('https-only')
      expect(invoked.code, invoked.stderr).toBe(0)
      expect(JSON.parse(invoked.stdout)).toMatchObject({ result: { allow: true, arguments: { url: 'https://a.b' } } })
      expect(named.code, named.stderr).toBe(0)

      expect(noToken.code).toBe(1)
      expect(noToken.stderr).toContain("hookd list: no authorization metadata was sent; this sidecar serves several tenants")
      expect(noToken.stderr).toContain("Pass the tenant's token with --token TOKEN (or set HOOKD_TOKEN)")
      expect(wrongToken.code).toBe(1)
      expect(wrongToken.stderr).toContain('hookd invoke: the bearer token matches no tenant of this sidecar')
      expect(noTls.code).toBe(1)
      expect(noTls.stderr).toContain(`hookd list: cannot reach hookd at ${addr}`)
      expect(noTls.stderr).toContain('If it serves TLS (hookd serve --tls-cert), pass --tls, or --tls-ca FILE for a self-signed certificate')
    } finally {
      expect(await stopped(serving, serving.output)).toBe('exit 0')
    }
  })

  it('refuse connection flags that cannot apply, saying why', async () => {
    const [embedded, unixTls, missingCa, emptyToken] = await Promise.all([
      inProcess(['invoke', '--token', 'hkd_x', ...call], { cwd }),
      inProcess(['list', '--addr', 'unix:x.sock', '--tls'], { cwd }),
      inProcess(['list', '--addr', '127.0.0.1:1', '--tls-ca', 'missing.pem'], { cwd }),
      inProcess(['list', '--token', ' '], { cwd }),
    ])
    expect(embedded.code).toBe(2)
    expect(embedded.stderr).toContain('hookd invoke: --token, --tls, --tls-ca and --tls-server-name are for a running sidecar: pass its --addr too')
    expect(unixTls.code).toBe(2)
    expect(unixTls.stderr).toContain('hookd list: --tls, --tls-ca and --tls-server-name are for TCP addresses; unix:x.sock is a Unix socket')
    expect(missingCa.code).toBe(2)
    expect(missingCa.stderr).toContain('hookd list: --tls-ca: cannot read missing.pem: ENOENT')
    expect(emptyToken.code).toBe(2)
    expect(emptyToken.stderr).toContain("hookd list: --token is empty; pass the tenant's token (or set HOOKD_TOKEN)")
  })

  it('document the flags in --help', async () => {
    const [list, invoke] = await Promise.all([inProcess(['list', '--help'], { cwd }), inProcess(['invoke', '--help'], { cwd })])
    for (const help of [list.stdout, invoke.stdout]) {
      for (const flag of ['--token TOKEN', '$HOOKD_TOKEN', '--tls ', '--tls-ca FILE', '--tls-server-name NAME']) expect(help).toContain(flag)
    }
  })
})
