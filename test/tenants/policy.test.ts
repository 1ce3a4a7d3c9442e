/**
 * Per-tenant capability policy and limits, over real gRPC. The effective policy is the intersection of
 * the tenant's and the session's; a tenant's limits replace the sidecar's for its invocations.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SessionOptions } from '../../src/host/index.js'
import { hook, sessionOptions } from '../support/sidecar.js'
import { type TenantFixture, startTenants, toolCall } from './support.js'

const probe = hook({
  beforeToolExecute: `(ctx, c) => {
    const out = { env: ctx.env }
    try { out.read = ctx.file.read('note.txt') } catch (e) { out.read = 'denied: ' + e.message }
    try { ctx.file.write('out.txt', 'x'); out.write = 'ok' } catch (e) { out.write = 'denied: ' + e.message }
    try { out.confirm = ctx.confirm({ title: 'ok?' }) } catch (e) { out.confirm = 'denied: ' + e.message }
    return { arguments: out }
  }`,
})
const spin = hook({ beforeToolExecute: `(ctx, c) => { const end = Date.now() + 400; while (Date.now() < end) {} return { arguments: { spun: true } } }` })

let t: TenantFixture
let workdir: string

beforeAll(async () => {
  workdir = await mkdtemp(join(tmpdir(), 'hookd-workdir-'))
  await writeFile(join(workdir, 'note.txt'), 'the note')
  t = await startTenants([
    { id: 'closed', hooks: { 'probe/index.js': probe, 'spin/index.js': spin }, policy: { file: 'none', env: ['SHARED'], confirm: false }, limits: { cpuMs: 50 } },
    { id: 'open', hooks: { 'probe/index.js': probe, 'spin/index.js': spin }, policy: { file: 'read-write', env: ['SHARED', 'OPEN_ONLY'] } },
    { id: 'reader', hooks: { 'probe/index.js': probe }, policy: { file: 'read' } },
  ])
})

afterAll(async () => {
  await t?.stop()
  await rm(workdir, { recursive: true, force: true })
})

const env = { SHARED: 's', OPEN_ONLY: 'o', NOBODY: 'n' }
const asking = (): Partial<SessionOptions> => ({ workdir, autoApprove: true, env, policy: { file: 'read-write', env: ['SHARED', 'OPEN_ONLY', 'NOBODY'] } })

describe('capability policy', () => {
  it("gives a tenant with file 'none' no file access, whatever its session asks", async () => {
    const session = await (await t.client('closed')).openSession(sessionOptions(['probe'], asking()))
    const out = await session.call('beforeToolExecute', toolCall)
    expect(out.result.arguments).toEqual({
      env: { SHARED: 's' },
      read: "denied: ctx.file.read('note.txt') refused: tenant 'closed' allows no file access",
      write: "denied: ctx.file.write('out.txt') refused: tenant 'closed' allows no file access",
      confirm: "denied: ctx.confirm({ title: 'ok?' }) refused: tenant 'closed' does not allow ctx.confirm",
    })
    await session.close()
  })

  it("lets a tenant with file 'read-write' read and write, and see its allowlisted env", async () => {
    const session = await (await t.client('open')).openSession(sessionOptions(['probe'], asking()))
    const out = await session.call('beforeToolExecute', toolCall)
    expect(out.result.arguments).toEqual({ env: { SHARED: 's', OPEN_ONLY: 'o' }, read: 'the note', write: 'ok', confirm: true })
    await session.close()
  })

  it("narrows to the session's own policy when that is the stricter one", async () => {
    const session = await (await t.client('open')).openSession(sessionOptions(['probe'], { workdir, env, policy: { file: 'none', env: ['OPEN_ONLY'], confirm: false } }))
    const out = await session.call('beforeToolExecute', toolCall)
    expect(out.result.arguments).toMatchObject({
      env: { OPEN_ONLY: 'o' },
      read: "denied: ctx.file.read('note.txt') refused: this session allows no file access",
      confirm: expect.stringContaining('this session does not allow ctx.confirm'),
    })
    await session.close()
  })

  it("lets a tenant with file 'read' read but not write", async () => {
    const out = await (await t.client('reader')).invoke(sessionOptions(['probe'], asking()), 'beforeToolExecute', toolCall)
    // Invoke has no host to read files: the read passes the policy and fails at the (absent) host.
    expect(out.result.arguments).toMatchObject({
      env: {},
      read: expect.stringContaining('needs a host to serve it'),
      write: "denied: ctx.file.write('out.txt') refused: tenant 'reader' allows reading files only",
    })
  })
})

describe('limits', () => {
  it("applies a tenant's CPU limit to its invocations only", async () => {
    const closed = await (await t.client('closed')).invoke(sessionOptions(['spin']), 'beforeToolExecute', toolCall)
    expect(closed.diagnostics).toEqual([expect.objectContaining({ hook: 'spin', kind: 'cpu' })])
    const open = await (await t.client('open')).invoke(sessionOptions(['spin']), 'beforeToolExecute', toolCall)
    expect(open.diagnostics).toEqual([])
    expect(open.result.arguments).toEqual({ spun: true })
  })
})
