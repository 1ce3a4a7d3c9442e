/**
 * Cursor's command-hook contract, checked without the agent: the Cursor agent cannot run here.
 *
 * Why not (checked against the npm registry for this pin): Cursor's agent ships in the Cursor editor
 * and in the `cursor-agent` CLI, which installs with a script downloaded from cursor.com, not from a
 * registry (the npm name `cursor-agent` is an unrelated project, "Task sequence creator for Cursor AI
 * agents"). The registry does hold `@cursor/sdk` (pinned in scripts/agent-cli.sh as cursor-sdk), whose
 * local runtime carries Cursor's hook engine; it cannot run an agent here either: it needs Node 22.13
 * or newer (this machine has 20), and its model turns go only to Cursor's backend (api2.cursor.sh, over
 * Connect/protobuf, with a Cursor API key), with no setting that points them at a stand-in.
 *
 * What this file checks instead:
 * - the test guard (a POSIX `sh` script) fed, through a real `sh`, the documented `beforeShellExecution`
 *   and `beforeMCPExecution` payloads field for field, answering in the documented output shape.
 *   Sources: cursor.com/docs/agent/hooks, as stored in the pcomans/caruso repository at
 *   `reference/cursor_hooks.md`: the config `{"version":1,"hooks":{...}}`, the common input fields
 *   (conversation_id, generation_id, model, hook_event_name, cursor_version, workspace_roots, user_email),
 *   beforeShellExecution input {command, cwd} and output {permission: allow|deny|ask, user_message,
 *   agent_message}, beforeMCPExecution input {tool_name, tool_input (a JSON string), url | command};
 * - the pinned @cursor/sdk's hook engine itself, read from its shipped code: the events it sends (each
 *   mapped by the dialect or listed in CURSOR_UNMAPPED with why), the answer fields it reads back at
 *   each event the dialect answers, and which fields of each tool's input it applies from preToolUse's
 *   updated_input (cursor-points.ts);
 * - hookd's Cursor route (src/agents/cursor/cursor-dialect.ts) on those payloads through the shim
 *   `hookd setup cursor` writes, as Cursor would run it, each answer field for field against what its
 *   event takes.
 */
import { execFile } from 'node:child_process'
import { readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CURSOR_DIALECT, CURSOR_UNMAPPED } from '../../../src/agents/cursor/cursor-dialect.js'
import { APPLIED } from '../../../src/agents/cursor/cursor-points.js'
import { shimPath } from '../../../src/agents/settings/shim-command.js'
import { Sidecar } from '../../../src/sidecar/sidecar.js'
import { EXAMPLE_HOOKS, hook, writeTree } from '../../support/sidecar.js'
import { agentCli } from '../support/cli.js'
import { guardScript, tempDir, writeScript } from '../support/other-clis.js'

const DENY_JSON = '{"permission":"deny","user_message":"Blocked: rm -r","agent_message":"guard: rm -r is not allowed here"}'

const COMMON = {
  conversation_id: 'conv-0001',
  generation_id: 'gen-0001',
  model: 'default',
  cursor_version: '1.7.2',
  workspace_roots: ['/home/me/project'],
  user_email: null,
}

function beforeShellExecution(command: string): Record<string, unknown> {
  return { ...COMMON, hook_event_name: 'beforeShellExecution', command, cwd: '/home/me/project' }
}

function sh(script: string, arg: string, stdin: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = execFile('sh', [script, arg], (err, stdout, stderr) => {
      // On a non-zero exit, execFile's error carries the exit status as `code`.
      done({ code: err ? Number((err as { code?: unknown }).code) : 0, stdout, stderr })
    })
    child.stdin?.end(stdin)
  })
}

let dir: string
let guard: string

beforeAll(async () => {
  dir = await tempDir('cursor-guard')
  guard = await writeScript(join(dir, 'guard.sh'), guardScript({ denyJson: DENY_JSON }))
})

afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('Cursor hooks (documented contract; the agent cannot run offline)', () => {
  it('denies a documented beforeShellExecution payload for rm -rf with the documented output fields', async () => {
    const out = await sh(guard, 'json', JSON.stringify(beforeShellExecution('rm -rf victim')))
    expect(out.code).toBe(0)
    const answer = JSON.parse(out.stdout) as Record<string, unknown>
    expect(Object.keys(answer).sort()).toEqual(['agent_message', 'permission', 'user_message'])
    expect(['allow', 'deny', 'ask']).toContain(answer['permission'])
    expect(answer['permission']).toBe('deny')
  })

  it('says nothing, and exits 0, for a harmless command', async () => {
    const out = await sh(guard, 'json', JSON.stringify(beforeShellExecution('ls -la')))
    expect(out).toEqual({ code: 0, stdout: '', stderr: '' })
  })

  it('can refuse by exit code 2 with the reason on stderr', async () => {
    const out = await sh(guard, 'exit2', JSON.stringify(beforeShellExecution('rm -rf victim')))
    expect(out.code).toBe(2)
    expect(out.stderr).toContain('rm -r is not allowed')
  })

  it('sees the command inside a documented beforeMCPExecution payload only as part of a JSON string', async () => {
    // tool_input is documented as "<json params>": a string, so the command is escaped inside it.
    const payload = { ...COMMON, hook_event_name: 'beforeMCPExecution', tool_name: 'run', tool_input: JSON.stringify({ cmd: 'rm -rf victim' }), command: 'npx mcp-server' }
    const text = JSON.stringify(payload)
    expect(text).toContain('\\"cmd\\":\\"rm -rf victim\\"')
    const out = await sh(guard, 'json', text)
    expect(JSON.parse(out.stdout)).toMatchObject({ permission: 'deny' })
  })
})

describe("hookd's Cursor route on the documented payloads, through the shim setup writes", () => {
  const TOKEN = 'hkd_cursor-contract-token-0123456789abcdefghijkl'
  let sidecar: Sidecar
  let url = ''
  let hooks = ''
  let project = ''
  let tokenFile = ''
  let conversations = 0

  beforeAll(async () => {
    hooks = await writeTree({
      'guard/index.js': await readFile(join(EXAMPLE_HOOKS, 'guard', 'index.js'), 'utf8'),
      'strict.profile.json': JSON.stringify({ hooks: ['guard', 'no-secrets', 'rewrite-shell'], confirm: 'deny' }),
      'no-secrets/index.js': hook({
        beforeToolExecute: `function (ctx, call) {
          if (call.name === 'read_file' && /\\.env$/.test(call.arguments.path)) return { allow: false, reason: 'no reading .env' }
          if (call.name === 'MCP:run' && /rm -rf/.test(call.arguments.cmd || '')) return { allow: false, reason: 'no rm -rf through MCP either' }
        }`,
      }),
      'rewrite-shell/index.js': hook({
        beforeToolExecute: `function (ctx, call) { if (call.name === 'shell' && call.arguments.command === 'make') return { arguments: { command: 'make -n' } } }`,
      }),
    })
    project = await tempDir('cursor-project')
    tokenFile = join(project, 'token')
    await writeFile(tokenFile, `${TOKEN}\n`, { mode: 0o600 })
    sidecar = await Sidecar.create({ hooks, workers: 1, watch: false })
    url = await sidecar.listenHttp('127.0.0.1', 0, { token: TOKEN, report: () => {} })
  }, 60_000)

  afterAll(async () => {
    await sidecar?.stop()
    await Promise.all([hooks, project].map((d) => rm(d, { recursive: true, force: true })))
  })

  /** The documented common fields, with this test's project as the workspace. */
  const common = (): Record<string, unknown> => ({ ...COMMON, conversation_id: `conv-${process.pid}-${++conversations}`, workspace_roots: [project] })

  function shim(route: string, event: Record<string, unknown>): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((done) => {
      const child = execFile(shimPath(), ['--token-file', tokenFile, `${url}/cursor/${route}`], (err, stdout, stderr) => {
        done({ code: err ? Number((err as { code?: unknown }).code) : 0, stdout, stderr })
      })
      child.stdin?.end(JSON.stringify(event))
    })
  }

  const answer = async (route: string, event: Record<string, unknown>): Promise<unknown> => {
    const out = await shim(route, event)
    expect(out.code, out.stderr).toBe(0)
    return JSON.parse(out.stdout)
  }

  it("beforeShellExecution: the guard's confirm is Cursor's ask, with the documented fields only; a harmless command is {}", async () => {
    const reason = "Dangerous command: rm -rf victim (asked by hookd hook 'guard')"
    const shell = { ...common(), hook_event_name: 'beforeShellExecution', command: 'rm -rf victim', cwd: project }
    expect(await answer('guard', shell)).toEqual({ permission: 'ask', user_message: reason, agent_message: reason })
    expect(await answer('guard', { ...shell, command: 'ls -la' })).toEqual({})
  })

  it('with a profile that answers no, the refusal is a deny; a rewrite Cursor cannot run is refused, saying what the hooks would run', async () => {
    const shell = { ...common(), hook_event_name: 'beforeShellExecution', command: 'rm -rf victim', cwd: project }
    expect(await answer('profile/strict', shell)).toEqual({ permission: 'deny', user_message: 'refused by the user', agent_message: 'refused by the user' })
    const rewrite = "hookd's hooks changed this call, and Cursor cannot run a changed call, so this one is refused; the hooks would allow: make -n"
    expect(await answer('profile/strict', { ...shell, command: 'make' })).toEqual({ permission: 'deny', user_message: rewrite, agent_message: rewrite })
  })

  it('beforeReadFile {file_path, content} is read_file, refused with the permission field alone; beforeMCPExecution\'s tool_input JSON string reaches hooks as arguments', async () => {
    const read = { ...common(), hook_event_name: 'beforeReadFile', file_path: join(project, '.env'), content: 'KEY=1\n', attachments: [] }
    // beforeReadFile's documented output is {permission} alone.
    expect(await answer('profile/strict', read)).toEqual({ permission: 'deny' })
    expect(await answer('profile/strict', { ...read, file_path: join(project, 'README.md') })).toEqual({})
    const mcp = { ...common(), hook_event_name: 'beforeMCPExecution', tool_name: 'run', tool_input: JSON.stringify({ cmd: 'rm -rf victim' }), command: 'npx mcp-server' }
    expect(await answer('profile/strict', mcp)).toEqual({ permission: 'deny', user_message: 'no rm -rf through MCP either', agent_message: 'no rm -rf through MCP either' })
  })

  it("preToolUse (the engine's fields): a rewrite Cursor applies is updated_input; the engine's events hookd does not map are {}", async () => {
    const pre = { ...common(), hook_event_name: 'preToolUse', tool_name: 'Shell', tool_input: { command: 'make', cwd: project }, tool_use_id: 'tu_1', cwd: project }
    expect(await answer('profile/strict', pre)).toEqual({ updated_input: { command: 'make -n' } })
    for (const name of Object.keys(CURSOR_UNMAPPED)) expect(await answer('guard', { ...common(), hook_event_name: name })).toEqual({})
  })

  it('the events Cursor reads no refusal from (beforeSubmitPrompt, afterFileEdit, afterShellExecution, stop) are answered {}', async () => {
    const c = common()
    expect(await answer('guard', { ...c, hook_event_name: 'beforeSubmitPrompt', prompt: 'tidy up', attachments: [] })).toEqual({})
    expect(await answer('guard', { ...c, hook_event_name: 'afterShellExecution', command: 'ls', output: 'a\n', duration: 12 })).toEqual({})
    expect(await answer('guard', { ...c, hook_event_name: 'afterFileEdit', file_path: join(project, 'a.txt'), edits: [{ old_string: 'a', new_string: 'b' }] })).toEqual({})
    expect(await answer('guard', { ...c, hook_event_name: 'stop', status: 'completed', loop_count: 0 })).toEqual({})
  })
})

/**
 * Cursor's hook engine as the pinned @cursor/sdk ships it (dist/cjs/*.js, minified): the file that
 * holds the table of its hook events, `{beforeShellExecution:"beforeShellExecution",...}`.
 */
describe("Cursor's hook engine, as the pinned @cursor/sdk 1.0.32 ships it", () => {
  let engine = ''
  beforeAll(async () => {
    const sdk = await agentCli('cursor-sdk')
    const dir = join(sdk, 'dist', 'cjs')
    for (const file of (await readdir(dir)).filter((f) => f.endsWith('.js'))) {
      const text = await readFile(join(dir, file), 'utf8')
      if (text.includes('beforeShellExecution:"beforeShellExecution"')) engine = text
    }
    expect(engine, 'the engine file in @cursor/sdk').not.toBe('')
  }, 600_000)

  /** The step handler's code for one event: from its `case"EVENT":{` to the next case. */
  const step = (event: string): string => {
    const start = engine.indexOf(`case"${event}":{const `)
    expect(start, `the engine's step for ${event}`).toBeGreaterThan(-1)
    const ends = ['}case"', '}default:'].map((m) => engine.indexOf(m, start + 10)).filter((i) => i !== -1)
    return engine.slice(start, ends.length ? Math.min(...ends) : start + 3000)
  }
  /** The hook-answer fields a step reads back: `x.field` where x is the hook's merged answer. */
  const read = (code: string): string[] => [...new Set([...code.matchAll(/null==(\w)\?void 0:\1\.(\w+)/g)].map((m) => m[2] as string))].sort()

  it('sends exactly the events the dialect maps and the ones it lists as not mappable, with why', () => {
    const table = /\{(beforeShellExecution:"beforeShellExecution"(?:,\w+:"\w+")*)\}/.exec(engine)?.[1] ?? ''
    const events = table.split(',').map((pair) => pair.split(':')[0] as string)
    expect(events.length).toBeGreaterThanOrEqual(20)
    expect([...events].sort()).toEqual([...CURSOR_DIALECT.events, ...Object.keys(CURSOR_UNMAPPED)].sort())
  })

  it('reads back the fields the dialect answers at each event, and nothing the dialect would miss', () => {
    expect(read(step('preToolUse'))).toEqual(['additional_context', 'agent_message', 'permission', 'updated_input', 'user_message'])
    expect(read(step('beforeSubmitPrompt'))).toEqual(['additional_context', 'continue', 'user_message'])
    expect(read(step('subagentStart'))).toEqual(['additional_context', 'permission', 'user_message'])
    expect(read(step('subagentStop'))).toEqual(['additional_context', 'followup_message'])
    // Observed only by hookd: nothing a hook returns there blocks or rewrites.
    expect(read(step('preCompact'))).toEqual(['user_message'])
    expect(read(step('postToolUse'))).toEqual(['additional_context'])
    expect(read(step('postToolUseFailure'))).toEqual(['additional_context'])
    expect(read(step('stop'))).toEqual(['followup_message'])
    expect(read(step('afterAgentResponse'))).toEqual([])
  })

  it("gives preToolUse the tool's name and input, the call's id and, in a subagent, the call that started it", () => {
    const code = step('preToolUse')
    for (const field of ['tool_name:e.toolName', 'tool_input:t', 'tool_use_id:e.toolUseId', 'parent_tool_call_id:e.parentToolCallId', 'cwd:e.cwd']) expect(code).toContain(field)
    expect(step('subagentStart')).toContain('subagent_id:e.subagentId,subagent_type:e.subagentType,task:e.task')
    expect(step('postToolUseFailure')).toContain('error_message:e.errorMessage')
  })

  it("applies from updated_input only the fields of each tool's input that the dialect rewrites", () => {
    const tools = new Map<string, string[]>()
    for (const m of engine.matchAll(/toolName:([\w$]+|"\w+"),getToolCallId:[\w$]+,createToolInput:[\s\S]{0,400}?applyUpdatedInput:\(e,t\)=>\{([^}]*)\}/g)) {
      const ref = m[1] as string
      const name = ref.startsWith('"') ? ref.slice(1, -1) : (new RegExp(`(?:^|[^\\w$])${ref.replaceAll('$', '\\$')}="(\\w+)"`).exec(engine)?.[1] ?? ref)
      tools.set(name, [...new Set([...(m[2] as string).matchAll(/typeof t\.(\w+)/g)].map((f) => f[1] as string))].sort())
    }
    for (const [tool, fields] of Object.entries(APPLIED)) expect(tools.get(tool), tool).toEqual([...fields].sort())
  })
})
