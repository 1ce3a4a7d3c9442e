/**
 * The HTTP front door with Claude Code's event JSON, against a real sidecar (worker processes, real
 * sockets): what Claude Code would read back for each event, and what the operator sees on stderr.
 * The real CLI drives the same door in claude-code-hookd.test.ts.
 */
import { HOOKD_VERSION } from '../../src/protocol/version.js'
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { type Server, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Sidecar } from '../../src/sidecar/sidecar.js'
import { EXAMPLE_HOOKS, hook, writeTree } from '../support/sidecar.js'

const TOKEN = 'hkd_front-door-test-token-0123456789abcdefghijklmn'

let sidecar: Sidecar
let url = ''
let hooks = ''
let project = ''
const reports: string[] = []
let origin: Server
let originUrl = ''

async function copyExample(name: string): Promise<Record<string, string>> {
  return { [`${name}/index.js`]: await readFile(join(EXAMPLE_HOOKS, name, 'index.js'), 'utf8') }
}

beforeAll(async () => {
  origin = createServer((_req, res) => res.end('origin says hi'))
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve))
  originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`
  hooks = await writeTree({
    ...(await copyExample('guard')),
    ...(await copyExample('shout')),
    ...(await copyExample('https-only')),
    ...(await copyExample('today')),
    ...(await copyExample('audit')),
    'lifecycle/index.js': hook({
      beforeRun: `function (ctx, run) { ctx.notify({ title: 'beforeRun', body: run.sessionId + ' ' + run.agentId }) }`,
      afterRun: `function (ctx, event) { ctx.notify({ title: 'afterRun', body: event.reason }) }`,
    }),
    'spin/index.js': hook({ beforeToolExecute: `function () { for (;;) {} }` }),
    'rewrite-shell/index.js': hook({
      beforeToolExecute: `function (ctx, call) { if (call.name === 'shell') return { arguments: { command: 'echo rewritten: ' + call.arguments.command } } }`,
    }),
    'bad-rewrite/index.js': hook({ beforeToolExecute: `function (ctx, call) { return { arguments: { command: 42 } } }` }),
    'peek/index.js': hook({
      beforeToolExecute: `function (ctx, call) {
        if (call.name !== 'read_file') return
        ctx.log('native ' + call.native.agent + ' ' + call.native.name + ' ' + call.native.input.file_path)
        if (ctx.file.read(call.arguments.path).includes('SECRET')) return { allow: false, reason: call.arguments.path + ' holds a secret' }
      }`,
    }),
    'escape/index.js': hook({
      beforeToolExecute: `function (ctx) { try { ctx.file.read('../outside.txt'); return { allow: false, reason: 'read outside' } } catch (e) { return { allow: false, reason: e.message } } }`,
    }),
    'fetcher/index.js': hook({
      beforeToolExecute: `function (ctx) { try { return { allow: false, reason: ctx.http.fetch(ctx.config.url).body } } catch (e) { return { allow: false, reason: e.message } } }`,
    }),
    'fetcher/hook.json': JSON.stringify({ config: { url: `${originUrl}/x` } }),
    'broken/index.js': 'module.exports = {',
    'broken-strict/index.js': 'module.exports = {',
    'broken-strict/hook.json': JSON.stringify({ onError: 'refuse' }),
    'broken-lenient/index.js': 'module.exports = {',
    'broken-lenient/hook.json': JSON.stringify({ onError: 'skip' }),
    'strict.profile.json': JSON.stringify({ hooks: ['guard'], confirm: 'deny' }),
    'fetching.profile.json': JSON.stringify({ hooks: ['fetcher'] }),
    'fetching-ok.profile.json': JSON.stringify({ hooks: ['fetcher'], policy: { httpOrigins: [originUrl] } }),
    'typo.profile.json': JSON.stringify({ hooks: ['guard'], confirm: 'maybe' }),
  })
  project = await mkdtemp(join(tmpdir(), 'hookd-front-door-project-'))
  await writeFile(join(project, 'notes.txt'), 'plain notes\n')
  await writeFile(join(project, 'keys.txt'), 'SECRET=1\n')
  sidecar = await Sidecar.create({ hooks, workers: 1, watch: false })
  url = await sidecar.listenHttp('127.0.0.1', 0, { token: TOKEN, report: (line) => reports.push(line) })
}, 60_000)

afterAll(async () => {
  await sidecar?.stop()
  await new Promise<void>((resolve) => origin?.close(() => resolve()))
  await rm(hooks, { recursive: true, force: true })
  await rm(project, { recursive: true, force: true })
})

let sessions = 0
function session(): string {
  sessions += 1
  return `front-door-${process.pid}-${sessions}`
}

async function post(path: string, body: unknown, token: string | null = TOKEN, base = url): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
  return { status: response.status, json: (await response.json()) as Record<string, unknown> }
}

function pre(sessionId: string, tool: string, input: Record<string, unknown>, cwd = project): Record<string, unknown> {
  return { session_id: sessionId, cwd, hook_event_name: 'PreToolUse', permission_mode: 'default', tool_name: tool, tool_input: input, tool_use_id: `toolu_${tool}` }
}

const bash = (command: string): Record<string, unknown> => ({ command, description: 'run it' })

describe('who may post', () => {
  it('answers /healthz without a token', async () => {
    const response = await fetch(`${url}/healthz`)
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ status: 'serving', version: HOOKD_VERSION })
  })

  it('refuses a request without the token, or with another one, and says what to send', async () => {
    const none = await post('/claude-code/guard', pre(session(), 'Bash', bash('ls')), null)
    expect(none.status).toBe(401)
    expect(none.json.error).toMatch(/^no authorization header was sent; send 'authorization: Bearer <token>'/)
    const wrong = await post('/claude-code/guard', pre(session(), 'Bash', bash('ls')), 'hkd_not-the-token-at-all-0123456789abcdef')
    expect(wrong.status).toBe(401)
    expect(wrong.json.error).toContain("the bearer token is not this sidecar's HTTP token")
    expect(reports).toContain(`http: POST /claude-code/guard: ${String(wrong.json.error)}`)
  })

  it('answers 404 for a path no agent uses, and says where agents post', async () => {
    const res = await post('/codex-someday/guard', {})
    expect(res.status).toBe(404)
    expect(res.json.error).toContain('agents post to /AGENT/HOOK[,HOOK...] with AGENT one of claude-code, codex, gemini, copilot, cursor')
  })

  it('bounds the body: too large is 413, too deep is 400, not JSON is 400', async () => {
    const big = await post('/claude-code/guard', `{"x":"${'a'.repeat(9 * 1024 * 1024)}"}`)
    expect(big.status).toBe(413)
    expect(big.json.error).toContain('over the limit of 8388608 bytes')
    const deep = await post('/claude-code/guard', `${'['.repeat(100)}${']'.repeat(100)}`)
    expect(deep.status).toBe(400)
    expect(deep.json.error).toContain('nested too deep (more than 64 levels of arrays and objects)')
    const junk = await post('/claude-code/guard', 'hello')
    expect(junk.status).toBe(400)
    expect(junk.json.error).toContain('the hook event is not valid JSON')
  })
})

describe('PreToolUse -> beforeToolExecute', () => {
  it("a hook's refusal is Claude Code's deny, with the hook's reason", async () => {
    const res = await post('/claude-code/profile/strict', pre(session(), 'Bash', bash('rm -rf victim')))
    expect(res).toEqual({
      status: 200,
      json: { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'refused by the user' } },
    })
  })

  it("ctx.confirm becomes Claude Code's own permission prompt: ask, with the hook's title and body", async () => {
    const res = await post('/claude-code/guard', pre(session(), 'Bash', bash('rm -rf victim')))
    expect(res.json).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'ask',
        permissionDecisionReason: "Dangerous command: rm -rf victim (asked by hookd hook 'guard')",
      },
    })
  })

  it('in a permission mode that never asks, a confirm is answered no: the hook decides', async () => {
    const res = await post('/claude-code/guard', { ...pre(session(), 'Bash', bash('rm -rf victim')), permission_mode: 'bypassPermissions' })
    expect(res.json.hookSpecificOutput).toMatchObject({ permissionDecision: 'deny', permissionDecisionReason: 'refused by the user' })
  })

  it('a harmless call gets no opinion: Claude Code applies its own rules', async () => {
    expect((await post('/claude-code/guard,https-only', pre(session(), 'Bash', bash('ls -la')))).json).toEqual({})
  })

  it('rewritten canonical arguments go back into the native input, keeping the native fields', async () => {
    const shell = await post('/claude-code/rewrite-shell', pre(session(), 'Bash', bash('ls')))
    expect(shell.json).toEqual({ hookSpecificOutput: { hookEventName: 'PreToolUse', updatedInput: { command: 'echo rewritten: ls', description: 'run it' } } })
    const web = await post('/claude-code/https-only', pre(session(), 'WebFetch', { url: 'http://example.com/a', prompt: 'summarise' }))
    expect(web.json).toEqual({ hookSpecificOutput: { hookEventName: 'PreToolUse', updatedInput: { url: 'https://example.com/a', prompt: 'summarise' } } })
  })

  it('a rewrite the native tool cannot take is refused, naming the field', async () => {
    const res = await post('/claude-code/bad-rewrite', pre(session(), 'Bash', bash('ls')))
    expect(res.json.hookSpecificOutput).toMatchObject({ permissionDecision: 'deny' })
    expect(String((res.json.hookSpecificOutput as Record<string, unknown>).permissionDecisionReason)).toBe(
      "hookd refused this call: the rewritten shell arguments.command: Invalid input: expected string, received number, so Claude Code's Bash cannot take them; fix the hook that rewrites shell",
    )
  })

  it('hooks see canonical names and workdir-relative paths, the native call beside them, and files of the workdir only', async () => {
    const id = session()
    const plain = await post('/claude-code/peek', pre(id, 'Read', { file_path: join(project, 'notes.txt') }))
    expect(plain.json).toEqual({})
    const secret = await post('/claude-code/peek', pre(id, 'Read', { file_path: join(project, 'keys.txt') }))
    expect(secret.json.hookSpecificOutput).toMatchObject({ permissionDecision: 'deny', permissionDecisionReason: 'keys.txt holds a secret' })
    expect(reports).toContain(`claude-code session ${id}: [peek] native claude-code Read ${join(project, 'notes.txt')}`)
    const outside = await post('/claude-code/escape', pre(session(), 'Bash', bash('ls')))
    expect((outside.json.hookSpecificOutput as Record<string, unknown>).permissionDecisionReason).toBe(
      "ctx.file.read('../outside.txt') refused: the path leads outside the workdir",
    )
  })

  it('a hook that cannot decide (stopped by its CPU limit) refuses the call', async () => {
    const res = await post('/claude-code/spin', pre(session(), 'Bash', bash('ls')))
    const out = res.json.hookSpecificOutput as Record<string, unknown>
    expect(out.permissionDecision).toBe('deny')
    expect(out.permissionDecisionReason).toBe("hookd refused the call: hook 'spin' could not decide (it ran past its CPU time limit)")
  }, 30_000)

  it('a declared hook that never loaded refuses every call until it loads (the front door fails closed on a hook\'s own failure); with "onError": "skip" it is skipped', async () => {
    const refused = await post('/claude-code/guard,broken', pre(session(), 'Bash', bash('ls')))
    expect((refused.json.hookSpecificOutput as Record<string, unknown>).permissionDecisionReason).toBe("hookd refused the call: hook 'broken' could not decide (it did not load)")
    expect(reports.join('\n')).toMatch(/hook 'broken': SyntaxError/)
    const skipped = await post('/claude-code/guard,broken-lenient', pre(session(), 'Bash', bash('ls')))
    expect(skipped.json).toEqual({})
    const res = await post('/claude-code/guard,broken-strict', pre(session(), 'Bash', bash('ls')))
    const out = res.json.hookSpecificOutput as Record<string, unknown>
    expect(out.permissionDecision).toBe('deny')
    expect(out.permissionDecisionReason).toBe("hookd refused the call: hook 'broken-strict' could not decide (it did not load)")
  })

  it('an unknown hook, a bad cwd or a bad profile refuses the call and says why', async () => {
    const reason = async (path: string, event: unknown): Promise<unknown> => ((await post(path, event)).json.hookSpecificOutput as Record<string, unknown>).permissionDecisionReason
    expect(await reason('/claude-code/gaurd', pre(session(), 'Bash', bash('ls')))).toBe(
      `hookd could not check this call, so it is refused: unknown hook 'gaurd' in ${hooks} (available: audit, bad-rewrite, broken, broken-lenient, broken-strict, escape, fetcher, guard, https-only, lifecycle, peek, rewrite-shell, shout, spin, today)`,
    )
    expect(await reason('/claude-code/guard', pre(session(), 'Bash', bash('ls'), 'relative/dir'))).toBe(
      "hookd could not check this call, so it is refused: the event's cwd 'relative/dir' is not an absolute path; hookd needs the session's folder to confine its hooks' files",
    )
    expect(await reason('/claude-code/guard', pre(session(), 'Bash', bash('ls'), '/'))).toContain("the event's cwd '/' is the file system's root")
    expect(await reason('/claude-code/profile/typo', pre(session(), 'Bash', bash('ls')))).toBe(
      'hookd could not check this call, so it is refused: profile typo.profile.json.confirm: Invalid option: expected one of "ask"|"allow"|"deny"',
    )
    expect(await reason('/claude-code/profile/none', pre(session(), 'Bash', bash('ls')))).toContain("profile 'none' cannot be read (no such file)")
  })

  it("ctx.http.fetch follows the profile's origins", async () => {
    const reason = async (path: string): Promise<unknown> => ((await post(path, pre(session(), 'Bash', bash('ls')))).json.hookSpecificOutput as Record<string, unknown>).permissionDecisionReason
    expect(await reason('/claude-code/profile/fetching')).toBe(`ctx.http.fetch('${originUrl}/x') refused: origin ${originUrl} is not allowed (allowed origins: none)`)
    expect(await reason('/claude-code/profile/fetching-ok')).toBe('origin says hi')
  })
})

describe('PostToolUse -> afterToolExecute', () => {
  const bashResponse = { stdout: 'hello', stderr: '', interrupted: false, isImage: false, noOutputExpected: false }

  it("a rewritten result goes back in the tool's own shape", async () => {
    const res = await post('/claude-code/shout', { ...pre(session(), 'Bash', bash('echo hello')), hook_event_name: 'PostToolUse', tool_response: bashResponse })
    expect(res.json).toEqual({ hookSpecificOutput: { hookEventName: 'PostToolUse', updatedToolOutput: { ...bashResponse, stdout: 'HELLO' } } })
    const read = {
      type: 'text',
      file: { filePath: join(project, 'notes.txt'), content: 'plain notes\n', numLines: 1, startLine: 1, totalLines: 1 },
    }
    const res2 = await post('/claude-code/shout', { ...pre(session(), 'Read', { file_path: join(project, 'notes.txt') }), hook_event_name: 'PostToolUse', tool_response: read })
    expect(res2.json).toEqual({ hookSpecificOutput: { hookEventName: 'PostToolUse', updatedToolOutput: { ...read, file: { ...read.file, content: 'PLAIN NOTES\n' } } } })
  })

  it('where the shape cannot carry the text, the model reads it as additional context', async () => {
    const write = { type: 'create', filePath: join(project, 'new.txt'), content: 'x', structuredPatch: [], originalFile: null, userModified: false }
    const res = await post('/claude-code/shout', { ...pre(session(), 'Write', { file_path: join(project, 'new.txt'), content: 'x' }), hook_event_name: 'PostToolUse', tool_response: write })
    expect(res.json).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PostToolUse',
        additionalContext: `hookd's hooks rewrote the result of this tool call; read it as:\nFILE CREATED SUCCESSFULLY AT: ${join(project, 'new.txt').toUpperCase()}`,
      },
    })
    const failed = await post('/claude-code/shout', { ...pre(session(), 'Bash', bash('false')), hook_event_name: 'PostToolUseFailure', error: 'Exit code 1' })
    expect(failed.json).toEqual({
      hookSpecificOutput: { hookEventName: 'PostToolUseFailure', additionalContext: "hookd's hooks rewrote the result of this tool call; read it as:\nEXIT CODE 1" },
    })
  })

  it('no hook on the point: no opinion, and no call into the sandbox', async () => {
    const res = await post('/claude-code/guard', { ...pre(session(), 'Bash', bash('echo hello')), hook_event_name: 'PostToolUse', tool_response: bashResponse })
    expect(res.json).toEqual({})
  })
})

describe('the run: one Claude Code session, one hookd session', () => {
  const notes = (id: string): string[] => reports.filter((l) => l.startsWith(`claude-code session ${id}: [lifecycle] notify`)).map((l) => l.slice(l.indexOf('notify: ') + 8))
  const event = (id: string, name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({ session_id: id, cwd: project, hook_event_name: name, ...extra })

  it('beforeRun once at the first event, afterRun once at Stop; SessionEnd after Stop adds nothing', async () => {
    const id = session()
    await post('/claude-code/lifecycle', event(id, 'UserPromptSubmit', { prompt: 'do it' }))
    await post('/claude-code/lifecycle', pre(id, 'Bash', bash('ls')))
    await post('/claude-code/lifecycle', pre(id, 'Bash', bash('pwd')))
    await post('/claude-code/lifecycle', event(id, 'Stop', { stop_hook_active: false }))
    await post('/claude-code/lifecycle', event(id, 'SessionEnd', { reason: 'other' }))
    expect(notes(id)).toEqual([`beforeRun: ${id} claude-code`, 'afterRun: end_turn'])
  })

  it('the next prompt starts the next run; SessionEnd without Stop ends it as interrupted, StopFailure as error', async () => {
    const id = session()
    await post('/claude-code/lifecycle', event(id, 'UserPromptSubmit', { prompt: 'one' }))
    await post('/claude-code/lifecycle', event(id, 'StopFailure', { error: 'unknown' }))
    await post('/claude-code/lifecycle', event(id, 'UserPromptSubmit', { prompt: 'two' }))
    await post('/claude-code/lifecycle', event(id, 'SessionEnd', { reason: 'other' }))
    expect(notes(id)).toEqual([`beforeRun: ${id} claude-code`, 'afterRun: error', `beforeRun: ${id} claude-code`, 'afterRun: interrupted'])
  })

  it('a SessionStart that reaches hookd (a command hook posting it) opens the run; the prompt then adds no second beforeRun', async () => {
    const id = session()
    await post('/claude-code/lifecycle', event(id, 'SessionStart', { source: 'startup', model: 'claude-test' }))
    await post('/claude-code/lifecycle', event(id, 'UserPromptSubmit', { prompt: 'go' }))
    await post('/claude-code/lifecycle', event(id, 'Stop'))
    expect(notes(id)).toEqual([`beforeRun: ${id} claude-code`, 'afterRun: end_turn'])
  })

  it('a session nobody ends is ended when idle', async () => {
    // A sidecar of its own, so that a short idle time cannot end the other tests' runs on a slow machine.
    const quick = await Sidecar.create({ hooks, workers: 1, watch: false })
    try {
      const quickUrl = await quick.listenHttp('127.0.0.1', 0, { token: TOKEN, report: (line) => reports.push(line), runs: { idleMs: 300 } })
      const id = session()
      await post('/claude-code/lifecycle', event(id, 'UserPromptSubmit', { prompt: 'then silence' }), TOKEN, quickUrl)
      await expect.poll(() => notes(id), { timeout: 20_000, interval: 100 }).toEqual([`beforeRun: ${id} claude-code`, 'afterRun: interrupted'])
      expect(reports.some((l) => l.includes(`session ${id} ended (afterRun: interrupted): no event for`))).toBe(true)
    } finally {
      await quick.stop()
    }
  }, 60_000)

  it('concurrent first events still run beforeRun once, before any of them', async () => {
    const id = session()
    await Promise.all([1, 2, 3, 4].map((i) => post('/claude-code/lifecycle', pre(id, 'Bash', bash(`echo ${i}`)))))
    await post('/claude-code/lifecycle', event(id, 'Stop'))
    expect(notes(id)).toEqual([`beforeRun: ${id} claude-code`, 'afterRun: end_turn'])
  })

  it('two sessions, or two folders, never share a run', async () => {
    const [a, b] = [session(), session()]
    const other = await mkdtemp(join(tmpdir(), 'hookd-front-door-other-'))
    await post('/claude-code/lifecycle', event(a, 'UserPromptSubmit', { prompt: 'a' }))
    await post('/claude-code/lifecycle', event(b, 'UserPromptSubmit', { prompt: 'b' }))
    await post('/claude-code/lifecycle', { ...event(a, 'UserPromptSubmit', { prompt: 'a elsewhere' }), cwd: other })
    await post('/claude-code/lifecycle', event(a, 'Stop'))
    expect(notes(a)).toEqual([`beforeRun: ${a} claude-code`, `beforeRun: ${a} claude-code`, 'afterRun: end_turn'])
    expect(notes(b)).toEqual([`beforeRun: ${b} claude-code`])
    await rm(other, { recursive: true, force: true })
  })

  it("the example audit hook logs each call and notifies at the end, on hookd's stderr", async () => {
    const id = session()
    await post('/claude-code/audit', pre(id, 'Bash', bash('ls')))
    await post('/claude-code/audit', event(id, 'Stop'))
    const mine = reports.filter((l) => l.startsWith(`claude-code session ${id}: [audit]`))
    expect(mine).toEqual([`claude-code session ${id}: [audit] tool call toolu_Bash shell`, `claude-code session ${id}: [audit] notify: audit: session ${id} ended: end_turn`])
  })

  it('UserPromptSubmit runs beforeModelRequest: what a hook adds to the system prompt becomes context', async () => {
    const res = await post('/claude-code/today', event(session(), 'UserPromptSubmit', { prompt: 'what day is it?' }))
    expect(res.json).toEqual({ hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: `Today is ${new Date().toISOString().slice(0, 10)}.` } })
  })
})

describe('describe, for hookd setup', () => {
  it('GET lists the hooks of a route and the Claude Code events they need', async () => {
    const response = await fetch(`${url}/claude-code/guard,shout`, { headers: { authorization: `Bearer ${TOKEN}` } })
    expect(await response.json()).toEqual({
      agent: 'claude-code',
      route: 'guard,shout',
      hooks: [
        { name: 'guard', status: 'ready', points: ['beforeToolExecute', 'afterRun'] },
        { name: 'shout', status: 'ready', points: ['afterToolExecute'] },
      ],
      // guard may ask (ctx.confirm): the events that say what became of an ask come with it.
      events: ['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PermissionDenied', 'Stop', 'StopFailure', 'SessionEnd'],
    })
    const unknown = await fetch(`${url}/claude-code/nope`, { headers: { authorization: `Bearer ${TOKEN}` } })
    expect(unknown.status).toBe(404)
  })
})

describe('a symbolic link out of the workdir', () => {
  it('is refused by the host handlers, which follow real paths', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hookd-front-door-link-'))
    await mkdir(join(dir, 'inside'))
    await writeFile(join(dir, 'outside.txt'), 'SECRET outside\n')
    await symlink(join(dir, 'outside.txt'), join(dir, 'inside', 'link.txt'))
    const res = await post('/claude-code/peek', pre(session(), 'Read', { file_path: join(dir, 'inside', 'link.txt') }, join(dir, 'inside')))
    expect(JSON.stringify(res.json)).not.toContain('holds a secret')
    expect(reports.some((l) => l.includes("ctx.file.read('link.txt') refused: the path leads outside the workdir through a symbolic link"))).toBe(true)
    await rm(dir, { recursive: true, force: true })
  })
})
