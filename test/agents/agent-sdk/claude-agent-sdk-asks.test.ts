/**
 * An ask through the Claude Agent SDK is recorded as asked, and its outcome followed (issue 28 item 4):
 * with the real SDK (pinned 0.3.332, offline against the Messages API stand-in), a guard's
 * `ctx.confirm` at PreToolUse becomes the SDK's `ask`, which the application's `canUseTool` decides.
 * The sidecar (real workers, a real socket, an audit log, metrics, the operator's JSON log) records
 * the decision asked with its question, and the SDK's own later events give it a second audit line:
 * PostToolUse for the call that ran (allowed), PostToolBatch without it for the call that did not
 * (denied; the pinned SDK sends no PermissionDenied for canUseTool's no, measured).
 *
 * One query covers both answers: the model asks for one Bash call per turn, each with its own victim
 * folder and tool_use id, and canUseTool says no to one and yes to the other.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hookdHooks } from '../../../src/agents/claude-agent-sdk/index.js'
import { HookdClient } from '../../../src/host/client.js'
import { HOOKD_VERSION } from '../../../src/protocol/version.js'
import { Logger } from '../../../src/sidecar/observability/logger.js'
import { Observability } from '../../../src/sidecar/observability/observability.js'
import { Sidecar } from '../../../src/sidecar/sidecar.js'
import { type AnthropicApi, startAnthropicApi } from '../support/anthropic-api.js'
import { type BashCall, oneCallPerTurn, resultOf, survived } from '../support/bash-calls.js'
import { agentCli } from '../support/cli.js'
import { offlineEnv, projectDir } from '../support/claude-run.js'
import { waitFor } from '../../reload/support.js'
import { EXAMPLE_HOOKS, writeTree } from '../../support/sidecar.js'
import { type AuditLine, auditLines as readAuditLines, metricSample } from '../../support/audit-lines.js'

const TEST_TIMEOUT = 240_000
const KEEP = 'keep me\n'

type Query = (args: { prompt: string; options: Record<string, unknown> }) => AsyncIterable<Record<string, unknown>>

let query: Query
let sidecar: Sidecar
let observability: Observability
let client: HookdClient
let hooks = ''
let state = ''
let audit = ''
const logs: Array<Record<string, unknown>> = []
const leftovers: string[] = []

beforeAll(async () => {
  const sdk = await agentCli('claude-agent-sdk')
  query = ((await import(pathToFileURL(join(sdk, 'sdk.mjs')).href)) as { query: Query }).query
  hooks = await writeTree({ 'guard/index.js': await readFile(join(EXAMPLE_HOOKS, 'guard', 'index.js'), 'utf8') })
  state = await realpath(await mkdtemp(join(tmpdir(), 'hookd-sdk-asks-')))
  audit = join(state, 'audit.jsonl')
  observability = await Observability.start({
    version: HOOKD_VERSION,
    logger: new Logger((line) => logs.push(JSON.parse(line) as Record<string, unknown>), 'info', 'json'),
    metrics: { processMetrics: false },
  })
  sidecar = await Sidecar.create({ hooks, workers: 1, watch: false, audit: { to: audit }, observer: observability })
  client = await HookdClient.connect(await sidecar.listen(`unix:${join(state, 'hookd.sock')}`))
}, 15 * 60_000)

afterAll(async () => {
  client?.close()
  await sidecar?.stop()
  await observability?.close()
  await Promise.all([hooks, state, ...leftovers].filter(Boolean).map((dir) => rm(dir, { recursive: true, force: true })))
})

const auditLines = (): Promise<AuditLine[]> => readAuditLines(audit)

const sample = (series: string): Promise<number> => metricSample(observability.metrics, series)

const ASKED = 'hookd_point_calls_total{tenant="",point="beforeToolExecute",outcome="asked"}'
const ALLOWED = 'hookd_point_calls_total{tenant="",point="beforeToolExecute",outcome="allowed"}'

describe("the Claude Agent SDK 0.3.332: guard's ask goes to canUseTool, and the audit log follows it", () => {
  const calls = [
    { id: 'toolu_stand_in_no', command: 'rm -rf victim-no' },
    { id: 'toolu_stand_in_yes', command: 'rm -rf victim-yes' },
  ] as const satisfies readonly BashCall[]
  const reasons: unknown[] = []
  let dir = ''
  let stand: AnthropicApi
  let before: { asked: number; allowed: number }
  let gates: Array<Record<string, unknown>> = []

  beforeAll(async () => {
    before = { asked: await sample(ASKED), allowed: await sample(ALLOWED) }
    const hookd = await hookdHooks({ client, hooks: ['guard'] })
    stand = await startAnthropicApi({ script: oneCallPerTurn(calls) })
    try {
      dir = await projectDir({ 'victim-no/keep.txt': KEEP, 'victim-yes/keep.txt': KEEP })
      const home = await mkdtemp(join(tmpdir(), 'hookd-sdk-home-'))
      leftovers.push(dir, home)
      const canUseTool = async (_tool: string, input: Record<string, unknown>, options: { decisionReason?: unknown }): Promise<unknown> => {
        reasons.push(options.decisionReason)
        return input.command === 'rm -rf victim-no' ? { behavior: 'deny', message: 'the application said no' } : { behavior: 'allow', updatedInput: input }
      }
      for await (const message of query({
        prompt: 'do the task',
        options: { cwd: dir, env: offlineEnv(stand.url, home), allowedTools: ['Bash'], settingSources: [], hooks: hookd.hooks, canUseTool },
      })) void message
    } finally {
      await hookd.close()
      await stand.stop()
    }
    // The audit log is a file stream: wait until both outcomes are written.
    await waitFor('both outcome lines', async () => ((await auditLines()).filter((l) => 'outcome' in l).length >= 2 ? true : undefined))
    gates = (await auditLines()).filter((l) => l.point === 'beforeToolExecute')
  }, TEST_TIMEOUT)

  /** The gate line of the call on `command`: the calls ran one per turn, in order. */
  const gateOf = (command: string): Record<string, unknown> => {
    const line = gates[calls.findIndex((c) => c.command === command)]
    if (!line) throw new Error(`no gate line for ${command}: ${JSON.stringify(gates)}`)
    return line
  }
  const outcomesOf = async (decisionId: unknown): Promise<Array<Record<string, unknown>>> => (await auditLines()).filter((l) => l.decisionId === decisionId && 'outcome' in l)

  it('canUseTool decided each call with the hook\'s question; the one it refused left its folder, the one it allowed ran', () => {
    expect(stand.main).toHaveLength(calls.length + 1)
    expect(reasons).toEqual(["Dangerous command: rm -rf victim-no (asked by hookd hook 'guard')", "Dangerous command: rm -rf victim-yes (asked by hookd hook 'guard')"])
    expect(survived(dir, 'victim-no')).toBe(true)
    expect(resultOf(stand, calls, 'toolu_stand_in_no')).toMatchObject({ is_error: true, text: 'the application said no' })
    expect(existsSync(join(dir, 'victim-yes'))).toBe(false)
    expect(resultOf(stand, calls, 'toolu_stand_in_yes').is_error).toBe(false)
  })

  it('each gate line says asked, with the question, never allowed', () => {
    expect(gates).toHaveLength(2)
    for (const [line, command] of [[gateOf('rm -rf victim-no'), 'rm -rf victim-no'], [gateOf('rm -rf victim-yes'), 'rm -rf victim-yes']] as const) {
      expect(line).toMatchObject({ agent: 'claude-code', workdir: dir, decision: { outcome: 'asked', asked: [{ hook: 'guard', title: 'Dangerous command', body: command }] } })
      expect(line.decision).not.toHaveProperty('allow')
    }
  })

  it("canUseTool's no is the refused call's second line: denied by the agent, via PostToolBatch", async () => {
    const line = gateOf('rm -rf victim-no')
    expect(await outcomesOf(line.decisionId)).toEqual([
      { time: expect.any(String), decisionId: line.decisionId, tenant: null, session: line.session, agent: 'claude-code', workdir: dir, outcome: 'denied', by: 'agent', via: 'PostToolBatch' },
    ])
    expect(logs).toContainEqual(expect.objectContaining({ event: 'outcome', decision_id: line.decisionId, msg: `decision ${line.decisionId as string} (asked): denied by the agent (PostToolBatch)` }))
  })

  it("canUseTool's yes is the call that ran: its second line says allowed by the agent, via PostToolUse", async () => {
    const line = gateOf('rm -rf victim-yes')
    expect(await outcomesOf(line.decisionId)).toEqual([
      { time: expect.any(String), decisionId: line.decisionId, tenant: null, session: line.session, agent: 'claude-code', workdir: dir, outcome: 'allowed', by: 'agent', via: 'PostToolUse' },
    ])
  })

  it('metrics count both gate calls asked, neither allowed, and each outcome once', async () => {
    expect(await sample(ASKED)).toBe(before.asked + 2)
    expect(await sample(ALLOWED)).toBe(before.allowed)
    expect(await sample('hookd_ask_outcomes_total{tenant="",outcome="allowed",by="agent",via="PostToolUse"}')).toBe(1)
    expect(await sample('hookd_ask_outcomes_total{tenant="",outcome="denied",by="agent",via="PostToolBatch"}')).toBe(1)
  })
})

/**
 * The other ways an ask ends, through the callbacks hookdHooks hands the SDK, called with the event
 * JSON the SDK passes them (as claude-agent-sdk-gates.test.ts does): no Claude Code process each.
 */
describe("the adapter's callbacks: an ask's outcome from PermissionDenied, the end of the run, or nothing that can say", () => {
  let sessions = 0
  interface Driven {
    hookd: Awaited<ReturnType<typeof hookdHooks>>
    send(event: string, extra?: Record<string, unknown>): Promise<unknown>
    sessionId: string
  }
  async function drive(options: Partial<Parameters<typeof hookdHooks>[0]> = {}): Promise<Driven> {
    const hookd = await hookdHooks({ client, hooks: ['guard'], ...options })
    const sessionId = `sdk-asks-${process.pid}-${++sessions}`
    const send = (event: string, extra: Record<string, unknown> = {}): Promise<unknown> => {
      const callback = hookd.hooks[event as keyof typeof hookd.hooks]?.[0]?.hooks[0]
      if (!callback) throw new Error(`${event} is not registered: ${hookd.events.join(', ')}`)
      const input = { hook_event_name: event, session_id: sessionId, cwd: state, permission_mode: 'default', ...extra }
      return callback(input, typeof extra.tool_use_id === 'string' ? extra.tool_use_id : undefined, { signal: new AbortController().signal })
    }
    return { hookd, send, sessionId }
  }
  const bash = (id: string, command: string): Record<string, unknown> => ({ tool_name: 'Bash', tool_input: { command, description: 'run it' }, tool_use_id: id })
  const ASK = (command: string): unknown => ({
    hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'ask', permissionDecisionReason: `Dangerous command: ${command} (asked by hookd hook 'guard')` },
  })
  const gateLines = async (sessionId: string): Promise<Array<Record<string, unknown>>> =>
    (await auditLines()).filter((l) => l.session === sessionId && l.point === 'beforeToolExecute')
  const settledOf = async (sessionId: string): Promise<unknown[]> => {
    const lines = await auditLines()
    return (await gateLines(sessionId)).map((g) => lines.filter((l) => l.decisionId === g.decisionId && 'outcome' in l).map((l) => [l.outcome, l.by, l.via]))
  }

  it("PermissionDenied (auto mode) says denied; a Stop with no word of the other says denied too (run ended): a call that ran gets its PostToolUse first", async () => {
    const run = await drive()
    try {
      expect(await run.send('PreToolUse', bash('toolu_auto', 'rm -rf a'))).toEqual(ASK('rm -rf a'))
      expect(await run.send('PreToolUse', bash('toolu_quiet', 'rm -rf b'))).toEqual(ASK('rm -rf b'))
      await run.send('PermissionDenied', { ...bash('toolu_auto', 'rm -rf a'), reason: 'classifier' })
      await expect.poll(() => settledOf(run.sessionId), { timeout: 10_000 }).toEqual([[['denied', 'agent', 'PermissionDenied']], []])
      await run.send('Stop', { stop_hook_active: false })
      await expect.poll(() => settledOf(run.sessionId), { timeout: 10_000 }).toEqual([[['denied', 'agent', 'PermissionDenied']], [['denied', 'agent', 'run ended']]])
    } finally {
      await run.hookd.close()
    }
  })

  it('registered without PostToolUse, an ask with no word by Stop is unknown: nothing could have said it ran', async () => {
    const run = await drive({ events: ['PreToolUse', 'Stop'] })
    try {
      await run.send('PreToolUse', bash('toolu_unheard', 'rm -rf c'))
      await run.send('Stop', { stop_hook_active: false })
      await expect.poll(() => settledOf(run.sessionId), { timeout: 10_000 }).toEqual([[['unknown', 'agent', 'run ended']]])
    } finally {
      await run.hookd.close()
    }
  })

  it('a run hookd.close() ends with an ask still waiting: unknown, by the host (run ended)', async () => {
    const run = await drive()
    await run.send('PreToolUse', bash('toolu_closed', 'rm -rf d'))
    await run.hookd.close()
    await expect.poll(() => settledOf(run.sessionId), { timeout: 10_000 }).toEqual([[['unknown', 'host', 'run ended']]])
  })

  it("with the application's own confirm nothing is deferred: the events stay those the points need, and a yes is allowed", async () => {
    const run = await drive({ confirm: () => true })
    try {
      expect(run.hookd.events).toEqual(['UserPromptSubmit', 'PreToolUse', 'Stop', 'StopFailure', 'SessionEnd'])
      expect(await run.send('PreToolUse', bash('toolu_app', 'rm -rf e'))).toEqual({})
      await expect.poll(async () => (await gateLines(run.sessionId))[0]?.decision, { timeout: 10_000 }).toEqual({ outcome: 'allowed', allow: true })
    } finally {
      await run.hookd.close()
    }
  })
})
