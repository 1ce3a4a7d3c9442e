/**
 * What a gate answers, through real gRPC on a real socket (issue 15): `reason` is a field like any
 * other, a cancelled gate comes back refused, an answer with no field the point knows is an
 * invalid-result, and a confirm nobody was asked shows in the trace.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { HostSession } from '../../src/host/index.js'
import { type Running, hook, sessionOptions, startSidecar, writeTree } from '../support/sidecar.js'

let running: Running
let root: string

const CALL = { id: 'c1', name: 'shell', arguments: { command: 'rm -rf build' } }

beforeAll(async () => {
  root = await writeTree({
    'notes/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ reason: 'noted by notes' })` }),
    'refuse-quiet/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ allow: false })` }),
    'refuse-loud/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ allow: false, reason: 'loud says no' })` }),
    'foreign/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ decision: 'block' })` }),
    'gate-notes/index.js': hook({ 'tool:gate': `(ctx, e) => { e.reason = 'noted at the gate' }` }),
    // The seed's guard: asks before rm -rf, refuses when the human says no.
    'guard/index.js': hook({
      beforeToolExecute: `(ctx, c) => { if (/rm -rf/.test(c.arguments.command)) { if (!ctx.confirm({ title: 'Dangerous command', body: c.arguments.command })) return { allow: false, reason: 'refused by the user' } } }`,
    }),
    'audit/index.js': hook({ beforeToolExecute: `(ctx, c) => { ctx.log('audit saw ' + c.name) }` }),
  })
  running = await startSidecar({ hooks: root })
})

afterAll(async () => {
  await running?.stop()
})

async function withSession<T>(hooks: string[], run: (s: HostSession) => Promise<T>, extra: Parameters<typeof sessionOptions>[1] = {}): Promise<T> {
  const session = await running.client.openSession(sessionOptions(hooks, extra))
  try {
    return await run(session)
  } finally {
    await session.close().catch(() => {})
  }
}

describe('reason is a field like any other', () => {
  it('comes back on an allowed call when a hook set it', async () => {
    const out = await withSession(['notes'], (s) => s.call('beforeToolExecute', CALL))
    expect(out.result).toEqual({ allow: true, reason: 'noted by notes', arguments: CALL.arguments })
    expect(out.trace.map((t) => t.outcome)).toEqual(['changed'])
  })

  it('is kept by a later refusal that gives none; the default text only when no hook set one', async () => {
    const kept = await withSession(['notes', 'refuse-quiet'], (s) => s.call('beforeToolExecute', CALL))
    expect(kept.result).toEqual({ allow: false, reason: 'noted by notes', refusedBy: 'refuse-quiet', arguments: CALL.arguments })
    const fresh = await withSession(['refuse-quiet'], (s) => s.call('beforeToolExecute', CALL))
    expect(fresh.result).toEqual({ allow: false, reason: "refused by hook 'refuse-quiet'", refusedBy: 'refuse-quiet', arguments: CALL.arguments })
  })

  it("is replaced by a later hook's own reason", async () => {
    const out = await withSession(['notes', 'refuse-loud'], (s) => s.call('beforeToolExecute', CALL))
    expect(out.result).toEqual({ allow: false, reason: 'loud says no', refusedBy: 'refuse-loud', arguments: CALL.arguments })
  })

  it('at tool:gate, served by a beforeToolExecute hook: a reason alone changes the reason, and a refusal keeps it', async () => {
    const event = { name: 'shell', callId: 'c1', input: { command: 'ls' } }
    const noted = await withSession(['notes'], (s) => s.call('tool:gate', event))
    expect(noted.result).toEqual({ reason: 'noted by notes' })
    const refused = await withSession(['gate-notes', 'refuse-quiet'], (s) => s.call('tool:gate', event))
    expect(refused.result).toEqual({ block: true, reason: 'noted at the gate' })
  })
})

describe('a returned object with no field the point knows', () => {
  it('is an invalid-result, not a change, and is skipped by default', async () => {
    const out = await withSession(['foreign'], (s) => s.call('beforeToolExecute', CALL))
    expect(out.result).toEqual({ allow: true, arguments: CALL.arguments })
    expect(out.trace.map((t) => t.outcome)).toEqual(['failed'])
    expect(out.diagnostics.map((d) => [d.kind, d.message])).toEqual([
      [
        'invalid-result',
        "hook 'foreign': beforeToolExecute returned {'decision'}, none of which it accepts; return an object like {allow?, reason?, arguments?, defer?} or nothing; the hook was skipped; 'decision' is Claude Code's hook answer, not hookd's: to refuse the tool call, return { allow: false, reason: \"why, for the model\" } from beforeToolExecute (to let it run, return nothing)",
      ],
    ])
  })

  it('refuses the call when the session fails closed, naming the hook', async () => {
    const out = await withSession(['foreign'], (s) => s.call('beforeToolExecute', CALL), { onError: 'refuse' })
    expect(out.result).toEqual({
      allow: false,
      reason: "hookd refused the call: hook 'foreign' could not decide (it returned a value the point does not accept)",
      refusedBy: 'hookd',
      arguments: CALL.arguments,
    })
  })
})

describe('a cancelled gate', () => {
  /** Calls beforeToolExecute on a session whose guard asks a human who never answers, and cancels it then. */
  async function cancelWhileAsking(hooks: string[], extra: Parameters<typeof sessionOptions>[1] = {}) {
    let asked!: () => void
    const confirmAsked = new Promise<void>((resolve) => (asked = resolve))
    const abort = new AbortController()
    return withSession(
      hooks,
      async (s) => {
        const pending = s.call('beforeToolExecute', CALL, { signal: abort.signal })
        await confirmAsked
        abort.abort()
        return pending
      },
      {
        ...extra,
        interactive: true,
        capabilities: {
          // The human never answers: only the cancel ends the wait.
          confirm: () => {
            asked()
            return new Promise<boolean>(() => {})
          },
        },
      },
    )
  }

  it('comes back refused by hookd, saying it was cancelled, when cancelled while its guard waits on confirm', async () => {
    const out = await cancelWhileAsking(['guard', 'audit'])
    expect(out.result).toEqual({
      allow: false,
      reason: "hookd refused the call: hook 'guard' could not decide (the call was cancelled)",
      refusedBy: 'hookd',
      arguments: CALL.arguments,
    })
    // The refusal stops the chain: audit is not consulted.
    expect(out.trace.map((t) => [t.hook, t.outcome])).toEqual([
      ['guard', 'cancelled'],
      ['audit', 'not-run'],
    ])
  })

  it('comes back refused even when the session fails open', async () => {
    const out = await cancelWhileAsking(['guard', 'audit'], { onError: 'skip' })
    expect(out.result).toEqual({
      allow: false,
      reason: 'hookd refused the call: the host cancelled it before its hooks decided',
      refusedBy: 'hookd',
      arguments: CALL.arguments,
    })
    expect(out.trace.map((t) => [t.hook, t.outcome])).toEqual([
      ['guard', 'cancelled'],
      ['audit', 'cancelled'],
    ])
  })
})

describe('a confirm nobody was asked', () => {
  it('shows in the trace: the hook, the question and the answer the auto-approve flag gave', async () => {
    const approved = await withSession(['guard', 'audit'], (s) => s.call('beforeToolExecute', CALL), { interactive: false, autoApprove: true })
    expect(approved.result).toEqual({ allow: true, arguments: CALL.arguments })
    expect(approved.trace).toEqual([
      expect.objectContaining({ hook: 'guard', outcome: 'no-opinion', autoConfirms: [{ title: 'Dangerous command', body: 'rm -rf build', approved: true }] }),
      expect.objectContaining({ hook: 'audit', outcome: 'no-opinion', autoConfirms: [] }),
    ])
    const denied = await withSession(['guard'], (s) => s.call('beforeToolExecute', CALL), { interactive: false, autoApprove: false })
    expect(denied.result).toMatchObject({ allow: false, reason: 'refused by the user', refusedBy: 'guard' })
    expect(denied.trace).toEqual([expect.objectContaining({ hook: 'guard', outcome: 'refused', autoConfirms: [{ title: 'Dangerous command', body: 'rm -rf build', approved: false }] })])
  })

  it("is in the audit log's line for the call: the answer, and the question when payloads are logged", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hookd-audit-'))
    const file = join(dir, 'audit.jsonl')
    const audited = await startSidecar({ hooks: root, watch: false, audit: { to: file, payloads: true } })
    try {
      const session = await audited.client.openSession(sessionOptions(['guard'], { interactive: false, autoApprove: true }))
      await session.call('beforeToolExecute', CALL)
      await session.close()
    } finally {
      await audited.stop()
    }
    const lines = (await readFile(file, 'utf8')).trim().split('\n').map((l) => JSON.parse(l) as { point: string; hooks: unknown[] })
    expect(lines.find((l) => l.point === 'beforeToolExecute')?.hooks).toEqual([
      expect.objectContaining({ hook: 'guard', outcome: 'no-opinion', autoConfirms: [{ title: 'Dangerous command', body: 'rm -rf build', approved: true }] }),
    ])
    await rm(dir, { recursive: true, force: true })
  })

  it('is not reported when a human was asked', async () => {
    const out = await withSession(['guard'], (s) => s.call('beforeToolExecute', CALL), { interactive: true, capabilities: { confirm: async () => true } })
    expect(out.result).toEqual({ allow: true, arguments: CALL.arguments })
    expect(out.trace).toEqual([expect.objectContaining({ hook: 'guard', outcome: 'no-opinion', autoConfirms: [] })])
  })
})
