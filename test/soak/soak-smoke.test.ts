/**
 * The soak's smoke (`make soak` for one minute, bench/soak.ts): gRPC hosts and Claude Code agents of
 * three tenants against the built `hookd serve`, every fault kind injected at least once, and every
 * check of docs/operations.md "What hookd survives" asserted by name: wrong answers 0, decisions
 * against audit records, service again after each fault. No latency or memory figure is asserted (a
 * minute is too short for a slope, and the machine may be busy); `make soak` reports them.
 *
 * SOAK_SMOKE_MINUTES changes its length (default 1). Every kind of fault comes once whatever the
 * machine's speed, so on a slow one the run may last a little longer than that.
 */
import { spawn } from 'node:child_process'
import { readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { ROOT } from '../support/processes.js'
import { writeTree } from '../support/sidecar.js'

const MINUTES = Number(process.env.SOAK_SMOKE_MINUTES ?? 1)

let dir: string | undefined

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
})

interface SoakJson {
  calls: { all: Record<string, number> }
  faults: Array<{ kind: string }>
  checks: Array<{ name: string; ok: boolean; detail: string }>
}

// The soak reads the sidecar's processes in /proc.
it.runIf(process.platform === 'linux')(
  `survives ${MINUTES} minute(s) of faults with every answer right and every decision accounted for`,
  async () => {
    dir = await writeTree({})
    const out = join(dir, 'soak.json')
    const ran = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), join(ROOT, 'bench', 'soak.ts')], {
        cwd: ROOT,
        env: { ...process.env, SOAK_MINUTES: String(MINUTES), SOAK_OUT: out },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let output = ''
      child.stdout.on('data', (d: Buffer) => (output += d.toString()))
      child.stderr.on('data', (d: Buffer) => (output += d.toString()))
      child.once('error', reject)
      child.once('exit', (code) => resolve({ code, output }))
    })
    const report = JSON.parse(await readFile(out, 'utf8').catch(() => 'null')) as SoakJson | null
    expect(report, ran.output).not.toBeNull()
    const soak = report as SoakJson
    // It did something: calls on both transports, and each fault kind came at least once.
    expect(soak.calls.all.made).toBeGreaterThan(200)
    expect(soak.calls.all.allowed).toBeGreaterThan(50)
    expect(soak.calls.all['refused-policy']).toBeGreaterThan(10)
    const failed = soak.checks.filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`)
    expect(failed, ran.output).toEqual([])
    for (const name of ['wrong answers: 0', 'every decision recorded, or counted as not written', 'every fault kind injected', 'no gate allowed while its hooks could not decide']) {
      expect(soak.checks.map((c) => c.name)).toContain(name)
    }
    expect(soak.calls.all.wrong).toBe(0)
    expect(ran.code, ran.output).toBe(0)
  },
  (MINUTES * 60 + 180) * 1000,
)
