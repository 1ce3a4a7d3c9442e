/**
 * The front door's bounds over fake runs (door-world.ts) that hold their calls until the test lets
 * them go, on a loopback listener with no worker: the concurrency quota (calls at once, a bounded queue,
 * its wait) per tenant door, the byte budget per tenant and in all, a call whose agent went away
 * (cancelled, its bytes given back, its place in the queue freed), runs ended when idle and when the
 * door closes. Each test ends with the same door answering an ordinary call. The same bounds against
 * a real sidecar under floods, and what only real processes show (connections, other users, the
 * operator's log under load), stay in test/hostile/agents-path/front-door-floods.test.ts.
 */
import { mkdtemp, realpath, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FrontDoor, type FrontDoorOptions } from '../../../src/sidecar/http/front-door.js'
import { claudePre } from '../../agents/support/agent-events.js'
import { until } from '../fakes.js'
import { type Answer, DoorRuns, bearer, send, singleTenancy, tokenTenancy } from './door-world.js'

const TOKEN = 'hkd_front-door-limits-token-0123456789abcdefghijk'
const ACME = 'hkd_front-door-limits-acme-0123456789abcdefghijklm'
const GLOBEX = 'hkd_front-door-limits-globex-0123456789abcdefghijk'
const KiB = 1024

let project = ''
let single: Awaited<ReturnType<typeof singleTenancy>>
let tenants: Awaited<ReturnType<typeof tokenTenancy>>
const doors: FrontDoor[] = []

beforeAll(async () => {
  project = await realpath(await mkdtemp(join(tmpdir(), 'hookd-door-limits-')))
  single = await singleTenancy()
  tenants = await tokenTenancy({ acme: ACME, globex: GLOBEX })
})

afterAll(async () => {
  await Promise.all(doors.map((d) => d.close()))
  await single?.dispose()
  await tenants?.dispose()
  await rm(project, { recursive: true, force: true })
})

/** A door of the sidecar without tenants (or, with `withTenants`, one with acme and globex), over fresh fake runs. */
async function open(options: Partial<FrontDoorOptions>, withTenants = false): Promise<{ url: string; runs: DoorRuns; reports: string[]; door: FrontDoor }> {
  const runs = new DoorRuns()
  const reports: string[] = []
  const base = withTenants ? { tenancy: tenants.tenancy } : { tenancy: single.tenancy, token: TOKEN }
  const door = await FrontDoor.listen('127.0.0.1', 0, { ...base, openRun: runs.open, report: (l) => reports.push(l), ...options })
  doors.push(door)
  return { url: door.url, runs, reports, door }
}

let sessions = 0
const session = (): string => `door-limits-${++sessions}`
/** Claude Code's PreToolUse (a gate), padded to about `size` bytes with its description. */
const gate = (id: string, size = 0): Record<string, unknown> => claudePre(project, id, 'Bash', { command: 'ls', description: 'x'.repeat(size) })
const after = (id: string): Record<string, unknown> => ({ ...gate(id), hook_event_name: 'PostToolUse', tool_response: 'ok' })
/** An event Claude Code's dialect does not map: answered at once, no run, no call. */
const other = (id: string, size = 0): Record<string, unknown> => ({ session_id: id, cwd: project, hook_event_name: 'InstructionsLoaded', file_path: 'x'.repeat(size) })
const deny = (reason: string) => ({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } })
const answered = (a: Answer) => ({ status: a.status, json: a.json })

/** Waits until the fake runs have been asked for `n` point calls in all. */
const calls = (runs: DoorRuns, n: number) => until(() => runs.calls.length >= n)

describe("the concurrency quota (a tenant's calls at once)", () => {
  it('past it, with no room to wait, a gate is refused (never allowed) and another event is 429; the held call then answers', async () => {
    const { url, runs } = await open({ runs: { maxCalls: 1, maxQueued: 0 } })
    runs.hold()
    const held = send(url, '/claude-code/guard', { headers: bearer(TOKEN), body: gate(session()) })
    await calls(runs, 1)
    const quota = "too many calls at once for this sidecar's agents: 1 running and 0 waiting for one of them to finish (the front door's concurrency quota); retry when calls have finished"
    const refused = await send(url, '/claude-code/guard', { headers: bearer(TOKEN), body: gate(session()) })
    expect(answered(refused)).toEqual({ status: 200, json: deny(`hookd could not check this call, so it is refused: ${quota}`) })
    const busy = await send(url, '/claude-code/guard', { headers: bearer(TOKEN), body: after(session()) })
    expect(answered(busy)).toEqual({ status: 429, json: { error: quota } })
    expect(busy.headers['retry-after']).toBe('1')
    expect(runs.calls).toHaveLength(1)
    runs.release()
    expect(answered(await held)).toEqual({ status: 200, json: {} })
    expect(answered(await send(url, '/claude-code/guard', { headers: bearer(TOKEN), body: gate(session()) }))).toEqual({ status: 200, json: {} })
  })

  it('a call may wait its turn in the queue, for at most its wait', async () => {
    const { url, runs } = await open({ runs: { maxCalls: 1, maxQueued: 1, queueMs: 200 } })
    runs.hold()
    const held = send(url, '/claude-code/guard', { headers: bearer(TOKEN), body: gate(session()) })
    await calls(runs, 1)
    const waited = await send(url, '/claude-code/guard', { headers: bearer(TOKEN), body: gate(session()) })
    expect(answered(waited)).toEqual({
      status: 200,
      json: deny("hookd could not check this call, so it is refused: too many calls at once for this sidecar's agents: this one waited 200 ms for one of the 1 running to finish (the front door's concurrency quota); retry when calls have finished"),
    })
    runs.release()
    expect(answered(await held)).toEqual({ status: 200, json: {} })
  })

  it("is each tenant's own: one tenant at its quota does not refuse another's call", async () => {
    const { url, runs } = await open({ runs: { maxCalls: 1, maxQueued: 0 } }, true)
    runs.hold()
    const acme = send(url, '/claude-code/guard', { headers: bearer(ACME), body: gate(session()) })
    await calls(runs, 1)
    const again = await send(url, '/claude-code/guard', { headers: bearer(ACME), body: after(session()) })
    expect(answered(again)).toEqual({ status: 429, json: { error: "too many calls at once for tenant 'acme': 1 running and 0 waiting for one of them to finish (the front door's concurrency quota); retry when calls have finished" } })
    const globex = send(url, '/claude-code/guard', { headers: bearer(GLOBEX), body: gate(session()) })
    await calls(runs, 2)
    expect(runs.calls.map((c) => c.tenant)).toEqual(['acme', 'globex'])
    runs.release()
    expect([answered(await acme), answered(await globex)]).toEqual([
      { status: 200, json: {} },
      { status: 200, json: {} },
    ])
  })
})

describe('the byte budget (bytes of events held while their hooks run)', () => {
  it("past the tenant's budget an event is 429 before its body is read, saying which budget; bytes come back when calls end", async () => {
    const { url, runs } = await open({ budget: { tenantBytes: 64 * KiB, totalBytes: 1024 * KiB } })
    runs.hold()
    const held = send(url, '/claude-code/guard', { headers: bearer(TOKEN), body: gate(session(), 40 * KiB) })
    await calls(runs, 1)
    const over = await send(url, '/claude-code/guard', { headers: bearer(TOKEN), body: other(session(), 40 * KiB) })
    expect(over.status).toBe(429)
    expect(over.json?.error).toMatch(
      /^over the byte budget per tenant: the events of this sidecar's agents waiting on their hooks hold 40\.\d KiB, and this one's 40\.\d KiB would pass the budget of 64\.0 KiB; retry when calls have finished \(slow hooks hold their events\), or raise it \(hookd serve --http-tenant-mb\)$/,
    )
    expect(over.headers.connection).toBe('close')
    // A small event still fits beside the held one.
    expect(answered(await send(url, '/claude-code/guard', { headers: bearer(TOKEN), body: other(session(), KiB) }))).toEqual({ status: 200, json: {} })
    runs.release()
    expect(answered(await held)).toEqual({ status: 200, json: {} })
    expect(answered(await send(url, '/claude-code/guard', { headers: bearer(TOKEN), body: other(session(), 40 * KiB) }))).toEqual({ status: 200, json: {} })
  })

  it("past the sidecar's budget for all tenants an event is 503; a tenant's own budget is apart from another's", async () => {
    const { url, runs } = await open({ budget: { tenantBytes: 64 * KiB, totalBytes: 80 * KiB } }, true)
    runs.hold()
    const held = send(url, '/claude-code/guard', { headers: bearer(ACME), body: gate(session(), 40 * KiB) })
    await calls(runs, 1)
    const over = await send(url, '/claude-code/guard', { headers: bearer(GLOBEX), body: other(session(), 50 * KiB) })
    expect(over.status).toBe(503)
    expect(over.json?.error).toMatch(/^over the sidecar's byte budget: the events of all tenants waiting on their hooks hold 40\.\d KiB, and this one's 50\.\d KiB would pass the budget of 80\.0 KiB for all requests; retry shortly, or raise it \(hookd serve --http-total-mb\)$/)
    expect(over.headers['retry-after']).toBe('1')
    expect(answered(await send(url, '/claude-code/guard', { headers: bearer(GLOBEX), body: other(session(), 30 * KiB) }))).toEqual({ status: 200, json: {} })
    runs.release()
    expect(answered(await held)).toEqual({ status: 200, json: {} })
  })
})

describe('a call whose agent went away', () => {
  it('is cancelled: its point call sees the abort, and its bytes are free at once', async () => {
    const { url, runs } = await open({ budget: { tenantBytes: 64 * KiB, totalBytes: 1024 * KiB } })
    runs.hold()
    const id = session()
    const gone = send(url, '/claude-code/guard', { headers: bearer(TOKEN), body: gate(id, 40 * KiB), sent: (abort) => void calls(runs, 1).then(abort) })
    await expect(gone).rejects.toThrow()
    await until(() => runs.cancelled.length === 1)
    expect(runs.cancelled.map((c) => c.sessionId)).toEqual([id])
    expect(answered(await send(url, '/claude-code/guard', { headers: bearer(TOKEN), body: other(session(), 40 * KiB) }))).toEqual({ status: 200, json: {} })
    runs.release()
    expect(answered(await send(url, '/claude-code/guard', { headers: bearer(TOKEN), body: gate(session()) }))).toEqual({ status: 200, json: {} })
  })

  it('leaves the queue: the next call waits in its place instead of being refused', async () => {
    const { url, runs, reports } = await open({ runs: { maxCalls: 1, maxQueued: 1, queueMs: 30_000 } })
    runs.hold()
    const held = send(url, '/claude-code/guard', { headers: bearer(TOKEN), body: gate(session()) })
    await calls(runs, 1)
    // After a tool, so that its end is a line for the operator (at a gate it would be a refusal nobody
    // reads); it goes away once its run is open, waiting for its turn (or about to).
    const id = session()
    const opened = (): boolean => runs.opened.some((o) => o.start.key.sessionId === id)
    const gone = send(url, '/claude-code/guard', { headers: bearer(TOKEN), body: after(id), sent: (abort) => void until(opened).then(abort) })
    await expect(gone).rejects.toThrow()
    await until(() => reports.includes('http: POST /claude-code/guard: the agent went away before its call could run'))
    const next = send(url, '/claude-code/guard', { headers: bearer(TOKEN), body: gate(session()) })
    runs.release()
    expect([answered(await held), answered(await next)]).toEqual([
      { status: 200, json: {} },
      { status: 200, json: {} },
    ])
    expect(runs.calls.map((c) => c.point)).toEqual(['beforeToolExecute', 'beforeToolExecute'])
  })
})

describe("the runs' ends", () => {
  it('a session nobody ends is ended by hookd when idle (afterRun interrupted), saying so', async () => {
    const { url, runs, reports } = await open({ runs: { idleMs: 50 } })
    const id = session()
    expect(answered(await send(url, '/claude-code/guard', { headers: bearer(TOKEN), body: gate(id) }))).toEqual({ status: 200, json: {} })
    await until(() => runs.ends.length === 1)
    expect(runs.ends).toEqual([{ sessionId: id, reason: 'interrupted', by: 'hookd' }])
    expect(reports).toContain(`http: session ${id} ended (afterRun: interrupted): no event for 0 s`)
  })

  it("closing the door ends its open runs (afterRun interrupted, by hookd), and its port then takes nothing", async () => {
    const { url, runs, door } = await open({})
    const [a, b] = [session(), session()]
    await send(url, '/claude-code/guard', { headers: bearer(TOKEN), body: gate(a) })
    await send(url, '/claude-code/guard', { headers: bearer(TOKEN), body: gate(b) })
    await door.close()
    expect(runs.ends.map((e) => ({ ...e })).sort((x, y) => x.sessionId.localeCompare(y.sessionId))).toEqual([
      { sessionId: a, reason: 'interrupted', by: 'hookd' },
      { sessionId: b, reason: 'interrupted', by: 'hookd' },
    ])
    await expect(send(url, '/healthz', { method: 'GET' })).rejects.toThrow()
  })
})
