/**
 * The host's failure policy: what a host sees when hookd is slow, was never started, dies mid-call, or
 * comes back. The sidecar runs as a real `hookd serve` process so that it can be killed and restarted;
 * tests that need it up share the one running, and one is started when none runs.
 */
import type { ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createHooks } from 'hookable'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Diagnostic, GuardedSession, bridgeHookable } from '../../src/host/index.js'
import { startServe, stopProcess } from '../support/processes.js'
import { hook, sessionOptions, writeTree } from '../support/sidecar.js'

let hooksDir: string
let dir: string
let address: string
const children: ChildProcess[] = []

/** The `hookd serve` at `address`: the one running, else a new one. */
async function serve(): Promise<ChildProcess> {
  const running = children.at(-1)
  if (running && running.exitCode === null && running.signalCode === null) return running
  const { child } = await startServe(['--hooks', hooksDir, '--listen', address, '--workers', '1', '--cpu-ms', '20000', '--wall-ms', '20000'])
  children.push(child)
  return child
}

beforeAll(async () => {
  hooksDir = await writeTree({
    'gate/index.js': hook({ 'tool:gate': `(ctx, e) => { if (e.name === 'bad') { e.block = true; e.reason = 'bad tool' } }` }),
    'slow/index.js': hook({
      'tool:gate': `(ctx, e) => { if (e.name === 'slow') { const end = Date.now() + 3000; while (Date.now() < end) {} } }`,
      'tool:transform': `(ctx, e) => { const end = Date.now() + 3000; while (Date.now() < end) {} e.result = 'late' }`,
    }),
    'asker/index.js': hook({ 'tool:gate': `(ctx, e) => { if (!ctx.confirm({ title: 'run ' + e.name + '?' })) { e.block = true; e.reason = 'human said no' } }` }),
  })
  dir = await mkdtemp(join(tmpdir(), 'hookd-failure-'))
  address = `unix:${join(dir, 'hookd.sock')}`
})

afterAll(async () => {
  await Promise.all(children.splice(0).map((child) => stopProcess(child, 'SIGKILL')))
  await rm(dir, { recursive: true, force: true })
})

describe('never started', () => {
  it('fails gates closed and transforms open, saying why, and does not throw', async () => {
    const diagnostics: Diagnostic[] = []
    const guarded = await GuardedSession.open(address, sessionOptions(['gate']), { onDiagnostic: (d) => diagnostics.push(d) })
    expect(guarded.connected).toBe(false)
    const gate = await guarded.call('tool:gate', { name: 'ls', input: {} })
    expect(gate.result).toEqual({ block: true, reason: expect.stringMatching(/^hookd could not answer tool:gate: it is unreachable \(cannot reach hookd/) })
    const transform = await guarded.call('tool:transform', { result: 'r', isError: false })
    expect(transform.result).toEqual({})
    const rienda = await guarded.call('beforeToolExecute', { id: 'c', name: 'ls', arguments: { a: 1 } })
    expect(rienda.result).toMatchObject({ allow: false, arguments: { a: 1 }, reason: expect.stringContaining('hookd could not answer beforeToolExecute') })
    expect(diagnostics.map((d) => [d.point, d.kind, d.message.endsWith('(fail closed)') || d.message.endsWith('(fail open)')])).toEqual([
      ['tool:gate', 'unavailable', true],
      ['tool:transform', 'unavailable', true],
      ['beforeToolExecute', 'unavailable', true],
    ])
    await guarded.close()
  })

  it('registers the gates on a hookable host so they fail closed rather than go unguarded', async () => {
    const guarded = await GuardedSession.open(address, sessionOptions(['gate']))
    const hooks = createHooks<Record<string, (ctx: Record<string, unknown>) => void | Promise<void>>>()
    bridgeHookable(hooks, guarded)
    const ctx: Record<string, unknown> = { name: 'ls', input: {} }
    await hooks.callHook('tool:gate', ctx)
    expect(ctx.block).toBe(true)
    await guarded.close()
  })

  it('honours per-point overrides: a gate configured to fail open', async () => {
    const guarded = await GuardedSession.open(address, sessionOptions(['gate']), { failure: { points: { 'tool:gate': { mode: 'open' } } } })
    expect((await guarded.call('tool:gate', { name: 'ls', input: {} })).result).toEqual({})
    await guarded.close()
  })
})

describe('a slow sidecar', () => {
  it('applies the policy at the deadline and cancels the call', async () => {
    await serve()
    const guarded = await GuardedSession.open(address, sessionOptions(['slow']), { failure: { deadlineMs: 300 } })
    expect(guarded.connected).toBe(true)
    const gate = await guarded.call('tool:gate', { name: 'slow', input: {} })
    expect(gate.result).toEqual({ block: true, reason: 'hookd could not answer tool:gate: it did not answer within 300 ms' })
    const transform = await guarded.call('tool:transform', { result: 'r' })
    expect(transform.result).toEqual({})
    expect(transform.diagnostics[0]?.message).toContain('nothing was changed (fail open)')
    // The session is still usable afterwards.
    expect((await guarded.call('tool:gate', { name: 'fast', input: {} })).result).toEqual({})
    await guarded.close()
  })

  it('pauses the deadline while a human answers confirm', async () => {
    await serve()
    const guarded = await GuardedSession.open(
      address,
      sessionOptions(['asker'], {
        interactive: true,
        capabilities: { confirm: () => new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 900)) },
      }),
      { failure: { deadlineMs: 400 } },
    )
    const gate = await guarded.call('tool:gate', { name: 'deploy', input: {} })
    expect(gate.result).toEqual({ block: true, reason: 'human said no' })
    expect(gate.diagnostics).toEqual([])
    await guarded.close()
  })
})

describe('a sidecar that dies and comes back', () => {
  it('fails the call in flight by its policy, then reconnects and reopens the session', async () => {
    const first = await serve()
    const diagnostics: Diagnostic[] = []
    const guarded = await GuardedSession.open(address, sessionOptions(['slow', 'gate']), {
      failure: { deadlineMs: 10_000 },
      reconnect: { initialMs: 50, maxMs: 200 },
      onDiagnostic: (d) => diagnostics.push(d),
    })
    const inFlight = guarded.call('tool:gate', { name: 'slow', input: {} })
    const dead = new Promise((resolve) => setTimeout(resolve, 300)).then(() => stopProcess(first, 'SIGKILL'))
    const killed = await inFlight
    expect(killed.result).toMatchObject({ block: true, reason: expect.stringContaining('hookd could not answer tool:gate: the connection failed') })

    // Down: answered by the policy at once.
    expect((await guarded.call('tool:gate', { name: 'bad', input: {} })).result).toMatchObject({ block: true })

    await dead
    await serve()
    await expect.poll(() => guarded.connected, { timeout: 15_000, interval: 50 }).toBe(true)
    const back = await guarded.call('tool:gate', { name: 'bad', input: {} })
    expect(back.result).toEqual({ block: true, reason: 'bad tool' })
    expect(back.diagnostics).toEqual([])
    expect(diagnostics.length).toBeGreaterThanOrEqual(2)
    await guarded.close()
  })

  it('still fails the open for a host mistake such as an unknown hook', async () => {
    await serve()
    await expect(GuardedSession.open(address, sessionOptions(['no-such-hook']))).rejects.toMatchObject({ code: 'not-found' })
  })
})
