/**
 * Codex's and Gemini CLI's own events through hookd, against the real CLIs (pinned in
 * scripts/agent-cli.sh) driven offline by stand-ins of their model APIs. One `hookd serve --http` runs
 * one hook, `policy` (written below), which serves a point of each kind; `hookd setup AGENT --hooks
 * policy` (in-process, as command-clis-hookd.test.ts does) registers the events those points need, and
 * the audit log (with payloads) says what each point's hooks saw.
 *
 * Codex 0.169.0, two runs: one with its sandbox and approvals bypassed, where the model's first call
 * is rewritten (`echo original` runs as `echo rewritten`), its second is refused because the policy's
 * ctx.confirm cannot be put to a person (Codex cannot ask), and then it spawns a subagent, which reads
 * the context the policy gives it at SubagentStart, whose `rm -r` is refused, with the subagent named,
 * and which the policy sends back to work once at SubagentStop;
 * and one with `--approve-for-me`, where calls that leave the sandbox raise PermissionRequest, which
 * the policy answers allow for one folder and deny for another.
 *
 * Gemini CLI 0.61.0, one run: the policy rewrites the prompt's text at BeforeModel and narrows the tool
 * list at BeforeToolSelection (trying to add a tool as well), and the stand-in receives both; a call is
 * rewritten and an ask is degraded to a refusal; PreCompress reaches compact:before.
 */
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Serving, runInProcess, startServe, stopProcess } from '../../support/processes.js'
import { agentCli } from '../support/cli.js'
import { declaredFunctions, functionResponses, startGeminiApi, type GenerateRequest } from '../support/gemini-api.js'
import { type ResponsesRequest, functionOutputs, startOpenAiApi, userTexts } from '../support/openai-api.js'
import { codexConfig, geminiEnv, isolatedEnv, projectWithVictims, run, tempDir } from '../support/other-clis.js'

const TEST_TIMEOUT = 240_000
const CONTEXT = 'HOOKD-CONTEXT: stay inside the project'
const KEEP_GOING = 'HOOKD-KEEP-GOING: check the folder once more'

/** The hook: one answer at each point these agents' events reach. */
const POLICY = `module.exports = {
  beforeToolExecute(ctx, call) {
    const command = String(call.arguments.command || '')
    if (call.subagent && /\\brm\\b/.test(command)) return { allow: false, reason: 'no deletes in a subagent (' + call.subagent.type + ' ' + call.subagent.id + ')' }
    if (command === 'echo original') return { arguments: { ...call.arguments, command: 'echo rewritten' } }
    if (command.includes('victim-ask') && !ctx.confirm({ title: 'Delete?', body: command })) return { allow: false, reason: 'nobody said yes' }
  },
  'permission:request'(ctx, event) {
    const command = String(event.arguments.command || '')
    if (command.includes('victim-allow')) event.decision = 'allow'
    if (command.includes('victim-deny')) { event.decision = 'deny'; event.reason = 'the policy keeps victim-deny' }
  },
  'subagent:start'(ctx, event) {
    event.context = ${JSON.stringify(CONTEXT)}
  },
  'subagent:stop'(ctx, event) {
    if (event.lastMessage === 'sub done') { event.keepWorking = true; event.reason = ${JSON.stringify(KEEP_GOING)} }
  },
  'model:request'(ctx, event) {
    event.messages = event.messages.map((m) => (m.text.includes('Please work on the victims.') ? { ...m, text: m.text + ' HOOKD-REWRITTEN' } : m))
  },
  'tools:select'(ctx, event) {
    event.tools = event.tools.filter((t) => t !== 'web_fetch' && t !== 'web_search').concat(['smuggled_tool'])
  },
  'compact:before'(ctx, event) {},
}
`

let state = ''
let serving: Serving
const cleanup: string[] = []

beforeAll(async () => {
  state = await mkdtemp(join(tmpdir(), 'hookd-own-events-state-'))
  const hooks = join(state, 'hooks')
  await mkdir(join(hooks, 'policy'), { recursive: true })
  await writeFile(join(hooks, 'policy', 'index.js'), POLICY)
  serving = await startServe(['--hooks', hooks, '--listen', `unix:${join(state, 'hookd.sock')}`, '--http', '0', '--workers', '1', '--audit', join(state, 'audit.jsonl'), '--audit-payloads'], {
    cwd: state,
    timeoutMs: 60_000,
  })
}, 120_000)

afterAll(async () => {
  if (serving) await stopProcess(serving.child)
  await Promise.all([state, ...cleanup].map((dir) => rm(dir, { recursive: true, force: true })))
})

/** A temp HOME and a project holding the victim folders, with `hookd setup AGENT --hooks policy` run for that HOME. */
async function setUp(agent: string, victims: string[], before: (home: string) => Promise<void>): Promise<{ home: string; project: string; setup: string }> {
  const home = await tempDir(`${agent}-home`)
  const project = await projectWithVictims(`${agent}-project`, victims)
  cleanup.push(home, project)
  await before(home)
  const setup = await runInProcess(['setup', agent, '--hooks', 'policy'], { cwd: state, env: { HOME: home, CODEX_HOME: '' } })
  expect(setup.code, setup.stderr).toBe(0)
  return { home, project, setup: setup.stdout }
}

/** The audit log's lines for `agent` at `point`. */
async function audited(agent: string, point: string): Promise<Array<Record<string, unknown>>> {
  const lines = (await readFile(join(state, 'audit.jsonl'), 'utf8')).split('\n').filter((l) => l !== '')
  return lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.agent === agent && l.point === point)
}

/** What the hooks were given at each of those lines: an event point's event as the agent sent it. */
async function given(agent: string, point: string): Promise<Array<Record<string, unknown>>> {
  return (await audited(agent, point)).map((l) => {
    const payload = l.payload as Record<string, unknown>
    return (payload.initial as Record<string, unknown> | undefined) ?? payload
  })
}

const kept = (project: string, folder: string): boolean => existsSync(join(project, folder, 'keep.txt'))

async function runCodex(home: string, project: string, flags: string[], prompt: string) {
  const codex = await agentCli('codex')
  return run(codex, ['exec', '--skip-git-repo-check', ...flags, prompt], {
    cwd: project,
    env: isolatedEnv(home, { CODEX_HOME: join(home, '.codex'), STUB_OPENAI_KEY: 'stub-key' }),
    timeoutMs: 150_000,
  })
}

const codexHome = (baseUrl: string) => async (home: string): Promise<void> => {
  await mkdir(join(home, '.codex'))
  await writeFile(join(home, '.codex', 'config.toml'), codexConfig(baseUrl))
}

describe('Codex 0.169.0: its own events through hookd', () => {
  it(
    "a rewrite, an ask refused since Codex cannot ask, and a subagent that reads SubagentStart's context, whose rm -r is refused naming it, and that SubagentStop sends back to work once",
    async () => {
      const isSub = (r: ResponsesRequest): boolean => userTexts(r).some((t) => t.includes('SUBTASK'))
      const api = await startOpenAiApi((request) => {
        const done = functionOutputs(request)
        if (isSub(request)) {
          if (JSON.stringify(request.input).includes(KEEP_GOING)) return { text: 'sub checked' }
          return done.length === 0 ? { calls: [{ name: 'exec_command', arguments: { cmd: 'rm -r victim-sub' }, callId: 'call-sub' }] } : { text: 'sub done' }
        }
        const spawned = done.find((o) => o.callId === 'call-spawn')
        switch (done.length) {
          case 0:
            return { calls: [{ name: 'exec_command', arguments: { cmd: 'echo original' }, callId: 'call-echo' }] }
          case 1:
            return { calls: [{ name: 'exec_command', arguments: { cmd: 'rm -r victim-ask' }, callId: 'call-ask' }] }
          case 2:
            return { calls: [{ name: 'spawn_agent', namespace: 'multi_agent_v1', arguments: { message: 'SUBTASK: delete victim-sub' }, callId: 'call-spawn' }] }
          case 3: {
            const id = String((JSON.parse(spawned?.output ?? '{}') as { agent_id?: unknown }).agent_id)
            return { calls: [{ name: 'wait_agent', namespace: 'multi_agent_v1', arguments: { targets: [id], timeout_ms: 60_000 }, callId: 'call-wait' }] }
          }
          default:
            return { text: 'done' }
        }
      })
      try {
        const { home, project, setup } = await setUp('codex', ['victim-ask', 'victim-sub'], codexHome(api.baseUrl))
        // Setup registered the events the policy's points need: not PostCompact, which no hook serves.
        for (const event of ['PreToolUse', 'PermissionRequest', 'SubagentStart', 'SubagentStop', 'PreCompact']) expect(setup).toContain(event)
        expect(setup).not.toContain('PostCompact')
        const ran = await runCodex(home, project, ['--dangerously-bypass-approvals-and-sandbox'], 'Please work on the victims.')
        expect(ran.code, ran.stderr).toBe(0)
        const outputs = new Map(api.requests.flatMap((r) => functionOutputs(r.body)).map((o) => [o.callId, o.output]))
        // The rewrite: the command that ran printed what the policy wrote.
        expect(outputs.get('call-echo')).toContain('rewritten')
        // The ask: Codex cannot put it to a person, so ctx.confirm said no and the policy refused.
        expect(outputs.get('call-ask')).toBe('Command blocked by PreToolUse hook: nobody said yes. Command: rm -r victim-ask')
        expect(kept(project, 'victim-ask')).toBe(true)
        // The subagent read the policy's context before its first model call...
        const sub = api.requests.find((r) => isSub(r.body))
        expect(JSON.stringify(sub?.body.input)).toContain(CONTEXT)
        // ...and its rm -r was refused, the subagent named in the call the hook saw.
        expect(outputs.get('call-sub')).toMatch(/^Command blocked by PreToolUse hook: no deletes in a subagent \(default [0-9a-f-]+\)\. Command: rm -r victim-sub$/)
        expect(kept(project, 'victim-sub')).toBe(true)
        const gated = (await audited('codex', 'beforeToolExecute')).map((l) => l.payload as Record<string, unknown>)
        expect(gated.find((p) => (p.arguments as Record<string, unknown>).command === 'rm -r victim-sub')).toMatchObject({ name: 'shell', subagent: { type: 'default', id: expect.any(String) } })
        expect(await given('codex', 'subagent:start')).toEqual([{ subagent: { id: expect.any(String), type: 'default' } }])
        // SubagentStop: the policy sent the subagent back to work once, with its reason, and let it stop the second time.
        expect((await given('codex', 'subagent:stop')).map((e) => e.lastMessage)).toEqual(['sub done', 'sub checked'])
        expect(api.requests.filter((r) => isSub(r.body) && JSON.stringify(r.body.input).includes(KEEP_GOING))).toHaveLength(1)
      } finally {
        await api.stop()
      }
    },
    TEST_TIMEOUT,
  )

  it(
    "PermissionRequest (--approve-for-me, calls that leave the sandbox): the policy's allow runs the call unreviewed, its deny refuses it with the reason",
    async () => {
      const escalated = (cmd: string, callId: string) => ({ name: 'exec_command', arguments: { cmd, sandbox_permissions: 'require_escalated', justification: 'delete it' }, callId })
      const api = await startOpenAiApi((request, index) => {
        // The automatic reviewer's own requests (when no hook decides) are answered as any other; none should come.
        const done = functionOutputs(request).length
        if (done === 0 && index === 0) return { calls: [escalated('rm -r victim-allow', 'call-allow')] }
        if (done === 1) return { calls: [escalated('rm -r victim-deny', 'call-deny')] }
        return { text: 'done' }
      })
      try {
        const { home, project } = await setUp('codex', ['victim-allow', 'victim-deny'], codexHome(api.baseUrl))
        const ran = await runCodex(home, project, ['--approve-for-me'], 'Please delete the victims.')
        expect(ran.code, ran.stderr).toBe(0)
        const outputs = new Map(api.requests.flatMap((r) => functionOutputs(r.body)).map((o) => [o.callId, o.output]))
        expect(kept(project, 'victim-allow')).toBe(false)
        expect(outputs.get('call-allow')).toContain('Process exited with code 0')
        expect(kept(project, 'victim-deny')).toBe(true)
        expect(outputs.get('call-deny')).toContain('Rejected(\\"the policy keeps victim-deny\\")')
        // Three model calls: no reviewer was asked, the hooks decided both.
        expect(api.requests).toHaveLength(3)
        const asked = await given('codex', 'permission:request')
        expect(asked).toEqual([
          expect.objectContaining({ name: 'shell', tool: 'Bash', arguments: { command: 'rm -r victim-allow' } }),
          expect.objectContaining({ name: 'shell', tool: 'Bash', arguments: { command: 'rm -r victim-deny' } }),
        ])
      } finally {
        await api.stop()
      }
    },
    TEST_TIMEOUT,
  )
})

describe('Gemini CLI 0.61.0: its own events through hookd', () => {
  it(
    'BeforeModel rewrites what the model API receives, BeforeToolSelection narrows its tools (never adding one), a call is rewritten, an ask refused, PreCompress observed',
    async () => {
      const gemini = await agentCli('gemini')
      const api = await startGeminiApi((_request: GenerateRequest, index) => {
        if (index === 0) return { calls: [{ name: 'run_shell_command', args: { command: 'echo original' } }] }
        if (index === 1) return { calls: [{ name: 'run_shell_command', args: { command: 'rm -r victim-ask' } }] }
        return { text: 'done' }
      })
      try {
        const { home, project } = await setUp('gemini', ['victim-ask'], async (h) => {
          await mkdir(join(h, '.gemini'))
          await writeFile(join(h, '.gemini', 'settings.json'), JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } }, privacy: { usageStatisticsEnabled: false } }))
        })
        const ran = await run(gemini, ['--skip-trust', '--yolo', '-m', 'gemini-2.5-flash', '-p', 'Please work on the victims.'], {
          cwd: project,
          env: { ...geminiEnv(home, api.baseUrl), GEMINI_CLI_NO_RELAUNCH: 'true' },
          timeoutMs: 150_000,
        })
        expect(ran.code, ran.stderr).toBe(0)
        const first = api.turns[0]?.body as (GenerateRequest & { toolConfig?: { functionCallingConfig?: { mode?: string; allowedFunctionNames?: string[] } } }) | undefined
        // model:request: the prompt's text reached the model rewritten.
        expect(JSON.stringify(first?.contents)).toContain('Please work on the victims. HOOKD-REWRITTEN')
        // tools:select: every declared tool but the two the policy removed, and not the one it tried to add.
        const allowed = first?.toolConfig?.functionCallingConfig?.allowedFunctionNames ?? []
        expect(first?.toolConfig?.functionCallingConfig?.mode).toBe('AUTO')
        expect(allowed).toContain('run_shell_command')
        expect(allowed).not.toContain('web_fetch')
        expect(allowed).not.toContain('google_web_search')
        expect(allowed).not.toContain('smuggled_tool')
        expect([...allowed].sort()).toEqual(declaredFunctions(first as GenerateRequest).filter((n) => n !== 'web_fetch' && n !== 'google_web_search').sort())
        const responses = api.turns.flatMap((t) => functionResponses(t.body)).map((r) => JSON.stringify(r.response))
        expect(responses.some((r) => r.includes('rewritten'))).toBe(true)
        expect(responses).toContain(JSON.stringify({ error: 'Tool execution blocked: nobody said yes' }))
        expect(kept(project, 'victim-ask')).toBe(true)
        const compacting = await given('gemini', 'compact:before')
        expect(compacting.length).toBeGreaterThan(0)
        expect(compacting[0]).toEqual({ trigger: 'auto' })
      } finally {
        await api.stop()
      }
    },
    TEST_TIMEOUT,
  )
})
