/**
 * A gRPC host's asks (issue 28 item 4, the hosts' part) end to end, where the sandbox and the socket
 * are the point: a real sandboxed guard's ctx.confirm, answered `deferred` by a GuardedSession (which
 * connects by address), is recorded asked with its question, and the host's outcome report is its
 * second audit line. Everything else about asks and outcome reports (old-style hosts, deferred where
 * it does not fit, hostile and flooding reports, an older sidecar) is tested in memory, with the same
 * audit log, metrics and operator's log: test/unit/session/session-stream-outcomes.test.ts.
 */
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GuardedSession } from '../../src/host/guarded-session.js'
import { HOOKD_VERSION } from '../../src/protocol/version.js'
import { Logger } from '../../src/sidecar/observability/logger.js'
import { Observability } from '../../src/sidecar/observability/observability.js'
import { type Running, hook, sessionOptions, startSidecar, writeTree } from '../support/sidecar.js'
import { type AuditLine, auditLines as readAuditLines, decisionLine, metricSample, outcomeLines } from '../support/audit-lines.js'

let running: Running
let observability: Observability
let state = ''
let audit = ''
const logs: Array<Record<string, unknown>> = []

beforeAll(async () => {
  const hooks = await writeTree({
    'guard/index.js': hook({
      beforeToolExecute: `function (ctx, call) { if (/rm -rf/.test(call.arguments.command)) { if (!ctx.confirm({ title: 'Dangerous command', body: call.arguments.command })) return { allow: false, reason: 'refused by the user' } } }`,
    }),
  })
  state = await realpath(await mkdtemp(join(tmpdir(), 'hookd-host-asks-')))
  audit = join(state, 'audit.jsonl')
  observability = await Observability.start({
    version: HOOKD_VERSION,
    logger: new Logger((line) => logs.push(JSON.parse(line) as Record<string, unknown>), 'info', 'json'),
    metrics: { processMetrics: false },
  })
  running = await startSidecar({ hooks, audit: { to: audit }, observer: observability })
})

afterAll(async () => {
  await running?.stop()
  await observability?.close()
  if (state) await rm(state, { recursive: true, force: true })
})

const rmCall = (command: string): { id: string; name: string; arguments: { command: string } } => ({ id: 'c1', name: 'shell', arguments: { command } })

const auditLines = (): Promise<AuditLine[]> => readAuditLines(audit)

const lineOf = (decisionId: unknown): Promise<AuditLine> => decisionLine(audit, decisionId)

const outcomes = (decisionId: unknown): Promise<AuditLine[]> => outcomeLines(audit, decisionId)

const sample = (series: string): Promise<number> => metricSample(observability.metrics, series)

describe('a confirm answered deferred by a GuardedSession, through the real sandbox', () => {
  it('is recorded asked with its question, counted and logged; the reported outcome is its second line', async () => {
    const questions: string[] = []
    const guarded = await GuardedSession.open(
      running.address,
      sessionOptions(['guard'], { workdir: state, interactive: true, agentId: 'my-agent', capabilities: { confirm: (m) => (questions.push(`${m.title}: ${m.body}`), 'deferred') } }),
    )
    const out = await guarded.call('beforeToolExecute', rmCall('rm -rf guarded'))
    // The hook got yes: the call goes on to the agent's own prompt.
    expect(out.result).toEqual({ allow: true, arguments: { command: 'rm -rf guarded' } })
    expect(questions).toEqual(['Dangerous command: rm -rf guarded'])
    await guarded.reportOutcome({ decisionId: out.decisionId as string, outcome: 'allowed', via: 'PostToolUse' })
    await guarded.close()
    const line = await lineOf(out.decisionId)
    expect(line).toMatchObject({ agent: 'my-agent', workdir: state, decision: { outcome: 'asked', asked: [{ hook: 'guard', title: 'Dangerous command', body: 'rm -rf guarded' }] } })
    expect(line.decision).not.toHaveProperty('allow')
    expect(await outcomes(out.decisionId)).toEqual([expect.objectContaining({ outcome: 'allowed', by: 'agent', via: 'PostToolUse' })])
    expect(logs).toContainEqual(expect.objectContaining({ event: 'decision', decision_id: out.decisionId, outcome: 'asked' }))
    expect(await sample('hookd_point_calls_total{tenant="",point="beforeToolExecute",outcome="asked"}')).toBe(1)
    expect(await sample('hookd_ask_outcomes_total{tenant="",outcome="allowed",by="agent",via="PostToolUse"}')).toBe(1)
  })
})
