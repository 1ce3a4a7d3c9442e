/**
 * hookd guarding the real Copilot CLI (1.0.102, pinned in scripts/agent-cli.sh) at every event its
 * hooks serve, offline against the Responses API stand-in (support/openai-api.ts), through what
 * `hookd setup copilot` writes in a temp HOME: the shim's command entries, and Copilot's own http
 * entries (`--transport http`). One `hookd serve --http` runs one hook, `copilot-guard`, which serves
 * beforeModelRequest, beforeToolExecute, permission:request and subagent:start.
 *
 * The command run is `copilot -p` without --allow-all-tools, so each shell call also goes through
 * Copilot's permission request, which the hook answers. The stand-in model asks, one call per turn:
 *   rm -rf victim-deny    refused at preToolUse (the model reads the hook's reason)
 *   echo secret           rewritten to `echo redacted` (modifiedArgs): the model reads `redacted`
 *   rm -ri victim-ask     the hook's ctx.confirm is Copilot's ask, which -p denies
 *   rm -rf victim-defer   deferred: Copilot cannot defer, so it asks, which -p denies
 *   touch refused         allowed at preToolUse, denied at permissionRequest (the file is not made)
 *   task (explore)        a subagent, told the hook's context at subagentStart, whose own
 *                         `rm -rf victim-sub` reaches the same hook with the subagent named, and is refused
 * and the first prompt carries the hook's prompt context (userPromptTransformed).
 */
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Serving, runInProcess, startServe, stopProcess } from '../../support/processes.js'
import { agentCli } from '../support/cli.js'
import { type OpenAiApi, type OpenAiReply, type ResponsesRequest, functionOutputs, startOpenAiApi, userTexts } from '../support/openai-api.js'
import { copilotEnv, projectWithVictims, run, tempDir } from '../support/other-clis.js'

const TEST_TIMEOUT = 240_000
const HOOK = `module.exports = {
  beforeModelRequest(ctx, request) {
    return { system: 'HOOKD PROMPT CONTEXT' }
  },
  beforeToolExecute(ctx, call) {
    if (call.name !== 'shell') return
    const c = call.arguments.command || ''
    if (/rm -rf victim-sub/.test(c)) return { allow: false, reason: 'no rm -rf in subagent ' + (call.subagent ? call.subagent.type + ' ' + call.subagent.id : 'none') }
    if (/rm -rf victim-deny/.test(c)) return { allow: false, reason: 'no rm -rf here' }
    if (/rm -rf victim-defer/.test(c)) return { defer: true, reason: 'decide later' }
    if (/rm -ri victim-ask/.test(c) && !ctx.confirm({ title: 'Careful', body: c })) return { allow: false, reason: 'refused by the user' }
    if (c === 'echo secret') return { allow: true, arguments: Object.assign({}, call.arguments, { command: 'echo redacted' }) }
  },
  'permission:request'(ctx, event) {
    if (/touch refused/.test(event.arguments.command || '')) {
      event.decision = 'deny'
      event.reason = 'the permission hook says no'
    } else {
      event.decision = 'allow'
    }
  },
  'subagent:start'(ctx, event) {
    event.context = 'HOOKD SUBAGENT CONTEXT for ' + event.subagent.type
  },
}
`

let state = ''
let serving: Serving
let copilot = ''
const cleanup: string[] = []

beforeAll(async () => {
  copilot = await agentCli('copilot')
  state = await tempDir('copilot-hookd-state')
  const hooks = join(state, 'hooks')
  await mkdir(join(hooks, 'copilot-guard'), { recursive: true })
  await writeFile(join(hooks, 'copilot-guard', 'index.js'), HOOK)
  serving = await startServe(['--hooks', hooks, '--listen', `unix:${join(state, 'hookd.sock')}`, '--http', '0', '--workers', '1', '--audit', join(state, 'audit.jsonl')], {
    cwd: state,
    timeoutMs: 60_000,
  })
}, 600_000)

afterAll(async () => {
  if (serving) await stopProcess(serving.child)
  await Promise.all([state, ...cleanup].map((dir) => rm(dir, { recursive: true, force: true })))
})

/** A temp HOME set up by `hookd setup copilot --hooks copilot-guard` (with `extra` flags), and its hooks file. */
async function setUp(extra: string[] = []): Promise<{ home: string; settings: Record<string, unknown> }> {
  const home = await tempDir('copilot-hookd-home')
  cleanup.push(home)
  const setup = await runInProcess(['setup', 'copilot', '--hooks', 'copilot-guard', ...extra], { cwd: state, env: { HOME: home } })
  expect(setup.code, setup.stderr).toBe(0)
  const settings = JSON.parse(await readFile(join(home, '.copilot', 'settings.json'), 'utf8')) as Record<string, unknown>
  return { home, settings }
}

const SUBAGENT_TASK = 'SUBAGENT_TASK: delete victim-sub'
const isSubagent = (body: ResponsesRequest): boolean => userTexts(body).some((t) => t.includes(SUBAGENT_TASK))
const bash = (callId: string, command: string): OpenAiReply => ({ calls: [{ name: 'bash', callId, arguments: { command, description: command } }] })

/** The parent's calls, one per turn, and the subagent's one call. */
const PARENT = [
  bash('c-deny', 'rm -rf victim-deny'),
  bash('c-rewrite', 'echo secret'),
  bash('c-ask', 'rm -ri victim-ask'),
  bash('c-defer', 'rm -rf victim-defer'),
  bash('c-permission', 'touch refused'),
  { calls: [{ name: 'task', callId: 'c-task', arguments: { description: 'delete it', prompt: SUBAGENT_TASK, agent_type: 'explore', name: 'cleaner' } }] },
]

function script(): (request: ResponsesRequest) => OpenAiReply {
  return (request) => {
    const outputs = functionOutputs(request).length
    if (isSubagent(request)) return outputs === 0 ? bash('s-sub', 'rm -rf victim-sub') : { text: 'subagent done' }
    return PARENT[outputs] ?? { text: 'all done' }
  }
}

/** Each call's tool result by call id, from the last request each agent sent. */
function results(api: OpenAiApi): Map<string, string> {
  const out = new Map<string, string>()
  for (const r of api.requests) for (const o of functionOutputs(r.body)) out.set(o.callId, o.output)
  return out
}

describe('Copilot CLI 1.0.102 through hookd, every event its hooks serve', () => {
  let outcome: Promise<{ api: OpenAiApi; project: string; code: number | null; stderr: string; settings: Record<string, unknown> }> | undefined
  const commandRun = () =>
    (outcome ??= (async () => {
      const api = await startOpenAiApi(script())
      try {
        const { home, settings } = await setUp()
        const project = await projectWithVictims('copilot-hookd-project', ['victim-deny', 'victim-ask', 'victim-defer', 'victim-sub'])
        cleanup.push(project)
        const ran = await run(copilot, ['-p', 'Please clean up.'], { cwd: project, env: copilotEnv(copilot, home, api.baseUrl), timeoutMs: 180_000 })
        return { api, project, code: ran.code, stderr: ran.stderr, settings }
      } finally {
        await api.stop()
      }
    })())

  it('setup registers the events the hook serves (the prompt, the gate, the permission request, the subagent start) and, since it may ask, those that say what became of an ask', async () => {
    const { settings } = await commandRun()
    const hooks = settings.hooks as Record<string, unknown>
    expect(Object.keys(hooks).sort()).toEqual(['agentStop', 'permissionRequest', 'postToolUse', 'postToolUseFailure', 'preToolUse', 'sessionEnd', 'subagentStart', 'userPromptTransformed'].sort())
  }, TEST_TIMEOUT)

  it('refuses at preToolUse, and the model reads the reason', async () => {
    const { api, project, code, stderr } = await commandRun()
    expect(code, stderr).toBe(0)
    expect(results(api).get('c-deny')).toBe('Denied by preToolUse hook: no rm -rf here')
    expect(existsSync(join(project, 'victim-deny', 'keep.txt'))).toBe(true)
  }, TEST_TIMEOUT)

  it('rewrites the arguments through modifiedArgs: the rewritten command runs', async () => {
    const { api } = await commandRun()
    expect(results(api).get('c-rewrite')).toMatch(/^redacted\n/)
  }, TEST_TIMEOUT)

  it("puts the hook's ctx.confirm as Copilot's ask, and a deferred call as an ask too, which -p denies", async () => {
    const { api, project } = await commandRun()
    expect(results(api).get('c-ask')).toBe("Denied by preToolUse hook (unable to ask user for confirmation): Careful: rm -ri victim-ask (asked by hookd hook 'copilot-guard')")
    expect(results(api).get('c-defer')).toBe('Denied by preToolUse hook (unable to ask user for confirmation): decide later (a hook deferred this call; Copilot CLI cannot defer, so it asks)')
    expect(existsSync(join(project, 'victim-ask', 'keep.txt'))).toBe(true)
    expect(existsSync(join(project, 'victim-defer', 'keep.txt'))).toBe(true)
  }, TEST_TIMEOUT)

  it('answers the permission request: a deny is what the model reads, and the call does not run', async () => {
    const { api, project } = await commandRun()
    expect(results(api).get('c-permission')).toBe('Permission denied by a PermissionRequest hook: the permission hook says no')
    expect(existsSync(join(project, 'refused'))).toBe(false)
  }, TEST_TIMEOUT)

  it("adds the hook's context to the prompt (userPromptTransformed) and to the subagent's (subagentStart)", async () => {
    const { api } = await commandRun()
    const first = api.requests[0]?.body
    expect(first && userTexts(first).join('\n')).toMatch(/Please clean up\.\n\nHOOKD PROMPT CONTEXT$/)
    const sub = api.requests.find((r) => isSubagent(r.body))?.body
    expect(sub && userTexts(sub).join('\n')).toContain('HOOKD SUBAGENT CONTEXT for explore')
  }, TEST_TIMEOUT)

  it("sends the subagent's own tool call through the same hook, with the subagent named", async () => {
    const { api, project } = await commandRun()
    expect(results(api).get('s-sub')).toMatch(/^Denied by preToolUse hook: no rm -rf in subagent explore [0-9a-f-]{36}$/)
    expect(existsSync(join(project, 'victim-sub', 'keep.txt'))).toBe(true)
    // One run for the whole session: the subagent's calls are in its parent's session.
    const audit = (await readFile(join(state, 'audit.jsonl'), 'utf8')).split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>)
    const sessions = new Set(audit.filter((l) => l.agent === 'copilot' && l.point === 'beforeToolExecute').map((l) => l.sessionId))
    expect(sessions.size).toBe(1)
  }, TEST_TIMEOUT)
})

describe('Copilot CLI 1.0.102 when hookd cannot be reached: the shim refuses in both gates\' forms', () => {
  // Port 1 on loopback: nothing listens there, so the shim cannot get hookd's answer.
  for (const event of ['preToolUse', 'permissionRequest']) {
    it(`registered at ${event} alone, the shim's refusal denies the call there, and the model reads why`, async () => {
      const home = await tempDir('copilot-down-home')
      cleanup.push(home)
      const setup = await runInProcess(['setup', 'copilot', '--hooks', 'copilot-guard', '--events', event, '--url', 'http://127.0.0.1:1'], { cwd: state, env: { HOME: home } })
      expect(setup.code, setup.stderr).toBe(0)
      const stand = await startOpenAiApi((request) => (functionOutputs(request).length === 0 ? bash('c-down', 'rm -rf victim-deny') : { text: 'done' }))
      try {
        const project = await projectWithVictims('copilot-down-project', ['victim-deny'])
        cleanup.push(project)
        // --allow-all-tools: Copilot's own permission flow would allow the call; only the refusal stops it.
        const ran = await run(copilot, ['--allow-all-tools', '-p', 'Please clean up.'], { cwd: project, env: copilotEnv(copilot, home, stand.baseUrl), timeoutMs: 180_000 })
        expect(ran.code, ran.stderr).toBe(0)
        const told = event === 'preToolUse' ? 'Denied by preToolUse hook: ' : 'Permission denied by a PermissionRequest hook: '
        expect(results(stand).get('c-down')).toMatch(new RegExp(`^${told}hookd-hook: .*\\(hookd-hook fails closed\\)$`))
        expect(existsSync(join(project, 'victim-deny', 'keep.txt'))).toBe(true)
      } finally {
        await stand.stop()
      }
    }, TEST_TIMEOUT)
  }
})

describe("Copilot CLI 1.0.102 through its own http hooks (setup --transport http)", () => {
  const api = (): Promise<OpenAiApi> => startOpenAiApi((request) => (functionOutputs(request).length === 0 ? bash('c-http', 'rm -rf victim-deny') : { text: 'done' }))

  it('writes http entries posting each event to its route with the token; with COPILOT_HOOK_ALLOW_LOCALHOST=1 the hook refuses', async () => {
    const { home, settings } = await setUp(['--transport', 'http'])
    const pre = (settings.hooks as Record<string, Array<Record<string, unknown>>>).preToolUse
    expect(pre).toEqual([{ type: 'http', url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/copilot\/copilot-guard\?event=preToolUse$/), headers: { Authorization: expect.stringMatching(/^Bearer /) }, timeoutSec: 30 }])
    const stand = await api()
    try {
      const project = await projectWithVictims('copilot-http-project', ['victim-deny'])
      cleanup.push(project)
      const ran = await run(copilot, ['-p', 'Please clean up.'], { cwd: project, env: { ...copilotEnv(copilot, home, stand.baseUrl), COPILOT_HOOK_ALLOW_LOCALHOST: '1' }, timeoutMs: 180_000 })
      expect(ran.code, ran.stderr).toBe(0)
      expect(results(stand).get('c-http')).toBe('Denied by preToolUse hook: no rm -rf here')
      expect(existsSync(join(project, 'victim-deny', 'keep.txt'))).toBe(true)
    } finally {
      await stand.stop()
    }
  }, TEST_TIMEOUT)

  it('without COPILOT_HOOK_ALLOW_LOCALHOST Copilot skips the http entries without a word: the call runs unguarded (why setup warns)', async () => {
    const home = await tempDir('copilot-http-home')
    cleanup.push(home)
    const setup = await runInProcess(['setup', 'copilot', '--hooks', 'copilot-guard', '--transport', 'http'], { cwd: state, env: { HOME: home } })
    expect(setup.code, setup.stderr).toBe(0)
    expect(setup.stderr).toContain('COPILOT_HOOK_ALLOW_LOCALHOST=1')
    const stand = await api()
    try {
      const project = await projectWithVictims('copilot-http-project', ['victim-deny'])
      cleanup.push(project)
      const ran = await run(copilot, ['--allow-all-tools', '-p', 'Please clean up.'], { cwd: project, env: copilotEnv(copilot, home, stand.baseUrl), timeoutMs: 180_000 })
      expect(ran.code, ran.stderr).toBe(0)
      expect(existsSync(join(project, 'victim-deny'))).toBe(false)
      expect(`${ran.stdout}\n${ran.stderr}`).not.toMatch(/hook/i)
    } finally {
      await stand.stop()
    }
  }, TEST_TIMEOUT)

  it('with a token hookd does not know, hookd answers 401 and Copilot denies the call (hook errored), even with --allow-all-tools', async () => {
    const { home } = await setUp(['--transport', 'http'])
    const file = join(home, '.copilot', 'settings.json')
    await writeFile(file, (await readFile(file, 'utf8')).replaceAll(/Bearer [^"]+/g, 'Bearer wrong-token'))
    const stand = await api()
    try {
      const project = await projectWithVictims('copilot-http-project', ['victim-deny'])
      cleanup.push(project)
      const ran = await run(copilot, ['--allow-all-tools', '-p', 'Please clean up.'], { cwd: project, env: { ...copilotEnv(copilot, home, stand.baseUrl), COPILOT_HOOK_ALLOW_LOCALHOST: '1' }, timeoutMs: 180_000 })
      expect(ran.code, ran.stderr).toBe(0)
      expect(results(stand).get('c-http')).toBe('Denied by preToolUse hook from "global settings" (hook errored)')
      expect(existsSync(join(project, 'victim-deny', 'keep.txt'))).toBe(true)
    } finally {
      await stand.stop()
    }
  }, TEST_TIMEOUT)

  it("tells hookd's http entries from the user's own: setup again replaces them, --remove takes them out, --dry-run masks the token", async () => {
    const home = await tempDir('copilot-http-home')
    cleanup.push(home)
    const file = join(home, '.copilot', 'settings.json')
    await mkdir(join(home, '.copilot'))
    const mine = { type: 'http', url: 'https://hooks.example.com/audit', headers: { Authorization: 'Bearer not-hookd' }, timeoutSec: 5 }
    await writeFile(file, JSON.stringify({ model: 'gpt-5.5', hooks: { preToolUse: [mine] } }))
    const setup = (...extra: string[]) => runInProcess(['setup', 'copilot', '--hooks', 'copilot-guard', '--transport', 'http', ...extra], { cwd: state, env: { HOME: home } })
    expect((await setup()).code).toBe(0)
    expect((await setup()).code).toBe(0)
    const written = JSON.parse(await readFile(file, 'utf8')) as { model: string; hooks: Record<string, unknown[]> }
    expect(written.model).toBe('gpt-5.5')
    expect(written.hooks.preToolUse).toEqual([mine, expect.objectContaining({ type: 'http', url: expect.stringContaining('/copilot/copilot-guard?event=preToolUse') })])
    const token = await readFile(join(state, '.hookd', 'http-token'), 'utf8')
    const dry = await setup('--remove', '--dry-run')
    expect(dry.code).toBe(0)
    expect(dry.stdout).toContain('"Authorization": "Bearer ')
    expect(dry.stdout).not.toContain(token.trim())
    expect((await setup('--remove')).code).toBe(0)
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ model: 'gpt-5.5', hooks: { preToolUse: [mine] } })
  }, TEST_TIMEOUT)
})
