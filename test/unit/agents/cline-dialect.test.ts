/**
 * Cline's dialect as a table (dialect-table.ts): its hook scripts' events as Cline CLI 3.0.65 sends
 * them (test/agents/support/agent-events.ts, cline-contract.test.ts), the point and canonical payload
 * the hooks see, the chain's answer, and what Cline reads back through the shim: the JSON it prints,
 * nothing for no opinion, or its refusal (exit 0, `{"cancel": true, "errorMessage"}`) when hookd
 * answers an error. A refusal cancels, which stops Cline's task.
 */
import { describe } from 'vitest'
import { CLINE_AGENT as AGENT } from '../../../src/agents/cline/cline-agent.js'
import { callKey } from '../../../src/agents/tool-gate.js'
import type { AgentPointName } from '../../../src/protocol/points/points.js'
import { clineCommon, clinePre } from '../../agents/support/agent-events.js'
import { ASKED, CWD, HOOK, type Logged, type Row, SESSION, ask, beforeRun, couldNot, error, fails, ok, quiet, refuse, rewrite, table, text } from './dialect-table.js'

const pre = (name: string, input: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ ...clinePre(CWD, SESSION, name, input), ...extra })
const post = (name: string, input: Record<string, unknown>, output: unknown, error?: string): Record<string, unknown> => ({
  ...clineCommon(CWD, SESSION, 'tool_result'),
  iteration: 1,
  tool_result: { id: 'call_1_0', name, input, output, ...(error !== undefined ? { error } : {}), durationMs: 3, startedAt: '2026-12-01T21:17:46.002Z', endedAt: '2026-12-01T21:17:46.005Z' },
})
const event = (hookName: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ ...clineCommon(CWD, SESSION, hookName), ...extra })
const SUB = { agent_id: 'agent_sub', parent_agent_id: 'agent_1' }

const BEGIN = beforeRun(AGENT)
/** An agent point the run was called at (the table's Logged names the step points; the fake run logs both alike). */
const agentPoint = (point: AgentPointName, payload: Record<string, unknown>): Logged => ({ call: point, payload }) as unknown as Logged
const run = (commands: string[]) => ({ commands })
const shellCall = (commands: string[], extra: Record<string, unknown> = {}) => ({
  id: 'call_1_0',
  name: 'shell',
  arguments: { command: commands.join('\n') },
  native: { agent: 'cline', name: 'run_commands', input: run(commands) },
  ...extra,
})
const gateShell = (commands: string[], extra: Record<string, unknown> = {}): Logged => ({ call: 'beforeToolExecute', payload: shellCall(commands, extra) })
const cancel = (reason: string): Record<string, unknown> => ({ cancel: true, errorMessage: reason })
const shimRefuses = (status: number, message: string) => ({
  exit: 0,
  stdout: `${JSON.stringify(cancel(`hookd-hook: hookd answered HTTP ${status}: ${message}; the call is refused (hookd-hook fails closed)`))}\n`,
  stderr: '',
})

const gates: Row[] = [
  { row: 'PreToolUse with no opinion: no answer (204), the shim prints nothing', steps: [{ event: pre('run_commands', run(['ls'])), gets: quiet, shim: { exit: 0, stdout: '', stderr: '' } }], log: [BEGIN, gateShell(['ls'])] },
  { row: "a hook's refusal is cancel with its reason (Cline stops the task)", steps: [{ event: pre('run_commands', run(['rm -rf victim'])), reply: refuse('no rm -rf'), gets: ok(cancel('no rm -rf')) }], log: [BEGIN, gateShell(['rm -rf victim'])] },
  {
    row: "run_commands' commands are one shell command, a line each, so a guard reads every one",
    steps: [{ event: pre('run_commands', run(['ls', 'rm -rf victim'])), reply: refuse('no rm -rf'), gets: ok(cancel('no rm -rf')) }],
    log: [BEGIN, gateShell(['ls', 'rm -rf victim'])],
  },
  {
    row: 'a rewrite is overrideInput: the whole input, the rewritten command as the one command',
    steps: [{ event: pre('run_commands', run(['echo before'])), reply: rewrite((a) => ({ ...a, command: 'echo after' })), gets: ok({ overrideInput: run(['echo after']) }) }],
    log: [BEGIN, gateShell(['echo before'])],
  },
  {
    row: 'read_files of one whole file is read_file; a rewritten path goes back absolute',
    steps: [{ event: pre('read_files', { files: [{ path: `${CWD}/a.txt` }] }), reply: rewrite((a) => ({ ...a, path: 'b.txt' })), gets: ok({ overrideInput: { files: [{ path: `${CWD}/b.txt` }] } }) }],
    log: [BEGIN, { call: 'beforeToolExecute', payload: { id: 'call_1_0', name: 'read_file', arguments: { path: 'a.txt' }, native: { agent: 'cline', name: 'read_files', input: { files: [{ path: `${CWD}/a.txt` }] } } } }],
  },
  {
    row: 'apply_patch adding one file is write_file (its patch under `input`)',
    steps: [{ event: pre('apply_patch', { input: '*** Begin Patch\n*** Add File: n.txt\n+hi\n*** End Patch\n' }), gets: quiet }],
    log: [
      BEGIN,
      { call: 'beforeToolExecute', payload: { id: 'call_1_0', name: 'write_file', arguments: { path: 'n.txt', content: 'hi\n' }, native: { agent: 'cline', name: 'apply_patch', input: { input: '*** Begin Patch\n*** Add File: n.txt\n+hi\n*** End Patch\n' } } } },
    ],
  },
  {
    row: "a subagent's call names it (its agent_id) and belongs to the root session's run",
    steps: [{ event: pre('run_commands', run(['ls']), SUB), gets: quiet }],
    log: [BEGIN, gateShell(['ls'], { subagent: { id: 'agent_sub' } })],
  },
  {
    row: 'ctx.confirm cannot be put to a person; an ask left anyway is refused with the question',
    steps: [{ event: pre('run_commands', run(['rm -rf victim'])), reply: ask('Dangerous command'), gets: ok(cancel("this call needs a person's yes, and Cline cannot ask for one from a hook: Dangerous command (asked by hookd hook 'guard')")) }],
    log: [
      BEGIN,
      gateShell(['rm -rf victim']),
      { ask: callKey('run_commands', 'call_1_0', run(['rm -rf victim'])), decisionId: ASKED },
      { outcome: 'denied', key: callKey('run_commands', 'call_1_0', run(['rm -rf victim'])), via: 'cannot ask', by: 'hookd' },
    ],
    settled: [{ decisionId: ASKED, outcome: 'denied', by: 'hookd', via: 'cannot ask' }],
  },
  {
    row: 'a deferred call (beforeToolExecute defer) is refused, saying so: Cline can neither defer nor ask',
    steps: [
      {
        event: pre('run_commands', run(['make deploy'])),
        reply: (_point, p) => ({ result: { allow: false, deferred: true, reason: 'wait for the release window', arguments: p.arguments }, diagnostics: [], asks: [] }),
        gets: ok(cancel('wait for the release window (a hook deferred this call; Cline cannot defer or ask, so hookd refuses it)')),
      },
    ],
    log: [BEGIN, gateShell(['make deploy'])],
  },
  { row: "a gate hook that could not decide refuses the call in hookd's words", steps: [{ event: pre('run_commands', run(['ls'])), reply: couldNot('memory'), gets: ok(cancel(`hookd refused the call: hook '${HOOK}' could not decide (it ran out of memory)`)) }], log: [BEGIN, gateShell(['ls'])] },
  {
    row: 'a point call that fails refuses the call, saying why',
    steps: [{ event: pre('run_commands', run(['ls'])), reply: fails('resource-exhausted', 'too many calls at once'), gets: ok(cancel('hookd could not check this call, so it is refused: too many calls at once')) }],
    log: [BEGIN, gateShell(['ls'])],
  },
]

const afterTools: Row[] = [
  {
    row: 'PostToolUse: afterToolExecute on the output; no change is no answer',
    steps: [{ event: post('run_commands', run(['echo hi']), 'hi\n'), gets: quiet }],
    log: [BEGIN, { call: 'afterToolExecute', payload: { call: shellCall(['echo hi']), result: { text: 'hi\n', isError: false } } }],
  },
  {
    row: "a rewritten result is said as context (Cline keeps the tool's own); an error is isError",
    steps: [{ event: post('run_commands', run(['false']), 'failed', 'exit 1'), reply: text((t) => t.toUpperCase()), gets: ok({ contextModification: "hookd's hooks replaced this tool's result; read this instead:\nFAILED" }) }],
    log: [BEGIN, { call: 'afterToolExecute', payload: { call: shellCall(['false']), result: { text: 'failed', isError: true } } }],
  },
  {
    row: 'a point call that fails after a tool is an error status; the shim answers in its form',
    steps: [{ event: post('run_commands', run(['ls']), 'a'), reply: fails('cancelled', 'the agent went away'), gets: error(499, 'the agent went away'), shim: shimRefuses(499, 'the agent went away') }],
    log: [BEGIN, { call: 'afterToolExecute', payload: { call: shellCall(['ls']), result: { text: 'a', isError: false } } }],
  },
]

const runs: Row[] = [
  { row: 'TaskStart opens the run: beforeRun', steps: [{ event: event('agent_start', { taskStart: { taskMetadata: {} } }), gets: quiet }], log: [BEGIN] },
  {
    row: 'TaskComplete ends the run (end_turn); TaskError is error; SessionShutdown after TaskCancel is nothing more',
    serves: ['beforeRun', 'afterRun'],
    steps: [
      { event: event('agent_start'), gets: quiet },
      { event: event('agent_end', { iteration: 2 }), gets: quiet },
      { event: event('agent_resume'), gets: quiet },
      { event: event('agent_error', { error: { name: 'Error', message: 'boom' } }), gets: quiet },
      { event: event('agent_start'), gets: quiet },
      { event: event('agent_abort', { reason: 'cancelled' }), gets: quiet },
      { event: event('session_shutdown', { reason: 'cancelled' }), gets: quiet },
    ],
    log: [BEGIN, { close: 'end_turn', by: 'agent' }, BEGIN, { close: 'error', by: 'agent' }, BEGIN, { close: 'interrupted', by: 'agent' }],
  },
  {
    row: "a subagent's TaskStart and TaskComplete are subagent:start and subagent:stop, not the run's; its TaskError is nothing",
    steps: [
      { event: event('agent_start'), gets: quiet },
      { event: event('agent_start', SUB), gets: quiet },
      { event: event('agent_end', SUB), gets: quiet },
      { event: event('agent_error', SUB), gets: quiet },
    ],
    log: [BEGIN, agentPoint('subagent:start', { subagent: { id: 'agent_sub' } }), agentPoint('subagent:stop', { subagent: { id: 'agent_sub' }, lastMessage: '' })],
  },
  {
    row: 'UserPromptSubmit opens the run; Cline runs it detached, so no context is asked for',
    steps: [{ event: event('prompt_submit', { userPromptSubmit: { prompt: 'hi', attachments: [] } }), gets: quiet }],
    log: [BEGIN],
  },
  { row: 'an event it does not map (a PreCompact payload, which Cline 3.0.65 never sends) is no answer, and opens no run', steps: [{ event: event('pre_compact'), gets: quiet }], log: [] },
]

const malformed: Row[] = [
  {
    row: 'a PreToolUse without its tool_call is refused, naming the field',
    steps: [{ event: { ...pre('run_commands', run(['ls'])), tool_call: undefined }, gets: ok(cancel('hookd could not check this call, so it is refused: the PreToolUse event.tool_call: Invalid input: expected object, received undefined; is this a Cline hook event?')) }],
    log: [],
  },
  {
    row: 'a PreToolUse whose input is no object reaches no hook: the gate refuses it',
    steps: [{ event: { ...pre('run_commands', run(['ls'])), tool_call: { id: 'call_1_0', name: 'run_commands', input: 'ls' } }, gets: ok(cancel("hookd refused this call, which no hook could check: Cline's tool_call.input for 'run_commands' is not an object")) }],
    log: [BEGIN],
  },
  { row: 'an event without its workspaceRoots is 400', steps: [{ event: { ...event('agent_start'), workspaceRoots: [] }, gets: error(400, 'the hook event.workspaceRoots: names no folder; is this a Cline hook event?') }], log: [] },
]

describe('Cline: gates (PreToolUse) and what follows an ask', () => table(AGENT, gates))
describe('Cline: after a tool (PostToolUse)', () => table(AGENT, afterTools))
describe('Cline: the run (TaskStart, TaskComplete, TaskError, TaskCancel, SessionShutdown), subagents and events it does not map', () => table(AGENT, runs))
describe('Cline: malformed events', () => table(AGENT, malformed))
