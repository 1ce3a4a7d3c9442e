/**
 * The audit log on a disk that fills up: a real small file system (a tmpfs in a mount namespace of the
 * test's own, bench/soak/audit-disk.ts, as root), filled until it answers ENOSPC, then freed. The
 * sidecar goes on answering meanwhile; what the operator must see is how many decisions the log could
 * not hold: on stderr when it starts failing and when it can write again, and as a line in the log
 * itself, with no torn line around it. Without root, /dev/full (every write ENOSPC) is the fault.
 */
import { existsSync } from 'node:fs'
import { readFile, rm } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AuditDisk } from '../../bench/soak/audit-disk.js'
import type { PointResultData } from '../../src/protocol/wire.js'
import { AuditLog, decide } from '../../src/sidecar/session/audit.js'
import { writeTree } from '../support/sidecar.js'

const who = { tenant: 'acme', session: 'run-1', agent: 'ci-agent', workdir: '/srv/run-1' }

let seq = 0
/** A gate's result as the session hands it to the audit log (a hook allowed the call). */
function allowed(): PointResultData {
  seq += 1
  return {
    seq,
    point: 'beforeToolExecute',
    result: { allow: true, arguments: { command: 'ls' } },
    diagnostics: [],
    trace: [{ hook: 'guard', version: 'v1', outcome: 'no-opinion', durationUs: 10, cpuUs: 5 }],
    durationUs: 20,
  }
}

/** Records `n` decisions; returns their ids, as the host got them. */
function record(audit: AuditLog, n: number): string[] {
  return Array.from({ length: n }, () => decide(allowed(), who, { id: 'c', name: 'shell', arguments: { command: 'ls -la '.repeat(40) } }, audit).decisionId)
}

/**
 * Records decisions on a full disk until the log refuses one (the file's last page may still take a
 * few lines), then `more`; returns the ids it wrote and those it could not.
 */
function recordUntilRefused(audit: AuditLog, more: number): { fitted: string[]; refused: string[] } {
  const fitted: string[] = []
  for (;;) {
    const [id] = record(audit, 1) as [string]
    if (audit.unwritten > 0) return { fitted, refused: [id, ...record(audit, more)] }
    fitted.push(id)
  }
}

async function lines(path: string): Promise<Array<Record<string, unknown>>> {
  const text = await readFile(path, 'utf8')
  // Every line must be whole JSON: a torn line would throw here.
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>)
}

describe.runIf(process.getuid?.() === 0)('on a tmpfs that fills up', () => {
  let disk: AuditDisk
  let dir: string

  beforeAll(async () => {
    dir = await writeTree({})
    disk = await AuditDisk.create(dir)
    expect(disk.unavailable).toBeUndefined()
  })

  afterAll(async () => {
    await disk?.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('counts what it could not write, says so, writes again once there is room, and the log says how many are missing', async () => {
    const said: string[] = []
    const audit = await AuditLog.open({ to: disk.hostPath, report: (line) => said.push(line) })
    const before = record(audit, 10)
    await disk.fill()
    const { fitted, refused: lost } = recordUntilRefused(audit, 29)
    expect(said).toEqual([expect.stringMatching(/^cannot write the audit log .*audit\.jsonl \(ENOSPC: no space left on device\); decisions are still answered, and counted until it can write again$/)])
    await disk.free()
    const after = record(audit, 5)
    await audit.close()

    const written = await lines(disk.hostPath)
    const ids = written.map((l) => l.decisionId).filter(Boolean)
    expect(ids).toEqual([...before, ...fitted, ...after])
    expect(lost.some((id) => ids.includes(id))).toBe(false)
    const gap = written.filter((l) => 'unwritten' in l)
    expect(gap).toEqual([{ time: expect.any(String), unwritten: 30, from: expect.any(String), to: expect.any(String), error: 'ENOSPC: no space left on device' }])
    // The gap line sits where the missing lines would have been.
    expect(written.indexOf(gap[0] as Record<string, unknown>)).toBe(10 + fitted.length)
    expect(said[1]).toMatch(/^the audit log .*audit\.jsonl is written again: 30 decisions from \S+ to \S+ could not be written \(ENOSPC: no space left on device\); a line in the log says so$/)
    expect(audit.unwritten).toBe(0)
    expect(audit.totalUnwritten).toBe(30)
  })

  it('says at close how many it could not write when the disk is still full', async () => {
    await rm(disk.hostPath, { force: true })
    const said: string[] = []
    const audit = await AuditLog.open({ to: disk.hostPath, report: (line) => said.push(line) })
    record(audit, 3)
    await disk.fill()
    const { fitted } = recordUntilRefused(audit, 6)
    await audit.close()
    await disk.free()
    expect(said.at(-1)).toMatch(/^stopped with 7 decisions not written to the audit log .*audit\.jsonl \(it could not be written since \S+: ENOSPC: no space left on device\)$/)
    expect((await lines(disk.hostPath)).length).toBe(3 + fitted.length)
  })
})

describe.runIf(existsSync('/dev/full'))('on /dev/full', () => {
  it('answers every decision and counts each one it could not write', async () => {
    const said: string[] = []
    const audit = await AuditLog.open({ to: '/dev/full', report: (line) => said.push(line) })
    expect(record(audit, 12)).toHaveLength(12)
    expect(audit.unwritten).toBe(12)
    await audit.close()
    expect(said[0]).toMatch(/^cannot write the audit log \/dev\/full \(ENOSPC: no space left on device\)/)
    expect(said.at(-1)).toMatch(/^stopped with 12 decisions not written to the audit log \/dev\/full/)
  })
})
