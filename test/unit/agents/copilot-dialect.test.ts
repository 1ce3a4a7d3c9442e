/**
 * Copilot CLI's dialect as a table (dialect-table.ts): its camelCase events as Copilot CLI 1.0.102 sends
 * them, each posted with the route's `?event=NAME` (test/agents/support/agent-events.ts,
 * copilot-contract.test.ts), the point and canonical payload the hooks see, the chain's answer, and what
 * Copilot reads back through the shim: the JSON it prints, nothing for no opinion, or, when hookd answers
 * an error, its refusal as a deny on stdout with exit 0 (on any other exit the model reads only the code).
 * Copilot's events carry no call id: an ask is followed by the call's tool and arguments.
 */
import { describe } from 'vitest'
import { COPILOT_AGENT as AGENT } from '../../../src/agents/copilot/copilot-agent.js'
import { callKey } from '../../../src/agents/tool-gate.js'
import { copilotPre } from '../../agents/support/agent-events.js'
import { ASKED, CWD, type Logged, type Row, SESSION, ask, beforeRun, error, fails, ok, quiet, refuse, rewrite, table, text } from './dialect-table.js'

const pre = (tool: string, args: unknown): Record<string, unknown> => copilotPre(CWD, SESSION, tool, args)
const post = (tool: string, args: unknown, toolResult: Record<string, unknown>): Record<string, unknown> => ({ ...pre(tool, args), toolResult })
const event = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({ sessionId: SESSION, timestamp: 1796053931718, cwd: CWD, ...extra })
const bash = (command: string): Record<string, unknown> => ({ command, description: 'run it' })

const BEGIN = beforeRun(AGENT)
const shellCall = (command: string) => ({ id: '', name: 'shell', arguments: { command }, native: { agent: 'copilot', name: 'bash', input: bash(command) } })
const gateShell = (command: string): Logged => ({ call: 'beforeToolExecute', payload: shellCall(command) })
const afterShell = (command: string, result: { text: string; isError: boolean }): Logged => ({ call: 'afterToolExecute', payload: { call: shellCall(command), result } })
const deny = (reason: string): Record<string, unknown> => ({ permissionDecision: 'deny', permissionDecisionReason: reason })
/** What the shim prints for Copilot when hookd answers an error: a deny on stdout, exit 0. */
const shimRefuses = (status: number, message: string) => ({
  exit: 0,
  stdout: `${JSON.stringify(deny(`hookd-hook: hookd answered HTTP ${status}: ${message}; the call is refused (hookd-hook fails closed)`))}\n`,
  stderr: '',
})
const RM = "Dangerous command: rm -rf victim (asked by hookd hook 'guard')"
const KEY = callKey('bash', '', bash('rm -rf victim'))
const PATCH = '*** Begin Patch\n*** Add File: b.txt\n+hello\n*** End Patch\n'
const deep = `${'{"a":'.repeat(70)}1${'}'.repeat(70)}`

const gates: Row[] = [
  { row: 'preToolUse with no opinion: no answer (204), the shim prints nothing', steps: [{ event: pre('bash', bash('ls')), name: 'preToolUse', gets: quiet, shim: { exit: 0, stdout: '', stderr: '' } }], log: [BEGIN, gateShell('ls')] },
  { row: "a hook's refusal is deny with its reason", steps: [{ event: pre('bash', bash('rm -rf victim')), name: 'preToolUse', reply: refuse('no rm -rf'), gets: ok(deny('no rm -rf')) }], log: [BEGIN, gateShell('rm -rf victim')] },
  {
    row: 'toolArgs sent as a JSON string read as the input; a rewrite is allow + modifiedArgs',
    steps: [{ event: pre('bash', JSON.stringify(bash('ls'))), name: 'preToolUse', reply: rewrite((a) => ({ ...a, command: 'ls -a' })), gets: ok({ permissionDecision: 'allow', modifiedArgs: bash('ls -a') }) }],
    log: [BEGIN, gateShell('ls')],
  },
  {
    row: "apply_patch's bare patch reaches hooks as write_file, and a rewrite goes back as a bare patch",
    steps: [
      {
        event: pre('apply_patch', PATCH),
        name: 'preToolUse',
        reply: rewrite((a) => ({ ...a, path: `safe/${String(a.path)}` })),
        gets: ok({ permissionDecision: 'allow', modifiedArgs: PATCH.replace('b.txt', 'safe/b.txt') }),
      },
    ],
    log: [BEGIN, { call: 'beforeToolExecute', payload: { id: '', name: 'write_file', arguments: { path: 'b.txt', content: 'hello\n' }, native: { agent: 'copilot', name: 'apply_patch', input: { command: PATCH } } } }],
  },
  {
    row: 'toolArgs hookd cannot read (nested too deep) are refused without asking the hooks',
    steps: [
      {
        event: pre('bash', deep),
        name: 'preToolUse',
        gets: ok(deny("hookd refused this call, which no hook could check: Copilot CLI's toolArgs for 'bash' is nested too deep (more than 64 levels of arrays and objects)")),
      },
    ],
    log: [BEGIN],
  },
  {
    row: 'toolArgs that are text but no JSON object are refused too, never read as a field',
    steps: [{ event: pre('bash', 'rm -rf victim'), name: 'preToolUse', gets: ok(deny("hookd refused this call, which no hook could check: Copilot CLI's toolArgs for 'bash' is not a JSON object")) }],
    log: [BEGIN],
  },
  {
    row: 'a point call that fails refuses the call, saying why',
    steps: [{ event: pre('bash', bash('ls')), name: 'preToolUse', reply: fails('unavailable', 'hookd is shutting down'), gets: ok(deny('hookd could not check this call, so it is refused: hookd is shutting down')) }],
    log: [BEGIN, gateShell('ls')],
  },
]

const afterTools: Row[] = [
  {
    row: 'postToolUse: afterToolExecute on textResultForLlm; no change is no answer',
    steps: [{ event: post('bash', bash('echo hi'), { resultType: 'success', textResultForLlm: 'hi\n' }), name: 'postToolUse', gets: quiet }],
    log: [BEGIN, afterShell('echo hi', { text: 'hi\n', isError: false })],
  },
  {
    row: 'a rewritten text is modifiedResult',
    steps: [{ event: post('bash', bash('echo hi'), { resultType: 'success', textResultForLlm: 'hi\n' }), name: 'postToolUse', reply: text((t) => t.toUpperCase()), gets: ok({ modifiedResult: { resultType: 'success', textResultForLlm: 'HI\n' } }) }],
    log: [BEGIN, afterShell('echo hi', { text: 'hi\n', isError: false })],
  },
  {
    row: 'a failure stays the kind of failure Copilot said it was',
    steps: [{ event: post('bash', bash('ls'), { resultType: 'denied', textResultForLlm: 'no' }), name: 'postToolUse', reply: text('still no'), gets: ok({ modifiedResult: { resultType: 'denied', textResultForLlm: 'still no' } }) }],
    log: [BEGIN, afterShell('ls', { text: 'no', isError: true })],
  },
  {
    row: 'a point call that fails after a tool is an error status; the shim denies on stdout',
    steps: [
      { event: post('bash', bash('ls'), { resultType: 'success', textResultForLlm: 'a' }), name: 'postToolUse', reply: fails('internal', 'the session broke'), gets: error(500, 'the session broke'), shim: shimRefuses(500, 'the session broke') },
    ],
    log: [BEGIN, afterShell('ls', { text: 'a', isError: false })],
  },
]

const runs: Row[] = [
  { row: 'sessionStart opens the run: beforeRun', steps: [{ event: event({ source: 'new', initialPrompt: 'go' }), name: 'sessionStart', gets: quiet }], log: [BEGIN] },
  {
    row: 'userPromptSubmitted opens the run and runs no beforeModelRequest: Copilot reads no answer there',
    steps: [{ event: event({ prompt: 'hi' }), name: 'userPromptSubmitted', gets: quiet }],
    log: [BEGIN],
  },
  {
    row: 'agentStop ends the run (end_turn); sessionEnd without it is interrupted',
    serves: ['beforeRun', 'afterRun'],
    steps: [
      { event: event({ prompt: 'one' }), name: 'userPromptSubmitted', gets: quiet },
      { event: event(), name: 'agentStop', gets: quiet },
      { event: event({ prompt: 'two' }), name: 'userPromptSubmitted', gets: quiet },
      { event: event({ reason: 'complete' }), name: 'sessionEnd', gets: quiet },
    ],
    log: [BEGIN, { close: 'end_turn', by: 'agent' }, BEGIN, { close: 'interrupted', by: 'agent' }],
  },
  { row: 'an event it does not map (errorOccurred) is no answer, and opens no run', steps: [{ event: event({ error: { message: 'x' } }), name: 'errorOccurred', gets: quiet }], log: [] },
]

const malformed: Row[] = [
  {
    row: 'an event posted without ?event= is 400, saying how to post it; the shim denies',
    steps: [
      {
        event: pre('bash', bash('ls')),
        gets: error(400, "Copilot's hook events do not name themselves: post each to its route with ?event=<name> (e.g. .../copilot/guard?event=preToolUse), as 'hookd setup copilot' writes"),
        shim: shimRefuses(400, "Copilot's hook events do not name themselves: post each to its route with ?event=<name> (e.g. .../copilot/guard?event=preToolUse), as 'hookd setup copilot' writes"),
      },
    ],
    log: [],
  },
  {
    row: 'a preToolUse without its toolName is refused, naming the field',
    steps: [{ event: { ...pre('bash', bash('ls')), toolName: undefined }, name: 'preToolUse', gets: ok(deny('hookd could not check this call, so it is refused: the preToolUse event.toolName: Invalid input: expected string, received undefined; is this a Copilot CLI hook event?')) }],
    log: [],
  },
  {
    row: 'a postToolUse without its sessionId is 400',
    steps: [{ event: { ...post('bash', bash('ls'), {}), sessionId: undefined }, name: 'postToolUse', gets: error(400, 'the postToolUse event.sessionId: Invalid input: expected string, received undefined; is this a Copilot CLI hook event?') }],
    log: [],
  },
]

const asks: Row[] = [
  {
    row: "ctx.confirm is Copilot's ask with the hook's question; a postToolUse of the same tool and arguments says it was allowed",
    steps: [
      { event: pre('bash', bash('rm -rf victim')), name: 'preToolUse', reply: ask('Dangerous command', 'rm -rf victim'), gets: ok({ permissionDecision: 'ask', permissionDecisionReason: RM }) },
      { event: post('bash', bash('rm -rf victim'), { resultType: 'success', textResultForLlm: '' }), name: 'postToolUse', gets: quiet },
    ],
    log: [BEGIN, gateShell('rm -rf victim'), { ask: KEY, decisionId: ASKED }, { outcome: 'allowed', key: KEY, via: 'postToolUse', by: 'agent' }, afterShell('rm -rf victim', { text: '', isError: false })],
    settled: [{ decisionId: ASKED, outcome: 'allowed', by: 'agent', via: 'postToolUse' }],
  },
  {
    row: 'a postToolUse of other arguments settles nothing; no report by agentStop: denied',
    steps: [
      { event: pre('bash', bash('rm -rf victim')), name: 'preToolUse', reply: ask('Dangerous command', 'rm -rf victim'), gets: ok({ permissionDecision: 'ask', permissionDecisionReason: RM }) },
      { event: post('bash', bash('ls'), { resultType: 'success', textResultForLlm: '' }), name: 'postToolUse', gets: quiet },
      { event: event(), name: 'agentStop', gets: quiet },
    ],
    log: [
      BEGIN,
      gateShell('rm -rf victim'),
      { ask: KEY, decisionId: ASKED },
      { outcome: 'allowed', key: callKey('bash', '', bash('ls')), via: 'postToolUse', by: 'agent' },
      afterShell('ls', { text: '', isError: false }),
      { close: 'end_turn', by: 'agent' },
    ],
    settled: [{ decisionId: ASKED, outcome: 'denied', by: 'agent', via: 'run ended' }],
  },
  {
    row: 'an ask with a rewrite carries modifiedArgs, and is followed by the rewritten call',
    steps: [
      {
        event: pre('bash', bash('rm -rf victim')),
        name: 'preToolUse',
        reply: ask('Dangerous command', 'rm -rf victim', (a) => ({ ...a, command: 'rm -ri victim' })),
        gets: ok({ permissionDecision: 'ask', permissionDecisionReason: RM, modifiedArgs: bash('rm -ri victim') }),
      },
      { event: post('bash', bash('rm -ri victim'), { resultType: 'success', textResultForLlm: '' }), name: 'postToolUse', gets: quiet },
    ],
    log: [
      BEGIN,
      gateShell('rm -rf victim'),
      { ask: callKey('bash', '', bash('rm -ri victim')), decisionId: ASKED },
      { outcome: 'allowed', key: callKey('bash', '', bash('rm -ri victim')), via: 'postToolUse', by: 'agent' },
      afterShell('rm -ri victim', { text: '', isError: false }),
    ],
    settled: [{ decisionId: ASKED, outcome: 'allowed', by: 'agent', via: 'postToolUse' }],
  },
]

describe('Copilot CLI: gates (preToolUse)', () => table(AGENT, gates))
describe('Copilot CLI: after a tool (postToolUse)', () => table(AGENT, afterTools))
describe('Copilot CLI: the run (sessionStart, userPromptSubmitted, agentStop, sessionEnd) and events it does not map', () => table(AGENT, runs))
describe('Copilot CLI: malformed events', () => table(AGENT, malformed))
describe('Copilot CLI: what follows an ask', () => table(AGENT, asks))
