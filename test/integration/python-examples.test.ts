/**
 * The Python examples as a user runs them: the secret-scan remote hook (examples/python/hooks) served
 * by its own Python process behind a real sidecar, and the Python host (examples/python/host.py)
 * driving one scripted agent turn through them.
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Harness, PYTHON, ROOT, startHarness } from '../conformance/harness.js'
import { sessionOptions } from '../support/sidecar.js'

const AWS_KEY = `AKIA${'IOSFODNN7EXAMPLE'}`
let harness: Harness

beforeAll(async () => {
  harness = await startHarness(join(ROOT, 'examples', 'python', 'hooks'))
})

afterAll(async () => {
  await harness?.stop()
})

interface Printed {
  point: string
  result: Record<string, unknown>
  diagnostics: unknown[]
  trace: Array<{ hook: string; outcome: string }>
}

function host(...args: string[]): Promise<{ code: number | null; lines: Printed[]; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(PYTHON, [join(ROOT, 'examples', 'python', 'host.py'), '--addr', harness.address, '--json', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('close', (code) =>
      resolve({ code, stderr, lines: stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as Printed) }),
    )
  })
}

describe('examples/python', () => {
  it('host.py runs a turn: secret-scan redacts a tool result and refuses the call carrying a key', async () => {
    const ran = await host('--answer', 'no')
    expect(ran.stderr).toBe('')
    expect(ran.code).toBe(0)
    expect(ran.lines.map((l) => l.point)).toEqual([
      'beforeRun',
      'beforeModelRequest',
      'afterModelResponse',
      'beforeToolExecute',
      'afterToolExecute',
      'beforeToolExecute',
    ])
    const [, , , gate1, after1, gate2] = ran.lines
    expect(gate1?.result).toMatchObject({ allow: true })
    expect(after1?.result).toEqual({ text: 'REGION=eu-west-1\nDB_PASSWORD=[redacted password]\nREPLICAS=3\n', isError: false })
    expect(gate2?.result).toMatchObject({ allow: false, refusedBy: 'secret-scan', reason: expect.stringContaining('AWS access key in arguments.command') })
    expect(ran.lines.flatMap((l) => l.diagnostics)).toEqual([])
  })

  it('host.py lets the human allow it', async () => {
    const ran = await host('--answer', 'yes')
    expect(ran.code).toBe(0)
    const gates = ran.lines.filter((l) => l.point === 'beforeToolExecute')
    expect(gates.map((g) => g.result.allow)).toEqual([true, true])
  })

  it('host.py says so when hookd refuses the session', async () => {
    const ran = await host('--hooks', 'nope')
    expect(ran.code).toBe(1)
    expect(ran.stderr).toContain("hookd refused the session (not-found): unknown hook 'nope'")
  })

  it('secret-scan serves a TypeScript host too, and zidane points through their aliases', async () => {
    const { client } = harness.running
    const refused = await client.invoke(sessionOptions(['secret-scan']), 'tool:gate', {
      name: 'http',
      callId: 'z1',
      input: { headers: { Authorization: `token ghp_${'a'.repeat(36)}` } },
    })
    expect(refused.result).toMatchObject({ block: true, reason: expect.stringContaining('GitHub token in arguments.headers.Authorization') })
    const redacted = await client.invoke(sessionOptions(['secret-scan']), 'tool:transform', { name: 'shell', result: `key=${AWS_KEY}`, isError: false })
    expect(redacted.result).toEqual({ result: 'key=[redacted AWS access key]' })
    expect(redacted.logs.map((l) => l.message)).toEqual(['secret-scan: redacted AWS access key from the shell result'])
  })
})
