/**
 * Gemini CLI's dialect as a table (dialect-table.ts): its command hooks' events as Gemini CLI 0.61.0
 * sends them (test/agents/support/agent-events.ts, gemini-contract.test.ts), the point and canonical
 * payload the hooks see, the chain's answer, and what Gemini CLI reads back through the shim: the JSON
 * it prints, nothing for no opinion, or its refusal (exit 2, the reason on stderr) when hookd answers an
 * error. Gemini CLI's events carry no tool call id: the calls hooks see have id ''.
 */
import { describe, expect, it } from 'vitest'
import { getPoint } from '../../../src/protocol/points/points.js'
import { GEMINI_AGENT as AGENT } from '../../../src/agents/gemini/gemini-agent.js'
import { geminiBefore } from '../../agents/support/agent-events.js'
import { ASKED, CWD, HOOK, type Logged, type Reply, type Row, SESSION, ask, beforeRun, couldNot, error, fails, ok, quiet, refuse, rewrite, system, table, text } from './dialect-table.js'
import { callKey } from '../../../src/agents/tool-gate.js'

const before = (tool: string, input: Record<string, unknown>): Record<string, unknown> => geminiBefore(CWD, SESSION, tool, input)
const after = (tool: string, input: Record<string, unknown>, response: unknown): Record<string, unknown> => ({ ...before(tool, input), hook_event_name: 'AfterTool', tool_response: response })
const event = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ session_id: SESSION, transcript_path: '/tmp/t.jsonl', cwd: CWD, hook_event_name: name, timestamp: '2026-11-30T12:00:00.000Z', ...extra })
const shell = (command: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ command, description: 'run it', ...extra })

const BEGIN = beforeRun(AGENT)
const shellCall = (command: string, extra: Record<string, unknown> = {}) => ({ id: '', name: 'shell', arguments: { command }, native: { agent: 'gemini', name: 'run_shell_command', input: shell(command, extra) } })
const gateShell = (command: string): Logged => ({ call: 'beforeToolExecute', payload: shellCall(command) })
const afterShell = (command: string, result: { text: string; isError: boolean }): Logged => ({ call: 'afterToolExecute', payload: { call: shellCall(command), result } })
const deny = (reason: string): Record<string, unknown> => ({ decision: 'deny', reason })
/** What the shim prints for Gemini CLI when hookd answers an error: exit 2, the reason on stderr. */
const shimRefuses = (status: number, message: string) => ({ exit: 2, stdout: '', stderr: `hookd-hook: hookd answered HTTP ${status}: ${message}; the call is refused (hookd-hook fails closed)\n` })

const gates: Row[] = [
  { row: 'BeforeTool with no opinion: no answer (204), the shim prints nothing', steps: [{ event: before('run_shell_command', shell('ls')), gets: quiet, shim: { exit: 0, stdout: '', stderr: '' } }], log: [BEGIN, gateShell('ls')] },
  { row: "a hook's refusal is decision deny with its reason", steps: [{ event: before('run_shell_command', shell('rm -rf victim')), reply: refuse('no rm -rf'), gets: ok(deny('no rm -rf')) }], log: [BEGIN, gateShell('rm -rf victim')] },
  {
    row: 'run_shell_command is shell with dir_path as cwd; a rewrite is the whole tool_input, its other fields kept',
    steps: [
      {
        event: before('run_shell_command', shell('ls', { dir_path: 'sub' })),
        reply: rewrite((a) => ({ ...a, command: 'ls -a' })),
        gets: ok({ hookSpecificOutput: { hookEventName: 'BeforeTool', tool_input: shell('ls -a', { dir_path: 'sub' }) } }),
      },
    ],
    log: [BEGIN, { call: 'beforeToolExecute', payload: { ...shellCall('ls', { dir_path: 'sub' }), arguments: { command: 'ls', cwd: 'sub' } } }],
  },
  {
    row: 'write_file maps with its path; a rewritten path goes back absolute',
    steps: [
      {
        event: before('write_file', { file_path: 'x.txt', content: 'x' }),
        reply: rewrite((a) => ({ ...a, path: `safe/${String(a.path)}` })),
        gets: ok({ hookSpecificOutput: { hookEventName: 'BeforeTool', tool_input: { file_path: `${CWD}/safe/x.txt`, content: 'x' } } }),
      },
    ],
    log: [BEGIN, { call: 'beforeToolExecute', payload: { id: '', name: 'write_file', arguments: { path: 'x.txt', content: 'x' }, native: { agent: 'gemini', name: 'write_file', input: { file_path: 'x.txt', content: 'x' } } } }],
  },
  {
    row: 'web_fetch (a prompt holding URLs) keeps its own name and input',
    steps: [{ event: before('web_fetch', { prompt: 'summarise https://example.com' }), gets: quiet }],
    log: [BEGIN, { call: 'beforeToolExecute', payload: { id: '', name: 'web_fetch', arguments: { prompt: 'summarise https://example.com' }, native: { agent: 'gemini', name: 'web_fetch', input: { prompt: 'summarise https://example.com' } } } }],
  },
  {
    row: 'a path with a NUL byte (Gemini CLI would strip it) is refused without asking the hooks',
    steps: [{ event: before('read_file', { file_path: 'a\u0000b' }), gets: ok(deny("hookd refused this call, which no hook could check: read_file's file_path holds a NUL byte, which no file name can")) }],
    log: [BEGIN],
  },
  {
    row: 'ctx.confirm cannot be put to a person (the run opens with canAsk false); an ask left anyway is refused',
    steps: [{ event: before('run_shell_command', shell('rm -rf victim')), reply: ask('Dangerous command'), gets: ok(deny("this call needs a person's yes, and Gemini CLI cannot ask for one from a hook: Dangerous command (asked by hookd hook 'guard')")) }],
    log: [
      BEGIN,
      gateShell('rm -rf victim'),
      { ask: callKey('run_shell_command', '', shell('rm -rf victim')), decisionId: ASKED },
      { outcome: 'denied', key: callKey('run_shell_command', '', shell('rm -rf victim')), via: 'cannot ask', by: 'hookd' },
    ],
    settled: [{ decisionId: ASKED, outcome: 'denied', by: 'hookd', via: 'cannot ask' }],
  },
  { row: "a gate hook that could not decide refuses the call in hookd's words", steps: [{ event: before('run_shell_command', shell('ls')), reply: couldNot('memory'), gets: ok(deny(`hookd refused the call: hook '${HOOK}' could not decide (it ran out of memory)`)) }], log: [BEGIN, gateShell('ls')] },
  {
    row: 'a point call that fails refuses the call, saying why',
    steps: [{ event: before('run_shell_command', shell('ls')), reply: fails('resource-exhausted', 'too many calls at once'), gets: ok(deny('hookd could not check this call, so it is refused: too many calls at once')) }],
    log: [BEGIN, gateShell('ls')],
  },
]

const afterTools: Row[] = [
  {
    row: 'AfterTool: afterToolExecute on llmContent; no change is no answer',
    steps: [{ event: after('run_shell_command', shell('echo hi'), { llmContent: 'Output: hi', returnDisplay: 'hi' }), gets: quiet }],
    log: [BEGIN, afterShell('echo hi', { text: 'Output: hi', isError: false })],
  },
  {
    row: 'a rewritten text replaces the result: decision deny with the text (Gemini CLI shows it as an error)',
    steps: [{ event: after('run_shell_command', shell('echo hi'), { llmContent: [{ text: 'Output: ' }, { text: 'hi' }] }), reply: text((t) => t.toUpperCase()), gets: ok(deny('OUTPUT: HI')) }],
    log: [BEGIN, afterShell('echo hi', { text: 'Output: hi', isError: false })],
  },
  {
    row: "a response with an error is isError; a text rewritten to nothing is '(no output)'",
    steps: [{ event: after('run_shell_command', shell('false'), { llmContent: 'failed', error: { message: 'exit 1' } }), reply: text(''), gets: ok(deny('(no output)')) }],
    log: [BEGIN, afterShell('false', { text: 'failed', isError: true })],
  },
  {
    row: 'a point call that fails after a tool is an error status; the shim refuses in its form',
    steps: [{ event: after('run_shell_command', shell('ls'), { llmContent: 'a' }), reply: fails('cancelled', 'the agent went away'), gets: error(499, 'the agent went away'), shim: shimRefuses(499, 'the agent went away') }],
    log: [BEGIN, afterShell('ls', { text: 'a', isError: false })],
  },
]

const runs: Row[] = [
  { row: 'SessionStart opens the run: beforeRun', steps: [{ event: event('SessionStart', { source: 'startup' }), gets: quiet }], log: [BEGIN] },
  {
    row: 'BeforeAgent runs beforeModelRequest: what hooks add is additionalContext',
    steps: [{ event: event('BeforeAgent', { prompt: 'hi' }), reply: system('Today is Monday.'), gets: ok({ hookSpecificOutput: { hookEventName: 'BeforeAgent', additionalContext: 'Today is Monday.' } }) }],
    log: [BEGIN, { call: 'beforeModelRequest', payload: { system: '', model: '', messages: [{ role: 'user', text: 'hi' }] } }],
  },
  {
    row: 'AfterAgent ends the run (end_turn); SessionEnd without it is interrupted',
    serves: ['beforeRun', 'afterRun'],
    steps: [
      { event: event('BeforeAgent', { prompt: 'one' }), gets: quiet },
      { event: event('AfterAgent', { prompt: 'one', prompt_response: 'done' }), gets: quiet },
      { event: event('BeforeAgent', { prompt: 'two' }), gets: quiet },
      { event: event('SessionEnd', { reason: 'exit' }), gets: quiet },
    ],
    log: [BEGIN, { close: 'end_turn', by: 'agent' }, BEGIN, { close: 'interrupted', by: 'agent' }],
  },
  { row: 'an event Gemini CLI 0.61.0 does not have is no answer, and opens no run', steps: [{ event: event('BeforeCoffee', {}), gets: quiet }], log: [] },
]

/** The chain's answer at one of Gemini CLI's own events: the fields the hooks changed. */
const fields =
  (changed: Record<string, unknown>): Reply =>
  () => ({ result: changed, diagnostics: [], asks: [] })
const REQUEST = { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'context' }, { role: 'user', content: 'delete victim' }], config: { temperature: 1, topP: 0.95 } }
const beforeModel = (): Record<string, unknown> => event('BeforeModel', { llm_request: REQUEST })
const modelRequest: Logged = {
  call: 'model:request',
  payload: { model: 'gemini-2.5-flash', messages: [{ role: 'user', text: 'context' }, { role: 'user', text: 'delete victim' }], config: { temperature: 1, topP: 0.95 } },
}
const afterModel = (text: string | undefined): Record<string, unknown> =>
  event('AfterModel', { llm_request: REQUEST, llm_response: { ...(text !== undefined ? { text } : {}), candidates: [{ content: { role: 'model', parts: text !== undefined ? [text] : [] }, finishReason: 'STOP', index: 0 }] } })
/** The tools hooks are offered at BeforeToolSelection: Gemini CLI 0.61.0's, canonical names where the table maps them. */
const OFFERED = ['update_topic', 'list_files', 'read_file', 'search_files', 'find_files', 'edit_file', 'write_file', 'web_fetch', 'shell', 'list_background_processes', 'read_background_output', 'web_search', 'write_todos', 'enter_plan_mode', 'invoke_agent', 'activate_skill']

const ownEvents: Row[] = [
  {
    row: 'a deferral at BeforeTool is refused: Gemini CLI can neither defer nor ask from a hook, and says so',
    steps: [
      {
        event: before('run_shell_command', shell('git push')),
        reply: () => ({ result: { allow: false, deferred: true, reason: 'pushes wait for review', refusedBy: HOOK, arguments: { command: 'git push' } }, diagnostics: [], asks: [] }),
        gets: ok(deny('pushes wait for review (a hook deferred this call; Gemini CLI cannot defer or ask, so hookd refuses it)')),
      },
    ],
    log: [BEGIN, gateShell('git push')],
  },
  { row: 'BeforeModel: model:request on its model, messages (role and text) and config; no change is no answer', steps: [{ event: beforeModel(), gets: quiet }], log: [BEGIN, modelRequest] },
  {
    row: 'rewritten messages, model and config are llm_request; config keeps what no hook changed (Gemini CLI sets all four)',
    steps: [
      {
        event: beforeModel(),
        reply: fields({ messages: [{ role: 'user', text: 'context' }, { role: 'user', text: 'list victim' }], model: 'gemini-2.5-pro', config: { temperature: 0 } }),
        gets: ok({ hookSpecificOutput: { hookEventName: 'BeforeModel', llm_request: { messages: [{ role: 'user', content: 'context' }, { role: 'user', content: 'list victim' }], model: 'gemini-2.5-pro', config: { temperature: 0, topP: 0.95 } } } }),
      },
    ],
    log: [BEGIN, modelRequest],
  },
  { row: 'a block is decision deny with the reason: no call is made', steps: [{ event: beforeModel(), reply: fields({ block: true, reason: 'no secrets to the model' }), gets: ok(deny('no secrets to the model')) }], log: [BEGIN, modelRequest] },
  {
    row: 'AfterModel: model:response on the chunk; new text replaces the chunk, keeping its finishReason',
    steps: [
      {
        event: afterModel('the key is abc'),
        reply: fields({ text: 'the key is [redacted]' }),
        gets: ok({ hookSpecificOutput: { hookEventName: 'AfterModel', llm_response: { text: 'the key is [redacted]', candidates: [{ content: { role: 'model', parts: ['the key is [redacted]'] }, index: 0, finishReason: 'STOP' }] } } }),
      },
    ],
    log: [BEGIN, { call: 'model:response', payload: { text: 'the key is abc', finishReason: 'STOP' } }],
  },
  {
    row: 'a chunk with no text (a tool call) is not rewritten: Gemini CLI would drop the call',
    steps: [{ event: afterModel(undefined), reply: fields({ text: 'hello' }), gets: quiet }],
    log: [BEGIN, { call: 'model:response', payload: { text: '', finishReason: 'STOP' } }],
  },
  {
    row: 'BeforeToolSelection: tools:select on the tools Gemini CLI declares; a narrowed list is allowedFunctionNames in its own names',
    steps: [
      {
        event: event('BeforeToolSelection', { llm_request: REQUEST }),
        reply: fields({ tools: ['read_file', 'list_files', 'smuggled_tool'] }),
        gets: ok({ hookSpecificOutput: { hookEventName: 'BeforeToolSelection', toolConfig: { mode: 'AUTO', allowedFunctionNames: ['read_file', 'list_directory'] } } }),
      },
    ],
    log: [BEGIN, { call: 'tools:select', payload: { tools: OFFERED } }],
  },
  {
    row: 'no tool left is mode NONE',
    steps: [{ event: event('BeforeToolSelection', { llm_request: REQUEST }), reply: fields({ tools: [] }), gets: ok({ hookSpecificOutput: { hookEventName: 'BeforeToolSelection', toolConfig: { mode: 'NONE' } } }) }],
    log: [BEGIN, { call: 'tools:select', payload: { tools: OFFERED } }],
  },
  {
    row: 'PreCompress: compact:before; Gemini CLI reads no answer there, so a block is dropped',
    steps: [{ event: event('PreCompress', { trigger: 'auto' }), reply: fields({ block: true, reason: 'keep it' }), gets: quiet }],
    log: [BEGIN, { call: 'compact:before', payload: { trigger: 'auto' } }],
  },
  {
    row: 'Notification: notification with its kind and message, observed',
    steps: [{ event: event('Notification', { notification_type: 'ToolPermission', message: 'Tool run_shell_command requires editing', details: { type: 'exec' } }), gets: quiet }],
    log: [BEGIN, { call: 'notification', payload: { kind: 'ToolPermission', message: 'Tool run_shell_command requires editing' } }],
  },
  { row: 'with no hook serving model:request, a BeforeModel asks none', serves: ['beforeRun', 'beforeToolExecute'], steps: [{ event: beforeModel(), gets: quiet }], log: [BEGIN] },
  {
    row: 'a BeforeModel without its llm_request is 400, naming the field',
    steps: [{ event: event('BeforeModel', {}), gets: error(400, 'the BeforeModel event.llm_request: Invalid input: expected object, received undefined; is this a Gemini CLI hook event?') }],
    log: [],
  },
]

const malformed: Row[] = [
  {
    row: 'a BeforeTool without its tool_name is refused, naming the field',
    steps: [{ event: { ...before('run_shell_command', shell('ls')), tool_name: undefined }, gets: ok(deny('hookd could not check this call, so it is refused: the BeforeTool event.tool_name: Invalid input: expected string, received undefined; is this a Gemini CLI hook event?')) }],
    log: [],
  },
  {
    row: 'an AfterTool without its tool_input is 400; the shim refuses',
    steps: [
      {
        event: { ...after('run_shell_command', shell('ls'), { llmContent: 'a' }), tool_input: 'ls' },
        gets: error(400, 'the AfterTool event.tool_input: Invalid input: expected record, received string; is this a Gemini CLI hook event?'),
        shim: shimRefuses(400, 'the AfterTool event.tool_input: Invalid input: expected record, received string; is this a Gemini CLI hook event?'),
      },
    ],
    log: [],
  },
  { row: 'a body that is no event is 400', steps: [{ event: null, gets: error(400, 'the hook event: Invalid input: expected object, received null; is this a Gemini CLI hook event?') }], log: [] },
]

describe('Gemini CLI: gates (BeforeTool) and what follows an ask', () => table(AGENT, gates))
describe('Gemini CLI: after a tool (AfterTool)', () => table(AGENT, afterTools))
describe('Gemini CLI: the run (SessionStart, BeforeAgent, AfterAgent, SessionEnd) and events it does not map', () => table(AGENT, runs))
describe('Gemini CLI: its own events (BeforeModel, AfterModel, BeforeToolSelection, PreCompress, Notification)', () => table(AGENT, ownEvents))

describe('tools:select narrows only', () => {
  it('a hook that names a tool the event did not offer, or one an earlier hook removed, does not put it on the list', () => {
    const spec = getPoint('tools:select')
    if (!spec) throw new Error('tools:select is not in the catalog')
    const offered = { tools: ['shell', 'read_file', 'write_file'] }
    let state = { initial: offered, current: offered }
    state = spec.apply(state, { tools: ['read_file', 'write_file', 'mcp__evil__run'] }, 'first') as typeof state
    state = spec.apply(state, { tools: ['shell', 'read_file'] }, 'second') as typeof state
    expect(state.current.tools).toEqual(['read_file'])
    expect(spec.result(state)).toEqual({ tools: ['read_file'] })
  })
})
describe('Gemini CLI: malformed events', () => table(AGENT, malformed))
