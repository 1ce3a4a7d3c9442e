/**
 * The decision log tells what happened when a gate's ctx.confirm goes to the agent as an ask: the
 * front door with Claude Code's and Copilot CLI's event JSON, against a real sidecar (worker
 * processes, real sockets) with an audit log, metrics and the operator's JSON log. Each ask is
 * recorded asked with its question; the agent's later events (or the end of the run) give it a
 * second audit line with its outcome. The real Claude Code drives the denied path in
 * claude-code-hookd.test.ts; here each path is posted by hand, the allowed one included (a person's
 * yes cannot be given in `claude -p`).
 */
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Logger } from '../../src/sidecar/observability/logger.js'
import { Observability } from '../../src/sidecar/observability/observability.js'
import { Sidecar } from '../../src/sidecar/sidecar.js'
import { HOOKD_VERSION } from '../../src/protocol/version.js'
import { EXAMPLE_HOOKS, hook, writeTree } from '../support/sidecar.js'
import { type AuditLine, auditLines as readAuditLines, metricSample, outcomeLines } from '../support/audit-lines.js'

const TOKEN = 'hkd_ask-outcomes-test-token-0123456789abcdefghijklm'

let sidecar: Sidecar
let observability: Observability
let url = ''
let hooks = ''
let project = ''
let audit = ''
const logs: Array<Record<string, unknown>> = []

beforeAll(async () => {
  hooks = await writeTree({
    'guard/index.js': await readFile(join(EXAMPLE_HOOKS, 'guard', 'index.js'), 'utf8'),
    // Asks twice in one call: both questions are the decision's.
    'twice/index.js': hook({
      beforeToolExecute: `function (ctx, call) { ctx.confirm({ title: 'first', body: call.arguments.command }); ctx.confirm({ title: 'second' }) }`,
    }),
    // Never asks: its route needs no event past the gate.
    'plain/index.js': hook({ beforeToolExecute: `function (ctx, call) { if (call.arguments.command === 'no') return { allow: false, reason: 'no' } }` }),
    // Asks, then rewrites the command into something Bash cannot take: hookd refuses the call after all.
    'ask-bad-rewrite/index.js': hook({ beforeToolExecute: `function (ctx) { ctx.confirm({ title: 'sure?' }); return { arguments: { command: 42 } } }` }),
    // Asks, then refuses anyway: refused, not asked.
    'ask-then-no/index.js': hook({ beforeToolExecute: `function (ctx) { ctx.confirm({ title: 'sure?' }); return { allow: false, reason: 'changed my mind' } }` }),
  })
  project = await realpath(await mkdtemp(join(tmpdir(), 'hookd-ask-outcomes-project-')))
  audit = join(project, 'audit.jsonl')
  observability = await Observability.start({
    version: HOOKD_VERSION,
    logger: new Logger((line) => logs.push(JSON.parse(line) as Record<string, unknown>), 'info', 'json'),
    metrics: { processMetrics: false },
  })
  sidecar = await Sidecar.create({ hooks, workers: 1, watch: false, audit: { to: audit }, observer: observability })
  url = await sidecar.listenHttp('127.0.0.1', 0, { token: TOKEN, report: () => {} })
}, 60_000)

afterAll(async () => {
  await sidecar?.stop()
  await observability?.close()
  await rm(hooks, { recursive: true, force: true })
  await rm(project, { recursive: true, force: true })
})

let sessions = 0
function session(): string {
  sessions += 1
  return `ask-outcomes-${process.pid}-${sessions}`
}

async function post(path: string, body: unknown): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify(body),
  })
  const text = await response.text()
  return { status: response.status, json: text ? JSON.parse(text) : undefined }
}

/** A Claude Code event of session `id`. */
function claude(id: string, name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { session_id: id, cwd: project, hook_event_name: name, permission_mode: 'default', ...extra }
}

const bash = (command: string): Record<string, unknown> => ({ command, description: 'run it' })
const pre = (id: string, toolUseId: string, command: string): Record<string, unknown> =>
  claude(id, 'PreToolUse', { tool_name: 'Bash', tool_input: bash(command), tool_use_id: toolUseId })

const auditLines = (): Promise<AuditLine[]> => readAuditLines(audit)

/** The audit line of the last gate call of session `id`. */
async function gateLine(id: string): Promise<Record<string, unknown>> {
  let line: Record<string, unknown> | undefined
  await expect.poll(async () => (line = (await auditLines()).filter((l) => l.session === id && l.point === 'beforeToolExecute').at(-1)), { timeout: 10_000 }).toBeDefined()
  return line as Record<string, unknown>
}

/** The outcome lines of decision `decisionId`. */
const outcomes = (decisionId: unknown): Promise<AuditLine[]> => outcomeLines(audit, decisionId)

const sample = (series: string): Promise<number> => metricSample(observability.metrics, series)

describe('Claude Code: an ask, then what the agent says of the call', () => {
  it("PreToolUse's ask is recorded asked with its question, never allowed; a PostToolUse for the same tool_use_id records it allowed", async () => {
    const askedBefore = await sample('hookd_point_calls_total{tenant="",point="beforeToolExecute",outcome="asked"}')
    const allowedBefore = await sample('hookd_point_calls_total{tenant="",point="beforeToolExecute",outcome="allowed"}')
    const id = session()
    const answer = await post('/claude-code/guard', pre(id, 'toolu_allowed', 'rm -rf victim'))
    expect(answer.json).toEqual({
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'ask', permissionDecisionReason: "Dangerous command: rm -rf victim (asked by hookd hook 'guard')" },
    })
    const line = await gateLine(id)
    expect(line).toMatchObject({
      agent: 'claude-code',
      workdir: project,
      hooks: [expect.objectContaining({ hook: 'guard', version: expect.stringMatching(/^[0-9a-f]{12}$/) })],
      decision: { outcome: 'asked', asked: [{ hook: 'guard', title: 'Dangerous command', body: 'rm -rf victim' }] },
    })
    expect(line.decision).not.toHaveProperty('allow')
    expect(await outcomes(line.decisionId)).toEqual([])
    expect(logs).toContainEqual(
      expect.objectContaining({
        event: 'decision',
        decision_id: line.decisionId,
        outcome: 'asked',
        msg: expect.stringMatching(new RegExp(`^decision ${line.decisionId as string}: beforeToolExecute asked: "Dangerous command: rm -rf victim" \\(guard\\) in `)),
        asked: [{ hook: 'guard', title: 'Dangerous command', body: 'rm -rf victim' }],
      }),
    )
    expect(await sample('hookd_point_calls_total{tenant="",point="beforeToolExecute",outcome="asked"}')).toBe(askedBefore + 1)
    expect(await sample('hookd_point_calls_total{tenant="",point="beforeToolExecute",outcome="allowed"}')).toBe(allowedBefore)

    // The person said yes and the call ran: Claude Code posts PostToolUse for the same tool_use_id.
    const ran = claude(id, 'PostToolUse', { tool_name: 'Bash', tool_input: bash('rm -rf victim'), tool_use_id: 'toolu_allowed', tool_response: { stdout: '', stderr: '' } })
    expect((await post('/claude-code/guard', ran)).json).toEqual({})
    expect(await outcomes(line.decisionId)).toEqual([
      { time: expect.any(String), decisionId: line.decisionId, tenant: null, session: id, agent: 'claude-code', workdir: project, outcome: 'allowed', by: 'agent', via: 'PostToolUse' },
    ])
    expect(logs).toContainEqual(
      expect.objectContaining({ event: 'outcome', decision_id: line.decisionId, outcome: 'allowed', by: 'agent', via: 'PostToolUse', msg: `decision ${line.decisionId as string} (asked): allowed by the agent (PostToolUse)` }),
    )
    // Settled once: the batch's end and the run's end add nothing.
    await post('/claude-code/guard', claude(id, 'PostToolBatch', { tool_calls: [{ tool_name: 'Bash', tool_input: bash('rm -rf victim'), tool_use_id: 'toolu_allowed' }] }))
    await post('/claude-code/guard', claude(id, 'Stop'))
    expect(await outcomes(line.decisionId)).toHaveLength(1)
    expect(await sample('hookd_ask_outcomes_total{tenant="",outcome="allowed",by="agent",via="PostToolUse"}')).toBeGreaterThanOrEqual(1)
  })

  it('a PostToolUseFailure also means the call ran (allowed); a PostToolBatch without either means it did not (denied)', async () => {
    const id = session()
    await post('/claude-code/guard', pre(id, 'toolu_failed', 'rm -rf a'))
    const failed = await gateLine(id)
    await post('/claude-code/guard', claude(id, 'PostToolUseFailure', { tool_name: 'Bash', tool_input: bash('rm -rf a'), tool_use_id: 'toolu_failed', error: 'exit 1' }))
    expect(await outcomes(failed.decisionId)).toEqual([expect.objectContaining({ outcome: 'allowed', by: 'agent', via: 'PostToolUseFailure' })])

    await post('/claude-code/guard', pre(id, 'toolu_denied', 'rm -rf b'))
    const denied = await gateLine(id)
    // A batch naming another call settles nothing; the batch with this one settles it.
    await post('/claude-code/guard', claude(id, 'PostToolBatch', { tool_calls: [{ tool_name: 'Bash', tool_input: bash('ls'), tool_use_id: 'toolu_other' }] }))
    expect(await outcomes(denied.decisionId)).toEqual([])
    await post('/claude-code/guard', claude(id, 'PostToolBatch', { tool_calls: [{ tool_name: 'Bash', tool_input: bash('rm -rf b'), tool_use_id: 'toolu_denied', tool_response: 'Dangerous command' }] }))
    expect(await outcomes(denied.decisionId)).toEqual([expect.objectContaining({ outcome: 'denied', by: 'agent', via: 'PostToolBatch' })])
    await post('/claude-code/guard', claude(id, 'Stop'))
  })

  it('PermissionDenied (auto mode) records it denied; an ask with no word by Stop is denied when the run ends', async () => {
    const id = session()
    await post('/claude-code/guard', pre(id, 'toolu_auto', 'rm -rf c'))
    const auto = await gateLine(id)
    await post('/claude-code/guard', claude(id, 'PermissionDenied', { tool_name: 'Bash', tool_input: bash('rm -rf c'), tool_use_id: 'toolu_auto', reason: 'classifier' }))
    expect(await outcomes(auto.decisionId)).toEqual([expect.objectContaining({ outcome: 'denied', by: 'agent', via: 'PermissionDenied' })])

    await post('/claude-code/guard', pre(id, 'toolu_silent', 'rm -rf d'))
    const silent = await gateLine(id)
    await post('/claude-code/guard', claude(id, 'Stop'))
    expect(await outcomes(silent.decisionId)).toEqual([expect.objectContaining({ outcome: 'denied', by: 'agent', via: 'run ended' })])
  })

  it('two questions in one call are both the decision\'s; an ask a later hook refuses is refused, with no outcome line', async () => {
    const id = session()
    await post('/claude-code/twice', pre(id, 'toolu_twice', 'make'))
    const twice = await gateLine(id)
    expect(twice.decision).toEqual({ outcome: 'asked', asked: [{ hook: 'twice', title: 'first', body: 'make' }, { hook: 'twice', title: 'second', body: '' }] })
    const refused = await post('/claude-code/ask-then-no', pre(id, 'toolu_no', 'make'))
    expect(refused.json).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny', permissionDecisionReason: 'changed my mind' } })
    const line = (await auditLines()).filter((l) => l.session === id && l.point === 'beforeToolExecute').at(-1) as Record<string, unknown>
    expect(line.decision).toEqual({ outcome: 'refused', allow: false, reason: 'changed my mind', by: 'ask-then-no' })
    expect(await outcomes(line.decisionId)).toEqual([])
    await post('/claude-code/twice', claude(id, 'Stop'))
  })

  it('an ask hookd then refuses itself (a rewrite the tool cannot take) is settled denied by hookd at once', async () => {
    const id = session()
    const answer = await post('/claude-code/ask-bad-rewrite', pre(id, 'toolu_bad', 'make'))
    expect(answer.json).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny', permissionDecisionReason: expect.stringContaining('hookd refused this call') } })
    const line = await gateLine(id)
    expect(line.decision).toEqual({ outcome: 'asked', asked: [{ hook: 'ask-bad-rewrite', title: 'sure?', body: '' }] })
    expect(await outcomes(line.decisionId)).toEqual([expect.objectContaining({ outcome: 'denied', by: 'hookd', via: 'rewrite refused' })])
  })

  it('events about calls hookd never asked settle nothing, a batch past the bound is refused, and the sidecar answers an ordinary call afterwards', async () => {
    const id = session()
    const before = (await auditLines()).length
    expect((await post('/claude-code/guard', claude(id, 'PostToolBatch', { tool_calls: [{ tool_use_id: 'toolu_never' }] }))).json).toEqual({})
    expect((await post('/claude-code/guard', claude(id, 'PermissionDenied', { tool_name: 'Bash', tool_input: {}, tool_use_id: 'toolu_never' }))).json).toEqual({})
    // A batch past the bound is refused as an event hookd cannot read.
    const flood = await post('/claude-code/guard', claude(id, 'PostToolBatch', { tool_calls: Array.from({ length: 1025 }, (_, i) => ({ tool_use_id: `t${i}` })) }))
    expect(flood.status).toBe(400)
    expect(flood.json).toEqual({ error: expect.stringContaining('tool_calls: lists more than 1024 calls') })
    expect((await auditLines()).length).toBe(before)
    expect((await post('/claude-code/plain', pre(id, 'toolu_plain', 'no'))).json).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny', permissionDecisionReason: 'no' } })
  })
})

describe('bounded', () => {
  it('a run holds at most 64 asks waiting: each one past that settles the oldest unknown (too many asks), counted', async () => {
    const id = session()
    const before = await sample('hookd_ask_outcomes_total{tenant="",outcome="unknown",by="hookd",via="too many asks"}')
    for (let i = 0; i < 66; i++) await post('/claude-code/guard', pre(id, `toolu_flood_${i}`, `rm -rf flood-${i}`))
    const gates = (await auditLines()).filter((l) => l.session === id && l.point === 'beforeToolExecute')
    expect(gates).toHaveLength(66)
    const settled = (await auditLines()).filter((l) => l.session === id && 'outcome' in l)
    expect(settled).toEqual([gates[0], gates[1]].map((g) => expect.objectContaining({ decisionId: g?.decisionId, outcome: 'unknown', by: 'hookd', via: 'too many asks' })))
    expect(await sample('hookd_ask_outcomes_total{tenant="",outcome="unknown",by="hookd",via="too many asks"}')).toBe(before + 2)
    // The rest are settled when the run ends.
    await post('/claude-code/guard', claude(id, 'Stop'))
    expect((await auditLines()).filter((l) => l.session === id && 'outcome' in l)).toHaveLength(66)
  })
})

describe('Copilot CLI: an ask, then its postToolUse of the same tool and arguments, or none', () => {
  const copilot = (id: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ sessionId: id, timestamp: 1, cwd: project, ...extra })

  it('a postToolUse with the same toolName and toolArgs records it allowed; none by agentStop records it denied', async () => {
    const id = session()
    const ask = await post('/copilot/guard?event=preToolUse', copilot(id, { toolName: 'bash', toolArgs: { command: 'rm -rf e', description: 'x' } }))
    expect(ask.json).toMatchObject({ permissionDecision: 'ask' })
    const allowed = await gateLine(id)
    expect(allowed).toMatchObject({ agent: 'copilot', decision: { outcome: 'asked' } })
    // Another call's postToolUse settles nothing.
    await post('/copilot/guard?event=postToolUse', copilot(id, { toolName: 'bash', toolArgs: { command: 'ls', description: 'x' }, toolResult: { resultType: 'success', textResultForLlm: '' } }))
    expect(await outcomes(allowed.decisionId)).toEqual([])
    await post('/copilot/guard?event=postToolUse', copilot(id, { toolName: 'bash', toolArgs: { command: 'rm -rf e', description: 'x' }, toolResult: { resultType: 'success', textResultForLlm: '' } }))
    expect(await outcomes(allowed.decisionId)).toEqual([expect.objectContaining({ agent: 'copilot', outcome: 'allowed', by: 'agent', via: 'postToolUse' })])

    await post('/copilot/guard?event=preToolUse', copilot(id, { toolName: 'bash', toolArgs: { command: 'rm -rf f', description: 'x' } }))
    const denied = await gateLine(id)
    await post('/copilot/guard?event=agentStop', copilot(id, { stopReason: 'end_turn' }))
    expect(await outcomes(denied.decisionId)).toEqual([expect.objectContaining({ outcome: 'denied', by: 'agent', via: 'run ended' })])
  })
})

describe('Cursor: an ask whose outcome its events cannot say', () => {
  it('is recorded asked, and at once unknown (not followed)', async () => {
    const id = session()
    const event = { hook_event_name: 'beforeShellExecution', conversation_id: id, workspace_roots: [project], command: 'rm -rf g', cwd: project }
    expect((await post('/cursor/guard', event)).json).toMatchObject({ permission: 'ask' })
    const line = await gateLine(id)
    expect(line).toMatchObject({ agent: 'cursor', decision: { outcome: 'asked' } })
    expect(await outcomes(line.decisionId)).toEqual([expect.objectContaining({ outcome: 'unknown', by: 'hookd', via: 'not followed' })])
  })
})

describe('what setup registers', () => {
  const events = async (path: string): Promise<unknown> =>
    ((await (await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { events: unknown }).events

  it('the events that carry an ask\'s outcome for hooks that may ask, and nothing past the gate for hooks that never do', async () => {
    expect(await events('/claude-code/plain')).toEqual(['PreToolUse'])
    expect(await events('/claude-code/twice')).toEqual(['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PermissionDenied', 'Stop', 'StopFailure', 'SessionEnd'])
    expect(await events('/copilot/plain')).toEqual(['preToolUse'])
    expect(await events('/copilot/twice')).toEqual(['preToolUse', 'postToolUse', 'postToolUseFailure', 'agentStop', 'sessionEnd'])
    // Agents that cannot ask, and Cursor, whose events cannot say: nothing more.
    expect(await events('/codex/twice')).toEqual(['PreToolUse'])
    expect(await events('/cursor/twice')).toEqual(['beforeShellExecution', 'beforeMCPExecution', 'beforeReadFile'])
  })
})
