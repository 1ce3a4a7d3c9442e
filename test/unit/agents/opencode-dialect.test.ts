/**
 * OpenCode's dialect as a table (dialect-table.ts): the events hookd's plugin (src/agents/opencode/plugin.ts)
 * posts for OpenCode 1.18.33 (test/agents/support/agent-events.ts, opencode-contract.test.ts), the point
 * and canonical payload the hooks see, the chain's answer, and what the plugin applies: a refusal it
 * throws (`block`), rewritten `args`, a rewritten `output`. The plugin runs no shim: an error status
 * reaches it as such, and at the gate it throws (opencode-contract.test.ts runs the plugin itself).
 */
import { describe } from 'vitest'
import { OPENCODE_AGENT as AGENT } from '../../../src/agents/opencode/opencode-agent.js'
import { callKey } from '../../../src/agents/tool-gate.js'
import type { AgentPointName } from '../../../src/protocol/points/points.js'
import { opencodeBefore } from '../../agents/support/agent-events.js'
import { ASKED, CWD, HOOK, type Logged, type Row, SESSION, ask, beforeRun, couldNot, error, fails, ok, quiet, refuse, rewrite, table, text } from './dialect-table.js'

const before = (tool: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ ...opencodeBefore(CWD, SESSION, tool, args), ...extra })
const after = (tool: string, args: Record<string, unknown>, output: string): Record<string, unknown> => ({ ...before(tool, args), event: 'tool.execute.after', output })
const event = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ event: name, sessionID: SESSION, directory: CWD, ...extra })
const CHILD = { sessionID: 'ses_child', rootSessionID: SESSION, subagent: { id: 'ses_child', type: 'general' } }

const BEGIN = beforeRun(AGENT)
/** An agent point the run was called at (the table's Logged names the step points; the fake run logs both alike). */
const agentPoint = (point: AgentPointName, payload: Record<string, unknown>): Logged => ({ call: point, payload }) as unknown as Logged
const bash = (command: string, extra: Record<string, unknown> = {}) => ({ command, description: 'Run it', ...extra })
const shellCall = (command: string, extra: Record<string, unknown> = {}, more: Record<string, unknown> = {}) => ({
  id: 'toolu_1',
  name: 'shell',
  arguments: { command },
  native: { agent: 'opencode', name: 'bash', input: bash(command, extra) },
  ...more,
})
const gateShell = (command: string, more: Record<string, unknown> = {}): Logged => ({ call: 'beforeToolExecute', payload: shellCall(command, {}, more) })
const block = (reason: string): Record<string, unknown> => ({ block: true, reason })

const gates: Row[] = [
  { row: 'tool.execute.before with no opinion: no answer (204)', steps: [{ event: before('bash', bash('ls')), gets: quiet }], log: [BEGIN, gateShell('ls')] },
  { row: "a hook's refusal is block with its reason (the plugin throws it)", steps: [{ event: before('bash', bash('rm -rf victim')), reply: refuse('no rm -rf'), gets: ok(block('no rm -rf')) }], log: [BEGIN, gateShell('rm -rf victim')] },
  {
    row: 'bash is shell with workdir as cwd; a rewrite is the whole args, its other fields kept',
    steps: [{ event: before('bash', bash('ls', { workdir: 'sub' })), reply: rewrite((a) => ({ ...a, command: 'ls -a' })), gets: ok({ args: bash('ls -a', { workdir: 'sub' }) }) }],
    log: [BEGIN, { call: 'beforeToolExecute', payload: { ...shellCall('ls', { workdir: 'sub' }), arguments: { command: 'ls', cwd: 'sub' } } }],
  },
  {
    row: 'edit is edit_file, replaceAll its flag; a rewritten path goes back absolute',
    steps: [
      {
        event: before('edit', { filePath: `${CWD}/a.ts`, oldString: 'a', newString: 'b', replaceAll: true }),
        reply: rewrite((a) => ({ ...a, path: 'b.ts' })),
        gets: ok({ args: { filePath: `${CWD}/b.ts`, oldString: 'a', newString: 'b', replaceAll: true } }),
      },
    ],
    log: [
      BEGIN,
      {
        call: 'beforeToolExecute',
        payload: { id: 'toolu_1', name: 'edit_file', arguments: { path: 'a.ts', old_string: 'a', new_string: 'b', replace_all: true }, native: { agent: 'opencode', name: 'edit', input: { filePath: `${CWD}/a.ts`, oldString: 'a', newString: 'b', replaceAll: true } } },
      },
    ],
  },
  {
    row: "a subagent's call (a child session) names it, and belongs to the root session's run",
    steps: [{ event: before('bash', bash('ls'), CHILD), gets: quiet }],
    log: [BEGIN, gateShell('ls', { subagent: { id: 'ses_child', type: 'general' } })],
  },
  {
    row: 'ctx.confirm cannot be put to a person; an ask left anyway is refused with the question',
    steps: [{ event: before('bash', bash('rm -rf victim')), reply: ask('Dangerous command'), gets: ok(block("this call needs a person's yes, and OpenCode cannot ask for one from a plugin: Dangerous command (asked by hookd hook 'guard')")) }],
    log: [
      BEGIN,
      gateShell('rm -rf victim'),
      { ask: callKey('bash', 'toolu_1', bash('rm -rf victim')), decisionId: ASKED },
      { outcome: 'denied', key: callKey('bash', 'toolu_1', bash('rm -rf victim')), via: 'cannot ask', by: 'hookd' },
    ],
    settled: [{ decisionId: ASKED, outcome: 'denied', by: 'hookd', via: 'cannot ask' }],
  },
  {
    row: 'a deferred call (beforeToolExecute defer) is refused, saying so: OpenCode can neither defer nor ask',
    steps: [
      {
        event: before('bash', bash('make deploy')),
        reply: (_point, p) => ({ result: { allow: false, deferred: true, reason: 'wait for the release window', arguments: p.arguments }, diagnostics: [], asks: [] }),
        gets: ok(block('wait for the release window (a hook deferred this call; OpenCode cannot defer or ask, so hookd refuses it)')),
      },
    ],
    log: [BEGIN, gateShell('make deploy')],
  },
  { row: "a gate hook that could not decide refuses the call in hookd's words", steps: [{ event: before('bash', bash('ls')), reply: couldNot('memory'), gets: ok(block(`hookd refused the call: hook '${HOOK}' could not decide (it ran out of memory)`)) }], log: [BEGIN, gateShell('ls')] },
  {
    row: 'a point call that fails refuses the call, saying why',
    steps: [{ event: before('bash', bash('ls')), reply: fails('resource-exhausted', 'too many calls at once'), gets: ok(block('hookd could not check this call, so it is refused: too many calls at once')) }],
    log: [BEGIN, gateShell('ls')],
  },
]

const afterTools: Row[] = [
  {
    row: 'tool.execute.after: afterToolExecute on the output; no change is no answer',
    steps: [{ event: after('bash', bash('echo hi'), 'hi\n'), gets: quiet }],
    log: [BEGIN, { call: 'afterToolExecute', payload: { call: shellCall('echo hi'), result: { text: 'hi\n', isError: false } } }],
  },
  {
    row: 'a rewritten result is the output the model reads',
    steps: [{ event: after('bash', bash('echo hi'), 'hi'), reply: text((t) => t.toUpperCase()), gets: ok({ output: 'HI' }) }],
    log: [BEGIN, { call: 'afterToolExecute', payload: { call: shellCall('echo hi'), result: { text: 'hi', isError: false } } }],
  },
]

const runs: Row[] = [
  { row: 'chat.message opens the run: beforeRun', steps: [{ event: event('chat.message', { prompt: 'hi' }), gets: quiet }], log: [BEGIN] },
  {
    row: "a root session's session.idle ends the run (end_turn); session.error is error",
    serves: ['beforeRun', 'afterRun'],
    steps: [
      { event: event('session.created'), gets: quiet },
      { event: event('session.idle'), gets: quiet },
      { event: event('chat.message', { prompt: 'two' }), gets: quiet },
      { event: event('session.error', { error: { name: 'APIError' } }), gets: quiet },
    ],
    log: [BEGIN, { close: 'end_turn', by: 'agent' }, BEGIN, { close: 'error', by: 'agent' }],
  },
  {
    row: "a child session's session.created and session.idle are subagent:start and subagent:stop (observed: what hooks change is dropped)",
    steps: [
      { event: event('session.created'), gets: quiet },
      { event: event('session.created', CHILD), reply: () => ({ result: { context: 'read this first' }, diagnostics: [], asks: [] }), gets: quiet },
      { event: event('session.idle', CHILD), gets: quiet },
    ],
    log: [BEGIN, agentPoint('subagent:start', { subagent: CHILD.subagent }), agentPoint('subagent:stop', { lastMessage: '', subagent: CHILD.subagent })],
  },
  {
    row: 'experimental.session.compacting is compact:before and session.compacted compact:after, observed',
    steps: [
      { event: event('experimental.session.compacting'), gets: quiet },
      { event: event('session.compacted'), gets: quiet },
    ],
    log: [BEGIN, agentPoint('compact:before', { trigger: 'auto' }), agentPoint('compact:after', { trigger: 'auto' })],
  },
  { row: 'an event it does not map (file.edited) is no answer, and opens no run', steps: [{ event: event('file.edited', { file: 'a.ts' }), gets: quiet }], log: [] },
]

const malformed: Row[] = [
  {
    row: 'a tool.execute.before without its args is refused, naming the field',
    steps: [{ event: { ...before('bash', bash('ls')), args: 'ls' }, gets: ok(block('hookd could not check this call, so it is refused: the tool.execute.before event.args: Invalid input: expected record, received string; is this a OpenCode hook event?')) }],
    log: [],
  },
  { row: 'an event without its directory is 400', steps: [{ event: { ...event('session.idle'), directory: undefined }, gets: error(400, 'the event.directory: Invalid input: expected string, received undefined; is this a OpenCode (hookd plugin) hook event?') }], log: [] },
]

describe('OpenCode: gates (tool.execute.before) and what follows an ask', () => table(AGENT, gates))
describe('OpenCode: after a tool (tool.execute.after)', () => table(AGENT, afterTools))
describe("OpenCode: the run, subagents' sessions, compaction, and events it does not map", () => table(AGENT, runs))
describe('OpenCode: malformed events', () => table(AGENT, malformed))
