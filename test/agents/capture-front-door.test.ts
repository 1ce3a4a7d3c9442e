/**
 * Real agents' traffic as test cases (issue 30, item 5): a real `hookd serve --http ... --capture DIR`
 * process takes a Claude Code shaped post (as its http hooks send it), one through a profile route, and
 * a Codex event through the shim (bin/hookd-hook, which proves the token with hookd-hmac); each event
 * is written as an agent-event case beside the point calls it made, in DIR/AGENT/ROUTE/, 0600 in 0700
 * folders, with the planted secrets (the HTTP token, a GitHub token, an Anthropic key, a secret-named
 * env value of the sidecar) redacted. `hookd test --cases DIR` replays them all green, through each
 * agent's dialect for the events, and fails them once the hook answers differently. The caps hold a
 * flood to what they allow, and say how many cases were not written; a hostile event's name, `?event=`
 * and session id make no path outside DIR. The Claude Agent SDK's sessions come over gRPC: their point
 * calls are captured as point cases, redacted too. Agent-event cases also run from a hook's tests/.
 */
import { spawn } from 'node:child_process'
import { mkdir, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hookdHooks } from '../../src/agents/claude-agent-sdk/index.js'
import { ROOT, runInProcess, type Serving, serveInProcess, startServe, stopProcess } from '../support/processes.js'
import { hook, writeTree } from '../support/sidecar.js'
import { claudePre, codexPre } from './support/agent-events.js'
import { postEvent } from './support/front-door-post.js'

const GUARD = (word: string): string =>
  hook({
    beforeToolExecute: `(ctx, call) => {
      const banned = ctx.file.read('banned.txt').trim()
      ctx.log('checking ' + call.name)
      if (call.name === 'shell' && String(call.arguments.command).includes(banned)) return { allow: false, reason: '${word} ' + banned }
    }`,
  })

/** Secrets an agent's event may carry: a tool's command, a value the agent printed. */
const GITHUB = `ghp_${'a1B2c3D4e5'.repeat(4)}`
const ANTHROPIC = `sk-ant-api03-${'Zx9_Yw8-Vu7'.repeat(6)}`
const SERVICE_SECRET = 'plain-service-secret-4711'

let dir = ''
let project = ''

/** Every file under `root` (relative paths), sorted. */
async function filesUnder(root: string): Promise<string[]> {
  const out: string[] = []
  const walk = async (rel: string): Promise<void> => {
    for (const e of await readdir(join(root, rel), { withFileTypes: true })) {
      const path = rel ? `${rel}/${e.name}` : e.name
      if (e.isDirectory()) await walk(path)
      else out.push(path)
    }
  }
  await walk('')
  return out.sort()
}

/** Waits until `root` holds `count` files (the sink writes after the answer is sent). */
async function waitForFiles(root: string, count: number): Promise<string[]> {
  let files: string[] = []
  for (let i = 0; i < 200; i++) {
    files = await filesUnder(root).catch(() => [])
    if (files.length >= count) return files
    await new Promise((r) => setTimeout(r, 50))
  }
  return files
}

function runShim(args: string[], event: unknown): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(ROOT, 'bin', 'hookd-hook'), args, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, stdio: ['pipe', 'pipe', 'pipe'], timeout: 30_000 })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()))
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(JSON.stringify(event))
  })
}

beforeAll(async () => {
  dir = await writeTree({
    'hooks/guard/index.js': GUARD('no'),
    'hooks/thrower/index.js': hook({ beforeToolExecute: `() => { throw new Error('boom') }` }),
    'hooks/strict.profile.json': JSON.stringify({ hooks: ['guard'], confirm: 'deny' }),
    'project/banned.txt': 'rm -rf\n',
  })
  project = join(dir, 'project')
})

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
})

describe('hookd serve --http --capture DIR', () => {
  let serving: Serving | undefined
  afterAll(async () => {
    if (serving) await stopProcess(serving.child)
  })

  it("writes each agent's raw event and its point calls as cases, secrets redacted, that hookd test replays green, and red once the hook answers differently", async () => {
    serving = await startServe(['--hooks', 'hooks', '--listen', `unix:${join(dir, 'hookd.sock')}`, '--http', '0', '--workers', '1', '--capture', 'captured'], {
      cwd: dir,
      env: { SERVICE_TOKEN: SERVICE_SECRET },
      timeoutMs: 60_000,
    })
    const url = /^hookd: http on (http:\/\/127\.0\.0\.1:\d+)$/m.exec(serving.output.stderr)?.[1] as string
    const tokenFile = join(dir, '.hookd', 'http-token')
    const token = (await readFile(tokenFile, 'utf8')).trim()

    // Claude Code's own http hook: a command that carries a GitHub token, an Anthropic key, the service's
    // secret, and (the agent printed it) hookd's own token.
    const command = `rm -rf build && curl -H "Authorization: Bearer ${GITHUB}" https://api.github.com && ANTHROPIC_API_KEY=${ANTHROPIC} run ${SERVICE_SECRET}`
    const refused = await postEvent(url, token, '/claude-code/guard', { ...claudePre(project, 'cc-1', 'Bash', { command, description: `token ${token}` }) })
    expect(refused).toEqual({ status: 200, json: { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'no rm -rf' } } })
    const viaProfile = await postEvent(url, token, '/claude-code/profile/strict', claudePre(project, 'cc-2', 'Bash', { command: 'ls' }))
    expect(viaProfile.status).toBe(200)
    // The shim, as Codex runs it: the token stays in its file, the request carries a hookd-hmac proof.
    const shimmed = await runShim(['--token-file', tokenFile, `${url}/codex/guard`], codexPre(project, 'cx-1', 'rm -rf victim'))
    expect(shimmed).toEqual({
      code: 0,
      stderr: '',
      stdout: `${JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'no rm -rf' } })}\n`,
    })

    // A hook's own failure refuses the call (onError refuse-unless-skip): its diagnostic is in the case too.
    const thrown = await postEvent(url, token, '/claude-code/thrower', claudePre(project, 'cc-4', 'Bash', { command: 'ls' }))
    expect(thrown.json).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny' } })

    const captured = join(dir, 'captured')
    const files = await waitForFiles(captured, 8)
    expect(files.map((f) => f.replace(/-\d{8}T\d{6}Z(-\d+)?\.json$/, ''))).toEqual([
      'claude-code/guard/beforeToolExecute',
      'claude-code/guard/event-PreToolUse',
      'claude-code/profile-strict/beforeToolExecute',
      'claude-code/profile-strict/event-PreToolUse',
      'claude-code/thrower/beforeToolExecute',
      'claude-code/thrower/event-PreToolUse',
      'codex/guard/beforeToolExecute',
      'codex/guard/event-PreToolUse',
    ])
    for (const folder of ['', 'claude-code', 'claude-code/guard', 'claude-code/profile-strict', 'claude-code/thrower', 'codex', 'codex/guard']) {
      expect((await stat(join(captured, folder))).mode & 0o777, folder).toBe(0o700)
    }
    const texts = new Map<string, string>()
    for (const f of files) {
      expect((await stat(join(captured, f))).mode & 0o777, f).toBe(0o600)
      const text = await readFile(join(captured, f), 'utf8')
      texts.set(f.replace(/-\d{8}T\d{6}Z(-\d+)?\.json$/, ''), text)
      for (const secret of [token, GITHUB, ANTHROPIC, SERVICE_SECRET, 'hookd-hmac']) expect(text, `${f} holds ${secret}`).not.toContain(secret)
    }
    const event = JSON.parse(texts.get('claude-code/guard/event-PreToolUse') as string) as Record<string, unknown>
    expect(event).toMatchObject({
      agent: 'claude-code',
      route: 'guard',
      event: {
        hook_event_name: 'PreToolUse',
        cwd: project,
        tool_name: 'Bash',
        tool_input: {
          command: `rm -rf build && curl -H "Authorization: Bearer <redacted bearer>" https://api.github.com && ANTHROPIC_API_KEY=<redacted anthropic-key> run <env SERVICE_TOKEN>`,
          description: 'token <hookd token>',
        },
      },
      ctx: { workdir: project, files: { 'banned.txt': 'rm -rf\n' } },
      expect: { answer: { hookSpecificOutput: { permissionDecision: 'deny', permissionDecisionReason: 'no rm -rf' } }, diagnostics: [] },
    })
    for (const kind of ['hookd token', 'env SERVICE_TOKEN', 'bearer', 'anthropic-key']) expect(String(event.description)).toMatch(new RegExp(`What looked like a credential \\([^)]*\\b${kind}\\b[^)]*\\) is written as <redacted \\.\\.\\.>`))
    const point = JSON.parse(texts.get('claude-code/guard/beforeToolExecute') as string) as Record<string, unknown>
    expect(point).toMatchObject({ hooks: ['guard'], point: 'beforeToolExecute', payload: { name: 'shell' }, expect: { result: { allow: false, reason: 'no rm -rf' }, logs: ['checking shell'] } })
    expect(JSON.parse(texts.get('claude-code/profile-strict/event-PreToolUse') as string)).toMatchObject({ route: 'profile/strict', expect: { answer: viaProfile.json } })
    expect(JSON.parse(texts.get('codex/guard/event-PreToolUse') as string)).toMatchObject({ agent: 'codex', event: { tool_input: { command: 'rm -rf victim' } } })
    expect(JSON.parse(texts.get('claude-code/thrower/event-PreToolUse') as string)).toMatchObject({ expect: { answer: thrown.json, diagnostics: [{ kind: 'throw', hook: 'thrower' }] } })

    // `hookd test DIR` takes a folder of cases and no hooks as `--cases DIR`, against ./hooks.
    const green = await runInProcess(['test', 'captured'], { cwd: dir })
    expect(green.stdout).toContain('PASS captured/claude-code/guard/event-PreToolUse-')
    expect(green.stdout).toContain('PASS captured/codex/guard/event-PreToolUse-')
    expect(green.stdout).toMatch(/\n8 cases: 8 passed, 0 failed\n$/)
    expect(green.code).toBe(0)

    // The same cases, against a hook that now answers differently.
    await writeFile(join(dir, 'hooks', 'guard', 'index.js'), GUARD('never'))
    const red = await runInProcess(['test', '--hooks', 'hooks', '--cases', 'captured'], { cwd: dir })
    expect(red.stdout).toMatch(/FAIL captured\/claude-code\/guard\/event-PreToolUse-\S+\.json: captured claude-code PreToolUse \(cc-1\) \[guard\] \(\d+ ms\)\n {7}answer\.hookSpecificOutput\.permissionDecisionReason: expected "no rm -rf", got "never rm -rf"\n/)
    expect(red.stdout).toMatch(/FAIL captured\/codex\/guard\/event-PreToolUse-\S+: captured codex PreToolUse \(cx-1\) \[guard\] \(\d+ ms\)\n {7}answer\.hookSpecificOutput\.permissionDecisionReason: expected "no rm -rf", got "never rm -rf"\n/)
    expect(red.stdout).toMatch(/\n8 cases: 4 passed, 4 failed\n$/)
    expect(red.code).toBe(1)
    await writeFile(join(dir, 'hooks', 'guard', 'index.js'), GUARD('no'))

    // The sidecar still answers, and still captures.
    const again = await postEvent(url, token, '/claude-code/guard', claudePre(project, 'cc-3', 'Bash', { command: 'ls' }))
    expect(again.status).toBe(200)
    expect((await waitForFiles(captured, 10)).length).toBe(10)
  }, 120_000)
})

describe('the capture caps', () => {
  it('write no more than --capture-max-files, count the rest, and say so once and at the end; the door answers every event', async () => {
    const served = await serveInProcess(
      ['--hooks', 'hooks', '--listen', `unix:${join(dir, 'hookd-cap.sock')}`, '--http', '0', '--workers', '1', '--capture', 'capped', '--capture-max-files', '3'],
      { cwd: dir, timeoutMs: 60_000 },
    )
    let stopped = false
    try {
      const url = /^hookd: http on (http:\/\/127\.0\.0\.1:\d+)$/m.exec(served.output.stderr)?.[1] as string
      const token = (await readFile(join(dir, '.hookd', 'http-token'), 'utf8')).trim()
      for (let i = 0; i < 10; i++) {
        const answer = await postEvent(url, token, '/claude-code/guard', claudePre(project, `flood-${i}`, 'Bash', { command: 'rm -rf x' }))
        expect(answer.json).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny' } })
      }
      expect(await served.stop()).toBe(0)
      stopped = true
      expect(await filesUnder(join(dir, 'capped'))).toHaveLength(3)
      const stderr = served.output.stderr
      expect(stderr.match(/its cap \(--capture-max-files\)/g)).toHaveLength(1)
      expect(stderr).toContain(`hookd: wrote 3 case files to ${join(dir, 'capped')}, its cap (--capture-max-files); later calls are counted, not written`)
      expect(stderr).toContain(`hookd: capture: 17 cases were not written to ${join(dir, 'capped')} (17 past the file cap); 3 written`)
    } finally {
      if (!stopped) await served.stop()
    }
  }, 60_000)

  it("keeps a hostile event's name, route and headers out of file names and files: every file stays in DIR, and the door answers the next event", async () => {
    const served = await serveInProcess(['--hooks', 'hooks', '--listen', `unix:${join(dir, 'hookd-names.sock')}`, '--http', '0', '--workers', '1', '--capture', 'named'], { cwd: dir, timeoutMs: 60_000 })
    try {
      const url = /^hookd: http on (http:\/\/127\.0\.0\.1:\d+)$/m.exec(served.output.stderr)?.[1] as string
      const token = (await readFile(join(dir, '.hookd', 'http-token'), 'utf8')).trim()
      const hostile = { session_id: '../../escape', cwd: project, hook_event_name: `../../../${'x'.repeat(40)}/evil`, tool_name: 'Bash', tool_input: { command: 'ls' } }
      // An event Claude Code may add later: no opinion, and captured.
      expect(await postEvent(url, token, '/claude-code/guard', hostile)).toEqual({ status: 200, json: {} })
      const copilot = await fetch(`${url}/copilot/guard?event=${encodeURIComponent('../../../../tmp/evil')}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ sessionId: 'cp-1', timestamp: 1, cwd: project, toolName: 'bash', toolArgs: { command: 'ls' } }),
      })
      expect(copilot.status).toBe(204)
      const ordinary = await postEvent(url, token, '/claude-code/guard', claudePre(project, 'after-hostile', 'Bash', { command: 'rm -rf x' }))
      expect(ordinary.json).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny', permissionDecisionReason: 'no rm -rf' } })
      await served.stop()
      const files = await filesUnder(join(dir, 'named'))
      // The two hostile events (no point call: neither is an event their dialect maps), the ordinary one and its gate.
      expect(files.length).toBe(4)
      for (const f of files) {
        expect(f).toMatch(/^(claude-code|copilot)\/guard\/[A-Za-z0-9_-]{1,100}\.json$/)
        const text = await readFile(join(dir, 'named', f), 'utf8')
        expect(text).not.toContain(token)
        expect(text.toLowerCase()).not.toContain('bearer')
      }
      expect(served.output.stderr).not.toContain('cannot write a captured case')
    } finally {
      await served.stop()
    }
  }, 60_000)

  it('refuses caps without --capture, and a bad number', async () => {
    const alone = await runInProcess(['serve', '--capture-max-files', '5'], { cwd: dir })
    expect(alone.code).toBe(2)
    expect(alone.stderr).toContain('--capture-max-files and --capture-max-mb apply to --capture DIR')
    const bad = await runInProcess(['serve', '--capture', 'x', '--capture-max-mb', 'lots'], { cwd: dir })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("--capture-max-mb must be a positive whole number; got 'lots'")
  })
})

describe('the Claude Agent SDK under hookd serve --capture', () => {
  it("captures its sessions' point calls (they come over gRPC, not through the front door), and they replay green", async () => {
    const served = await serveInProcess(['--hooks', 'hooks', '--listen', `unix:${join(dir, 'hookd-sdk.sock')}`, '--workers', '1', '--capture', 'sdk'], { cwd: dir, timeoutMs: 60_000 })
    try {
      const hookd = await hookdHooks({ address: served.address, hooks: ['guard'] })
      const gate = hookd.hooks.PreToolUse?.[0]?.hooks[0]
      const answer = await gate?.(claudePre(project, 'sdk-1', 'Bash', { command: `rm -rf build; echo ${GITHUB}` }), 'toolu_Bash', { signal: new AbortController().signal })
      expect(answer).toMatchObject({ hookSpecificOutput: { permissionDecision: 'deny', permissionDecisionReason: 'no rm -rf' } })
      await hookd.close()
      const files = await waitForFiles(join(dir, 'sdk'), 1)
      expect(files.map((f) => f.replace(/-\d{8}T\d{6}Z(-\d+)?\.json$/, ''))).toEqual(['beforeToolExecute'])
      const gateCase = await readFile(join(dir, 'sdk', files[0] as string), 'utf8')
      expect(gateCase).not.toContain(GITHUB)
      expect(JSON.parse(gateCase)).toMatchObject({ ctx: { session: { agentId: 'claude-code' } }, payload: { arguments: { command: 'rm -rf build; echo <redacted github-token>' } } })
      const replayed = await runInProcess(['test', '--hooks', 'hooks', '--cases', 'sdk'], { cwd: dir })
      expect(replayed.stdout).toMatch(/^PASS sdk\/beforeToolExecute-\S+\.json: captured beforeToolExecute \(sdk-1\) \[guard\] \(\d+ ms\)\n1 case: 1 passed, 0 failed\n$/)
    } finally {
      await served.stop()
    }
  }, 60_000)
})

describe('agent-event cases in a hook folder', () => {
  it("replay from the hook's tests/ folder (its route defaulting to the hook), and a bad route or agent is a problem naming the field", async () => {
    const tests = join(dir, 'hooks', 'guard', 'tests')
    await mkdir(tests, { recursive: true })
    const event = claudePre('/home/someone/their-project', 'h-1', 'Bash', { command: 'rm -rf /home/someone/their-project/build' })
    await writeFile(
      join(tests, 'claude-rm.json'),
      JSON.stringify({
        agent: 'claude-code',
        event,
        ctx: { workdir: '/home/someone/their-project', files: { 'banned.txt': 'rm -rf' } },
        expect: { answer: { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'no rm -rf' } } },
      }),
    )
    await writeFile(join(tests, 'bad-route.json'), JSON.stringify({ agent: 'claude-code', route: 'no such/route', event }))
    await writeFile(join(tests, 'bad-agent.json'), JSON.stringify({ agent: 'vim', event }))
    try {
      const ran = await runInProcess(['test', 'guard'], { cwd: dir })
      expect(ran.stdout).toContain('FAIL hooks/guard/tests/bad-agent.json: agent: ')
      expect(ran.stdout).toContain('FAIL hooks/guard/tests/bad-route.json: route: ')
      expect(ran.stdout).toMatch(/PASS hooks\/guard\/tests\/claude-rm\.json: claude-rm \(\d+ ms\)\n/)
      expect(ran.stdout).toMatch(/\n3 cases: 1 passed, 0 failed, 2 could not be read\n$/)
      expect(ran.code).toBe(1)
    } finally {
      await rm(tests, { recursive: true, force: true })
    }
  })
})
