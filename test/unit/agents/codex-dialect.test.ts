/**
 * Codex's dialect as a table (dialect-table.ts): its command hooks' events as Codex 0.169.0 sends them
 * (test/agents/support/agent-events.ts, codex-contract.test.ts), the point and canonical payload the
 * hooks see, the chain's answer, and what Codex reads back through the shim: the JSON it prints (exit
 * 0), nothing for no opinion, or its refusal (exit 2, the reason on stderr) when hookd answers an error.
 */
import { describe } from 'vitest'
import { CODEX_AGENT as AGENT } from '../../../src/agents/codex/codex-agent.js'
import { HookdError } from '../../../src/protocol/status.js'
import { codexPatch, codexPre } from '../../agents/support/agent-events.js'
import { ASKED, CWD, HOOK, type Logged, type Reply, type Row, SESSION, ask, beforeRun, couldNot, error, fails, ok, quiet, refuse, rewrite, system, table, text } from './dialect-table.js'

const pre = (command: string): Record<string, unknown> => codexPre(CWD, SESSION, command)
const patch = (text: string): Record<string, unknown> => codexPatch(CWD, SESSION, text)
const post = (command: string, response: unknown): Record<string, unknown> => ({ ...pre(command), hook_event_name: 'PostToolUse', tool_response: response })
const base = { session_id: SESSION, cwd: CWD, model: 'gpt-5.5', permission_mode: 'default' }
const event = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ ...base, hook_event_name: name, ...extra })

/** Every run here opens at an event naming Codex's model. */
const BEGIN = beforeRun(AGENT, 'gpt-5.5')
const shellCall = (command: string) => ({ id: 'call_1', name: 'shell', arguments: { command }, native: { agent: 'codex', name: 'Bash', input: { command } } })
const gateShell = (command: string): Logged => ({ call: 'beforeToolExecute', payload: shellCall(command) })
const afterShell = (command: string, result: { text: string; isError: boolean }): Logged => ({ call: 'afterToolExecute', payload: { call: shellCall(command), result } })
const deny = (reason: string): Record<string, unknown> => ({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } })
/** What the shim prints for Codex when hookd answers an error: exit 2, the reason on stderr (Codex blocks on it). */
const shimRefuses = (status: number, message: string) => ({ exit: 2, stdout: '', stderr: `hookd-hook: hookd answered HTTP ${status}: ${message}; the call is refused (hookd-hook fails closed)\n` })
const ADD = '*** Begin Patch\n*** Add File: notes.txt\n+one\n+two\n*** End Patch\n'

const gates: Row[] = [
  { row: 'PreToolUse with no opinion: no answer (204), the shim prints nothing', steps: [{ event: pre('ls'), gets: quiet, shim: { exit: 0, stdout: '', stderr: '' } }], log: [BEGIN, gateShell('ls')], opensWith: { permissionMode: 'default' } },
  { row: "a hook's refusal is deny with its reason", steps: [{ event: pre('rm -r victim'), reply: refuse('no rm -r'), gets: ok(deny('no rm -r')) }], log: [BEGIN, gateShell('rm -r victim')] },
  {
    row: 'rewritten arguments are allow + updatedInput (Codex takes a rewrite only with allow)',
    steps: [{ event: pre('ls'), reply: rewrite(() => ({ command: 'ls -a' })), gets: ok({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', updatedInput: { command: 'ls -a' } } }) }],
    log: [BEGIN, gateShell('ls')],
  },
  {
    row: 'apply_patch adding one file reaches hooks as write_file; a rewritten path goes back as a patch',
    steps: [
      {
        event: patch(ADD),
        reply: rewrite((a) => ({ ...a, path: `safe/${String(a.path)}` })),
        gets: ok({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', updatedInput: { command: ADD.replace('notes.txt', 'safe/notes.txt') } } }),
      },
    ],
    log: [BEGIN, { call: 'beforeToolExecute', payload: { id: 'call_1', name: 'write_file', arguments: { path: 'notes.txt', content: 'one\ntwo\n' }, native: { agent: 'codex', name: 'apply_patch', input: { command: ADD } } } }],
  },
  {
    row: 'a patch whose path has no canonical reading is refused without asking the hooks',
    steps: [
      {
        event: patch('*** Begin Patch\n*** Add File: ~/.bashrc\n+x\n*** End Patch\n'),
        gets: ok(deny("hookd refused this call, which no hook could check: the patch's path '~/.bashrc' starts with '~', which the agent may read as a home folder; give the path without it")),
      },
    ],
    log: [BEGIN],
  },
  {
    row: 'ctx.confirm cannot be put to a person (the run opens with canAsk false); an ask left anyway is refused',
    steps: [
      { event: pre('rm -r victim'), reply: ask('Dangerous command', 'rm -r victim'), gets: ok(deny("this call needs a person's yes, and Codex cannot ask for one: Dangerous command: rm -r victim (asked by hookd hook 'guard')")) },
      { event: event('Stop', { turn_id: 't1', stop_hook_active: false }), gets: quiet },
    ],
    log: [BEGIN, gateShell('rm -r victim'), { ask: 'id call_1', decisionId: ASKED }, { outcome: 'denied', key: 'id call_1', via: 'cannot ask', by: 'hookd' }, { close: 'end_turn', by: 'agent' }],
    settled: [{ decisionId: ASKED, outcome: 'denied', by: 'hookd', via: 'cannot ask' }],
  },
  { row: "a gate hook that could not decide refuses the call in hookd's words", steps: [{ event: pre('ls'), reply: couldNot('worker-crash'), gets: ok(deny(`hookd refused the call: hook '${HOOK}' could not decide (its sandbox worker died)`)) }], log: [BEGIN, gateShell('ls')] },
  {
    row: 'a point call that fails refuses the call, saying why',
    steps: [{ event: pre('ls'), reply: fails('deadline-exceeded', 'the hooks did not answer within 10 s'), gets: ok(deny('hookd could not check this call, so it is refused: the hooks did not answer within 10 s')) }],
    log: [BEGIN, gateShell('ls')],
  },
  {
    row: 'a run that cannot open refuses the call, saying why',
    opens: new HookdError('invalid-argument', 'profile strict.profile.json.confirm: Invalid option: expected one of "ask"|"allow"|"deny"'),
    steps: [{ event: pre('ls'), gets: ok(deny('hookd could not check this call, so it is refused: profile strict.profile.json.confirm: Invalid option: expected one of "ask"|"allow"|"deny"')) }],
    log: [],
  },
]

const afterTools: Row[] = [
  { row: 'PostToolUse: afterToolExecute on tool_response; no change is no answer', steps: [{ event: post('echo hi', 'Output:\nhi\n'), gets: quiet }], log: [BEGIN, afterShell('echo hi', { text: 'Output:\nhi\n', isError: false })] },
  {
    row: 'a rewritten text replaces the result: decision block with the text as reason',
    steps: [{ event: post('echo hi', 'Output:\nhi\n'), reply: text((t) => t.toUpperCase()), gets: ok({ decision: 'block', reason: 'OUTPUT:\nHI\n' }) }],
    log: [BEGIN, afterShell('echo hi', { text: 'Output:\nhi\n', isError: false })],
  },
  { row: 'a text rewritten to nothing is "(no output)": an empty reason would not count', steps: [{ event: post('echo hi', 'hi'), reply: text(''), gets: ok({ decision: 'block', reason: '(no output)' }) }], log: [BEGIN, afterShell('echo hi', { text: 'hi', isError: false })] },
  {
    row: 'a tool_response that is not text reaches hooks as its JSON',
    steps: [{ event: post('ls', { exit_code: 0, output: 'a' }), gets: quiet }],
    log: [BEGIN, afterShell('ls', { text: '{"exit_code":0,"output":"a"}', isError: false })],
  },
  {
    row: 'a point call that fails after a tool is an error status; the shim refuses in its form',
    steps: [{ event: post('ls', 'a'), reply: fails('internal', 'the session broke'), gets: error(500, 'the session broke'), shim: shimRefuses(500, 'the session broke') }],
    log: [BEGIN, afterShell('ls', { text: 'a', isError: false })],
  },
]

const runs: Row[] = [
  { row: 'SessionStart opens the run: beforeRun with its model', steps: [{ event: event('SessionStart', { source: 'startup' }), gets: quiet }], log: [BEGIN], opensWith: { modelId: 'gpt-5.5', permissionMode: 'default' } },
  {
    row: 'UserPromptSubmit runs beforeModelRequest with the model: what hooks add is additionalContext',
    steps: [{ event: event('UserPromptSubmit', { turn_id: 't1', prompt: 'hi' }), reply: system('Today is Monday.'), gets: ok({ hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: 'Today is Monday.' } }) }],
    log: [BEGIN, { call: 'beforeModelRequest', payload: { system: '', model: 'gpt-5.5', messages: [{ role: 'user', text: 'hi' }] } }],
  },
  {
    row: 'Stop ends the run (afterRun end_turn); a SessionEnd after it finds none; SessionEnd alone is interrupted',
    serves: ['beforeRun', 'afterRun'],
    steps: [
      { event: event('SessionStart', { source: 'startup' }), gets: quiet },
      { event: event('Stop', { turn_id: 't1', stop_hook_active: false, last_assistant_message: 'done' }), gets: quiet },
      { event: { session_id: SESSION, cwd: CWD, hook_event_name: 'SessionEnd', reason: 'other' }, gets: quiet },
      { event: event('UserPromptSubmit', { turn_id: 't2', prompt: 'again' }), gets: quiet },
      { event: { session_id: SESSION, cwd: CWD, hook_event_name: 'SessionEnd', reason: 'other' }, gets: quiet },
    ],
    log: [BEGIN, { close: 'end_turn', by: 'agent' }, BEGIN, { close: 'interrupted', by: 'agent' }],
  },
  {
    row: 'Interrupt (the person stopped the turn) ends the run: afterRun interrupted',
    steps: [
      { event: event('UserPromptSubmit', { turn_id: 't1', prompt: 'hi' }), gets: quiet },
      { event: event('Interrupt', { turn_id: 't1' }), gets: quiet },
    ],
    log: [BEGIN, { call: 'beforeModelRequest', payload: { system: '', model: 'gpt-5.5', messages: [{ role: 'user', text: 'hi' }] } }, { close: 'interrupted', by: 'agent' }],
  },
  { row: 'an event it does not map (PreModelRequest: no request in it) is no answer, and opens no run', steps: [{ event: event('PreModelRequest', { turn_id: 't1' }), gets: quiet }], log: [] },
]

/** The chain's answer at one of Codex's own events: the fields the hooks changed. */
const fields =
  (changed: Record<string, unknown>): Reply =>
  () => ({ result: changed, diagnostics: [], asks: [] })
const SUB = { agent_id: 'agent-7', agent_type: 'explorer' }
const SUBAGENT = { id: 'agent-7', type: 'explorer' }
const permissionRequest = (command: string, extra: Record<string, unknown> = {}): Record<string, unknown> =>
  event('PermissionRequest', { turn_id: 't1', tool_name: 'Bash', tool_input: { command, description: 'why' }, ...extra })
/** What hooks see at a permission request: the canonical call (Codex names no call id there), the agent's tool. */
const asked = (command: string, extra: Record<string, unknown> = {}): Logged => ({
  call: 'permission:request',
  payload: { id: '', name: 'shell', arguments: { command }, native: { agent: 'codex', name: 'Bash', input: { command, description: 'why' } }, ...extra, tool: 'Bash' },
})
const permission = (decision: Record<string, unknown>): Record<string, unknown> => ({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision } })

const ownEvents: Row[] = [
  {
    row: 'a deferral at PreToolUse is refused: Codex can neither defer nor ask, and says so',
    steps: [
      {
        event: pre('git push'),
        reply: () => ({ result: { allow: false, deferred: true, reason: 'pushes wait for review', refusedBy: HOOK, arguments: { command: 'git push' } }, diagnostics: [], asks: [] }),
        gets: ok(deny('pushes wait for review (a hook deferred this call; Codex cannot defer or ask, so hookd refuses it)')),
      },
    ],
    log: [BEGIN, gateShell('git push')],
  },
  { row: 'PermissionRequest: permission:request on the canonical call; no decision is no answer (Codex reviews the call)', steps: [{ event: permissionRequest('rm -r victim'), gets: quiet }], log: [BEGIN, asked('rm -r victim')] },
  { row: 'a hook that allows: behavior allow', steps: [{ event: permissionRequest('ls'), reply: fields({ decision: 'allow' }), gets: ok(permission({ behavior: 'allow' })) }], log: [BEGIN, asked('ls')] },
  {
    row: 'a hook that denies: behavior deny, its reason the message',
    steps: [{ event: permissionRequest('rm -r victim'), reply: fields({ decision: 'deny', reason: 'no deletes' }), gets: ok(permission({ behavior: 'deny', message: 'no deletes' })) }],
    log: [BEGIN, asked('rm -r victim')],
  },
  { row: 'ask leaves it to Codex: no answer', steps: [{ event: permissionRequest('ls'), reply: fields({ decision: 'ask', reason: 'a person should look' }), gets: quiet }], log: [BEGIN, asked('ls')] },
  { row: 'defer: Codex has no "decide later", so it reviews the call itself: no answer', steps: [{ event: permissionRequest('ls'), reply: fields({ decision: 'defer' }), gets: quiet }], log: [BEGIN, asked('ls')] },
  {
    row: 'an allow with rewritten arguments is a deny: Codex cannot take a rewrite there, and the call as it was is not what the hook allowed',
    steps: [
      {
        event: permissionRequest('ls'),
        reply: fields({ decision: 'allow', arguments: { command: 'ls -a' } }),
        gets: ok(permission({ behavior: 'deny', message: "hookd refused this call: a hook rewrote its arguments at Codex's permission request, which Codex cannot take there" })),
      },
    ],
    log: [BEGIN, asked('ls')],
  },
  {
    row: "a subagent's permission request names the subagent",
    steps: [{ event: permissionRequest('ls', SUB), reply: fields({ decision: 'allow' }), gets: ok(permission({ behavior: 'allow' })) }],
    log: [BEGIN, asked('ls', { subagent: SUBAGENT })],
  },
  {
    row: 'a point call that fails at a permission request denies it (a gate), saying why',
    steps: [{ event: permissionRequest('ls'), reply: fails('deadline-exceeded', 'the hooks did not answer within 10 s'), gets: ok(permission({ behavior: 'deny', message: 'hookd could not check this call, so it is refused: the hooks did not answer within 10 s' })) }],
    log: [BEGIN, asked('ls')],
  },
  { row: 'with no hook serving permission:request, a PermissionRequest asks none', serves: ['beforeRun', 'beforeToolExecute'], steps: [{ event: permissionRequest('ls'), gets: quiet }], log: [BEGIN] },
  {
    row: "a subagent's PreToolUse names it: hooks see call.subagent",
    steps: [{ event: { ...pre('rm -r victim'), ...SUB }, reply: refuse('not in a subagent'), gets: ok(deny('not in a subagent')) }],
    log: [BEGIN, { call: 'beforeToolExecute', payload: { ...shellCall('rm -r victim'), subagent: SUBAGENT } }],
  },
  {
    row: 'SubagentStart: subagent:start; context is additionalContext for the subagent',
    steps: [{ event: event('SubagentStart', { turn_id: 't2', ...SUB }), reply: fields({ context: 'Stay in src/.' }), gets: ok({ hookSpecificOutput: { hookEventName: 'SubagentStart', additionalContext: 'Stay in src/.' } }) }],
    log: [BEGIN, { call: 'subagent:start', payload: { subagent: SUBAGENT } }],
  },
  {
    row: 'SubagentStop: subagent:stop with its last message; keepWorking is a block with the reason',
    steps: [
      {
        event: event('SubagentStop', { turn_id: 't2', ...SUB, last_assistant_message: 'done', stop_hook_active: false, agent_transcript_path: null }),
        reply: fields({ keepWorking: true, reason: 'run the tests first' }),
        gets: ok({ decision: 'block', reason: 'run the tests first' }),
      },
    ],
    log: [BEGIN, { call: 'subagent:stop', payload: { subagent: SUBAGENT, lastMessage: 'done' } }],
  },
  {
    row: 'PreCompact: compact:before; a block is continue false with the reason',
    steps: [{ event: event('PreCompact', { turn_id: 't1', trigger: 'auto' }), reply: fields({ block: true, reason: 'keep the history' }), gets: ok({ continue: false, stopReason: 'keep the history' }) }],
    log: [BEGIN, { call: 'compact:before', payload: { trigger: 'auto' } }],
  },
  { row: 'PostCompact: compact:after, observed', steps: [{ event: event('PostCompact', { turn_id: 't1', trigger: 'manual' }), gets: quiet }], log: [BEGIN, { call: 'compact:after', payload: { trigger: 'manual' } }] },
  {
    row: 'a PermissionRequest without its tool_input is denied (a gate), naming the field',
    steps: [
      {
        event: event('PermissionRequest', { turn_id: 't1', tool_name: 'Bash' }),
        gets: ok(permission({ behavior: 'deny', message: 'hookd could not check this call, so it is refused: the PermissionRequest event.tool_input: Invalid input: expected record, received undefined; is this a Codex hook event?' })),
      },
    ],
    log: [],
  },
  {
    row: 'a SubagentStart without its agent_id is 400, naming the field',
    steps: [{ event: event('SubagentStart', { turn_id: 't2' }), gets: error(400, 'the SubagentStart event.agent_id: Invalid input: expected string, received undefined; is this a Codex hook event?') }],
    log: [],
  },
  {
    row: 'a PreCompact whose trigger Codex does not send is 400',
    steps: [{ event: event('PreCompact', { turn_id: 't1', trigger: 'sometimes' }), gets: error(400, 'the PreCompact event.trigger: Invalid option: expected one of "manual"|"auto"; is this a Codex hook event?') }],
    log: [],
  },
]

const malformed: Row[] = [
  {
    row: 'a UserPromptSubmit without its prompt is 400; the shim refuses',
    steps: [
      {
        event: { session_id: SESSION, cwd: CWD, hook_event_name: 'UserPromptSubmit' },
        gets: error(400, 'the UserPromptSubmit event.prompt: Invalid input: expected string, received undefined; is this a Codex hook event?'),
        shim: shimRefuses(400, 'the UserPromptSubmit event.prompt: Invalid input: expected string, received undefined; is this a Codex hook event?'),
      },
    ],
    log: [],
  },
  {
    row: 'a body that is no event object is 400',
    steps: [{ event: [1, 2], gets: error(400, 'the hook event: Invalid input: expected object, received array; is this a Codex hook event?') }],
    log: [],
  },
  {
    row: "a PreToolUse whose cwd is not absolute is refused: hookd cannot confine the hooks' files",
    steps: [
      {
        event: { ...pre('ls'), cwd: 'relative/dir' },
        gets: ok(deny("hookd could not check this call, so it is refused: the event's cwd 'relative/dir' is not an absolute path; hookd needs the session's folder to confine its hooks' files")),
      },
    ],
    log: [],
  },
  {
    row: 'a PreToolUse without session_id is refused, naming the field',
    steps: [{ event: { ...pre('ls'), session_id: '' }, gets: ok(deny('hookd could not check this call, so it is refused: the hook event.session_id: is empty; is this a Codex hook event?')) }],
    log: [],
  },
]

describe('Codex: gates (PreToolUse) and what follows an ask', () => table(AGENT, gates))
describe('Codex: after a tool (PostToolUse)', () => table(AGENT, afterTools))
describe('Codex: the run (SessionStart, UserPromptSubmit, Stop, Interrupt, SessionEnd) and events it does not map', () => table(AGENT, runs))
describe('Codex: its own events (PermissionRequest, SubagentStart/Stop, PreCompact/PostCompact) and subagents', () => table(AGENT, ownEvents))
describe('Codex: malformed events', () => table(AGENT, malformed))
