/**
 * `hookd agent --addr ADDR --token TOKEN` against a multi-tenant sidecar: the tenant's hooks run, and a
 * missing token is refused with what to do.
 */
import { spawn } from 'node:child_process'
import { mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hook } from '../support/sidecar.js'
import { type TenantFixture, startTenants } from '../tenants/support.js'
import { BUILT_CLI, ROOT } from '../support/processes.js'

const CLI = [BUILT_CLI, 'agent']

function agent(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const clean: NodeJS.ProcessEnv = {}
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('ANTHROPIC_') && k !== 'HOOKD_TOKEN') clean[k] = v
    const child = spawn(process.execPath, [...CLI, ...args], { cwd: ROOT, env: { ...clean, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
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
