/**
 * A gRPC host's asks over the Session stream in memory (issue 28 item 4, the hosts' part): a confirm
 * at a gate answered `deferred` is recorded asked with its question, and the host's AskOutcomeReport
 * is its second audit line, once; with the real audit log, metrics and operator's JSON log, through
 * the host library and as raw frames for what the library never sends:
 *
 * - an old-style host (no `deferred`) is recorded as before: a yes is allowed, no outcome follows;
 * - `deferred` where it does not fit (not a confirm, not a gate, with false, with an error) ends the
 *   stream with INVALID_ARGUMENT saying so, as every answer that does not fit does;
 * - hostile reports (an unknown id, one settled already, one not asked, no outcome, a bad via) are
 *   refused with a message and never counted; a flood of them ends the stream past 64; a flood of
 *   deferred asks keeps at most 64 waiting; and the same sidecar answers an ordinary call afterwards.
 *
 * test/integration/host-ask-outcomes.test.ts keeps what needs the real sandbox and socket.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as grpc from '@grpc/grpc-js'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { HostSession } from '../../../src/host/session.js'
import { openMessage } from '../../../src/host/session-options.js'
import { PROTOCOL_VERSION } from '../../../src/protocol/version.js'
import { Logger } from '../../../src/sidecar/observability/logger.js'
import { Observability } from '../../../src/sidecar/observability/observability.js'
import { sessionCall } from '../../support/memory-session.js'
import { type RawSidecarMessage, type RawStream, callFrame, encodeHostMessage, openFrame } from '../../support/raw-session.js'
import { sessionOptions } from '../../support/sidecar.js'
import { exporting, nothing, returns, until } from '../fakes.js'
import { type StreamWorld, closeStreamWorlds, streamWorld } from './stream-world.js'
import { type AuditLine, auditLines as readAuditLines, decisionLine, metricSample, outcomeLines } from '../../support/audit-lines.js'

type ToolCall = { id: string; name: string; arguments: { command: string } }
const rmCall = (command: string): ToolCall => ({ id: 'c1', name: 'shell', arguments: { command } })

let w: StreamWorld
let observability: Observability
let state = ''
let audit = ''
let logs: Array<Record<string, unknown>> = []

beforeEach(async () => {
  state = await mkdtemp(join(tmpdir(), 'hookd-unit-asks-'))
  audit = join(state, 'audit.jsonl')
  logs = []
  observability = await Observability.start({
    version: '0',
    logger: new Logger((line) => logs.push(JSON.parse(line) as Record<string, unknown>), 'info', 'json'),
    metrics: { processMetrics: false },
  })
  w = await streamWorld(
    { guard: { index: exporting('beforeToolExecute') }, after: { index: exporting('afterToolExecute') }, reader: { index: exporting('beforeToolExecute') }, 'ask-then-no': { index: exporting('beforeToolExecute') } },
    { audit: { to: audit }, observer: observability },
  )
  w.runner.script('guard', async (r) => {
    const command = (r.args[0] as ToolCall).arguments.command
    if (!/rm -rf/.test(command)) return nothing()
    const reply = await r.onCapability('confirm', [{ title: 'Dangerous command', body: command }])
    return reply.ok && reply.value === false ? returns({ allow: false, reason: 'refused by the user' }) : nothing()
  })
  // Asks after the tool ran: no gate, so no prompt of the agent's can decide anything.
  w.runner.script('after', async (r) => (await r.onCapability('confirm', [{ title: 'after?' }]), nothing()))
  // Reads a file at the gate: a capability that is not a confirm.
  w.runner.script('reader', async (r) => (await r.onCapability('file.read', ['notes.txt']), nothing()))
  // Asks, then refuses anyway: refused, not asked, so no outcome is due.
  w.runner.script('ask-then-no', async (r) => (await r.onCapability('confirm', [{ title: 'sure?' }]), returns({ allow: false, reason: 'changed my mind' })))
})

afterEach(async () => {
  await closeStreamWorlds()
  await observability.close()
  await rm(state, { recursive: true, force: true })
})

const auditLines = (): Promise<AuditLine[]> => readAuditLines(audit)

const lineOf = (decisionId: unknown): Promise<AuditLine> => decisionLine(audit, decisionId)

const outcomes = (decisionId: unknown): Promise<AuditLine[]> => outcomeLines(audit, decisionId)

const sample = (series: string): Promise<number> => metricSample(observability.metrics, series)

const ASKED = 'hookd_point_calls_total{tenant="",point="beforeToolExecute",outcome="asked"}'
const ALLOWED = 'hookd_point_calls_total{tenant="",point="beforeToolExecute",outcome="allowed"}'

/** The sidecar still serves a well-behaved host. */
async function expectServing(): Promise<void> {
  const session = await w.open(['guard'])
  const out = await session.call('beforeToolExecute', rmCall('ls'))
  expect(out.result).toEqual({ allow: true, arguments: { command: 'ls' } })
  await session.close()
  await until(() => w.sidecar.streams.size === 0)
}

let rawSessions = 0
function openRaw(hooks: string[]): RawStream {
  const stream = w.raw()
  stream.write(openFrame({ sessionId: `raw-asks-${++rawSessions}`, hooks, interactive: true, workdir: w.workdir }))
  return stream
}

function field<T>(message: RawSidecarMessage | undefined, name: string): T {
  if (!message) throw new Error(`the stream ended before a ${name}`)
  return message[name] as T
}

/** Runs a gate call on `stream` whose confirm is answered with `answer`; returns the result's decision id. */
async function gate(stream: RawStream, seq: number, command: string, answer: Record<string, unknown>): Promise<string> {
  stream.write(callFrame(seq, 'beforeToolExecute', JSON.stringify(rmCall(command))))
  const call = field<{ id: number; capability: string }>(await stream.next('capabilityCall'), 'capabilityCall')
  expect(call.capability).toBe('confirm')
  stream.write(encodeHostMessage({ capabilityResult: { id: call.id, ...answer } }))
  const result = field<{ decisionId: string; result: Buffer }>(await stream.next('result'), 'result')
  expect(JSON.parse(String(result.result))).toMatchObject({ allow: true })
  return result.decisionId
}

const DEFERRED = { value: Buffer.from('true'), deferred: true }

function report(decisionId: string, outcome = 'ASK_OUTCOME_ALLOWED', via = 'PostToolUse', by = 'ASK_OUTCOME_BY_AGENT'): Buffer {
  return encodeHostMessage({ outcome: { decisionId, outcome, via, by } })
}

async function answerTo(stream: RawStream): Promise<{ decisionId: string; recorded: boolean; message: string }> {
  return field(await stream.next('outcomeAnswer'), 'outcomeAnswer')
}

describe('an old-style host, which never sets deferred', () => {
  it("is recorded as before: its confirm's yes is allowed, and no outcome line follows", async () => {
    const session = await w.open(['guard'], { interactive: true, capabilities: { confirm: () => true } })
    expect(session.askOutcomes).toBe(true)
    const out = await session.call('beforeToolExecute', rmCall('rm -rf old'))
    expect(out.result).toEqual({ allow: true, arguments: { command: 'rm -rf old' } })
    await session.close()
    expect((await lineOf(out.decisionId)).decision).toEqual({ outcome: 'allowed', allow: true })
    expect(await outcomes(out.decisionId)).toEqual([])
    expect(await sample(ASKED)).toBe(0)
    expect(await sample(ALLOWED)).toBe(1)
  })

  it('as raw frames with no deferred field at all: the same', async () => {
    const stream = openRaw(['guard'])
    const id = await gate(stream, 1, 'rm -rf raw-old', { value: Buffer.from('true') })
    stream.end()
    expect((await stream.ended).code).toBe(grpc.status.OK)
    expect((await lineOf(id)).decision).toEqual({ outcome: 'allowed', allow: true })
    expect(await outcomes(id)).toEqual([])
  })
})

describe('a confirm answered deferred, through the host library', () => {
  it('is recorded asked with its question; the reported outcome is its second line, by the agent or the host', async () => {
    const questions: string[] = []
    const session = await w.open(['guard'], { interactive: true, agentId: 'my-agent', capabilities: { confirm: (m) => (questions.push(m.title), 'deferred') } })
    const ran = await session.call('beforeToolExecute', rmCall('rm -rf ran'))
    // The hook got yes: the call goes on to the agent's own prompt.
    expect(ran.result).toEqual({ allow: true, arguments: { command: 'rm -rf ran' } })
    expect(w.runner.callsOf('guard')[0]?.capabilities[0]?.reply).toEqual({ ok: true, value: true })
    const stopped = await session.call('beforeToolExecute', rmCall('rm -rf stopped'))
    expect(questions).toEqual(['Dangerous command', 'Dangerous command'])
    const line = await lineOf(ran.decisionId)
    expect(line).toMatchObject({ agent: 'my-agent', workdir: w.workdir, decision: { outcome: 'asked', asked: [{ hook: 'guard', title: 'Dangerous command', body: 'rm -rf ran' }] } })
    expect(line.decision).not.toHaveProperty('allow')
    expect(logs).toContainEqual(expect.objectContaining({ event: 'decision', decision_id: ran.decisionId, outcome: 'asked' }))

    const own = await session.call('beforeToolExecute', rmCall('rm -rf own'))
    await session.reportOutcome({ decisionId: ran.decisionId as string, outcome: 'allowed', via: 'PostToolUse' })
    await session.reportOutcome({ decisionId: stopped.decisionId as string, outcome: 'denied', via: 'rewrite refused', by: 'host' })
    // A host's own word for what told it: kept in the audit line, counted `other` (metrics labels stay a closed set).
    await session.reportOutcome({ decisionId: own.decisionId as string, outcome: 'denied', via: 'IDE dialog: No' })
    // Once: a second report of the same decision is refused, with the reason.
    await expect(session.reportOutcome({ decisionId: ran.decisionId as string, outcome: 'denied', via: 'PostToolBatch' })).rejects.toThrow(
      `decision '${ran.decisionId as string}' was already settled (allowed by the agent, via PostToolUse); each outcome is recorded once`,
    )
    await session.close()

    await expect.poll(async () => (await outcomes(own.decisionId)).length).toBe(1)
    expect(await outcomes(ran.decisionId)).toEqual([
      { time: expect.any(String), decisionId: ran.decisionId, tenant: null, session: session.id, agent: 'my-agent', workdir: w.workdir, outcome: 'allowed', by: 'agent', via: 'PostToolUse' },
    ])
    expect(await outcomes(stopped.decisionId)).toEqual([expect.objectContaining({ outcome: 'denied', by: 'host', via: 'rewrite refused' })])
    expect(logs).toContainEqual(
      expect.objectContaining({ event: 'outcome', decision_id: stopped.decisionId, msg: `decision ${stopped.decisionId as string} (asked): denied by the host (rewrite refused)` }),
    )
    expect(await outcomes(own.decisionId)).toEqual([expect.objectContaining({ outcome: 'denied', by: 'agent', via: 'IDE dialog: No' })])
    expect(await sample('hookd_ask_outcomes_total{tenant="",outcome="denied",by="agent",via="other"}')).toBe(1)
    expect(await sample(ASKED)).toBe(3)
    expect(await sample(ALLOWED)).toBe(0)
    expect(await sample('hookd_ask_outcomes_total{tenant="",outcome="denied",by="host",via="rewrite refused"}')).toBe(1)
  })

  it('an ask whose outcome the host never reports is recorded unknown by hookd when the session closes (run ended); a report after close is refused', async () => {
    const session = await w.open(['guard'], { interactive: true, capabilities: { confirm: () => 'deferred' } })
    const out = await session.call('beforeToolExecute', rmCall('rm -rf silent'))
    await session.close()
    await expect.poll(async () => (await outcomes(out.decisionId)).length).toBe(1)
    expect(await outcomes(out.decisionId)).toEqual([expect.objectContaining({ outcome: 'unknown', by: 'hookd', via: 'run ended' })])
    await expect(session.reportOutcome({ decisionId: out.decisionId as string, outcome: 'allowed', via: 'PostToolUse' })).rejects.toThrow('the session ended earlier')
  })

  it("'deferred' at a point that is not a gate never leaves the host library: the hook's confirm fails, saying why", async () => {
    const session = await w.open(['after'], { interactive: true, capabilities: { confirm: () => 'deferred' } })
    await session.call('afterToolExecute', { call: rmCall('ls'), result: { text: 'a.txt', isError: false } })
    expect(w.runner.callsOf('after')[0]?.capabilities[0]?.reply).toEqual({
      ok: false,
      code: 'invalid',
      message: "ctx.confirm at afterToolExecute: the host's confirm handler answered 'deferred', which only a gate point (beforeToolExecute, tool:gate, mcp:tool:gate, child:tool:gate, permission:request, config:change) takes",
    })
    expect(session.isEnded).toBe(false)
    await session.close()
  })

  it('an ask a later hook refuses is refused, and its outcome report is refused too', async () => {
    const session = await w.open(['ask-then-no'], { interactive: true, capabilities: { confirm: () => 'deferred' } })
    const out = await session.call('beforeToolExecute', rmCall('make'))
    expect(out.result).toMatchObject({ allow: false, reason: 'changed my mind' })
    expect((await lineOf(out.decisionId)).decision).toEqual({ outcome: 'refused', allow: false, reason: 'changed my mind', by: 'ask-then-no' })
    await expect(session.reportOutcome({ decisionId: out.decisionId as string, outcome: 'allowed', via: 'PostToolUse' })).rejects.toThrow('is no asked decision of this session waiting for its outcome')
    await session.close()
    expect(await outcomes(out.decisionId)).toEqual([])
  })
})

describe('deferred where it does not fit ends the stream with INVALID_ARGUMENT, saying so', () => {
  const GATES = 'beforeToolExecute, tool:gate, mcp:tool:gate, child:tool:gate, permission:request, config:change'
  it.each([
    ['with false', 'guard', 'beforeToolExecute', { value: Buffer.from('false'), deferred: true }, (id: number) => `capability_result ${id} (ctx.confirm of hook 'guard'): deferred goes with the value true (yes, left to the agent's own prompt); answer false without deferred`],
    ['with an error', 'guard', 'beforeToolExecute', { error: { code: 'denied', message: 'no' }, deferred: true }, (id: number) => `capability_result ${id} (ctx.confirm of hook 'guard'): deferred goes with the value true (yes, left to the agent's own prompt), not with an error; send the error without it`],
    ['at a point that is not a gate', 'after', 'afterToolExecute', DEFERRED, (id: number) => `capability_result ${id} (ctx.confirm of hook 'after'): deferred is only for a confirm at a gate point (${GATES}), where the agent's own prompt can decide the call, and this one was made at afterToolExecute; answer true or false without it`],
    ['on another capability', 'reader', 'beforeToolExecute', { value: Buffer.from('"notes"'), deferred: true }, (id: number) => `capability_result ${id} (ctx.file.read of hook 'reader'): deferred is only for ctx.confirm, not ctx.file.read; answer without it`],
  ])('%s', async (_what, hookName, point, answer, details) => {
    const stream = openRaw([hookName])
    const payload = point === 'afterToolExecute' ? { call: rmCall('ls'), result: { text: '', isError: false } } : rmCall('rm -rf x')
    stream.write(callFrame(1, point, JSON.stringify(payload)))
    const call = field<{ id: number }>(await stream.next('capabilityCall'), 'capabilityCall')
    stream.write(encodeHostMessage({ capabilityResult: { id: call.id, ...answer } }))
    const end = await stream.ended
    expect({ code: end.code, details: end.details }).toEqual({ code: grpc.status.INVALID_ARGUMENT, details: details(call.id) })
    // The hook never saw the answer: its call was stopped with the session.
    expect(w.runner.callsOf(hookName)[0]?.capabilities[0]?.reply).toEqual({ ok: false, code: 'unavailable', message: 'the host disconnected' })
    await expectServing()
  })
})

describe('hostile outcome reports are refused with a message, never counted, and bounded', () => {
  it('an unknown id, one settled already, one not asked, no outcome, a bad via: each refused, the stream goes on, the decision counted once', async () => {
    const stream = openRaw(['guard'])
    const asked = await gate(stream, 1, 'rm -rf hostile', DEFERRED)
    const plain = await gate(stream, 2, 'rm -rf plain', { value: Buffer.from('true') })

    stream.write(report('no-such-decision'))
    expect(await answerTo(stream)).toEqual({
      decisionId: 'no-such-decision',
      recorded: false,
      message:
        "decision 'no-such-decision' is no asked decision of this session waiting for its outcome: report only the decision_id of a result this session recorded asked (a confirm answered with deferred at a gate), once",
    })
    stream.write(report(plain))
    expect(await answerTo(stream)).toMatchObject({ decisionId: plain, recorded: false, message: expect.stringContaining(`decision '${plain}' is no asked decision of this session`) })
    // Another session (of another host, say) cannot settle this one's ask.
    const stranger = openRaw(['guard'])
    stranger.write(report(asked, 'ASK_OUTCOME_DENIED', 'PostToolBatch'))
    expect(await answerTo(stranger)).toMatchObject({ decisionId: asked, recorded: false, message: expect.stringContaining(`decision '${asked}' is no asked decision of this session`) })
    stranger.end()
    await stranger.ended
    stream.write(report(asked, 'ASK_OUTCOME_UNSPECIFIED'))
    expect(await answerTo(stream)).toEqual({
      decisionId: asked,
      recorded: false,
      message: `the outcome report of decision '${asked}': outcome is unspecified; report ASK_OUTCOME_ALLOWED, ASK_OUTCOME_DENIED or ASK_OUTCOME_UNKNOWN`,
    })
    for (const [via, why] of [
      ['', 'via is empty; name what told the host (the agent\'s event, e.g. "PostToolUse")'],
      ['x'.repeat(65), 'via is longer than 64 characters'],
      ['PostToolUse\n{"forged":true}', 'via holds a control character'],
      ['Post\u001b[2JToolUse', 'via holds a control character'],
    ] as const) {
      stream.write(report(asked, 'ASK_OUTCOME_ALLOWED', via))
      expect(await answerTo(stream)).toEqual({ decisionId: asked, recorded: false, message: `the outcome report of decision '${asked}': ${why}` })
    }
    // None of those settled it: the one good report does, once.
    stream.write(report(asked))
    expect(await answerTo(stream)).toEqual({ decisionId: asked, recorded: true, message: '' })
    stream.write(report(asked, 'ASK_OUTCOME_DENIED', 'PostToolBatch'))
    expect(await answerTo(stream)).toMatchObject({ recorded: false, message: `decision '${asked}' was already settled (allowed by the agent, via PostToolUse); each outcome is recorded once` })

    // The session still serves its calls.
    await gate(stream, 3, 'rm -rf after', { value: Buffer.from('true') })
    stream.end()
    expect((await stream.ended).code).toBe(grpc.status.OK)
    await expect.poll(async () => (await outcomes(asked)).length).toBe(1)
    expect(await outcomes(asked)).toEqual([expect.objectContaining({ outcome: 'allowed', by: 'agent', via: 'PostToolUse' })])
    expect(await outcomes(plain)).toEqual([])
    expect(await sample('hookd_ask_outcomes_total{tenant="",outcome="allowed",by="agent",via="PostToolUse"}')).toBe(1)
    expect(await sample('hookd_ask_outcomes_total{tenant="",outcome="denied",by="agent",via="PostToolBatch"}')).toBe(0)
  })

  it('a flood of refused reports is answered 64 times, then the stream ends with INVALID_ARGUMENT; the sidecar serves others', async () => {
    const stream = openRaw(['guard'])
    await stream.next('opened')
    for (let i = 0; i < 200; i++) stream.write(report(`flood-${i}`))
    const end = await stream.ended
    expect(end.code).toBe(grpc.status.INVALID_ARGUMENT)
    expect(end.details).toBe(
      "the host sent 65 outcome reports hookd refused (the last: decision 'flood-64' is no asked decision of this session waiting for its outcome: report only the decision_id of a result this session recorded asked (a confirm answered with deferred at a gate), once); a host reports the outcome of each decision it left to its agent once, with that result's decision_id",
    )
    expect(end.messages.filter((m) => m.kind === 'outcomeAnswer')).toHaveLength(64)
    await expectServing()
  })

  it('a flood of deferred asks keeps at most 64 waiting: the oldest are recorded unknown (too many asks) at once, the rest when the stream is lost (run ended), each once', async () => {
    const stream = openRaw(['guard'])
    const ids: string[] = []
    for (let i = 0; i < 66; i++) ids.push(await gate(stream, i + 1, `rm -rf many-${i}`, DEFERRED))
    await expect.poll(async () => (await outcomes(ids[1])).length).toBe(1)
    expect((await outcomes(ids[0])).map((l) => [l.outcome, l.by, l.via])).toEqual([['unknown', 'hookd', 'too many asks']])
    expect((await outcomes(ids[1])).map((l) => [l.outcome, l.by, l.via])).toEqual([['unknown', 'hookd', 'too many asks']])
    expect(await outcomes(ids[2])).toEqual([])
    expect(await sample('hookd_ask_outcomes_total{tenant="",outcome="unknown",by="hookd",via="too many asks"}')).toBe(2)
    // Its report comes too late: refused, not counted again.
    stream.write(report(ids[0] as string))
    expect(await answerTo(stream)).toMatchObject({ recorded: false, message: expect.stringContaining('was already settled (unknown by hookd, via too many asks)') })
    stream.cancel()
    await stream.ended
    await expect.poll(async () => (await outcomes(ids[65])).length, { timeout: 10_000 }).toBe(1)
    const all = (await auditLines()).filter((l) => ids.includes(l.decisionId as string) && 'outcome' in l)
    expect(all).toHaveLength(66)
    expect(all.slice(2).every((l) => l.outcome === 'unknown' && l.by === 'hookd' && l.via === 'run ended')).toBe(true)
    expect(await sample('hookd_ask_outcomes_total{tenant="",outcome="unknown",by="hookd",via="too many asks"}')).toBe(2)
    await expectServing()
  })
})

describe('a new host on a sidecar older than ask outcomes', () => {
  it("sends 'deferred' as the plain yes it has always been, and reportOutcome fails saying why, without a frame the sidecar cannot read", async () => {
    // A stand-in for an older sidecar: SessionOpened without ask_outcomes; it records every frame.
    const frames: Array<Record<string, unknown>> = []
    const { host, sidecar } = sessionCall()
    sidecar.on('data', (message: Record<string, unknown>) => {
      frames.push(message)
      if (message.kind === 'open') {
        sidecar.write({ opened: { sessionId: 'old', hooks: [], sidecarVersion: '0.0.9', protocolVersion: PROTOCOL_VERSION } })
        sidecar.write({ capabilityCall: { id: 1, seq: 1, hook: 'guard', point: 'beforeToolExecute', capability: 'confirm', args: Buffer.from('[{"title":"Dangerous command"}]') } })
      }
    })
    const options = sessionOptions(['guard'], { workdir: w.workdir, interactive: true, capabilities: { confirm: () => 'deferred' } })
    const session = await HostSession.open(host, options, openMessage(options))
    expect(session.askOutcomes).toBe(false)
    await expect.poll(() => frames.find((f) => f.kind === 'capabilityResult')).toBeDefined()
    const answer = frames.find((f) => f.kind === 'capabilityResult')?.capabilityResult as { value: Buffer; deferred: boolean }
    expect(String(answer.value)).toBe('true')
    expect(answer.deferred).toBe(false)
    await expect(session.reportOutcome({ decisionId: 'd', outcome: 'allowed', via: 'PostToolUse' })).rejects.toThrow(
      'this sidecar takes no outcome reports (it is older than them): it recorded the deferred confirm as a yes; upgrade hookd to follow asks',
    )
    expect(frames.map((f) => f.kind)).toEqual(['open', 'capabilityResult'])
    session.abandon()
  })
})
