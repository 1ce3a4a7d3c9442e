/**
 * Live edits of the tenants file, over real gRPC: tenants added, policies changed, tokens revoked and
 * tenants removed take effect without a restart; a broken edit keeps the last good tenants.
 */
import { writeFile } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { HookdError } from '../../src/host/index.js'
import { hashToken, newToken } from '../../src/sidecar/tenancy/tenant-token.js'
import { waitFor } from '../reload/support.js'
import { hook, sessionOptions } from '../support/sidecar.js'
import { type TenantFixture, startTenants, toolCall } from './support.js'

const reader = hook({
  beforeToolExecute: `(ctx, c) => { try { return { arguments: { exists: ctx.file.exists('x') } } } catch (e) { return { arguments: { denied: e.message } } } }`,
})

let t: TenantFixture

beforeAll(async () => {
  t = await startTenants([
    { id: 'acme', hooks: { 'reader/index.js': reader }, policy: { file: 'none' } },
    { id: 'beta', hooks: { 'reader/index.js': reader }, policy: { file: 'read' } },
  ])
})

afterAll(async () => {
  await t?.stop()
})

/** Waits until the sidecar reported a line matching `pattern`, and returns it. */
function reported(pattern: RegExp): Promise<string> {
  return waitFor(`a report matching ${pattern}`, () => t.reports.find((line) => pattern.test(line)))
}

describe('a live edit of the tenants file', () => {
  it('adds a tenant: its token works from then on', async () => {
    const gamma = await t.entry({ id: 'gamma', hooks: { 'gamma-hook/index.js': reader }, policy: { file: 'read' } })
    const before = await (await t.client('gamma')).listHooks().catch((e: unknown) => e)
    expect(before).toMatchObject({ code: 'unauthenticated' })
    await t.write([...t.entries, gamma])
    await reported(/reloaded: added 'gamma'/)
    expect((await (await t.client('gamma')).listHooks()).map((h) => h.name)).toEqual(['gamma-hook'])
  })

  it("changes a policy, which an open session's next call already follows", async () => {
    const session = await (await t.client('acme')).openSession(sessionOptions(['reader']))
    const denied = await session.call('beforeToolExecute', toolCall)
    expect(denied.result.arguments).toEqual({ denied: "ctx.file.exists('x') refused: tenant 'acme' allows no file access" })
    await t.write(t.entries.map((e) => (e.id === 'acme' ? { ...e, policy: { file: 'read' } } : e)))
    await reported(/changed 'acme': policy/)
    const allowed = await session.call('beforeToolExecute', toolCall)
    expect(allowed.result.arguments).toEqual({ exists: false })
    await session.close()
  })

  it('keeps the last good tenants when an edit is broken, and says where', async () => {
    const good = t.entries
    await writeFile(t.file, JSON.stringify({ tenants: [good[0], { ...good[1], limits: { cpuMs: -5 } }] }))
    const line = await reported(/still serving/)
    expect(line).toBe(`tenants file ${t.file}: tenants[1].limits.cpuMs: expected a positive integer; still serving the last good tenants (acme, beta, gamma)`)
    expect((await (await t.client('gamma')).listHooks()).map((h) => h.name)).toEqual(['gamma-hook'])

    await writeFile(t.file, '{ "tenants": [ ')
    await reported(/is not valid JSON.*still serving the last good tenants/)
    await t.write(good)
  })

  it('ends an open session with UNAUTHENTICATED when its token is revoked', async () => {
    const session = await (await t.client('beta')).openSession(sessionOptions(['reader']))
    expect((await session.call('beforeToolExecute', toolCall)).result.arguments).toEqual({ exists: false })
    const ended = new Promise<HookdError>((resolve) => session.onEnd(resolve))
    const token = newToken()
    await t.write(t.entries.map((e) => (e.id === 'beta' ? { ...e, tokenHash: hashToken(token) } : e)))
    const err = await ended
    expect(err.code).toBe('unauthenticated')
    expect(err.message).toBe("tenant 'beta''s token was revoked (its tokenHash changed in the tenants file); connect again with the new token")
    expect(await (await t.client('beta')).listHooks().catch((e: unknown) => e)).toMatchObject({ code: 'unauthenticated' })
    expect((await (await t.client(token)).listHooks()).map((h) => h.name)).toEqual(['reader'])
    await reported(/changed 'beta': token \(1 open stream ended\)/)
  })

  it('ends the open sessions of a removed tenant and refuses its token', async () => {
    const session = await (await t.client('gamma')).openSession(sessionOptions(['gamma-hook']))
    const ended = new Promise<HookdError>((resolve) => session.onEnd(resolve))
    await t.write(t.entries.filter((e) => e.id !== 'gamma'))
    const err = await ended
    expect(err).toMatchObject({ code: 'unauthenticated', message: "tenant 'gamma' was removed from this sidecar's tenants; its token is no longer accepted" })
    expect(await (await t.client('gamma')).listHooks().catch((e: unknown) => e)).toMatchObject({ code: 'unauthenticated' })
    await reported(/removed 'gamma' \(1 open stream ended\)/)
  })
})
