/**
 * The audit log: one JSON line per point result, with the decision id the host also receives.
 */
import { readFile, rm } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HookdClient } from '../../src/host/index.js'
import { Sidecar } from '../../src/sidecar/sidecar.js'
import { waitFor } from '../reload/support.js'
import { hook, sessionOptions, writeTree } from '../support/sidecar.js'
import { type TenantFixture, auditLines, startTenants, toolCall } from './support.js'

const guard = hook({ beforeToolExecute: `(ctx, c) => c.arguments.command === 'rm' ? { allow: false, reason: 'no rm' } : undefined` })
const thrower = hook({ beforeToolExecute: `(ctx, c) => { throw new Error('secret ' + c.arguments.command) }` })
const tagger = hook({ beforeModelRequest: `(ctx, r) => ({ system: r.system + '!' })` })
const asker = hook({ beforeToolExecute: `(ctx, c) => { ctx.confirm({ title: 'go?' }) }` })

describe('without payloads', () => {
  let t: TenantFixture
  let log: string

  beforeAll(async () => {
    const dir = await writeTree({})
    log = join(dir, 'audit.jsonl')
    t = await startTenants(
      [
        { id: 'acme', hooks: { 'guard/index.js': guard, 'thrower/index.js': thrower, 'tagger/index.js': tagger } },
        { id: 'beta', hooks: { 'guard/index.js': guard, 'asker/index.js': asker }, limits: { concurrentInvocations: 1 } },
      ],
      { audit: { to: log } },
    )
  })

  afterAll(async () => {
    await t?.stop()
    await rm(dirname(log), { recursive: true, force: true })
  })

  it('records each point result as one JSON line, with the decision id the host got, the agent, the workdir and the hook versions', async () => {
    const workdir = dirname(log)
    const session = await (await t.client('acme')).openSession(sessionOptions(['thrower', 'guard', 'tagger'], { sessionId: 'run-1', agentId: 'ci-agent', workdir }))
    const refused = await session.call('beforeToolExecute', { id: 'c1', name: 'shell', arguments: { command: 'rm' } })
    const allowed = await session.call('beforeToolExecute', toolCall)
    const transformed = await session.call('beforeModelRequest', { system: 'S', model: 'm', messages: [] })
    const closed = await session.close('end_turn')
    const ids = [refused, allowed, transformed, closed].map((r) => r.decisionId)
    expect(new Set(ids).size).toBe(4)

    const lines = await waitFor('four audit lines', async () => {
      const all = (await auditLines(log)).filter((l) => l.session === 'run-1')
      return all.length >= 4 ? all : undefined
    })
    expect(lines.map((l) => l.decisionId)).toEqual(ids)
    const [first, second, third, fourth] = lines
    expect(first).toEqual({
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      decisionId: refused.decisionId,
      tenant: 'acme',
      session: 'run-1',
      agent: 'ci-agent',
      workdir,
      seq: 1,
      point: 'beforeToolExecute',
      hooks: [
        // Neither declares permissions (hook.json "permissions"): null, it may do what the session allows.
        { hook: 'thrower', version: refused.trace[0]?.version, digest: refused.trace[0]?.digest, outcome: 'failed', durationUs: expect.any(Number), cpuUs: expect.any(Number), layer: 'tenant', permissions: null },
        { hook: 'guard', version: refused.trace[1]?.version, digest: refused.trace[1]?.digest, outcome: 'refused', durationUs: expect.any(Number), cpuUs: expect.any(Number), layer: 'tenant', permissions: null },
      ],
      decision: { outcome: 'refused', allow: false, reason: 'no rm', by: 'guard' },
      layer: 'tenant',
      diagnostics: [{ hook: 'thrower', kind: 'throw' }],
      durationUs: refused.durationUs,
    })
    expect(refused.trace.map((t) => t.version)).toEqual([expect.stringMatching(/^[0-9a-f]{12}$/), expect.stringMatching(/^[0-9a-f]{12}$/)])
    // The content digest hookd.lock pins, in the host's trace and the audit line alike.
    expect(refused.trace.map((t) => t.digest)).toEqual([expect.stringMatching(/^sha256:[0-9a-f]{64}$/), expect.stringMatching(/^sha256:[0-9a-f]{64}$/)])
    expect(second).toMatchObject({ point: 'beforeToolExecute', agent: 'ci-agent', workdir, decision: { outcome: 'allowed', allow: true } })
    expect(third).toMatchObject({ point: 'beforeModelRequest', hooks: [expect.objectContaining({ hook: 'tagger', outcome: 'changed' })] })
    expect(third).not.toHaveProperty('decision')
    expect(fourth).toMatchObject({ point: 'afterRun' })
    // No payload, result or diagnostic message (which quotes the payload here) without --audit-payloads.
    const text = JSON.stringify(lines)
    expect(text).not.toContain('secret')
    expect(lines.every((l) => !('payload' in l) && !('result' in l))).toBe(true)
  })

  it('records a call refused over quota, decided by hookd', async () => {
    const client = await t.client('beta')
    // The tenant may run one call at a time; the first waits on a confirm until released.
    let release!: (answer: boolean) => void
    let asked!: () => void
    const wasAsked = new Promise<void>((resolve) => (asked = resolve))
    const answer = new Promise<boolean>((resolve) => (release = resolve))
    const busy = await client.openSession(
      sessionOptions(['asker'], { interactive: true, capabilities: { confirm: () => (asked(), answer) } }),
    )
    const running = busy.call('beforeToolExecute', toolCall)
    await wasAsked
    const session = await client.openSession(sessionOptions(['guard'], { sessionId: 'beta-run' }))
    const quota = await session.call('beforeToolExecute', toolCall)
    release(true)
    await running
    const line = await waitFor('the quota line', async () => (await auditLines(log)).find((l) => l.decisionId === quota.decisionId))
    expect(line).toMatchObject({
      tenant: 'beta',
      session: 'beta-run',
      hooks: [{ hook: 'guard', outcome: 'not-run' }],
      decision: { outcome: 'refused', allow: false, by: 'hookd', reason: expect.stringContaining("tenant 'beta' is over its limit of 1 concurrent invocation") },
      diagnostics: [{ hook: '', kind: 'quota' }],
    })
    await session.close()
    await busy.close()
  })
})

describe('with payloads, on a sidecar without tenants', () => {
  it("keeps a hook's question inert: no character a terminal acts on reaches the line, which parses back to the question", async () => {
    // C1 CSI (clear screen), a bidi override, line and paragraph separators, DEL: JSON.stringify leaves them raw.
    const title = 'ok\u009b2J\u202eevil\u2028two\u2029\u007f'
    const shady = hook({ beforeToolExecute: `(ctx) => { ctx.confirm({ title: ${JSON.stringify(title)}, body: 'b\u0085' }) }` })
    const root = await writeTree({ 'shady/index.js': shady, 'thrower/index.js': thrower })
    const log = join(root, 'audit.jsonl')
    const sidecar = await Sidecar.create({ hooks: root, workers: 1, watch: false, audit: { to: log, payloads: true } })
    const address = await sidecar.listen(`unix:${join(root, 'hookd.sock')}`)
    const client = await HookdClient.connect(address)
    try {
      const out = await client.invoke(sessionOptions(['shady'], { autoApprove: true }), 'beforeToolExecute', toolCall)
      const line = await waitFor('the line', async () => (await auditLines(log)).find((l) => l.decisionId === out.decisionId))
      expect(line.hooks).toEqual([expect.objectContaining({ hook: 'shady', autoConfirms: [{ title, body: 'b\u0085', approved: true }] })])
      const raw = await readFile(log, 'utf8')
      expect(raw.split('\n').filter((l) => l !== '')).toHaveLength(1)
      expect(raw).not.toMatch(/[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/)
      // The same sidecar answers an ordinary call afterwards.
      const next = await client.invoke(sessionOptions(['thrower']), 'beforeToolExecute', toolCall)
      expect(next.diagnostics.map((d) => d.kind)).toEqual(['throw'])
    } finally {
      client.close()
      await sidecar.stop()
      await rm(root, { recursive: true, force: true })
    }
  })

  it('adds payload, result and diagnostic messages, with tenant null', async () => {
    const root = await writeTree({ 'thrower/index.js': thrower })
    const log = join(root, 'audit.jsonl')
    const sidecar = await Sidecar.create({ hooks: root, workers: 1, watch: false, audit: { to: log, payloads: true } })
    const address = await sidecar.listen(`unix:${join(root, 'hookd.sock')}`)
    const client = await HookdClient.connect(address)
    try {
      const out = await client.invoke(sessionOptions(['thrower'], { sessionId: 'solo' }), 'beforeToolExecute', toolCall)
      const line = await waitFor('the line', async () => (await auditLines(log)).find((l) => l.decisionId === out.decisionId))
      expect(line).toMatchObject({
        tenant: null,
        session: 'solo',
        seq: 0,
        payload: toolCall,
        result: { allow: true, arguments: toolCall.arguments },
        diagnostics: [{ hook: 'thrower', kind: 'throw', message: expect.stringContaining('secret ls') }],
      })
    } finally {
      client.close()
      await sidecar.stop()
      await rm(root, { recursive: true, force: true })
    }
  })
})
