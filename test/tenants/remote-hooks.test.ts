/**
 * A tenant's remote hooks may name only the addresses its "remoteHooks" allow: a tenant who can write
 * its hooks folder must not make the sidecar dial any address it likes. Real sidecar, real sockets; the
 * remote hooks are grpc-js servers in this process that record every Describe and Run they get.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Diagnostic, HookdError } from '../../src/host/index.js'
import { remoteAddress } from '../../src/sidecar/runners/remote/remote-address.js'
import { remotePattern, tenantRemoteAllow } from '../../src/sidecar/runners/remote/remote-allow.js'
import { waitFor } from '../reload/support.js'
import { type RemoteHandler, type RemoteHookServer, serveRemoteHook } from '../support/remote-hook.js'
import { sessionOptions } from '../support/sidecar.js'
import { type TenantFixture, startTenants, toolCall } from './support.js'

let t: TenantFixture
let sockets: string
let unixServer: RemoteHookServer
let tcpServer: RemoteHookServer
/** The hook names that reached each server's Describe. */
const described: string[] = []

/** Adds the hook's name to the call's arguments, so a result shows which remote hooks ran. */
const tag: RemoteHandler = (inv) => {
  const call = inv.args[0] as typeof toolCall & { arguments: { via?: string[] } }
  return { arguments: { ...call.arguments, via: [...(call.arguments.via ?? []), inv.hook] } }
}
const remote = (address: string): string => JSON.stringify({ remote: address })

beforeAll(async () => {
  sockets = await mkdtemp(join(tmpdir(), 'hookd-tenant-remote-'))
  const describe = (request: { hook: string }): Record<string, unknown> => {
    described.push(request.hook)
    return { protocolVersion: 1, points: ['beforeToolExecute'], version: 'v1', description: 'tags' }
  }
  unixServer = await serveRemoteHook(`unix:${join(sockets, 'tagger.sock')}`, { beforeToolExecute: tag }, { describe })
  tcpServer = await serveRemoteHook('127.0.0.1:0', { beforeToolExecute: tag }, { describe })
  t = await startTenants([
    { id: 'closed', hooks: { 'c-unix/hook.json': remote(unixServer.address), 'c-tcp/hook.json': remote(tcpServer.address) } },
    {
      id: 'open',
      hooks: { 'o-unix/hook.json': remote(unixServer.address), 'o-tcp/hook.json': remote(tcpServer.address) },
      remoteHooks: [`unix:${sockets}/*.sock`, '127.0.0.1:*'],
    },
    { id: 'narrow', hooks: { 'n-unix/hook.json': remote(unixServer.address) }, remoteHooks: ['unix:/run/elsewhere/*.sock', '127.0.0.1:9000'] },
  ])
})

afterAll(async () => {
  await t?.stop()
  await unixServer?.stop()
  await tcpServer?.stop()
  await rm(sockets, { recursive: true, force: true })
})

describe('a tenant without "remoteHooks"', () => {
  it('gets a load diagnostic for each remote hook, and the sidecar never contacts the address', async () => {
    const sock = join(sockets, 'tagger.sock')
    const hooks = await (await t.client('closed')).listHooks()
    expect(hooks.map((h) => [h.name, h.status])).toEqual([
      ['c-tcp', 'broken'],
      ['c-unix', 'broken'],
    ])
    expect(hooks.find((h) => h.name === 'c-unix')?.lastError).toEqual({
      hook: 'c-unix',
      point: '',
      kind: 'load',
      file: 'c-unix/hook.json',
      line: 1,
      message:
        `tenant 'closed' does not allow remote hooks at unix:${sock}: its entry in the tenants file has no "remoteHooks", so it allows none. ` +
        `Point "remote" at an allowed address, or have the operator add "unix:${sock}" (or a pattern such as "unix:${sockets}/*.sock") ` +
        `to the tenant's "remoteHooks" in the tenants file. The hook is skipped until it loads`,
    })
    expect(hooks.find((h) => h.name === 'c-tcp')?.lastError?.message).toContain(`tenant 'closed' does not allow remote hooks at ${tcpServer.address}: `)

    const pushed: Diagnostic[] = []
    const session = await (await t.client('closed')).openSession(sessionOptions(['c-unix', 'c-tcp'], { capabilities: { diagnostic: (d) => pushed.push(d) } }))
    const out = await session.call('beforeToolExecute', toolCall)
    // Pushed right after `opened`, so before any result.
    expect(pushed.map((d) => [d.hook, d.kind])).toEqual([
      ['c-unix', 'load'],
      ['c-tcp', 'load'],
    ])
    expect(out.result).toEqual({ allow: true, arguments: toolCall.arguments })
    expect(out.trace).toEqual([])
    await session.close()

    expect(described.filter((name) => name.startsWith('c-'))).toEqual([])
    expect([...unixServer.invocations, ...tcpServer.invocations].filter((inv) => inv.hook.startsWith('c-'))).toEqual([])
    expect(t.reports).toContainEqual(expect.stringContaining("tenant 'closed': hook 'c-unix' failed to load (c-unix/hook.json:1): tenant 'closed' does not allow"))
  })

  it('is told which addresses its "remoteHooks" do allow', async () => {
    const [hook] = await (await t.client('narrow')).listHooks()
    expect(hook?.lastError?.message).toContain(
      `tenant 'narrow' does not allow remote hooks at unix:${join(sockets, 'tagger.sock')}: its "remoteHooks" allow only unix:/run/elsewhere/*.sock, 127.0.0.1:9000. `,
    )
    expect(described.filter((name) => name.startsWith('n-'))).toEqual([])
  })
})

describe('a tenant whose "remoteHooks" allow the address', () => {
  it('serves its remote hooks, on a Unix socket and on TCP', async () => {
    const session = await (await t.client('open')).openSession(sessionOptions(['o-unix', 'o-tcp']))
    const out = await session.call('beforeToolExecute', toolCall)
    expect(out.diagnostics).toEqual([])
    expect(out.result).toEqual({ allow: true, arguments: { command: 'ls', via: ['o-unix', 'o-tcp'] } })
    await session.close()
    expect(described).toContain('o-unix')
    expect(described).toContain('o-tcp')
  })
})

describe('editing "remoteHooks" in the tenants file', () => {
  it('loads the tenant\'s hooks again under the new list, ending its open sessions with UNAVAILABLE', async () => {
    const session = await (await t.client('closed')).openSession(sessionOptions(['c-unix']))
    const ended = new Promise<HookdError>((resolve) => session.onEnd(resolve))
    await t.write(t.entries.map((e) => (e.id === 'closed' ? { ...e, remoteHooks: [`unix:${join(sockets, 'tagger.sock')}`] } : e)))
    const err = await ended
    expect(err).toMatchObject({
      code: 'unavailable',
      message: `tenant 'closed''s allowed remote hook addresses ("remoteHooks") were changed by the operator; open the session again`,
    })
    await waitFor('the report of the edit', () => t.reports.find((line) => line.includes("changed 'closed': remote hooks (1 open stream ended)")))

    const hooks = await (await t.client('closed')).listHooks()
    expect(hooks.map((h) => [h.name, h.status])).toEqual([
      ['c-tcp', 'broken'],
      ['c-unix', 'ready'],
    ])
    const again = await (await t.client('closed')).openSession(sessionOptions(['c-unix']))
    expect((await again.call('beforeToolExecute', toolCall)).result.arguments).toEqual({ command: 'ls', via: ['c-unix'] })
    await again.close()
    expect(described).toContain('c-unix')
    expect(described).not.toContain('c-tcp')
  })
})

describe('matching an address against "remoteHooks"', () => {
  const allow = (patterns: string[], text: string, hookJson = '/srv/hooks/acme/h/hook.json'): boolean =>
    tenantRemoteAllow(
      'acme',
      patterns.map((p) => remotePattern(p, '/etc/hookd')),
    )(remoteAddress(text, hookJson)) === undefined

  it('lets * stand for the characters of one path segment, never a "/"', () => {
    expect(allow(['unix:/run/acme/*.sock'], 'unix:/run/acme/guard.sock')).toBe(true)
    expect(allow(['unix:/run/acme/*.sock'], 'unix:/run/acme/sub/guard.sock')).toBe(false)
    expect(allow(['unix:/run/acme/*.sock'], 'unix:/run/acme/guard.socket')).toBe(false)
    expect(allow(['unix:/run/*/hook.sock'], 'unix:/run/acme/../../etc/hook.sock')).toBe(false)
  })

  it('compares the path hookd connects to: relative paths resolved, ".." removed', () => {
    expect(allow(['unix:/srv/hooks/acme/h/*.sock'], 'unix:own.sock')).toBe(true)
    expect(allow(['unix:/run/acme/*.sock'], 'unix:/run/acme/../beta/x.sock')).toBe(false)
    expect(allow(['unix:/run/acme/*.sock'], 'unix:../../../../run/acme/x.sock')).toBe(true)
    // A relative entry is relative to the tenants file's folder.
    expect(allow(['unix:sockets/*.sock'], 'unix:/etc/hookd/sockets/a.sock')).toBe(true)
  })

  it('matches TCP addresses by host (any case) and port, with * for any port', () => {
    expect(allow(['127.0.0.1:9000'], '127.0.0.1:9000')).toBe(true)
    expect(allow(['127.0.0.1:9000'], '127.0.0.1:9001')).toBe(false)
    expect(allow(['127.0.0.1:*'], '127.0.0.1:9001')).toBe(true)
    expect(allow(['127.0.0.1:*'], '127.0.0.10:9001')).toBe(false)
    expect(allow(['Hooks.Acme.internal:443'], 'hooks.acme.INTERNAL:443')).toBe(true)
    expect(allow(['*.acme.internal:443'], 'evil.example:443')).toBe(false)
    expect(allow(['[::1]:9000'], '[::1]:9000')).toBe(true)
    // No DNS: a name is not its address.
    expect(allow(['127.0.0.1:9000'], 'localhost:9000')).toBe(false)
    expect(allow([], '127.0.0.1:9000')).toBe(false)
  })
})
