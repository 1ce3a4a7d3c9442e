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
import { ASKED, CWD, HOOK, type Logged, type Row, SESSION, ask, beforeRun, couldNot, error, fails, ok, quiet, refuse, rewrite, system, table, text } from './dialect-table.js'

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
  { row: 'an event it does not map (PreCompact) is no answer, and opens no run', steps: [{ event: event('PreCompact', { trigger: 'auto' }), gets: quiet }], log: [] },
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
describe('Codex: the run (SessionStart, UserPromptSubmit, Stop, SessionEnd) and events it does not map', () => table(AGENT, runs))
describe('Codex: malformed events', () => table(AGENT, malformed))
