/**
 * Cursor's dialect as a table (dialect-table.ts): its documented events (test/agents/support/
 * agent-events.ts, cursor-contract.test.ts: the agent cannot run here), and the newer ones with the
 * fields Cursor's hook engine (@cursor/sdk 1.0.32) gives them, the point and canonical payload
 * the hooks see, the chain's answer, and what Cursor reads back through the shim: the JSON it prints
 * (`{}` for no opinion: Cursor wants JSON from every hook), or, when hookd answers an error, its refusal
 * (exit 2 and a deny on stdout). The session is `conversation_id`, the workdir the first workspace root.
 */
import { describe } from 'vitest'
import { CURSOR_AGENT as AGENT } from '../../../src/agents/cursor/cursor-agent.js'
import { callKey } from '../../../src/agents/tool-gate.js'
import { cursorRead, cursorShell } from '../../agents/support/agent-events.js'
import { ASKED, CWD, type Logged, type Reply, type Row, SESSION, ask, beforeRun, error, fails, ok, refuse, rewrite, system, table, text } from './dialect-table.js'

const shell = (command: string): Record<string, unknown> => cursorShell(CWD, SESSION, command)
const read = (path: string): Record<string, unknown> => cursorRead(CWD, SESSION, path, 'KEY=1\n')
const common = { conversation_id: SESSION, generation_id: 'gen-0001', model: 'default', cursor_version: '1.7.2', workspace_roots: [CWD], user_email: null }
const event = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ ...common, hook_event_name: name, ...extra })

const BEGIN = beforeRun(AGENT, 'default')
const shellCall = (command: string) => ({ id: '', name: 'shell', arguments: { command, cwd: '.' }, native: { agent: 'cursor', name: 'Shell', input: { command, cwd: CWD } } })
const gateShell = (command: string): Logged => ({ call: 'beforeToolExecute', payload: shellCall(command) })
const refusal = (permission: 'deny' | 'ask', reason: string): Record<string, unknown> => ({ permission, user_message: reason, agent_message: reason })
/** What the shim prints for Cursor when hookd answers an error: exit 2 and a deny on stdout (Cursor documents both). */
const shimRefuses = (status: number, message: string) => {
  const reason = `hookd-hook: hookd answered HTTP ${status}: ${message}; the call is refused (hookd-hook fails closed)`
  return { exit: 2, stdout: `${JSON.stringify({ continue: false, permission: 'deny', user_message: reason, agent_message: reason })}\n`, stderr: '' }
}
const RM = "Dangerous command: rm -rf victim (asked by hookd hook 'guard')"
/** An ask of this call waits for its outcome, which Cursor's events do not say: unknown at once. */
const notFollowed = (key: string): Logged[] => [
  { ask: key, decisionId: ASKED },
  { outcome: 'unknown', key, via: 'not followed', by: 'hookd' },
]
const UNKNOWN = [{ decisionId: ASKED, outcome: 'unknown' as const, by: 'hookd' as const, via: 'not followed' }]
/** An ask the answer cannot carry: Cursor gets a refusal, and the ask is settled denied at once. */
const cannotAsk = (key: string): Logged[] => [
  { ask: key, decisionId: ASKED },
  { outcome: 'denied', key, via: 'cannot ask', by: 'hookd' },
]
const DENIED = [{ decisionId: ASKED, outcome: 'denied' as const, by: 'hookd' as const, via: 'cannot ask' }]
/** preToolUse and its kin as Cursor's hook engine sends them. */
const preTool = (tool: string, input: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> =>
  event('preToolUse', { tool_name: tool, tool_input: input, tool_use_id: 'tu_1', cwd: CWD, ...extra })
const WRITE = { file_path: `${CWD}/a.txt`, content: 'hello' }
const writeCall = { id: 'tu_1', name: 'write_file', arguments: { path: 'a.txt', content: 'hello' }, native: { agent: 'cursor', name: 'Write', input: WRITE } }
/** The chain answers an agent point with these changed fields. */
const fields =
  (changed: Record<string, unknown>): Reply =>
  () => ({ result: changed, diagnostics: [], asks: [] })
const SUB = { subagent_id: 'sub-1', subagent_type: 'explore', task: 'look around', parent_conversation_id: SESSION, tool_call_id: 'tu_task' }

const gates: Row[] = [
  { row: 'beforeShellExecution with no opinion: {}', steps: [{ event: shell('ls'), gets: ok({}) }], log: [BEGIN, gateShell('ls')], opensWith: { modelId: 'default' } },
  { row: "a hook's refusal is permission deny, with the reason for the person and the model", steps: [{ event: shell('rm -rf victim'), reply: refuse('no rm -rf'), gets: ok(refusal('deny', 'no rm -rf')) }], log: [BEGIN, gateShell('rm -rf victim')] },
  {
    row: 'Cursor takes no rewritten call: a rewrite is refused, saying what the hooks would run',
    steps: [
      {
        event: shell('make'),
        reply: rewrite((a) => ({ ...a, command: 'make -n' })),
        gets: ok(refusal('deny', "hookd's hooks changed this call, and Cursor cannot run a changed call, so this one is refused; the hooks would allow: make -n")),
      },
    ],
    log: [BEGIN, gateShell('make')],
  },
  {
    row: 'beforeReadFile is read_file, refused with the permission field alone',
    steps: [{ event: read(`${CWD}/.env`), reply: refuse('no reading .env'), gets: ok({ permission: 'deny' }) }],
    log: [BEGIN, { call: 'beforeToolExecute', payload: { id: '', name: 'read_file', arguments: { path: '.env' }, native: { agent: 'cursor', name: 'Read', input: { file_path: `${CWD}/.env`, content: 'KEY=1\n' } } } }],
  },
  {
    row: "beforeMCPExecution's tool_input JSON string reaches hooks as MCP:<tool> with its parameters",
    steps: [{ event: event('beforeMCPExecution', { tool_name: 'run', tool_input: JSON.stringify({ cmd: 'rm -rf victim' }), command: 'npx mcp-server' }), reply: refuse('no rm -rf through MCP'), gets: ok(refusal('deny', 'no rm -rf through MCP')) }],
    log: [BEGIN, { call: 'beforeToolExecute', payload: { id: '', name: 'MCP:run', arguments: { cmd: 'rm -rf victim' }, native: { agent: 'cursor', name: 'MCP:run', input: { cmd: 'rm -rf victim' } } } }],
  },
  {
    row: "an MCP tool_input hookd cannot read is refused without asking the hooks",
    steps: [{ event: event('beforeMCPExecution', { tool_name: 'run', tool_input: '{"cmd": ', command: 'npx mcp-server' }), gets: ok(refusal('deny', "hookd refused this call, which no hook could check: Cursor's tool_input for 'run' is not valid JSON")) }],
    log: [BEGIN],
  },
  {
    row: 'preToolUse names the tool and its id',
    steps: [{ event: event('preToolUse', { tool_name: 'Shell', tool_input: { command: 'ls' }, tool_use_id: 'tu_1' }), gets: ok({}) }],
    log: [BEGIN, { call: 'beforeToolExecute', payload: { id: 'tu_1', name: 'shell', arguments: { command: 'ls' }, native: { agent: 'cursor', name: 'Shell', input: { command: 'ls' } } } }],
  },
  {
    row: "preToolUse: a rewrite of a field Cursor applies is updated_input with the changed fields (Shell's command)",
    steps: [{ event: preTool('Shell', { command: 'make', cwd: CWD }), reply: rewrite((a) => ({ ...a, command: 'make -n' })), gets: ok({ updated_input: { command: 'make -n' } }) }],
    log: [BEGIN, { call: 'beforeToolExecute', payload: { id: 'tu_1', name: 'shell', arguments: { command: 'make', cwd: '.' }, native: { agent: 'cursor', name: 'Shell', input: { command: 'make', cwd: CWD } } } }],
  },
  {
    row: "preToolUse on Write: a new path is updated_input; new content, which Cursor would not apply, is refused, saying what the hooks would run",
    steps: [
      { event: preTool('Write', WRITE), reply: rewrite((a) => ({ ...a, path: 'safe/a.txt' })), gets: ok({ updated_input: { file_path: `${CWD}/safe/a.txt` } }) },
      {
        event: preTool('Write', WRITE),
        reply: rewrite((a) => ({ ...a, content: 'HELLO' })),
        gets: ok(refusal('deny', `hookd's hooks changed this call, and Cursor cannot run a changed call, so this one is refused; the hooks would allow: ${JSON.stringify({ file_path: `${CWD}/a.txt`, content: 'HELLO' })}`)),
      },
    ],
    log: [BEGIN, { call: 'beforeToolExecute', payload: writeCall }, { call: 'beforeToolExecute', payload: writeCall }],
  },
  {
    row: 'preToolUse on an MCP tool: changed arguments are merged in (updated_input)',
    steps: [{ event: preTool('MCP:run', { cmd: 'rm -rf victim' }), reply: rewrite((a) => ({ ...a, cmd: 'ls' })), gets: ok({ updated_input: { cmd: 'ls' } }) }],
    log: [BEGIN, { call: 'beforeToolExecute', payload: { id: 'tu_1', name: 'MCP:run', arguments: { cmd: 'rm -rf victim' }, native: { agent: 'cursor', name: 'MCP:run', input: { cmd: 'rm -rf victim' } } } }],
  },
  {
    row: "a subagent's preToolUse names the subagent by the tool call that started it",
    steps: [{ event: preTool('Shell', { command: 'rm -rf victim', cwd: CWD }, { parent_tool_call_id: 'tu_task' }), reply: refuse('not in a subagent'), gets: ok(refusal('deny', 'not in a subagent')) }],
    log: [BEGIN, { call: 'beforeToolExecute', payload: { ...shellCall('rm -rf victim'), id: 'tu_1', subagent: { id: 'tu_task' } } }],
  },
  {
    row: 'a point call that fails refuses the call, saying why',
    steps: [{ event: shell('ls'), reply: fails('unavailable', 'hookd is shutting down'), gets: ok(refusal('deny', 'hookd could not check this call, so it is refused: hookd is shutting down')) }],
    log: [BEGIN, gateShell('ls')],
  },
]

const afterTools: Row[] = [
  {
    row: "afterShellExecution: afterToolExecute on its output; Cursor reads no answer, so a rewrite is {}",
    steps: [{ event: event('afterShellExecution', { command: 'ls', output: 'a\n', duration: 12 }), reply: text('changed'), gets: ok({}) }],
    log: [BEGIN, { call: 'afterToolExecute', payload: { call: { id: '', name: 'shell', arguments: { command: 'ls' }, native: { agent: 'cursor', name: 'Shell', input: { command: 'ls' } } }, result: { text: 'a\n', isError: false } } }],
  },
  {
    row: 'afterFileEdit with one edit is edit_file',
    steps: [{ event: event('afterFileEdit', { file_path: `${CWD}/a.txt`, edits: [{ old_string: 'a', new_string: 'b' }] }), gets: ok({}) }],
    log: [
      BEGIN,
      {
        call: 'afterToolExecute',
        payload: {
          call: { id: '', name: 'edit_file', arguments: { path: 'a.txt', old_string: 'a', new_string: 'b' }, native: { agent: 'cursor', name: 'Edit', input: { file_path: `${CWD}/a.txt`, old_string: 'a', new_string: 'b' } } },
          result: { text: '', isError: false },
        },
      },
    ],
  },
  {
    row: 'postToolUseFailure: afterToolExecute on error_message, an error; observed',
    steps: [{ event: event('postToolUseFailure', { tool_name: 'Read', tool_input: { file_path: `${CWD}/nope` }, error_message: 'File not found', failure_type: 'error', tool_use_id: 'tu_2' }), gets: ok({}) }],
    log: [
      BEGIN,
      { call: 'afterToolExecute', payload: { call: { id: 'tu_2', name: 'read_file', arguments: { path: 'nope' }, native: { agent: 'cursor', name: 'Read', input: { file_path: `${CWD}/nope` } } }, result: { text: 'File not found', isError: true } } },
    ],
  },
  {
    row: 'a point call that fails after a tool is an error status; the shim refuses in its form',
    steps: [{ event: event('afterShellExecution', { command: 'ls', output: '' }), reply: fails('internal', 'the session broke'), gets: error(500, 'the session broke'), shim: shimRefuses(500, 'the session broke') }],
    log: [BEGIN, { call: 'afterToolExecute', payload: { call: { id: '', name: 'shell', arguments: { command: 'ls' }, native: { agent: 'cursor', name: 'Shell', input: { command: 'ls' } } }, result: { text: '', isError: false } } }],
  },
]

const runs: Row[] = [
  { row: 'sessionStart opens the run: beforeRun with its model', steps: [{ event: event('sessionStart'), gets: ok({}) }], log: [BEGIN] },
  {
    row: "beforeSubmitPrompt opens the run; beforeModelRequest on the prompt: added text is additional_context",
    steps: [
      { event: event('beforeSubmitPrompt', { prompt: 'tidy up', attachments: [] }), reply: system('Answer in French.'), gets: ok({ additional_context: 'Answer in French.' }) },
      { event: event('beforeSubmitPrompt', { prompt: 'again', attachments: [] }), gets: ok({}) },
    ],
    log: [
      BEGIN,
      { call: 'beforeModelRequest', payload: { system: '', model: 'default', messages: [{ role: 'user', text: 'tidy up' }] } },
      { call: 'beforeModelRequest', payload: { system: '', model: 'default', messages: [{ role: 'user', text: 'again' }] } },
    ],
  },
  {
    row: 'subagentStart: subagent:start; context -> additional_context',
    steps: [{ event: event('subagentStart', SUB), reply: fields({ context: 'Stay inside src/.' }), gets: ok({ additional_context: 'Stay inside src/.' }) }],
    log: [BEGIN, { call: 'subagent:start', payload: { subagent: { id: 'sub-1', type: 'explore' }, task: 'look around' } }],
  },
  {
    row: 'subagentStop: subagent:stop with its summary; keepWorking -> followup_message, the reason',
    steps: [{ event: event('subagentStop', { ...SUB, status: 'completed', summary: 'found it' }), reply: fields({ keepWorking: true, reason: 'Check the tests too.' }), gets: ok({ followup_message: 'Check the tests too.' }) }],
    log: [BEGIN, { call: 'subagent:stop', payload: { subagent: { id: 'sub-1', type: 'explore' }, task: 'look around', lastMessage: 'found it', status: 'completed' } }],
  },
  {
    row: 'preCompact: compact:before, observed; Cursor takes no block there ({})',
    steps: [{ event: event('preCompact', { trigger: 'auto', context_usage_percent: 91, message_count: 40 }), reply: fields({ block: true, reason: 'not now' }), gets: ok({}) }],
    log: [BEGIN, { call: 'compact:before', payload: { trigger: 'auto', instructions: '' } }],
  },
  {
    row: 'stop ends the run by its status: completed end_turn, aborted interrupted, error error; sessionEnd interrupted',
    serves: ['beforeRun', 'afterRun'],
    steps: [
      { event: event('sessionStart'), gets: ok({}) },
      { event: event('stop', { status: 'completed', loop_count: 0 }), gets: ok({}) },
      { event: event('sessionStart'), gets: ok({}) },
      { event: event('stop', { status: 'aborted' }), gets: ok({}) },
      { event: event('sessionStart'), gets: ok({}) },
      { event: event('stop', { status: 'error' }), gets: ok({}) },
      { event: event('sessionStart'), gets: ok({}) },
      { event: event('sessionEnd'), gets: ok({}) },
    ],
    log: [BEGIN, { close: 'end_turn', by: 'agent' }, BEGIN, { close: 'interrupted', by: 'agent' }, BEGIN, { close: 'error', by: 'agent' }, BEGIN, { close: 'interrupted', by: 'agent' }],
  },
  {
    row: 'events it does not map (afterAgentResponse, afterAgentThought, beforeTabFileRead, afterTabFileEdit, workspaceOpen) are {}, and open no run',
    steps: [
      { event: event('afterAgentResponse', { text: 'done' }), gets: ok({}) },
      { event: event('afterAgentThought', { text: 'hmm', duration_ms: 5 }), gets: ok({}) },
      { event: event('beforeTabFileRead', { file_path: `${CWD}/a.txt`, content: 'x' }), gets: ok({}) },
      { event: event('afterTabFileEdit', { file_path: `${CWD}/a.txt`, edits: [] }), gets: ok({}) },
      { event: event('workspaceOpen'), gets: ok({}) },
    ],
    log: [],
  },
]

const malformed: Row[] = [
  {
    row: 'a gate event with no workspace root is refused, naming the field',
    steps: [{ event: { ...shell('ls'), workspace_roots: [] }, gets: ok(refusal('deny', 'hookd could not check this call, so it is refused: the hook event.workspace_roots: lists no folder; is this a Cursor hook event?')) }],
    log: [],
  },
  {
    row: 'a beforeReadFile that cannot be checked is refused with the permission field alone',
    steps: [{ event: { ...read(`${CWD}/a`), file_path: undefined }, gets: ok({ permission: 'deny' }) }],
    log: [],
  },
  {
    row: 'a stop without its conversation_id is 400; the shim refuses',
    steps: [
      {
        event: { ...event('stop'), conversation_id: undefined },
        gets: error(400, 'the hook event.conversation_id: Invalid input: expected string, received undefined; is this a Cursor hook event?'),
        shim: shimRefuses(400, 'the hook event.conversation_id: Invalid input: expected string, received undefined; is this a Cursor hook event?'),
      },
    ],
    log: [],
  },
]

const asks: Row[] = [
  {
    row: "ctx.confirm is Cursor's ask; what became of it is recorded unknown at once (its after events are not followed)",
    steps: [{ event: shell('rm -rf victim'), reply: ask('Dangerous command', 'rm -rf victim'), gets: ok(refusal('ask', RM)) }],
    log: [BEGIN, gateShell('rm -rf victim'), ...notFollowed(callKey('Shell', '', { command: 'rm -rf victim', cwd: CWD }))],
    settled: UNKNOWN,
  },
  {
    row: 'an ask with a rewrite cannot be put to Cursor: refused, and the ask recorded denied (cannot ask)',
    steps: [{ event: shell('rm -rf victim'), reply: ask('Dangerous command', 'rm -rf victim', (a) => ({ ...a, command: 'rm -ri victim' })), gets: ok(refusal('deny', `this call needs a person's yes, which Cursor cannot be asked for here: ${RM}`)) }],
    log: [BEGIN, gateShell('rm -rf victim'), ...cannotAsk(callKey('Shell', '', { command: 'rm -ri victim', cwd: CWD }))],
    settled: DENIED,
  },
  {
    row: 'beforeReadFile answers allow or deny only: an ask is a deny, and recorded denied (cannot ask)',
    steps: [{ event: read(`${CWD}/.env`), reply: ask('Read .env?'), gets: ok({ permission: 'deny' }) }],
    log: [
      BEGIN,
      { call: 'beforeToolExecute', payload: { id: '', name: 'read_file', arguments: { path: '.env' }, native: { agent: 'cursor', name: 'Read', input: { file_path: `${CWD}/.env`, content: 'KEY=1\n' } } } },
      ...cannotAsk(callKey('Read', '', { file_path: `${CWD}/.env`, content: 'KEY=1\n' })),
    ],
    settled: DENIED,
  },
]

describe('Cursor: gates (beforeShellExecution, beforeReadFile, beforeMCPExecution, preToolUse)', () => table(AGENT, gates))
describe('Cursor: after a tool (afterShellExecution, afterFileEdit, postToolUseFailure)', () => table(AGENT, afterTools))
describe('Cursor: the run (sessionStart, beforeSubmitPrompt, stop, sessionEnd), subagents, compaction, and events it does not map', () => table(AGENT, runs))
describe('Cursor: malformed events', () => table(AGENT, malformed))
describe('Cursor: what follows an ask', () => table(AGENT, asks))
