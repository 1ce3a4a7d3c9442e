/**
 * Floods of hook-controlled data that once made the sidecar's main thread do unbounded work, or its
 * answers grow without bound: export names, a remote hook's described points, log lines, notifications
 * through a unary Invoke, file writes, a huge field name. Each test asserts the bounded outcome a user
 * sees and that the same sidecar answers an ordinary call after.
 */
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type RemoteHookServer, serveRemoteHook } from '../support/remote-hook.js'
import { type Running, sessionOptions, startSidecar } from '../support/sidecar.js'
import { CALL, UNCHANGED, expectServing, runHooks, startHostile } from './support.js'

const FLOODS = ['export-flood', 'log-lines-flood', 'notify-flood', 'write-flood', 'field-name-flood']

let running: Running
let workdir: string

beforeAll(async () => {
  // Roomy CPU and wall-time limits and 1 MiB answers: only the bound under test may stop these hooks.
  running = await startHostile({ only: FLOODS, limits: { cpuMs: 20_000, wallMs: 40_000, resultBytes: 1024 * 1024, logBytes: 64 * 1024, capabilityCalls: 512 } })
  workdir = await mkdtemp(join(tmpdir(), 'hookd-floods-'))
})

afterAll(async () => {
  await running?.stop()
  if (workdir) await rm(workdir, { recursive: true, force: true })
})

describe('what a hook exports and returns', () => {
  it('export-flood: a hook exporting 40,000 functions does not load, and its names cost nothing', async () => {
    const listed = (await running.client.listHooks()).find((h) => h.name === 'export-flood')
    expect(listed?.status).toBe('broken')
    expect(listed?.lastError?.message).toBe(
      'the hook exports more than 1000 functions; a hook exports one function per point it handles. The hook is skipped until it loads; fix export-flood/index.js and save it',
    )
    await expectServing(running)
  })

  it('field-name-flood: a million-character field name is quoted short in the invalid-result diagnostic', async () => {
    const run = await runHooks(running, ['field-name-flood'])
    expect(run.diagnostics).toHaveLength(1)
    const [d] = run.diagnostics
    // Its only field is one the point does not know: an invalid result (issue 15.11), skipped by default.
    expect(d?.kind).toBe('invalid-result')
    expect(d?.message).toBe(
      `hook 'field-name-flood': beforeToolExecute returned {'${'f'.repeat(64)}...'}, none of which it accepts; return an object like {allow?, reason?, arguments?, defer?} or nothing; the hook was skipped`,
    )
    expect(run.result).toEqual(UNCHANGED)
    await expectServing(running)
  })
})

describe('what a hook sends out', () => {
  it('log-lines-flood: 65,536 empty lines stop at the line limit with one marker; the answer counts', async () => {
    const run = await runHooks(running, ['log-lines-flood'])
    expect(run.diagnostics).toEqual([])
    expect(run.result).toEqual({ allow: true, arguments: { ...CALL.arguments, logged: true } })
    expect(run.logs).toEqual([...Array.from({ length: 1000 }, () => ''), "[hookd: this invocation's ctx.log output passed the limit of 1000 lines; the rest was dropped]"])
    await expectServing(running)
  })

  it('notify-flood: through a unary Invoke, the refusal survives 24 MiB of notifications; the rest are counted', async () => {
    const out = await running.client.invoke(sessionOptions(['notify-flood']), 'beforeToolExecute', CALL)
    expect(out.result).toEqual({ allow: false, reason: 'refused after the flood', refusedBy: 'notify-flood', arguments: CALL.arguments })
    expect(out.notifications.length).toBeGreaterThan(0)
    expect(out.notifications.length).toBeLessThan(256)
    expect(out.diagnostics).toEqual([
      {
        hook: '',
        point: 'beforeToolExecute',
        kind: 'limit',
        message: expect.stringMatching(/^the Invoke answer carries at most 1048576 bytes of notifications; \d+ more were dropped \(a Session stream delivers them all, as they happen\)$/),
      },
    ])
    const kept = out.notifications.reduce<number>((n, note) => n + JSON.stringify(note).length, 0)
    expect(kept).toBeLessThanOrEqual(1024 * 1024)
    await expectServing(running)
  })

  it('write-flood: 256 writes of 1 MiB stop at the invocation total; the host got at most that', async () => {
    const run = await runHooks(running, ['write-flood'], { workdir })
    expect(run.diagnostics).toEqual([])
    const args = (run.result as { arguments: { written: number; refused: string } }).arguments
    expect(args.written).toBe(4)
    expect(args.refused).toBe(
      "limit: ctx.file.write: this invocation's capability calls would carry more than 4194304 bytes of arguments in all (the limit); this call and the rest are refused",
    )
    const files = await readdir(workdir)
    expect(files.sort()).toEqual(['flood-0.txt', 'flood-1.txt', 'flood-2.txt', 'flood-3.txt'])
    let total = 0
    for (const f of files) total += (await stat(join(workdir, f))).size
    expect(total).toBeLessThanOrEqual(4 * 1024 * 1024)
    await expectServing(running)
  })
})

describe("what a remote hook's Describe says", () => {
  let remote: RemoteHookServer | undefined
  let other: Running | undefined
  let root: string | undefined

  afterAll(async () => {
    await other?.stop()
    await remote?.stop()
    if (root) await rm(root, { recursive: true, force: true })
  })

  it('twenty remote hooks describing 500 long unknown points: each load error names five; the sidecar serves', async () => {
    root = await mkdtemp(join(tmpdir(), 'hookd-describe-flood-'))
    const points = Array.from({ length: 500 }, (_, i) => `notAPoint${i}${'p'.repeat(180)}`)
    remote = await serveRemoteHook(`unix:${join(root, 'flood.sock')}`, {}, { points })
    const hooks = join(root, 'hooks')
    for (let i = 0; i < 20; i++) {
      await mkdir(join(hooks, `flood-${i}`), { recursive: true })
      await writeFile(join(hooks, `flood-${i}`, 'hook.json'), JSON.stringify({ remote: remote.address }))
    }
    await mkdir(join(hooks, 'ordinary'))
    await writeFile(join(hooks, 'ordinary', 'index.js'), 'module.exports = { beforeToolExecute(ctx, call) { return { arguments: { ...call.arguments, ordinary: true } } } }')
    other = await startSidecar({ hooks, watch: false })
    const listed = await other.client.listHooks()
    const flooded = listed.filter((h) => h.name.startsWith('flood-'))
    expect(flooded).toHaveLength(20)
    for (const h of flooded) {
      expect(h.status).toBe('broken')
      expect(h.lastError?.message).toContain(`describes unknown points '${points[0]?.slice(0, 64)}...', `)
      expect(h.lastError?.message).toContain(' and 495 more; list only hook points in DescribeResponse.points')
      expect(h.lastError?.message.length).toBeLessThan(1500)
    }
    await expectServing(other)
  })
})

