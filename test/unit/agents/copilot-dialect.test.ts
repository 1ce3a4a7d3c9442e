/**
 * Copilot CLI's dialect as a table (dialect-table.ts): its camelCase events as Copilot CLI 1.0.102 sends
 * them, each posted with the route's `?event=NAME` (test/agents/support/agent-events.ts,
 * copilot-contract.test.ts; the fields of permissionRequest, userPromptTransformed, the subagent events,
 * postToolUseFailure and errorOccurred as the real CLI sent them, measured for copilot-hookd.test.ts),
 * the point and canonical payload the hooks see, the chain's answer, and what Copilot reads back through
 * the shim: the JSON it prints, nothing for no opinion, or, when hookd answers an error, its refusal as a
 * deny on stdout with exit 0 in both gates' forms (on any other exit the model reads only the code).
 * Copilot's events carry no call id: an ask is followed by the call's tool and arguments.
 */
import { describe, expect, it } from 'vitest'
import { COPILOT_AGENT as AGENT } from '../../../src/agents/copilot/copilot-agent.js'
import { httpEntry, httpSecrets, isHttpEntry } from '../../../src/agents/copilot/copilot-http.js'
import { callKey } from '../../../src/agents/tool-gate.js'
import { copilotPre } from '../../agents/support/agent-events.js'
import { ASKED, CWD, type Logged, type Reply, type Row, SESSION, ask, beforeRun, error, fails, ok, quiet, refuse, rewrite, system, table, text } from './dialect-table.js'

const pre = (tool: string, args: unknown): Record<string, unknown> => copilotPre(CWD, SESSION, tool, args)
const post = (tool: string, args: unknown, toolResult: Record<string, unknown>): Record<string, unknown> => ({ ...pre(tool, args), toolResult })
const event = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({ sessionId: SESSION, timestamp: 1796053931718, cwd: CWD, ...extra })
const bash = (command: string): Record<string, unknown> => ({ command, description: 'run it' })

const BEGIN = beforeRun(AGENT)
const shellCall = (command: string) => ({ id: '', name: 'shell', arguments: { command }, native: { agent: 'copilot', name: 'bash', input: bash(command) } })
const gateShell = (command: string): Logged => ({ call: 'beforeToolExecute', payload: shellCall(command) })
const afterShell = (command: string, result: { text: string; isError: boolean }): Logged => ({ call: 'afterToolExecute', payload: { call: shellCall(command), result } })
const deny = (reason: string): Record<string, unknown> => ({ permissionDecision: 'deny', permissionDecisionReason: reason })
/** hookd's own refusal at a gate, in both gates' forms (preToolUse reads permissionDecision, permissionRequest behavior). */
const denyBoth = (reason: string): Record<string, unknown> => ({ ...deny(reason), behavior: 'deny', message: reason })
/** What the shim prints for Copilot when hookd answers an error: a deny in both forms on stdout, exit 0. */
const shimRefuses = (status: number, message: string) => ({
  exit: 0,
  stdout: `${JSON.stringify(denyBoth(`hookd-hook: hookd answered HTTP ${status}: ${message}; the call is refused (hookd-hook fails closed)`))}\n`,
  stderr: '',
})
const RM = "Dangerous command: rm -rf victim (asked by hookd hook 'guard')"
const KEY = callKey('bash', '', bash('rm -rf victim'))
const PATCH = '*** Begin Patch\n*** Add File: b.txt\n+hello\n*** End Patch\n'
const deep = `${'{"a":'.repeat(70)}1${'}'.repeat(70)}`

/** A subagent's id, and the fields every event it makes carries (its id is also its events' sessionId). */
const SUB = '6bc6e31a-e8ed-4c93-bd36-fe860205766f'
const fromSub = { sessionId: SUB, agentId: SUB, agentType: 'explore', parentAgentId: SESSION }
const SUBAGENT = { id: SUB, type: 'explore' }
const permission = (command: string, extra: Record<string, unknown> = {}): Record<string, unknown> =>
  event({ hookName: 'permissionRequest', toolName: 'bash', toolInput: { command }, permissionSuggestions: [], ...extra })
/** What hooks see at permission:request: the canonical call, Copilot's own tool name, the subagent where one asks. */
const asked = (command: string, subagent?: Record<string, unknown>): Logged => ({
  call: 'permission:request',
  payload: { id: '', name: 'shell', arguments: { command }, native: { agent: 'copilot', name: 'bash', input: { command } }, ...(subagent ? { subagent } : {}), tool: 'bash' },
})
/** The chain answers an agent point with these changed fields (and, with `asks`, a hook's ctx.confirm). */
const fields =
  (changed: Record<string, unknown>, asks = false): Reply =>
  () => ({ result: changed, diagnostics: [], asks: asks ? [{ hook: 'guard', title: 'Dangerous command', body: 'rm -rf victim' }] : [], ...(asks ? { decisionId: ASKED } : {}) })
const TRANSFORMED = '<current_datetime>2026-12-01T21:14:42.067+00:00</current_datetime>\n\nhi'

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
    steps: [{ event: pre('bash', bash('ls')), name: 'preToolUse', reply: fails('unavailable', 'hookd is shutting down'), gets: ok(denyBoth('hookd could not check this call, so it is refused: hookd is shutting down')) }],
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
    row: 'userPromptSubmitted opens the run and runs no beforeModelRequest: Copilot drops its answer (userPromptTransformed takes it)',
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
  {
    row: 'an event it does not map (errorOccurred, as Copilot sent it) is no answer, and opens no run',
    steps: [{ event: event({ errorContext: 'model_call', recoverable: true, error: { message: 'stand-in refuses', name: 'Error' } }), name: 'errorOccurred', gets: quiet }],
    log: [],
  },
]

const prompts: Row[] = [
  {
    row: "userPromptTransformed: beforeModelRequest on the user's prompt; added text is appended to the model-facing content",
    steps: [{ event: event({ prompt: 'hi', transformedPrompt: TRANSFORMED }), name: 'userPromptTransformed', reply: system('Answer in French.'), gets: ok({ modifiedTransformedPrompt: `${TRANSFORMED}\n\nAnswer in French.` }) }],
    log: [BEGIN, { call: 'beforeModelRequest', payload: { system: '', model: '', messages: [{ role: 'user', text: 'hi' }] } }],
  },
  {
    row: 'userPromptTransformed with nothing added is no answer: the content goes as Copilot made it',
    steps: [{ event: event({ prompt: 'hi', transformedPrompt: TRANSFORMED }), name: 'userPromptTransformed', gets: quiet }],
    log: [BEGIN, { call: 'beforeModelRequest', payload: { system: '', model: '', messages: [{ role: 'user', text: 'hi' }] } }],
  },
  {
    row: 'a userPromptTransformed without transformedPrompt is 400, naming the field',
    steps: [{ event: event({ prompt: 'hi' }), name: 'userPromptTransformed', gets: error(400, 'the userPromptTransformed event.transformedPrompt: Invalid input: expected string, received undefined; is this a Copilot CLI hook event?') }],
    log: [],
  },
]

const permissions: Row[] = [
  {
    row: 'permissionRequest: permission:request on the canonical call; allow -> behavior allow',
    steps: [{ event: permission('echo hi'), name: 'permissionRequest', reply: fields({ decision: 'allow' }), gets: ok({ behavior: 'allow' }) }],
    log: [BEGIN, asked('echo hi')],
  },
  {
    row: 'deny -> behavior deny with the reason as message (what the model reads)',
    steps: [{ event: permission('rm -rf victim'), name: 'permissionRequest', reply: fields({ decision: 'deny', reason: 'no rm -rf' }), gets: ok({ behavior: 'deny', message: 'no rm -rf' }) }],
    log: [BEGIN, asked('rm -rf victim')],
  },
  {
    row: "ask, and a hook's ctx.confirm, leave it to Copilot's own permission flow: no answer",
    steps: [
      { event: permission('rm -rf victim'), name: 'permissionRequest', reply: fields({ decision: 'ask', reason: 'a person decides' }), gets: quiet },
      { event: permission('rm -rf victim'), name: 'permissionRequest', reply: fields({}, true), gets: quiet },
    ],
    log: [BEGIN, asked('rm -rf victim'), asked('rm -rf victim')],
  },
  {
    row: 'defer: Copilot has no "decide later", so its own permission flow decides (no answer)',
    steps: [{ event: permission('ls'), name: 'permissionRequest', reply: fields({ decision: 'defer' }), gets: quiet }],
    log: [BEGIN, asked('ls')],
  },
  {
    row: 'an allow with rewritten arguments is refused, saying what the hooks would run: Copilot takes no arguments there',
    steps: [
      {
        event: permission('rm -rf victim'),
        name: 'permissionRequest',
        reply: fields({ decision: 'allow', arguments: { command: 'rm -ri victim' } }),
        gets: ok({
          behavior: 'deny',
          message: `hookd's hooks changed this call's arguments at Copilot's permission request, which cannot take changed arguments, so it is refused; the hooks would allow: {"command":"rm -ri victim"}`,
        }),
      },
    ],
    log: [BEGIN, asked('rm -rf victim')],
  },
  {
    row: 'a point call that fails refuses, in both gates\' forms',
    steps: [{ event: permission('ls'), name: 'permissionRequest', reply: fails('unavailable', 'hookd is shutting down'), gets: ok(denyBoth('hookd could not check this call, so it is refused: hookd is shutting down')) }],
    log: [BEGIN, asked('ls')],
  },
  {
    row: "a subagent's permissionRequest names the subagent, in its parent's session",
    steps: [{ event: permission('echo hi', { agentId: SUB, agentType: 'explore', parentAgentId: SESSION }), name: 'permissionRequest', reply: fields({ decision: 'allow' }), gets: ok({ behavior: 'allow' }) }],
    log: [BEGIN, asked('echo hi', SUBAGENT)],
  },
]

const subagents: Row[] = [
  {
    row: "a subagent's tool call reaches the same hooks in its parent's session, the subagent named",
    steps: [{ event: { ...pre('bash', bash('rm -rf victim')), ...fromSub }, name: 'preToolUse', reply: refuse('no rm -rf'), gets: ok(deny('no rm -rf')) }],
    log: [BEGIN, { call: 'beforeToolExecute', payload: { ...shellCall('rm -rf victim'), subagent: SUBAGENT } }],
  },
  {
    row: 'subagentStart: subagent:start; context -> additionalContext (prepended to its prompt)',
    steps: [
      {
        event: event({ transcriptPath: '/tmp/events.jsonl', agentName: 'explore', agentId: SUB, agentType: 'explore', parentAgentId: SESSION }),
        name: 'subagentStart',
        reply: fields({ context: 'Stay inside src/.' }),
        gets: ok({ additionalContext: 'Stay inside src/.' }),
      },
    ],
    log: [BEGIN, { call: 'subagent:start', payload: { subagent: SUBAGENT, name: 'explore' } }],
  },
  {
    row: 'subagentStop: subagent:stop with its last message; keepWorking -> decision block with the reason',
    steps: [
      {
        event: event({ agentId: SUB, agentType: 'explore', agentName: 'explore', response: 'subagent done', stopReason: 'end_turn', stop_hook_active: false, parentAgentId: SESSION }),
        name: 'subagentStop',
        reply: fields({ keepWorking: true, reason: 'Run the tests too.' }),
        gets: ok({ decision: 'block', reason: 'Run the tests too.' }),
      },
    ],
    log: [BEGIN, { call: 'subagent:stop', payload: { subagent: SUBAGENT, name: 'explore', lastMessage: 'subagent done' } }],
  },
  {
    row: "a subagent's own agentStop ends nothing; its parent's does",
    serves: ['beforeRun', 'afterRun'],
    steps: [
      { event: event({ prompt: 'go' }), name: 'userPromptSubmitted', gets: quiet },
      { event: event({ stopReason: 'end_turn', ...fromSub }), name: 'agentStop', gets: quiet },
      { event: event({ stopReason: 'end_turn' }), name: 'agentStop', gets: quiet },
    ],
    log: [BEGIN, { close: 'end_turn', by: 'agent' }],
  },
  {
    row: 'preCompact: compact:before, observed; Copilot reads no answer there, so a block is dropped',
    steps: [{ event: event({ transcriptPath: '/tmp/events.jsonl', trigger: 'auto', customInstructions: '' }), name: 'preCompact', reply: fields({ block: true, reason: 'not now' }), gets: quiet }],
    log: [BEGIN, { call: 'compact:before', payload: { trigger: 'auto', instructions: '' } }],
  },
  {
    row: 'notification: notification, observed',
    steps: [
      {
        event: event({ message: 'Path permission needed: /tmp/x', title: 'Permission needed', hook_event_name: 'Notification', notification_type: 'permission_prompt' }),
        name: 'notification',
        gets: quiet,
      },
    ],
    log: [BEGIN, { call: 'notification', payload: { kind: 'permission_prompt', message: 'Path permission needed: /tmp/x', title: 'Permission needed' } }],
  },
]

const failures: Row[] = [
  {
    row: 'postToolUseFailure: afterToolExecute on the error; a rewrite is not carried (Copilot takes only additionalContext there)',
    steps: [{ event: { ...pre('view', { path: '/nope' }), error: 'Path does not exist' }, name: 'postToolUseFailure', reply: text('hidden'), gets: quiet }],
    log: [
      BEGIN,
      {
        call: 'afterToolExecute',
        payload: { call: { id: '', name: 'read_file', arguments: { path: '/nope' }, native: { agent: 'copilot', name: 'view', input: { path: '/nope' } } }, result: { text: 'Path does not exist', isError: true } },
      },
    ],
  },
  {
    row: 'an asked call that ran and failed is allowed, via postToolUseFailure',
    steps: [
      { event: pre('bash', bash('rm -rf victim')), name: 'preToolUse', reply: ask('Dangerous command', 'rm -rf victim'), gets: ok({ permissionDecision: 'ask', permissionDecisionReason: RM }) },
      { event: { ...pre('bash', bash('rm -rf victim')), error: 'exit 1' }, name: 'postToolUseFailure', gets: quiet },
    ],
    log: [BEGIN, gateShell('rm -rf victim'), { ask: KEY, decisionId: ASKED }, { outcome: 'allowed', key: KEY, via: 'postToolUseFailure', by: 'agent' }, afterShell('rm -rf victim', { text: 'exit 1', isError: true })],
    settled: [{ decisionId: ASKED, outcome: 'allowed', by: 'agent', via: 'postToolUseFailure' }],
  },
  {
    row: 'sessionEnd with reason error ends the run as an error',
    serves: ['beforeRun', 'afterRun'],
    steps: [
      { event: event({ prompt: 'go' }), name: 'userPromptSubmitted', gets: quiet },
      { event: event({ reason: 'error' }), name: 'sessionEnd', gets: quiet },
    ],
    log: [BEGIN, { close: 'error', by: 'agent' }],
  },
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
    steps: [{ event: { ...pre('bash', bash('ls')), toolName: undefined }, name: 'preToolUse', gets: ok(denyBoth('hookd could not check this call, so it is refused: the preToolUse event.toolName: Invalid input: expected string, received undefined; is this a Copilot CLI hook event?')) }],
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
describe('Copilot CLI: the prompt (userPromptTransformed)', () => table(AGENT, prompts))
describe('Copilot CLI: permission requests (permissionRequest)', () => table(AGENT, permissions))
describe('Copilot CLI: subagents, compaction, notices', () => table(AGENT, subagents))
describe('Copilot CLI: failed tools and failed sessions', () => table(AGENT, failures))
describe('Copilot CLI: malformed events', () => table(AGENT, malformed))
describe('Copilot CLI: what follows an ask', () => table(AGENT, asks))

describe("Copilot CLI: hookd's own http entries (setup --transport http), told apart from every other", () => {
  const URL = 'http://127.0.0.1:7390/copilot/guard'
  const ours = httpEntry('preToolUse', URL, 'hkd_token', 30)
  it('writes the route with the event, the token as a bearer, Copilot\'s timeout; and knows it again', () => {
    expect(ours).toEqual({ type: 'http', url: `${URL}?event=preToolUse`, headers: { Authorization: 'Bearer hkd_token' }, timeoutSec: 30 })
    expect(isHttpEntry(ours, 'preToolUse')).toBe(true)
    expect(httpSecrets({ hooks: { preToolUse: [ours, { type: 'http', url: 'https://hooks.example.com/x', headers: { Authorization: 'Bearer theirs' }, timeoutSec: 5 }] } })).toEqual(['hkd_token'])
  })
  const others: Array<[string, Record<string, unknown>]> = [
    ['under another event', { ...ours }],
    ['with a field of its own', { ...ours, matcher: 'bash' }],
    ['over https', { ...ours, url: `https://127.0.0.1:7390/copilot/guard?event=preToolUse` }],
    ["to another agent's route", { ...ours, url: 'http://127.0.0.1:7390/codex/guard?event=preToolUse' }],
    ['with more in its query', { ...ours, url: `${URL}?event=preToolUse&x=1` }],
    ['with a fragment', { ...ours, url: `${URL}?event=preToolUse#x` }],
    ['with a second header', { ...ours, headers: { Authorization: 'Bearer hkd_token', 'X-Source': 'me' } }],
    ['with another kind of authorization', { ...ours, headers: { Authorization: 'Basic abc' } }],
    ['with no timeout to speak of', { ...ours, timeoutSec: 0 }],
  ]
  it.each(others)('not an entry %s', (what, entry) => {
    expect(isHttpEntry(entry, what === 'under another event' ? 'postToolUse' : 'preToolUse')).toBe(false)
  })
})
