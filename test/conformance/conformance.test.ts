/**
 * The conformance suite: the same cases (test/conformance/cases/*.json) run by two runners against one
 * real sidecar on a Unix socket: the TypeScript host library (runner.ts), and the Python host
 * (runner.py, spawned with Debian's Python). Both must pass every case.
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadCases } from './case.js'
import { CONFORMANCE, type Harness, PYTHON, startHarness } from './harness.js'
import { runCase } from './runner.js'

const cases = loadCases()
let harness: Harness

beforeAll(async () => {
  const folders = new Set(cases.map((c) => c.hooks))
  if (folders.size !== 1 || !folders.has('hooks')) throw new Error(`every case must use the hooks folder "hooks"; found ${[...folders].join(', ')}`)
  harness = await startHarness('hooks')
})

afterAll(async () => {
  await harness?.stop()
})

describe('TypeScript runner (hookd-sandbox/host)', () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    expect(await runCase(harness.running.client, c), c.rule).toEqual([])
  })
})

describe('Python runner (examples/python/hookd_host.py)', () => {
  it('passes every case', async () => {
    const ran = await new Promise<{ code: number | null; out: string }>((resolve) => {
      const child = spawn(PYTHON, [join(CONFORMANCE, 'runner.py'), '--addr', harness.address], { stdio: ['ignore', 'pipe', 'pipe'] })
      let out = ''
      child.stdout.on('data', (d: Buffer) => (out += d.toString()))
      child.stderr.on('data', (d: Buffer) => (out += d.toString()))
      child.on('close', (code) => resolve({ code, out }))
    })
    expect(ran.out).toContain(`${cases.length} passed, 0 failed`)
    expect(ran.code, ran.out).toBe(0)
  }, 120_000)
})
