/**
 * Claude Code's dialect as a table (dialect-table.ts): its events as Claude Code 2.1.328 posts them
 * (test/agents/support/agent-events.ts, claude-code-contract.test.ts), the point and canonical payload
 * the hooks see, the chain's answer, and what Claude Code reads back: the status and JSON its `http`
 * hooks get, or what the shim prints for its command hooks where that is the shim's own refusal.
 */
import { describe } from 'vitest'
import { CLAUDE_CODE_AGENT as AGENT } from '../../../src/agents/claude-code/claude-code-agent.js'
import { HookdError } from '../../../src/protocol/status.js'
import { claudePre } from '../../agents/support/agent-events.js'
import {
  ASKED,
  CWD,
  HOOK,
  type Logged,
  type Reply,
  type Row,
  SESSION,
  ask,
  beforeRun,
  couldNot,
  error,
  fails,
  ok,
  refuse,
  rewrite,
  system,
  table,
  text,
} from './dialect-table.js'

const pre = (tool: string, input: Record<string, unknown>): Record<string, unknown> => claudePre(CWD, SESSION, tool, input)
const bash = (command: string): Record<string, unknown> => ({ command, description: 'run it' })
const event = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ session_id: SESSION, cwd: CWD, hook_event_name: name, ...extra })
const bashResponse = { stdout: 'hello', stderr: '', interrupted: false, isImage: false, noOutputExpected: false }
const post = (tool: string, input: Record<string, unknown>, response: unknown): Record<string, unknown> => ({ ...pre(tool, input), hook_event_name: 'PostToolUse', tool_response: response })
const failure = (tool: string, input: Record<string, unknown>, message: string): Record<string, unknown> => ({ ...pre(tool, input), hook_event_name: 'PostToolUseFailure', error: message })

const BEGIN = beforeRun(AGENT)
/** beforeToolExecute on Bash as hooks see it: `shell {command}`, with Claude Code's own call beside it. */
const gateShell = (command: string): Logged => ({
  call: 'beforeToolExecute',
  payload: { id: 'toolu_Bash', name: 'shell', arguments: { command }, native: { agent: 'claude-code', name: 'Bash', input: bash(command) } },
})
const afterShell = (command: string, result: { text: string; isError: boolean }): Logged => ({
  call: 'afterToolExecute',
  payload: { call: { id: 'toolu_Bash', name: 'shell', arguments: { command }, native: { agent: 'claude-code', name: 'Bash', input: bash(command) } }, result },
})
const deny = (reason: string): Record<string, unknown> => ({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } })
/** What the shim prints for Claude Code when hookd answers an error: exit 2, the reason on stderr. */
const shimRefuses = (status: number, message: string) => ({ exit: 2, stdout: '', stderr: `hookd-hook: hookd answered HTTP ${status}: ${message}; the call is refused (hookd-hook fails closed)\n` })
const RM = "Dangerous command: rm -rf victim (asked by hookd hook 'guard')"
const askedAs = (outcome: 'allowed' | 'denied' | 'unknown', via: string, by: 'agent' | 'hookd' = 'agent') => ({ decisionId: ASKED, outcome, by, via })

const gates: Row[] = [
  { row: 'PreToolUse with no opinion: {}, Claude Code applies its own rules', steps: [{ event: pre('Bash', bash('ls')), gets: ok({}) }], log: [BEGIN, gateShell('ls')] },
  {
    row: "a hook's refusal is deny with its reason",
    steps: [{ event: pre('Bash', bash('rm -rf victim')), reply: refuse('no rm -rf'), gets: ok(deny('no rm -rf')) }],
    log: [BEGIN, gateShell('rm -rf victim')],
  },
  {
    row: 'rewritten arguments are updatedInput, the native fields kept, and no permissionDecision',
    steps: [{ event: pre('Bash', bash('ls')), reply: rewrite((a) => ({ ...a, command: 'ls -a' })), gets: ok({ hookSpecificOutput: { hookEventName: 'PreToolUse', updatedInput: bash('ls -a') } }) }],
    log: [BEGIN, gateShell('ls')],
  },
  {
    row: 'Read reaches hooks as read_file with a workdir-relative path; a rewritten path goes back absolute',
    steps: [
      {
        event: pre('Read', { file_path: `${CWD}/src/a.ts`, limit: 10 }),
        reply: rewrite((a) => ({ ...a, path: 'src/b.ts' })),
        gets: ok({ hookSpecificOutput: { hookEventName: 'PreToolUse', updatedInput: { file_path: `${CWD}/src/b.ts`, limit: 10 } } }),
      },
    ],
    log: [
      BEGIN,
      {
        call: 'beforeToolExecute',
        payload: { id: 'toolu_Read', name: 'read_file', arguments: { path: 'src/a.ts', limit: 10 }, native: { agent: 'claude-code', name: 'Read', input: { file_path: `${CWD}/src/a.ts`, limit: 10 } } },
      },
    ],
  },
  {
    row: 'a tool no table maps reaches hooks under its own name and input',
    steps: [{ event: pre('mcp__db__query', { sql: 'select 1' }), gets: ok({}) }],
    log: [
      BEGIN,
      { call: 'beforeToolExecute', payload: { id: 'toolu_mcp__db__query', name: 'mcp__db__query', arguments: { sql: 'select 1' }, native: { agent: 'claude-code', name: 'mcp__db__query', input: { sql: 'select 1' } } } },
    ],
  },
  {
    row: 'a rewrite the native tool cannot take is refused, naming the field',
    steps: [
      {
        event: pre('Bash', bash('ls')),
        reply: rewrite(() => ({ command: 42 })),
        gets: ok(deny("hookd refused this call: the rewritten shell arguments.command: Invalid input: expected string, received number, so Claude Code's Bash cannot take them; fix the hook that rewrites shell")),
      },
    ],
    log: [BEGIN, gateShell('ls')],
  },
  {
    row: 'a call whose arguments have no canonical reading is refused without asking the hooks',
    steps: [
      {
        event: pre('Read', { file_path: '~/.ssh/id_rsa' }),
        gets: ok(deny("hookd refused this call, which no hook could check: Read's file_path '~/.ssh/id_rsa' starts with '~', which the agent may read as a home folder; give the path without it")),
      },
    ],
    log: [BEGIN],
  },
  {
    row: 'a gate hook that could not decide refuses the call in hookd\'s words',
    steps: [{ event: pre('Bash', bash('ls')), reply: couldNot('cpu'), gets: ok(deny(`hookd refused the call: hook '${HOOK}' could not decide (it ran past its CPU time limit)`)) }],
    log: [BEGIN, gateShell('ls')],
  },
  {
    row: 'a point call that fails refuses the call, saying why',
    steps: [
      {
        event: pre('Bash', bash('ls')),
        reply: fails('unavailable', "the tenant's sandbox workers are not running"),
        gets: ok(deny("hookd could not check this call, so it is refused: the tenant's sandbox workers are not running")),
      },
    ],
    log: [BEGIN, gateShell('ls')],
  },
  {
    row: 'a run that cannot open (an unknown hook) refuses the call, saying why',
    opens: new HookdError('not-found', "unknown hook 'gaurd' in /hooks (available: guard)"),
    steps: [{ event: pre('Bash', bash('ls')), gets: ok(deny("hookd could not check this call, so it is refused: unknown hook 'gaurd' in /hooks (available: guard)")) }],
    log: [],
  },
  {
    row: 'a beforeRun that fails ends the run it opened and refuses the call',
    beforeRun: fails('internal', 'beforeRun broke'),
    steps: [{ event: pre('Bash', bash('ls')), gets: ok(deny('hookd could not check this call, so it is refused: beforeRun broke')) }],
    log: [BEGIN, { abort: true }],
  },
  { row: 'no hook serves the gate: {}, and no point call', serves: ['afterToolExecute'], steps: [{ event: pre('Bash', bash('rm -rf victim')), gets: ok({}) }], log: [] },
]

const afterTools: Row[] = [
  {
    row: "PostToolUse: afterToolExecute on the tool's text; no change is {}",
    steps: [{ event: post('Bash', bash('echo hello'), bashResponse), gets: ok({}) }],
    log: [BEGIN, afterShell('echo hello', { text: 'hello', isError: false })],
  },
  {
    row: "a rewritten text goes back as updatedToolOutput in the tool's shape",
    steps: [
      {
        event: post('Bash', bash('echo hello'), bashResponse),
        reply: text((t) => t.toUpperCase()),
        gets: ok({ hookSpecificOutput: { hookEventName: 'PostToolUse', updatedToolOutput: { ...bashResponse, stdout: 'HELLO' } } }),
      },
    ],
    log: [BEGIN, afterShell('echo hello', { text: 'hello', isError: false })],
  },
  {
    row: 'where the shape carries no text (Write), the model reads it as additionalContext',
    steps: [
      {
        event: post('Write', { file_path: `${CWD}/n.txt`, content: 'x' }, { type: 'create', filePath: `${CWD}/n.txt`, content: 'x' }),
        reply: text('written elsewhere'),
        gets: ok({ hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: "hookd's hooks rewrote the result of this tool call; read it as:\nwritten elsewhere" } }),
      },
    ],
    log: [
      BEGIN,
      {
        call: 'afterToolExecute',
        payload: {
          call: { id: 'toolu_Write', name: 'write_file', arguments: { path: 'n.txt', content: 'x' }, native: { agent: 'claude-code', name: 'Write', input: { file_path: `${CWD}/n.txt`, content: 'x' } } },
          result: { text: `File created successfully at: ${CWD}/n.txt`, isError: false },
        },
      },
    ],
  },
  {
    row: 'PostToolUseFailure: afterToolExecute with isError; a success the hooks declare is said as context',
    steps: [
      {
        event: failure('Bash', bash('false'), 'Exit code 1'),
        reply: text('it worked after all', false),
        gets: ok({
          hookSpecificOutput: {
            hookEventName: 'PostToolUseFailure',
            additionalContext: "hookd's hooks mark the result of this tool call as a success.\nhookd's hooks rewrote the result of this tool call; read it as:\nit worked after all",
          },
        }),
      },
    ],
    log: [BEGIN, afterShell('false', { text: 'Exit code 1', isError: true })],
  },
  { row: 'no hook serves afterToolExecute: {}, and no point call', serves: ['beforeToolExecute'], steps: [{ event: post('Bash', bash('ls'), bashResponse), gets: ok({}) }], log: [] },
  {
    row: 'a point call that fails after a tool is an error status (nothing to refuse); the shim refuses in its form',
    steps: [
      {
        event: post('Bash', bash('ls'), bashResponse),
        reply: fails('unavailable', "the tenant's sandbox workers are not running"),
        gets: error(503, "the tenant's sandbox workers are not running"),
        shim: shimRefuses(503, "the tenant's sandbox workers are not running"),
      },
    ],
    log: [BEGIN, afterShell('ls', { text: 'hello', isError: false })],
  },
]

const runs: Row[] = [
  {
    row: 'SessionStart opens the run: beforeRun with its model, nothing else',
    steps: [{ event: event('SessionStart', { source: 'startup', model: 'claude-test' }), gets: ok({}) }],
    log: [beforeRun(AGENT, 'claude-test')],
    opensWith: { modelId: 'claude-test' },
  },
  {
    row: 'UserPromptSubmit opens the run and runs beforeModelRequest: what hooks add is additionalContext',
    steps: [{ event: event('UserPromptSubmit', { prompt: 'what day is it?' }), reply: system('  Today is Monday.  '), gets: ok({ hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: 'Today is Monday.' } }) }],
    log: [BEGIN, { call: 'beforeModelRequest', payload: { system: '', model: '', messages: [{ role: 'user', text: 'what day is it?' }] } }],
  },
  {
    row: 'a prompt whose hooks add nothing, or serve no beforeModelRequest, is {}',
    serves: ['beforeRun', 'afterRun'],
    steps: [{ event: event('UserPromptSubmit', { prompt: 'hi' }), gets: ok({}) }],
    log: [BEGIN],
  },
  {
    row: 'Stop ends the run (afterRun end_turn); a SessionEnd after it finds none',
    steps: [
      { event: event('UserPromptSubmit', { prompt: 'go' }), gets: ok({}) },
      { event: event('Stop', { stop_hook_active: false }), gets: ok({}) },
      { event: event('SessionEnd', { reason: 'other' }), gets: ok({}) },
    ],
    log: [BEGIN, { call: 'beforeModelRequest', payload: { system: '', model: '', messages: [{ role: 'user', text: 'go' }] } }, { close: 'end_turn', by: 'agent' }],
  },
  {
    row: 'StopFailure ends the run as error, SessionEnd without Stop as interrupted; the next event opens the next run',
    serves: ['beforeRun', 'afterRun'],
    steps: [
      { event: event('SessionStart'), gets: ok({}) },
      { event: event('StopFailure', { error: 'unknown' }), gets: ok({}) },
      { event: event('SessionStart'), gets: ok({}) },
      { event: event('SessionEnd', { reason: 'other' }), gets: ok({}) },
    ],
    log: [BEGIN, { close: 'error', by: 'agent' }, BEGIN, { close: 'interrupted', by: 'agent' }],
  },
  { row: 'an end event with no run open opens none', steps: [{ event: event('Stop'), gets: ok({}) }], log: [] },
  { row: 'an event it does not map (InstructionsLoaded) is {}: no opinion, no run', steps: [{ event: event('InstructionsLoaded', { file_path: `${CWD}/CLAUDE.md`, memory_type: 'Project', load_reason: 'session_start' }), gets: ok({}) }], log: [] },
]

const malformed: Row[] = [
  {
    row: 'a body that is no event is 400, saying what is wrong; the shim refuses',
    steps: [
      {
        event: 'hello',
        gets: error(400, 'the hook event: Invalid input: expected object, received string; is this a Claude Code hook event?'),
        shim: shimRefuses(400, 'the hook event: Invalid input: expected object, received string; is this a Claude Code hook event?'),
      },
    ],
    log: [],
  },
  {
    row: 'a PreToolUse missing its tool_input is refused, saying which field',
    steps: [{ event: { ...pre('Bash', {}), tool_input: undefined }, gets: ok(deny('hookd could not check this call, so it is refused: the PreToolUse event.tool_input: Invalid input: expected record, received undefined; is this a Claude Code hook event?')) }],
    log: [],
  },
  {
    row: "a PreToolUse whose cwd is not absolute is refused: hookd cannot confine the hooks' files",
    steps: [
      {
        event: { ...pre('Bash', bash('ls')), cwd: 'relative/dir' },
        gets: ok(deny("hookd could not check this call, so it is refused: the event's cwd 'relative/dir' is not an absolute path; hookd needs the session's folder to confine its hooks' files")),
      },
    ],
    log: [],
  },
  {
    row: 'a PostToolUse missing its tool_name is 400',
    steps: [{ event: { ...post('Bash', bash('ls'), bashResponse), tool_name: undefined }, gets: error(400, 'the PostToolUse event.tool_name: Invalid input: expected string, received undefined; is this a Claude Code hook event?') }],
    log: [],
  },
]

const asks: Row[] = [
  {
    row: "ctx.confirm is Claude Code's ask with the hook's question; the PostToolUse of the same tool_use_id says it was allowed",
    steps: [
      { event: pre('Bash', bash('rm -rf victim')), reply: ask('Dangerous command', 'rm -rf victim'), gets: ok({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'ask', permissionDecisionReason: RM } }) },
      { event: post('Bash', bash('rm -rf victim'), bashResponse), gets: ok({}) },
    ],
    log: [BEGIN, gateShell('rm -rf victim'), { ask: 'id toolu_Bash', decisionId: ASKED }, { outcome: 'allowed', key: 'id toolu_Bash', via: 'PostToolUse', by: 'agent' }, afterShell('rm -rf victim', { text: 'hello', isError: false })],
    settled: [askedAs('allowed', 'PostToolUse')],
  },
  {
    row: 'an ask with a rewrite carries updatedInput; a PostToolUseFailure says the call ran',
    steps: [
      {
        event: pre('Bash', bash('rm -rf victim')),
        reply: ask('Dangerous command', 'rm -rf victim', (a) => ({ ...a, command: 'rm -ri victim' })),
        gets: ok({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'ask', permissionDecisionReason: RM, updatedInput: bash('rm -ri victim') } }),
      },
      { event: failure('Bash', bash('rm -ri victim'), 'Exit code 1'), gets: ok({}) },
    ],
    log: [BEGIN, gateShell('rm -rf victim'), { ask: 'id toolu_Bash', decisionId: ASKED }, { outcome: 'allowed', key: 'id toolu_Bash', via: 'PostToolUseFailure', by: 'agent' }, afterShell('rm -ri victim', { text: 'Exit code 1', isError: true })],
    settled: [askedAs('allowed', 'PostToolUseFailure')],
  },
  {
    row: 'PermissionDenied says an ask was denied, with no point call',
    steps: [
      { event: pre('Bash', bash('rm -rf victim')), reply: ask('Dangerous command'), gets: ok({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'ask', permissionDecisionReason: "Dangerous command (asked by hookd hook 'guard')" } }) },
      { event: { ...pre('Bash', bash('rm -rf victim')), hook_event_name: 'PermissionDenied', reason: 'auto mode' }, gets: ok({}) },
    ],
    log: [BEGIN, gateShell('rm -rf victim'), { ask: 'id toolu_Bash', decisionId: ASKED }, { outcome: 'denied', key: 'id toolu_Bash', via: 'PermissionDenied', by: 'agent' }],
    settled: [askedAs('denied', 'PermissionDenied')],
  },
  {
    row: 'a PostToolBatch listing a call that got no PostToolUse says its ask was denied',
    steps: [
      { event: pre('Bash', bash('rm -rf victim')), reply: ask('Dangerous command'), gets: ok({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'ask', permissionDecisionReason: "Dangerous command (asked by hookd hook 'guard')" } }) },
      { event: event('PostToolBatch', { tool_calls: [{ tool_name: 'Bash', tool_input: bash('rm -rf victim'), tool_use_id: 'toolu_Bash' }] }), gets: ok({}) },
    ],
    log: [BEGIN, gateShell('rm -rf victim'), { ask: 'id toolu_Bash', decisionId: ASKED }, { outcome: 'denied', key: 'id toolu_Bash', via: 'PostToolBatch', by: 'agent' }],
    settled: [askedAs('denied', 'PostToolBatch')],
  },
  {
    row: 'an ask with no report by Stop was denied: the run ended without the call',
    steps: [
      { event: pre('Bash', bash('rm -rf victim')), reply: ask('Dangerous command'), gets: ok({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'ask', permissionDecisionReason: "Dangerous command (asked by hookd hook 'guard')" } }) },
      { event: event('Stop'), gets: ok({}) },
    ],
    log: [BEGIN, gateShell('rm -rf victim'), { ask: 'id toolu_Bash', decisionId: ASKED }, { close: 'end_turn', by: 'agent' }],
    settled: [askedAs('denied', 'run ended')],
  },
  {
    row: 'an ask whose rewrite the tool cannot take is refused, and its outcome is denied by hookd',
    steps: [
      {
        event: pre('Bash', bash('ls')),
        reply: ask('Sure?', undefined, () => ({ command: 42 })),
        gets: ok(deny("hookd refused this call: the rewritten shell arguments.command: Invalid input: expected string, received number, so Claude Code's Bash cannot take them; fix the hook that rewrites shell")),
      },
    ],
    log: [BEGIN, gateShell('ls'), { ask: 'id toolu_Bash', decisionId: ASKED }, { outcome: 'denied', key: 'id toolu_Bash', via: 'rewrite refused', by: 'hookd' }],
    settled: [askedAs('denied', 'rewrite refused', 'hookd')],
  },
  {
    row: 'a PermissionDenied with no run open opens none',
    steps: [{ event: { ...pre('Bash', bash('ls')), hook_event_name: 'PermissionDenied' }, gets: ok({}) }],
    log: [],
  },
]

describe('Claude Code: gates (PreToolUse)', () => table(AGENT, gates))
describe('Claude Code: after a tool (PostToolUse, PostToolUseFailure)', () => table(AGENT, afterTools))
describe('Claude Code: the run (SessionStart, UserPromptSubmit, Stop, StopFailure, SessionEnd) and events it does not map', () => table(AGENT, runs))
describe('Claude Code: malformed events', () => table(AGENT, malformed))
describe('Claude Code: what follows an ask', () => table(AGENT, asks))

/** The hooks set `fields` at one of the agents' own points (the chain's result is the fields they changed). */
const sets =
  (fields: Record<string, unknown>): Reply =>
  () => ({ result: fields, diagnostics: [], asks: [] })
const permission = (tool: string, input: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> => event('PermissionRequest', { tool_name: tool, tool_input: input, permission_suggestions: [], ...extra })
const shellCall = (command: string, extra: Record<string, unknown> = {}) => ({ id: '', name: 'shell', arguments: { command }, native: { agent: 'claude-code', name: 'Bash', input: bash(command) }, ...extra, tool: 'Bash' })
const SUB = { agent_id: 'agent-7', agent_type: 'general-purpose' }

const ownPoints: Row[] = [
  {
    row: 'PermissionRequest: permission:request on the canonical call; allow with arguments is behavior allow with updatedInput',
    steps: [
      {
        event: permission('Bash', bash('ls')),
        reply: sets({ decision: 'allow', arguments: { command: 'ls -a' } }),
        gets: ok({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow', updatedInput: bash('ls -a') } } }),
      },
    ],
    log: [BEGIN, { call: 'permission:request', payload: shellCall('ls') }],
  },
  {
    row: "deny is behavior deny with the hook's reason as the message",
    steps: [{ event: permission('Bash', bash('rm -rf /')), reply: sets({ decision: 'deny', reason: 'no rm' }), gets: ok({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: 'no rm' } } }) }],
    log: [BEGIN, { call: 'permission:request', payload: shellCall('rm -rf /') }],
  },
  {
    row: 'ask and defer leave the dialog to open: {}',
    steps: [
      { event: permission('Bash', bash('ls')), reply: sets({ decision: 'ask' }), gets: ok({}) },
      { event: permission('Bash', bash('ls')), reply: sets({ decision: 'defer', reason: 'later' }), gets: ok({}) },
    ],
    log: [BEGIN, { call: 'permission:request', payload: shellCall('ls') }, { call: 'permission:request', payload: shellCall('ls') }],
  },
  {
    row: 'a dialog in a subagent names the subagent',
    steps: [{ event: permission('Bash', bash('ls'), SUB), gets: ok({}) }],
    log: [BEGIN, { call: 'permission:request', payload: shellCall('ls', { subagent: { id: 'agent-7', type: 'general-purpose' } }) }],
  },
  {
    row: 'a PermissionRequest hookd cannot read is denied in its own form',
    steps: [
      {
        event: { ...permission('Bash', bash('ls')), tool_input: 'x' },
        gets: ok({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: 'hookd could not check this call, so it is refused: the PermissionRequest event.tool_input: Invalid input: expected record, received string; is this a Claude Code hook event?' } } }),
      },
    ],
    log: [],
  },
  {
    row: "SubagentStart: subagent:start; context is additionalContext, which the subagent reads",
    steps: [{ event: event('SubagentStart', SUB), reply: sets({ context: 'stay in src/' }), gets: ok({ hookSpecificOutput: { hookEventName: 'SubagentStart', additionalContext: 'stay in src/' } }) }],
    log: [BEGIN, { call: 'subagent:start', payload: { subagent: { id: 'agent-7', type: 'general-purpose' } } }],
  },
  {
    row: 'SubagentStop: subagent:stop; keepWorking is decision block with the reason',
    steps: [
      {
        event: event('SubagentStop', { ...SUB, agent_transcript_path: '/t', stop_hook_active: false, last_assistant_message: 'done' }),
        reply: sets({ keepWorking: true, reason: 'run the tests' }),
        gets: ok({ decision: 'block', reason: 'run the tests' }),
      },
    ],
    log: [BEGIN, { call: 'subagent:stop', payload: { subagent: { id: 'agent-7', type: 'general-purpose' }, lastMessage: 'done' } }],
  },
  {
    row: 'PreCompact: compact:before; block is decision block',
    steps: [{ event: event('PreCompact', { trigger: 'auto', custom_instructions: null }), reply: sets({ block: true, reason: 'not now' }), gets: ok({ decision: 'block', reason: 'not now' }) }],
    log: [BEGIN, { call: 'compact:before', payload: { trigger: 'auto', instructions: '' } }],
  },
  {
    row: 'PostCompact, Notification and FileChanged are observed: {}',
    steps: [
      { event: event('PostCompact', { trigger: 'manual', compact_summary: 'S' }), gets: ok({}) },
      { event: event('Notification', { message: 'Claude needs your permission', notification_type: 'permission_prompt' }), gets: ok({}) },
      { event: event('FileChanged', { file_path: `${CWD}/.env`, event: 'change' }), gets: ok({}) },
    ],
    log: [
      BEGIN,
      { call: 'compact:after', payload: { trigger: 'manual', summary: 'S' } },
      { call: 'notification', payload: { kind: 'permission_prompt', message: 'Claude needs your permission', title: '' } },
      { call: 'file:changed', payload: { path: `${CWD}/.env`, change: 'change' } },
    ],
  },
  {
    row: 'ConfigChange: config:change; block keeps the settings as they were',
    steps: [
      { event: event('ConfigChange', { source: 'project_settings', file_path: `${CWD}/.claude/settings.json` }), reply: sets({ block: true, reason: 'the hooks are not yours to change' }), gets: ok({ decision: 'block', reason: 'the hooks are not yours to change' }) },
    ],
    log: [BEGIN, { call: 'config:change', payload: { source: 'project_settings', path: `${CWD}/.claude/settings.json` } }],
  },
  {
    row: 'a ConfigChange whose point call fails is blocked, saying why (a gate)',
    steps: [
      {
        event: event('ConfigChange', { source: 'user_settings' }),
        reply: fails('unavailable', "the tenant's sandbox workers are not running"),
        gets: ok({ decision: 'block', reason: "hookd could not check this call, so it is refused: the tenant's sandbox workers are not running" }),
      },
    ],
    log: [BEGIN, { call: 'config:change', payload: { source: 'user_settings', path: '' } }],
  },
  { row: 'no hook serves the point: {}, and no point call', serves: ['beforeToolExecute'], steps: [{ event: event('SubagentStart', SUB), gets: ok({}) }], log: [] },
]

const subagents: Row[] = [
  {
    row: "a subagent's PreToolUse reaches beforeToolExecute with the subagent named; a deferral is Claude Code's defer",
    steps: [
      {
        event: { ...pre('Bash', bash('make deploy')), ...SUB },
        reply: () => ({ result: { allow: false, deferred: true, reason: 'wait for the release window' }, diagnostics: [], asks: [] }),
        gets: ok({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'defer', permissionDecisionReason: 'wait for the release window' } }),
      },
    ],
    log: [BEGIN, { call: 'beforeToolExecute', payload: { ...(gateShell('make deploy') as { payload: Record<string, unknown> }).payload, subagent: { id: 'agent-7', type: 'general-purpose' } } }],
  },
  {
    row: "a subagent's PostToolUse names it too",
    steps: [{ event: { ...post('Bash', bash('echo hello'), bashResponse), ...SUB }, gets: ok({}) }],
    log: [BEGIN, { call: 'afterToolExecute', payload: { call: { ...((afterShell('echo hello', { text: 'hello', isError: false }) as { payload: { call: Record<string, unknown> } }).payload.call), subagent: { id: 'agent-7', type: 'general-purpose' } }, result: { text: 'hello', isError: false } } }],
  },
  {
    row: 'agent_type alone (the main thread of an --agent session) is no subagent',
    steps: [{ event: { ...pre('Bash', bash('ls')), agent_type: 'reviewer' }, gets: ok({}) }],
    log: [BEGIN, gateShell('ls')],
  },
]

describe("Claude Code: the agents' own points (PermissionRequest, SubagentStart/Stop, PreCompact/PostCompact, ConfigChange, Notification, FileChanged)", () => table(AGENT, ownPoints))
describe("Claude Code: subagents' tool calls, and defer", () => table(AGENT, subagents))
