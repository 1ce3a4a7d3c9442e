/**
 * Two tenants on one sidecar, over real gRPC: who a call runs as, what each tenant can name, and the
 * calls refused for a missing or wrong token.
 */
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import * as grpc from '@grpc/grpc-js'
import * as protoLoader from '@grpc/proto-loader'
import { protoPath as healthProto } from 'grpc-health-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HookdClient, HookdError } from '../../src/host/index.js'
import { hook, sessionOptions } from '../support/sidecar.js'
import { type TenantFixture, startTenants, toolCall } from './support.js'

let t: TenantFixture

beforeAll(async () => {
  t = await startTenants([
    {
      id: 'acme',
      hooks: {
        'acme-guard/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ allow: false, reason: 'acme says no' })` }),
        'shared-name/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ arguments: { from: 'acme' } })` }),
      },
    },
    {
      id: 'beta',
      hooks: {
        'beta-secret/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ arguments: { secret: 'beta' } })` }),
        'shared-name/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ arguments: { from: 'beta' } })` }),
      },
    },
  ])
})

afterAll(async () => {
  await t?.stop()
})

describe('identity', () => {
  it("runs each tenant's calls on its own hooks", async () => {
    const acme = await t.client('acme')
    const beta = await t.client('beta')
    expect((await acme.listHooks()).map((h) => h.name)).toEqual(['acme-guard', 'shared-name'])
    expect((await beta.listHooks()).map((h) => h.name)).toEqual(['beta-secret', 'shared-name'])

    const a = await acme.invoke(sessionOptions(['shared-name']), 'beforeToolExecute', toolCall)
    const b = await beta.invoke(sessionOptions(['shared-name']), 'beforeToolExecute', toolCall)
    expect(a.result.arguments).toEqual({ from: 'acme' })
    expect(b.result.arguments).toEqual({ from: 'beta' })

    const session = await beta.openSession(sessionOptions(['shared-name', 'beta-secret']))
    const out = await session.call('beforeToolExecute', toolCall)
    expect(out.result.arguments).toEqual({ secret: 'beta' })
    expect(out.decisionId).toMatch(/^[0-9a-f-]{36}$/)
    await session.close()
  })

  it('refuses Session, Invoke and ListHooks without a token, with UNAUTHENTICATED saying what to send', async () => {
    const anonymous = await t.client(undefined)
    const listed = await anonymous.listHooks().catch((e: unknown) => e)
    expect(listed).toBeInstanceOf(HookdError)
    expect(listed).toMatchObject({ code: 'unauthenticated', message: expect.stringContaining("send your tenant's token as 'authorization: Bearer <token>'") })
    const invoked = await anonymous.invoke(sessionOptions(['shared-name']), 'beforeToolExecute', toolCall).catch((e: unknown) => e)
    expect(invoked).toMatchObject({ code: 'unauthenticated' })
    const opened = await anonymous.openSession(sessionOptions(['shared-name'])).catch((e: unknown) => e)
    expect(opened).toMatchObject({ code: 'unauthenticated', message: expect.stringContaining('no authorization metadata was sent') })
  })

  it('refuses a wrong token the same way, whatever it looks like', async () => {
    const acmeToken = t.tokens.get('acme') as string
    for (const wrong of ['hkd_not-a-real-token', `${acmeToken}x`, acmeToken.slice(0, -1)]) {
      const client = await t.client(wrong)
      const listed = await client.listHooks().catch((e: unknown) => e)
      expect(listed).toMatchObject({ code: 'unauthenticated', message: expect.stringContaining('matches no tenant') })
      const opened = await client.openSession(sessionOptions(['shared-name'])).catch((e: unknown) => e)
      expect(opened).toMatchObject({ code: 'unauthenticated' })
    }
  })

  it("answers another tenant's hook name exactly as a name that does not exist", async () => {
    const acme = await t.client('acme')
    const other = (await acme.openSession(sessionOptions(['beta-secret'])).catch((e: unknown) => e)) as HookdError
    const none = (await acme.openSession(sessionOptions(['no-such-hook'])).catch((e: unknown) => e)) as HookdError
    expect(other.code).toBe('not-found')
    expect(none.code).toBe('not-found')
    expect(other.message.replace('beta-secret', 'NAME')).toBe(none.message.replace('no-such-hook', 'NAME'))
    expect(other.message).toBe("unknown hook 'beta-secret' in tenant 'acme''s hooks (available: acme-guard, shared-name)")
    const invoked = (await acme.invoke(sessionOptions(['beta-secret']), 'beforeToolExecute', toolCall).catch((e: unknown) => e)) as HookdError
    expect(invoked.message).toBe(other.message)
  })

  it('keeps the health service open without a token', async () => {
    const def = protoLoader.loadSync(healthProto, { enums: String })
    const pkg = grpc.loadPackageDefinition(def).grpc as unknown as {
      health: { v1: { Health: new (addr: string, creds: grpc.ChannelCredentials) => grpc.Client & { check(req: unknown, cb: (e: Error | null, r: { status: string }) => void): void } } }
    }
    const health = new pkg.health.v1.Health(t.address, grpc.credentials.createInsecure())
    const answer = await new Promise<{ status: string }>((resolve, reject) =>
      health.check({ service: 'hookd.v1.HookExecutor' }, (err, res) => (err ? reject(err) : resolve(res))),
    )
    health.close()
    expect(answer.status).toBe('SERVING')
  })
})

describe('TLS on TCP', () => {
  const openssl = ['/usr/bin/openssl', '/usr/local/bin/openssl', '/bin/openssl'].find(existsSync)

  it.skipIf(!openssl)('serves tenants over TLS with a certificate the client trusts', async () => {
    const cert = join(t.dir, 'cert.pem')
    const key = join(t.dir, 'key.pem')
    execFileSync(openssl as string, [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1',
      '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ], { stdio: 'ignore' })
    const pem = { cert: await readFile(cert), key: await readFile(key) }
    const second = await startTenants([{ id: 'solo', hooks: { 'solo-hook/index.js': hook({ beforeRun: '() => {}' }) } }])
    try {
      const address = await second.sidecar.listen('127.0.0.1:0', { tls: pem })
      const client = await HookdClient.connect(address, { token: second.tokens.get('solo') as string, tls: { ca: pem.cert, serverName: 'localhost' } })
      expect((await client.listHooks()).map((h) => h.name)).toEqual(['solo-hook'])
      client.close()
      // A client that does not speak TLS is not served.
      const plain = await HookdClient.connect(address, { token: second.tokens.get('solo') as string, connectTimeoutMs: 1000 }).catch((e: unknown) => e)
      expect(plain).toBeInstanceOf(HookdError)
    } finally {
      await second.stop()
    }
  })
})
