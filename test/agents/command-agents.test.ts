/**
 * The front door's routes for the agents whose hooks are commands (Codex, Gemini CLI, Copilot CLI,
 * Cursor), with each agent's measured event JSON, against a real sidecar: what the agent would read
 * back, and the shim (bin/hookd-hook) between them, run by a real `sh`. The real CLIs drive the same
 * routes in command-clis-hookd.test.ts; Cursor's contract is in
 * cursor-contract.test.ts.
 */
import { execFileSync, spawn } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { answerProof, proofKey } from '../../src/sidecar/http/request-proof.js'
import { Sidecar } from '../../src/sidecar/sidecar.js'
import { EXAMPLE_HOOKS, hook, writeTree } from '../support/sidecar.js'
import { codexPatch as codexPatchToolUse, codexPre as codexPreToolUse, copilotPre as copilotPreToolUse, geminiBefore as geminiBeforeTool } from './support/agent-events.js'
import { ROOT } from './support/cli.js'
import { postEvent } from './support/front-door-post.js'

const TOKEN = 'hkd_command-agents-test-token-0123456789abcdefghij'
/**
 * The shim's three forms, which must answer alike: the compiled one `hookd setup` writes when the
 * install built it, the script under bash (its fast path), and the script over curl.
 */
const SHIMS: ReadonlyArray<{ form: string; path: string; env: Record<string, string> }> = [
  { form: 'compiled (build/hookd-hook)', path: join(ROOT, 'build', 'hookd-hook'), env: {} },
  { form: 'script over bash (bin/hookd-hook)', path: join(ROOT, 'bin', 'hookd-hook'), env: {} },
  { form: 'script over curl (bin/hookd-hook, HOOKD_HOOK_CURL=1)', path: join(ROOT, 'bin', 'hookd-hook'), env: { HOOKD_HOOK_CURL: '1' } },
]

let sidecar: Sidecar
let url = ''
let hooks = ''
let project = ''
let tokenFile = ''
let deadUrl = ''
const reports: string[] = []

async function example(name: string): Promise<Record<string, string>> {
  return { [`${name}/index.js`]: await readFile(join(EXAMPLE_HOOKS, name, 'index.js'), 'utf8') }
}

beforeAll(async () => {
  hooks = await writeTree({
    ...(await example('guard')),
    ...(await example('shout')),
    ...(await example('today')),
    ...(await example('https-only')),
    'rewrite-shell/index.js': hook({
      beforeToolExecute: `function (ctx, call) { if (call.name === 'shell') return { arguments: { ...call.arguments, command: 'echo rewritten: ' + call.arguments.command } } }`,
    }),
    'to-env/index.js': hook({
      beforeToolExecute: `function (ctx, call) {
        ctx.log('saw ' + call.name + ' ' + JSON.stringify(call.arguments))
        if (call.name === 'write_file' || call.name === 'edit_file') return { arguments: { ...call.arguments, path: 'safe/' + call.arguments.path } }
      }`,
    }),
    'lifecycle/index.js': hook({
      beforeRun: `function (ctx, run) { ctx.notify({ title: 'beforeRun', body: run.agentId + ' ' + run.sessionId }) }`,
      afterRun: `function (ctx, event) { ctx.notify({ title: 'afterRun', body: event.reason }) }`,
    }),
  })
  project = await mkdtemp(join(tmpdir(), 'hookd-command-agents-project-'))
  tokenFile = join(project, 'token')
  await writeFile(tokenFile, `${TOKEN}\n`, { mode: 0o600 })
  sidecar = await Sidecar.create({ hooks, workers: 1, watch: false })
  url = await sidecar.listenHttp('127.0.0.1', 0, { token: TOKEN, report: (line) => reports.push(line) })
  const dead = createServer()
  await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve))
  deadUrl = `http://127.0.0.1:${(dead.address() as AddressInfo).port}`
  await new Promise<void>((resolve) => dead.close(() => resolve()))
}, 60_000)

afterAll(async () => {
  await sidecar?.stop()
  await rm(hooks, { recursive: true, force: true })
  await rm(project, { recursive: true, force: true })
})

let sessions = 0
const session = (): string => `command-agents-${process.pid}-${++sessions}`

const post = (path: string, body: unknown): Promise<{ status: number; json: unknown }> => postEvent(url, TOKEN, path, body)

interface ShimRun {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs one form of the shim as an agent would: a process with the event on stdin. */
function runShim(form: (typeof SHIMS)[number], args: string[], event: unknown, env: Record<string, string> = {}, timeoutMs = 30_000): Promise<ShimRun> {
  return new Promise((resolve, reject) => {
    // Killed past timeoutMs: a shim that hangs shows as a signal, not as a test timeout.
    const child = spawn(form.path, args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...form.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'], timeout: timeoutMs })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()))
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
    child.on('error', reject)
    child.stdin.on('error', () => {})
    child.on('close', (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(typeof event === 'string' ? event : JSON.stringify(event))
  })
}

/** A server on loopback that answers each request with `respond`, for the shim's edges. */
async function rawServer(respond: (socket: import('node:net').Socket, request: string) => void): Promise<{ url: string; close: () => Promise<void> }> {
  const { createServer: createNetServer } = await import('node:net')
  const server = createNetServer((socket) => {
    socket.on('error', () => {})
    // Answers once the request's head is in (the shim may send it in several writes).
    let head = ''
    const onData = (chunk: Buffer): void => {
      head += chunk.toString('latin1')
      if (!head.includes('\r\n\r\n')) return
      socket.off('data', onData)
      respond(socket, head)
    }
    socket.on('data', onData)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

const codexPre = (id: string, command: string): Record<string, unknown> => codexPreToolUse(project, id, command)
const codexPatch = (id: string, patch: string): Record<string, unknown> => codexPatchToolUse(project, id, patch)
const geminiBefore = (id: string, tool: string, input: Record<string, unknown>): Record<string, unknown> => geminiBeforeTool(project, id, tool, input)
const copilotPre = (id: string, toolName: string, toolArgs: unknown): Record<string, unknown> => copilotPreToolUse(project, id, toolName, toolArgs)

it('the compiled shim was built: hookd setup writes it', async () => {
  const { shimPath, NATIVE_SHIM } = await import('../../src/agents/settings/shim-command.js')
  expect(shimPath()).toBe(NATIVE_SHIM)
  expect(NATIVE_SHIM).toBe(SHIMS[0]?.path)
})

describe.each(SHIMS)('the command shim, $form', (form) => {
  const shim = (args: string[], event: unknown, env: Record<string, string> = {}, timeoutMs?: number) => runShim(form, args, event, env, timeoutMs)

  it("posts the event with the token from a file and prints hookd's answer: exit 0, the agent's JSON on stdout", async () => {
    const out = await shim(['--token-file', tokenFile, `${url}/codex/guard`], codexPre(session(), 'rm -rf victim'))
    expect(out).toEqual({
      code: 0,
      stderr: '',
      stdout: `${JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'refused by the user' } })}\n`,
    })
  })

  it('prints nothing for no opinion, and takes the token from HOOKD_TOKEN too', async () => {
    expect(await shim([`${url}/codex/guard`], codexPre(session(), 'ls'), { HOOKD_TOKEN: TOKEN })).toEqual({ code: 0, stdout: '', stderr: '' })
  })

  it("fails closed in each agent's own way when hookd cannot be reached", async () => {
    const why = `hookd-hook: cannot reach hookd at ${deadUrl}/AGENT/guard (connection refused: is 'hookd serve --http' running?); the call is refused (hookd-hook fails closed)`
    const reason = (agent: string): string => why.replace('AGENT', agent)
    const run = (agent: string) => shim(['--token-file', tokenFile, `${deadUrl}/${agent}/guard`], {})
    expect(await run('codex')).toEqual({ code: 2, stdout: '', stderr: `${reason('codex')}\n` })
    expect(await run('gemini')).toEqual({ code: 2, stdout: '', stderr: `${reason('gemini')}\n` })
    expect(await run('copilot')).toEqual({ code: 0, stderr: '', stdout: `${JSON.stringify({ permissionDecision: 'deny', permissionDecisionReason: reason('copilot'), behavior: 'deny', message: reason('copilot') })}\n` })
    const cursor = reason('cursor')
    expect(await run('cursor')).toEqual({ code: 2, stderr: '', stdout: `${JSON.stringify({ continue: false, permission: 'deny', user_message: cursor, agent_message: cursor })}\n` })
  })

  it('with --fail-open lets the call through, saying why on stderr', async () => {
    const out = await shim(['--fail-open', '--token-file', tokenFile, `${deadUrl}/gemini/guard`], {})
    expect(out.code).toBe(0)
    expect(out.stdout).toBe('')
    expect(out.stderr).toContain('(connection refused: is \'hookd serve --http\' running?); letting the call through (--fail-open)')
  })

  it("refuses with hookd's own message when hookd answers an error, and without a token", async () => {
    const wrong = await shim([`${url}/codex/guard`], codexPre(session(), 'ls'), { HOOKD_TOKEN: 'hkd_wrong-token-0123456789abcdefghijklmnopqrstuv' })
    expect(wrong.code).toBe(2)
    expect(wrong.stderr).toContain(`hookd-hook: hookd at ${url}/codex/guard refused the token (HTTP 401): check the --token-file this entry names`)
    const none = await shim([`${url}/codex/guard`], codexPre(session(), 'ls'))
    expect(none.code).toBe(2)
    expect(none.stderr).toContain('hookd-hook: no token: pass --token-file FILE')
    const missing = await shim(['--token-file', join(project, 'nope'), `${url}/codex/guard`], codexPre(session(), 'ls'))
    expect(missing).toEqual({ code: 2, stdout: '', stderr: `hookd-hook: cannot read the token file ${join(project, 'nope')}; the call is refused (hookd-hook fails closed)\n` })
  })

  it('refuses a token file that is not a regular file at once, instead of waiting on it (a FIFO)', async () => {
    const fifo = join(project, `token-fifo-${form.form.replace(/\W+/g, '-')}`)
    execFileSync('mkfifo', [fifo])
    try {
      // Nobody writes to it: a shim that opened it to read would wait for a writer past the agent's
      // own hook timeout, and every agent here lets the call through then.
      const out = await shim(['--token-file', fifo, `${url}/codex/guard`], codexPre(session(), 'ls'), {}, 10_000)
      expect(out).toEqual({ code: 2, stdout: '', stderr: `hookd-hook: cannot read the token file ${fifo} (not a regular file); the call is refused (hookd-hook fails closed)\n` })
    } finally {
      await rm(fifo, { force: true })
    }
  })

  it("carries a route longer than its own buffers whole, and prints hookd's refusal of its unknown hook", async () => {
    const out = await shim(['--token-file', tokenFile, `${url}/codex/${'g'.repeat(9000)}`], codexPre(session(), 'ls'))
    expect(out).toMatchObject({ code: 0, stderr: '' })
    expect(JSON.parse(out.stdout)).toMatchObject({
      hookSpecificOutput: { permissionDecision: 'deny', permissionDecisionReason: expect.stringContaining(`unknown hook '${'g'.repeat(9000)}'`) },
    })
  })

  it('says what is wrong with its own arguments: exit 2 and a usage line', async () => {
    const bad = await shim(['--timeout', 'soon', '--token-file', tokenFile, `${url}/codex/guard`], {})
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("hookd-hook: --timeout needs a number of seconds, not 'soon'")
    expect(bad.stderr).toContain('usage: hookd-hook [--fail-open] [--token-file FILE] [--timeout SECONDS] URL')
    const unknown = await shim(['--bogus', `${url}/codex/guard`], {})
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('hookd-hook: unknown option --bogus')
    const notRoute = await shim(['--token-file', tokenFile, `${url}/codex`], {})
    expect(notRoute).toEqual({ code: 2, stdout: '', stderr: `hookd-hook: '${url}/codex' is not a front door route; write http://HOST:PORT/AGENT/HOOKS; the call is refused (hookd-hook fails closed)\n` })
  })

  it('refuses when hookd does not answer within --timeout, or its answer is cut short or is not HTTP', async () => {
    const silent = await rawServer(() => {})
    const short = await rawServer((socket) => socket.end('HTTP/1.1 200 OK\r\ncontent-length: 50\r\n\r\n{"hookSpecificOutput":'))
    const garbage = await rawServer((socket) => socket.end('SSH-2.0-OpenSSH\r\n'))
    // Answers at once, then trickles header lines forever: only a deadline on the whole answer stops it.
    const trickle = await rawServer((socket) => {
      socket.write('HTTP/1.1 200 OK\r\n')
      const timer = setInterval(() => socket.write(`x-wait: ${Date.now()}\r\n`), 100)
      socket.on('close', () => clearInterval(timer))
    })
    try {
      const trickled = await shim(['--timeout', '1', '--token-file', tokenFile, `${trickle.url}/codex/guard`], codexPre(session(), 'ls'))
      expect(trickled).toEqual({ code: 2, stdout: '', stderr: `hookd-hook: cannot reach hookd at ${trickle.url}/codex/guard (no answer within 1 s); the call is refused (hookd-hook fails closed)\n` })
      const slow = await shim(['--timeout', '0.5', '--token-file', tokenFile, `${silent.url}/codex/guard`], codexPre(session(), 'ls'))
      expect(slow).toEqual({ code: 2, stdout: '', stderr: `hookd-hook: cannot reach hookd at ${silent.url}/codex/guard (no answer within 0.5 s); the call is refused (hookd-hook fails closed)\n` })
      const cut = await shim(['--token-file', tokenFile, `${short.url}/codex/guard`], codexPre(session(), 'ls'))
      expect(cut.code).toBe(2)
      expect(cut.stdout).toBe('')
      if (form.env.HOOKD_HOOK_CURL === undefined) expect(cut.stderr).toContain('(the answer was cut short)')
      const notHttp = await shim(['--token-file', tokenFile, `${garbage.url}/gemini/guard`], codexPre(session(), 'ls'))
      expect(notHttp.code).toBe(2)
      expect(notHttp.stdout).toBe('')
    } finally {
      await Promise.all([silent.close(), short.close(), garbage.close(), trickle.close()])
    }
  })

  it('refuses whatever answers on the port without proving it is hookd, and never sends it the token', async () => {
    const requests: string[] = []
    // A squatter on the port while hookd is down: "no opinion" (204), an allow, an empty answer.
    const answers = [
      'HTTP/1.1 204 No Content\r\n\r\n',
      'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}',
      'HTTP/1.1 200 OK\r\ncontent-length: 73\r\nx-hookd-proof: 0000000000000000000000000000000000000000000000000000000000000000\r\n\r\n{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'.replace('73', '82'),
    ]
    for (const answer of answers) {
      const squatter = await rawServer((socket, request) => {
        requests.push(request)
        socket.end(answer)
      })
      try {
        const out = await shim(['--token-file', tokenFile, `${squatter.url}/codex/guard`], codexPre(session(), 'rm -rf ~'))
        const status = /^HTTP\/1\.1 (\d+)/.exec(answer)?.[1]
        expect(out).toEqual({
          code: 2,
          stdout: '',
          stderr: `hookd-hook: the answer from ${squatter.url}/codex/guard does not prove it came from hookd (HTTP ${status}): something other than hookd may be listening on that port; the call is refused (hookd-hook fails closed)\n`,
        })
      } finally {
        await squatter.close()
      }
    }
    expect(requests.length).toBe(answers.length)
    for (const request of requests) {
      expect(request).toMatch(/^authorization: hookd-hmac ts=\d+,nonce=[0-9a-f]{32},body=[0-9a-f]{64},mac=[0-9a-f]{64}\r$/im)
      expect(request).not.toContain(TOKEN)
    }
  })

  it("quotes an error answer without its control characters, and refuses a URL with a space", async () => {
    const hostile = await rawServer((socket, request) => {
      // C0 escapes, and what hookd's own text.ts also keeps off a terminal: a C1 CSI (U+009B), a right-to-left
      // override (U+202E), a line separator (U+2028) and an isolate (U+2066), next to text that must stay.
      // The answer proves itself as hookd's would (hookd's own errors quote what hooks and agents sent).
      const body = '{"error":"\u001b]0;pwned\u0007\u001b[2Jwiped\r\nfake line \u009b2J\u202eenil\u2028x\u2066y, été ✓"}'
      const nonce = /nonce=([0-9a-f]+)/.exec(request)?.[1] as string
      const proof = answerProof(proofKey(TOKEN), nonce, 500, body)
      socket.end(`HTTP/1.1 500 Internal Server Error\r\ncontent-length: ${Buffer.byteLength(body)}\r\nx-hookd-proof: ${proof}\r\n\r\n${body}`)
    })
    try {
      const out = await shim(['--token-file', tokenFile, `${hostile.url}/codex/guard`], codexPre(session(), 'ls'))
      expect(out.code).toBe(2)
      expect(out.stderr).toMatch(/^hookd-hook: hookd answered HTTP 500: .*wiped.*fake line .*enil.*x.*y, été ✓; the call is refused \(hookd-hook fails closed\)\n$/)
      expect(out.stderr.slice(0, -1)).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/)
    } finally {
      await hostile.close()
    }
    const spaced = await shim(['--token-file', tokenFile, `${url}/codex/guard HTTP/1.0\r\nX: y`], {})
    expect(spaced).toEqual({ code: 2, stdout: '', stderr: 'hookd-hook: the URL holds a space or a control character; write http://HOST:PORT/AGENT/HOOKS; the call is refused (hookd-hook fails closed)\n' })
  })

  it('carries a large event and a large answer whole, counting bytes, not characters', async () => {
    const big = `héllo wörld ✓ ${'x'.repeat(300_000)} 🦀`
    const out = await shim(['--token-file', tokenFile, `${url}/codex/shout`], { ...codexPre(session(), 'echo'), hook_event_name: 'PostToolUse', tool_response: big }, { LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' })
    expect(out.code).toBe(0)
    expect(out.stderr).toBe('')
    expect(JSON.parse(out.stdout)).toEqual({ decision: 'block', reason: big.toUpperCase() })
    // Agents run hooks in the user's locale: bash then counts characters unless told otherwise.
    const utf8 = { LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' }
    const small = await shim(['--token-file', tokenFile, `${url}/codex/shout`], { ...codexPre(session(), 'echo'), hook_event_name: 'PostToolUse', tool_response: 'é✓🦀 done' }, utf8)
    expect(JSON.parse(small.stdout)).toEqual({ decision: 'block', reason: 'É✓🦀 DONE' })
  })

  it('hands an https route, or one on another host, to the script, which asks curl', async () => {
    const out = await shim(['--timeout', '2', '--token-file', tokenFile, 'https://127.0.0.1:1/codex/guard'], codexPre(session(), 'ls'))
    expect(out).toEqual({ code: 2, stdout: '', stderr: "hookd-hook: cannot reach hookd at https://127.0.0.1:1/codex/guard (connection refused: is 'hookd serve --http' running?); the call is refused (hookd-hook fails closed)\n" })
  })
})

describe('Codex', () => {
  it('guard refuses rm -rf: Codex cannot ask, so the confirm is answered no and the hook refuses', async () => {
    expect((await post('/codex/guard', codexPre(session(), 'rm -rf victim'))).json).toEqual({
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'refused by the user' },
    })
  })

  it('a rewrite is "allow" with updatedInput; no opinion is an empty answer (204)', async () => {
    expect((await post('/codex/rewrite-shell', codexPre(session(), 'ls'))).json).toEqual({
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', updatedInput: { command: 'echo rewritten: ls' } },
    })
    expect(await post('/codex/guard', codexPre(session(), 'ls'))).toEqual({ status: 204, json: undefined })
  })

  it('a rewritten result replaces the one the model reads (decision block), and a prompt gets context', async () => {
    const id = session()
    const post1 = { ...codexPre(id, 'echo hi'), hook_event_name: 'PostToolUse', tool_response: 'Output:\nhi\n' }
    expect((await post('/codex/shout', post1)).json).toEqual({ decision: 'block', reason: 'OUTPUT:\nHI\n' })
    const prompt = { session_id: id, turn_id: 't1', cwd: project, hook_event_name: 'UserPromptSubmit', model: 'gpt-5.5', permission_mode: 'default', prompt: 'hi' }
    const today = new Date().toISOString().slice(0, 10)
    expect((await post('/codex/today', prompt)).json).toEqual({ hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: `Today is ${today}.` } })
  })

  it("apply_patch reaches hooks as write_file or edit_file, and a rewrite goes back as a patch", async () => {
    const id = session()
    const add = await post('/codex/to-env', codexPatch(id, '*** Begin Patch\n*** Add File: notes.txt\n+one\n+two\n*** End Patch\n'))
    expect(add.json).toEqual({
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow', updatedInput: { command: '*** Begin Patch\n*** Add File: safe/notes.txt\n+one\n+two\n*** End Patch\n' } },
    })
    const update = await post('/codex/to-env', codexPatch(id, '*** Begin Patch\n*** Update File: a.txt\n@@\n keep\n-old\n+new\n*** End Patch\n'))
    expect(update.json).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'allow',
        updatedInput: { command: '*** Begin Patch\n*** Update File: safe/a.txt\n@@\n-keep\n-old\n+keep\n+new\n*** End Patch\n' },
      },
    })
    const two = await post('/codex/to-env', codexPatch(id, '*** Begin Patch\n*** Delete File: a.txt\n*** Delete File: b.txt\n*** End Patch\n'))
    expect(two.status).toBe(204)
    const saw = reports.filter((l) => l.startsWith(`codex session ${id}: [to-env] saw`))
    expect(saw).toEqual([
      `codex session ${id}: [to-env] saw write_file {"path":"notes.txt","content":"one\\ntwo\\n"}`,
      `codex session ${id}: [to-env] saw edit_file {"path":"a.txt","old_string":"keep\\nold","new_string":"keep\\nnew"}`,
      `codex session ${id}: [to-env] saw apply_patch {"command":"*** Begin Patch\\n*** Delete File: a.txt\\n*** Delete File: b.txt\\n*** End Patch\\n"}`,
    ])
  })

  it('one session is one run: beforeRun at its first event, afterRun at Stop, once each', async () => {
    const id = session()
    const base = { session_id: id, cwd: project, model: 'gpt-5.5', permission_mode: 'default' }
    for (const event of [
      { ...base, hook_event_name: 'SessionStart', source: 'startup' },
      { ...base, hook_event_name: 'UserPromptSubmit', turn_id: 't1', prompt: 'go' },
      codexPre(id, 'ls'),
      { ...base, hook_event_name: 'Stop', turn_id: 't1', stop_hook_active: false, last_assistant_message: 'done' },
      { session_id: id, cwd: project, hook_event_name: 'SessionEnd', reason: 'other' },
    ]) {
      expect((await post('/codex/lifecycle', event)).status).toBe(204)
    }
    await expect.poll(() => reports.filter((l) => l.startsWith(`codex session ${id}: [lifecycle] notify`)), { timeout: 10_000 }).toEqual([
      `codex session ${id}: [lifecycle] notify: beforeRun: codex ${id}`,
      `codex session ${id}: [lifecycle] notify: afterRun: end_turn`,
    ])
  })

  it('a PreToolUse hookd cannot check is refused, saying why; another event is an error the shim refuses', async () => {
    const bad = await post('/codex/guard', { ...codexPre(session(), 'ls'), cwd: 'relative/dir' })
    expect(bad.json).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: "hookd could not check this call, so it is refused: the event's cwd 'relative/dir' is not an absolute path; hookd needs the session's folder to confine its hooks' files",
      },
    })
    const prompt = await post('/codex/guard', { session_id: session(), cwd: project, hook_event_name: 'UserPromptSubmit' })
    expect(prompt).toEqual({ status: 400, json: { error: 'the UserPromptSubmit event.prompt: Invalid input: expected string, received undefined; is this a Codex hook event?' } })
  })
})

describe('Gemini CLI', () => {
  it('guard refuses rm -rf with decision deny (Gemini CLI cannot ask from a hook); a rewrite is the whole tool_input', async () => {
    expect((await post('/gemini/guard', geminiBefore(session(), 'run_shell_command', { command: 'rm -rf victim' }))).json).toEqual({ decision: 'deny', reason: 'refused by the user' })
    const rewrite = await post('/gemini/rewrite-shell', geminiBefore(session(), 'run_shell_command', { command: 'ls', dir_path: 'sub', description: 'list' }))
    expect(rewrite.json).toEqual({ hookSpecificOutput: { hookEventName: 'BeforeTool', tool_input: { command: 'echo rewritten: ls', dir_path: 'sub', description: 'list' } } })
  })

  it('file tools map with their paths: a rewritten path goes back absolute', async () => {
    const id = session()
    const res = await post('/gemini/to-env', geminiBefore(id, 'write_file', { file_path: join(project, 'x.txt'), content: 'x' }))
    expect(res.json).toEqual({ hookSpecificOutput: { hookEventName: 'BeforeTool', tool_input: { file_path: join(project, 'safe', 'x.txt'), content: 'x' } } })
    expect(reports).toContain(`gemini session ${id}: [to-env] saw write_file {"path":"x.txt","content":"x"}`)
  })

  it('a rewritten result replaces the result (decision deny, which Gemini CLI shows as an error); a prompt gets context', async () => {
    const id = session()
    const after = { ...geminiBefore(id, 'run_shell_command', { command: 'echo hi' }), hook_event_name: 'AfterTool', tool_response: { llmContent: 'Output: hi', returnDisplay: 'hi' } }
    expect((await post('/gemini/shout', after)).json).toEqual({ decision: 'deny', reason: 'OUTPUT: HI' })
    const prompt = { session_id: id, cwd: project, hook_event_name: 'BeforeAgent', timestamp: 'x', prompt: 'hi' }
    expect((await post('/gemini/today', prompt)).json).toMatchObject({ hookSpecificOutput: { hookEventName: 'BeforeAgent', additionalContext: expect.stringMatching(/^Today is /) } })
  })
})

describe('Copilot CLI', () => {
  it("guard's confirm is Copilot's ask, with the hook's question as the reason", async () => {
    const res = await post('/copilot/guard?event=preToolUse', copilotPre(session(), 'bash', { command: 'rm -rf victim', description: 'clean' }))
    expect(res.json).toEqual({ permissionDecision: 'ask', permissionDecisionReason: "Dangerous command: rm -rf victim (asked by hookd hook 'guard')" })
  })

  it('a rewrite is allow + modifiedArgs; a patch given as a bare string goes back as one', async () => {
    const shell = await post('/copilot/rewrite-shell?event=preToolUse', copilotPre(session(), 'bash', { command: 'ls', description: 'list' }))
    expect(shell.json).toEqual({ permissionDecision: 'allow', modifiedArgs: { command: 'echo rewritten: ls', description: 'list' } })
    const patch = await post('/copilot/to-env?event=preToolUse', copilotPre(session(), 'apply_patch', '*** Begin Patch\n*** Add File: b.txt\n+hello\n*** End Patch\n'))
    expect(patch.json).toEqual({ permissionDecision: 'allow', modifiedArgs: '*** Begin Patch\n*** Add File: safe/b.txt\n+hello\n*** End Patch\n' })
    const create = await post('/copilot/to-env?event=preToolUse', copilotPre(session(), 'create', { path: join(project, 'c.txt'), file_text: 'c' }))
    expect(create.json).toEqual({ permissionDecision: 'allow', modifiedArgs: { path: join(project, 'safe', 'c.txt'), file_text: 'c' } })
  })

  it('a rewritten result is modifiedResult, which Copilot gives the model', async () => {
    const event = { ...copilotPre(session(), 'bash', { command: 'echo hi' }), toolResult: { resultType: 'success', textResultForLlm: 'hi\n' } }
    expect((await post('/copilot/shout?event=postToolUse', event)).json).toEqual({ modifiedResult: { resultType: 'success', textResultForLlm: 'HI\n' } })
  })

  it('an event posted without ?event= is an error, and says how to post it', async () => {
    const res = await post('/copilot/guard', copilotPre(session(), 'bash', { command: 'ls' }))
    expect(res.status).toBe(400)
    expect(res.json).toEqual({ error: expect.stringContaining("Copilot's hook events do not name themselves: post each to its route with ?event=<name>") })
  })
})

describe('what a route needs', () => {
  it("GET names the agent's own events for the hooks' points", async () => {
    const get = async (path: string): Promise<unknown> => (await (await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } })).json() as { events: unknown }).events
    expect(await get('/codex/guard')).toEqual(['UserPromptSubmit', 'PreToolUse', 'Stop', 'Interrupt', 'SessionEnd'])
    expect(await get('/codex/shout')).toEqual(['PostToolUse'])
    expect(await get('/gemini/guard,today')).toEqual(['BeforeAgent', 'BeforeTool', 'AfterAgent', 'SessionEnd'])
    expect(await get('/copilot/rewrite-shell,shout')).toEqual(['preToolUse', 'postToolUse', 'postToolUseFailure'])
    expect(await get('/cursor/guard')).toEqual(['beforeSubmitPrompt', 'beforeShellExecution', 'beforeMCPExecution', 'beforeReadFile', 'stop'])
  })
})
