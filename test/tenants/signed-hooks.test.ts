/**
 * A tenant that requires signed hooks for its own folder ("requireSigned", "trustedKeys" in the tenants
 * file): its unsigned hook does not load, saying so, while another tenant's unsigned hook serves; once
 * signed with a trusted key (hookd sign), the hook serves without a restart.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { waitFor } from '../reload/support.js'
import { runInProcess } from '../support/processes.js'
import { hook, sessionOptions } from '../support/sidecar.js'
import { type TenantFixture, startTenants, toolCall } from './support.js'

let keys: string
let t: TenantFixture
const guard = hook({ beforeToolExecute: 'function () { return { allow: false, reason: "signed guard says no" } }' })

beforeAll(async () => {
  keys = await mkdtemp(join(tmpdir(), 'hookd-tenant-keys-'))
  expect((await runInProcess(['keygen', '--out', join(keys, 'acme.pem')])).code).toBe(0)
  t = await startTenants([
    { id: 'acme', hooks: { 'guard/index.js': guard }, fields: { requireSigned: true, trustedKeys: join(keys, 'acme.pem.pub') } },
    { id: 'beta', hooks: { 'guard/index.js': guard } },
  ])
})

afterAll(async () => {
  await t?.stop()
  await rm(keys, { recursive: true, force: true })
})

async function reason(tenant: string): Promise<{ reason?: unknown; diagnostics: string[] }> {
  const client = await t.client(tenant)
  const session = await client.openSession(sessionOptions(['guard']))
  try {
    const out = await session.call('beforeToolExecute', toolCall)
    return { reason: (out.result as { reason?: unknown }).reason, diagnostics: out.diagnostics.map((d) => d.message) }
  } finally {
    session.abandon()
  }
}

describe('a tenant that requires signed hooks', () => {
  it("refuses its unsigned hook, and serves another tenant's", async () => {
    expect(t.reports.join('\n')).toMatch(/tenant 'acme': hook 'guard' failed to load \(guard\/hook\.sig\): hook 'guard' is refused \(--require-signed\): it is unsigned \(no hook\.sig\)/)
    expect((await reason('beta')).reason).toBe('signed guard says no')
    // The acme session runs without it: no unsigned code of acme's ran, and its hook list says why.
    expect((await reason('acme')).reason).toBeUndefined()
    const listed = await (await t.client('acme')).listHooks()
    expect(listed).toMatchObject([{ name: 'guard', status: 'broken', lastError: { message: expect.stringMatching(/it is unsigned \(no hook\.sig\)/) } }])
  })

  it('serves it once it is signed with a trusted key', async () => {
    const signed = await runInProcess(['sign', '--key', join(keys, 'acme.pem'), join(t.dir, 'hooks', 'acme', 'guard')])
    expect(signed.code).toBe(0)
    await waitFor('the signed guard serves', async () => ((await reason('acme').catch(() => ({ reason: undefined }))).reason === 'signed guard says no' ? true : undefined), 20_000)
    expect((await reason('acme')).reason).toBe('signed guard says no')
    // An edit after signing is refused, and the signed version keeps serving.
    await writeFile(join(t.dir, 'hooks', 'acme', 'guard', 'index.js'), hook({ beforeToolExecute: 'function () { return { allow: true } }' }))
    await waitFor('the edit is refused', () => (/changed after signing/.test(t.reports.join('\n')) ? true : undefined), 20_000)
    expect((await reason('acme')).reason).toBe('signed guard says no')
  })
})
