/**
 * Canonical calls keep their meaning. An agent's event is hostile: a patch header with a character
 * the agent's parser drops, tool arguments hookd cannot read, a path that climbs out of the project,
 * a shell call that runs somewhere else or outside the agent's sandbox. Each test posts the agent's
 * own event JSON to a real sidecar's front door and asserts what the agent reads back: either the
 * hooks see what the agent will really do, or hookd refuses the call. Each ends with an ordinary call
 * that the same sidecar answers as always.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Sidecar } from '../../../src/sidecar/sidecar.js'
import { hook, writeTree } from '../../support/sidecar.js'
import { postEvent } from '../../agents/support/front-door-post.js'

const TOKEN = 'hkd_canonical-calls-test-token-0123456789abcdefgh'

let sidecar: Sidecar
let url = ''
let hooks = ''
let project = ''

beforeAll(async () => {
  hooks = await writeTree({
    // Refuses every call, saying what it saw: the exact canonical call, as a hook reads it. After a
    // tool, the text the model reads says the same.
    'seen/index.js': hook({
      beforeToolExecute: `function (ctx, call) { return { allow: false, reason: 'saw ' + call.name + ' ' + JSON.stringify(call.arguments) } }`,
      afterToolExecute: `function (ctx, call) { return { text: 'saw ' + call.name + ' ' + JSON.stringify(call.arguments) } }`,
    }),
    // A regex guard, as people write them.
    'no-rm/index.js': hook({
      beforeToolExecute: `function (ctx, call) { if (call.name === 'shell' && /\\brm\\s+-rf\\b/.test(call.arguments.command || '')) return { allow: false, reason: 'no rm -rf' } }`,
    }),
    'no-env/index.js': hook({
      beforeToolExecute: `function (ctx, call) {
        if ((call.name === 'write_file' || call.name === 'edit_file') && /(^|\\/)\\.env$/.test(call.arguments.path)) return { allow: false, reason: 'no .env' }
      }`,
    }),
    'sandboxed/index.js': hook({
      beforeToolExecute: `function (ctx, call) { if (call.name === 'shell' && call.arguments.unsandboxed) return { allow: false, reason: 'commands stay in the sandbox' } }`,
    }),
    'to-safe/index.js': hook({
      beforeToolExecute: `function (ctx, call) { if (call.name === 'shell') return { arguments: { ...call.arguments, cwd: 'safe' } } }`,
    }),
    'into-sandbox/index.js': hook({
      beforeToolExecute: `function (ctx, call) { if (call.name === 'shell') return { arguments: { ...call.arguments, unsandboxed: false } } }`,
    }),
  })
  project = await mkdtemp(join(tmpdir(), 'hookd-canonical-calls-'))
  sidecar = await Sidecar.create({ hooks, workers: 1, watch: false })
  url = await sidecar.listenHttp('127.0.0.1', 0, { token: TOKEN })
}, 60_000)

afterAll(async () => {
  await sidecar?.stop()
  await rm(hooks, { recursive: true, force: true })
  await rm(project, { recursive: true, force: true })
})

let sessions = 0
const session = (): string => `canonical-calls-${process.pid}-${++sessions}`

const post = (path: string, body: unknown): Promise<{ status: number; json: unknown }> => postEvent(url, TOKEN, path, body)

const claudePre = (tool: string, input: Record<string, unknown>): Record<string, unknown> => ({
  session_id: session(),
  cwd: project,
  hook_event_name: 'PreToolUse',
  permission_mode: 'default',
  tool_name: tool,
  tool_input: input,
  tool_use_id: `toolu_${tool}`,
})
const codexPre = (tool: string, input: Record<string, unknown>): Record<string, unknown> => ({
  session_id: session(),
  turn_id: 't1',
  cwd: project,
  hook_event_name: 'PreToolUse',
  model: 'gpt-5.5',
  permission_mode: 'default',
  tool_name: tool,
  tool_input: input,
  tool_use_id: 'call_1',
})
const geminiBefore = (tool: string, input: Record<string, unknown>): Record<string, unknown> => ({
  session_id: session(),
  transcript_path: '/tmp/t.jsonl',
  cwd: project,
  hook_event_name: 'BeforeTool',
  timestamp: '2026-11-30T12:00:00.000Z',
  tool_name: tool,
  tool_input: input,
})
const copilotTool = (toolName: string, toolArgs: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  sessionId: session(),
  timestamp: 1796053931718,
  cwd: project,
  toolName,
  toolArgs,
  ...extra,
})
const cursorEvent = (name: string, extra: Record<string, unknown>): Record<string, unknown> => ({
  conversation_id: session(),
  generation_id: 'g1',
  hook_event_name: name,
  workspace_roots: [project],
  ...extra,
})

const claudeDeny = (reason: string) => ({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } })
const codexDeny = claudeDeny
const geminiDeny = (reason: string) => ({ decision: 'deny', reason })
const copilotDeny = (reason: string) => ({ permissionDecision: 'deny', permissionDecisionReason: reason })
const cursorDeny = (reason: string) => ({ permission: 'deny', user_message: reason, agent_message: reason })
const unreadable = (why: string): string => `hookd refused this call, which no hook could check: ${why}`

const patch = (...lines: string[]): string => ['*** Begin Patch', ...lines, '*** End Patch', ''].join('\n')

/** The same sidecar still answers an ordinary call: a guard's refusal, and no opinion on a harmless one. */
async function expectServing(): Promise<void> {
  expect((await post('/claude-code/no-rm', claudePre('Bash', { command: 'rm -rf victim' }))).json).toEqual(claudeDeny('no rm -rf'))
  expect((await post('/claude-code/no-rm', claudePre('Bash', { command: 'ls' }))).json).toEqual({})
}

describe('Codex patch headers are read as Codex reads them', () => {
  it('a header ending in U+0085 (Rust trims it, JavaScript does not) is refused, naming the header', async () => {
    const out = await post('/codex/no-env', codexPre('apply_patch', { command: patch('*** Add File: .env\u0085', '+SECRET=1') }))
    expect(out).toEqual({
      status: 200,
      json: codexDeny(unreadable("the patch header '*** Add File: .env<U+0085>' holds U+0085 (whitespace other than a space); a patch header must name its file in plain characters")),
    })
    await expectServing()
  })

  it('a header ending in a BOM (JavaScript trims it, Rust keeps it) is refused the same way', async () => {
    const out = await post('/codex/no-env', codexPre('apply_patch', { command: patch('*** Update File: .env\ufeff', '@@', '-a', '+b') }))
    expect(out.json).toEqual(codexDeny(unreadable("the patch header '*** Update File: .env<U+FEFF>' holds U+FEFF (an invisible format character); a patch header must name its file in plain characters")))
    await expectServing()
  })

  it('a move or a delete in a patch of several files is checked too: a bidi override, a tab', async () => {
    const move = await post('/codex/no-env', codexPre('apply_patch', { command: patch('*** Update File: a.txt', '*** Move to: evil\u202etxt.sh', '@@', '-a', '+b') }))
    expect(move.json).toEqual(codexDeny(unreadable("the patch header '*** Move to: evil<U+202E>txt.sh' holds U+202E (an invisible format character); a patch header must name its file in plain characters")))
    const del = await post('/codex/no-env', codexPre('apply_patch', { command: patch('*** Delete File: a.txt', '*** Delete File: \tb.txt') }))
    expect(del.json).toEqual(codexDeny(unreadable("the patch header '*** Delete File: <U+0009>b.txt' holds U+0009 (whitespace other than a space); a patch header must name its file in plain characters")))
    await expectServing()
  })

  it("Copilot's apply_patch (the same format, as a bare string) is refused the same way", async () => {
    const out = await post('/copilot/no-env?event=preToolUse', copilotTool('apply_patch', patch('*** Add File: .env\u0085', '+SECRET=1')))
    expect(out.json).toEqual(copilotDeny(unreadable("the patch header '*** Add File: .env<U+0085>' holds U+0085 (whitespace other than a space); a patch header must name its file in plain characters")))
    await expectServing()
  })

  it('an ordinary header reaches hooks as the path Codex writes, trailing spaces trimmed as Codex trims them', async () => {
    expect((await post('/codex/no-env', codexPre('apply_patch', { command: patch('*** Add File: .env  ', '+SECRET=1') }))).json).toEqual(codexDeny('no .env'))
    expect(await post('/codex/no-env', codexPre('apply_patch', { command: patch('*** Add File: notes.txt', '+hello') }))).toEqual({ status: 204, json: undefined })
    await expectServing()
  })
})

describe('arguments hookd cannot read refuse the gate', () => {
  /** Copilot's toolArgs as a JSON string, its command a tab-separated `rm -rf`, padded past the depth limit. */
  const deep = `{"command":"rm\\t-rf ~","description":"tidy","pad":${'['.repeat(70)}${']'.repeat(70)}}`

  it('Copilot toolArgs nested past the limit never reach a regex guard as a shell command', async () => {
    const out = await post('/copilot/no-rm?event=preToolUse', copilotTool('bash', deep))
    expect(out.json).toEqual(copilotDeny(unreadable("Copilot CLI's toolArgs for 'bash' is nested too deep (more than 64 levels of arrays and objects)")))
    await expectServing()
  })

  it('after the tool, hooks see the call under its own name with nothing hookd could not read', async () => {
    const out = await post('/copilot/seen?event=postToolUse', copilotTool('bash', deep, { toolResult: { resultType: 'success', textResultForLlm: 'done' } }))
    expect(out.json).toEqual({ modifiedResult: { resultType: 'success', textResultForLlm: 'saw bash {}' } })
    await expectServing()
  })

  it('Copilot toolArgs that are not JSON, or not an object, are refused for a tool that takes an object', async () => {
    expect((await post('/copilot/no-rm?event=preToolUse', copilotTool('bash', 'rm\t-rf ~'))).json).toEqual(
      copilotDeny(unreadable("Copilot CLI's toolArgs for 'bash' is not a JSON object")),
    )
    expect((await post('/copilot/no-rm?event=preToolUse', copilotTool('bash', '{"command": "rm -rf ~"'))).json).toEqual(
      copilotDeny(unreadable("Copilot CLI's toolArgs for 'bash' is not valid JSON")),
    )
    expect((await post('/copilot/no-rm?event=preToolUse', copilotTool('bash', '["rm", "-rf", "~"]'))).json).toEqual(
      copilotDeny(unreadable("Copilot CLI's toolArgs for 'bash' is not a JSON object")),
    )
    await expectServing()
  })

  it("Cursor's MCP tool_input that is not a JSON object is refused, not shown as {input}", async () => {
    const out = await post('/cursor/seen', cursorEvent('beforeMCPExecution', { tool_name: 'run', tool_input: `{"cmd": "rm -rf ~", "pad": ${'['.repeat(70)}${']'.repeat(70)}}`, command: 'npx mcp-server' }))
    expect(out.json).toEqual(cursorDeny(unreadable("Cursor's tool_input for 'run' is nested too deep (more than 64 levels of arrays and objects)")))
    await expectServing()
  })
})

describe('paths are normalised: inside the workdir relative, outside it absolute', () => {
  it("`src/../../x` is the absolute path of the file outside the project, for every agent's path fields", async () => {
    const outside = join(dirname(project), 'x')
    expect((await post('/gemini/seen', geminiBefore('write_file', { file_path: 'src/../../x', content: 'c' }))).json).toEqual(
      geminiDeny(`saw write_file {"path":${JSON.stringify(outside)},"content":"c"}`),
    )
    expect((await post('/codex/seen', codexPre('apply_patch', { command: patch('*** Add File: src/../../x', '+c') }))).json).toEqual(
      codexDeny(`saw write_file {"path":${JSON.stringify(outside)},"content":"c\\n"}`),
    )
    expect((await post('/claude-code/seen', claudePre('Read', { file_path: `${project}/src/../../x` }))).json).toEqual(claudeDeny(`saw read_file {"path":${JSON.stringify(outside)}}`))
    expect((await post('/claude-code/seen', claudePre('Grep', { pattern: 'x', path: `${project}/./src/../lib/` }))).json).toEqual(claudeDeny('saw search_files {"pattern":"x","path":"lib"}'))
    await expectServing()
  })

  it('a path with a NUL byte, or one starting with ~, refuses the gate', async () => {
    expect((await post('/claude-code/seen', claudePre('Read', { file_path: `${project}/a\u0000b` }))).json).toEqual(
      claudeDeny(unreadable("Read's file_path holds a NUL byte, which no file name can")),
    )
    expect((await post('/gemini/seen', geminiBefore('read_file', { file_path: '~/.ssh/id_rsa' }))).json).toEqual(
      geminiDeny(unreadable("read_file's file_path '~/.ssh/id_rsa' starts with '~', which the agent may read as a home folder; give the path without it")),
    )
    await expectServing()
  })
})

describe('the shell call carries its working directory and its sandbox bypass', () => {
  it("Claude Code's dangerouslyDisableSandbox reaches hooks as unsandboxed: true, and a guard can refuse it", async () => {
    expect((await post('/claude-code/seen', claudePre('Bash', { command: 'ls', description: 'list', dangerouslyDisableSandbox: true }))).json).toEqual(
      claudeDeny('saw shell {"command":"ls","unsandboxed":true}'),
    )
    expect((await post('/claude-code/sandboxed', claudePre('Bash', { command: 'ls', dangerouslyDisableSandbox: true }))).json).toEqual(claudeDeny('commands stay in the sandbox'))
    expect((await post('/claude-code/sandboxed', claudePre('Bash', { command: 'ls', dangerouslyDisableSandbox: false }))).json).toEqual({})
    // Claude Code's tools read the string "true" as true; anything else that is no boolean it cannot run.
    expect((await post('/claude-code/sandboxed', claudePre('Bash', { command: 'ls', dangerouslyDisableSandbox: 'true' }))).json).toEqual(claudeDeny('commands stay in the sandbox'))
    expect((await post('/claude-code/sandboxed', claudePre('Bash', { command: 'ls', dangerouslyDisableSandbox: 'yes' }))).json).toEqual(
      claudeDeny(unreadable("Bash's dangerouslyDisableSandbox is neither true nor false")),
    )
    await expectServing()
  })

  it("Gemini CLI's dir_path and Cursor's cwd reach hooks as cwd, in the path convention", async () => {
    expect((await post('/gemini/seen', geminiBefore('run_shell_command', { command: 'ls', dir_path: '../..' }))).json).toEqual(
      geminiDeny(`saw shell {"command":"ls","cwd":${JSON.stringify(dirname(dirname(project)))}}`),
    )
    expect((await post('/gemini/seen', geminiBefore('run_shell_command', { command: 'ls', dir_path: 'sub/' }))).json).toEqual(geminiDeny('saw shell {"command":"ls","cwd":"sub"}'))
    expect((await post('/cursor/seen', cursorEvent('beforeShellExecution', { command: 'ls', cwd: '/' }))).json).toEqual(cursorDeny('saw shell {"command":"ls","cwd":"/"}'))
    expect((await post('/cursor/seen', cursorEvent('beforeShellExecution', { command: 'ls', cwd: project }))).json).toEqual(cursorDeny('saw shell {"command":"ls","cwd":"."}'))
    await expectServing()
  })

  it('a rewrite of cwd or unsandboxed goes back where the agent takes it, and refuses where it cannot', async () => {
    expect((await post('/gemini/to-safe', geminiBefore('run_shell_command', { command: 'ls', dir_path: '/', description: 'd' }))).json).toEqual({
      hookSpecificOutput: { hookEventName: 'BeforeTool', tool_input: { command: 'ls', dir_path: join(project, 'safe'), description: 'd' } },
    })
    expect((await post('/claude-code/into-sandbox', claudePre('Bash', { command: 'ls', description: 'd', dangerouslyDisableSandbox: true }))).json).toEqual({
      hookSpecificOutput: { hookEventName: 'PreToolUse', updatedInput: { command: 'ls', description: 'd' } },
    })
    expect((await post('/claude-code/to-safe', claudePre('Bash', { command: 'ls' }))).json).toEqual(
      claudeDeny("hookd refused this call: the rewritten shell arguments set 'cwd', which the tool has no field for, so Claude Code's Bash cannot take them; fix the hook that rewrites shell"),
    )
    expect((await post('/codex/to-safe', codexPre('Bash', { command: 'ls' }))).json).toEqual(
      codexDeny("hookd refused this call: the rewritten shell arguments set 'cwd', which the tool has no field for, so Codex's Bash cannot take them; fix the hook that rewrites shell"),
    )
    await expectServing()
  })
})
