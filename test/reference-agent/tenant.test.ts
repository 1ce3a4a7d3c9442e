/**
 * `hookd agent --addr ADDR --token TOKEN` against a multi-tenant sidecar: the tenant's hooks run, and a
 * missing token is refused with what to do. The command runs in-process (main(argv, io)) with an
 * environment of its own: the test is about what it asks the sidecar and prints, not the process.
 */
import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hook } from '../support/sidecar.js'
import { type TenantFixture, startTenants } from '../tenants/support.js'
import { type Ran, runInProcess } from '../support/processes.js'

/** `hookd agent ...args` with no ANTHROPIC_* or HOOKD_TOKEN from this environment, only `env`'s. */
function agent(args: string[], env: Record<string, string> = {}): Promise<Ran> {
  const unset: Record<string, undefined> = { HOOKD_TOKEN: undefined }
  for (const k of Object.keys(process.env)) if (k.startsWith('ANTHROPIC_')) unset[k] = undefined
  return runInProcess(['agent', ...args], { env: { ...unset, NO_COLOR: '1', ...env } })
}

let tenants: TenantFixture
let script: string
let work: string

beforeAll(async () => {
  tenants = await startTenants([
    { id: 'acme', hooks: { 'no-shell/index.js': hook({ beforeToolExecute: `(ctx, c) => c.name === 'shell' ? { allow: false, reason: 'acme forbids shell' } : undefined` }) } },
  ])
  work = await mkdtemp(join(tmpdir(), 'hookd-agent-tenant-'))
  script = join(work, 'run.json')
  await writeFile(
    script,
    JSON.stringify({ version: 1, turns: [{ text: 'Listing.', toolCalls: [{ name: 'shell', arguments: { command: 'ls' } }] }, { text: 'Done.' }] }),
  )
})

afterAll(() => tenants?.stop())

describe('hookd agent against a tenant sidecar', { timeout: 90_000 }, () => {
  it("runs the tenant's hooks with --token", async () => {
    const ran = await agent(['--addr', tenants.address, '--token', tenants.tokens.get('acme') as string, '--hook', 'no-shell', '--workdir', work, '--model', `scripted:${script}`, 'list'])
    expect(ran.code).toBe(0)
    expect(ran.stderr).toContain('[no-shell] refused shell: acme forbids shell')
  })

  it('takes the token from HOOKD_TOKEN', async () => {
    const ran = await agent(['--addr', tenants.address, '--hook', 'no-shell', '--workdir', work, '--model', `scripted:${script}`, 'list'], {
      HOOKD_TOKEN: tenants.tokens.get('acme') as string,
    })
    expect(ran.code).toBe(0)
    expect(ran.stderr).toContain('acme forbids shell')
  })

  it('fails with the sidecar’s reason when the token is missing, and refuses --token without --addr', async () => {
    const missing = await agent(['--addr', tenants.address, '--hook', 'no-shell', '--workdir', work, '--model', `scripted:${script}`, 'list'])
    expect(missing.code).toBe(1)
    expect(missing.stderr).toMatch(/token/i)
    const usage = await agent(['--token', 'x', '--hook', 'no-shell', '--model', `scripted:${script}`, 'list'])
    expect(usage.code).toBe(2)
    expect(usage.stderr).toContain('--token is for a running sidecar: pass it with --addr')
  })
})
