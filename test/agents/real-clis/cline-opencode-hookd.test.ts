/**
 * hookd guarding the real OpenCode and Cline CLIs (pinned in scripts/agent-cli.sh, installed into
 * .cache/agents/ on first use), each driven offline by a stand-in of a model API it speaks: OpenCode's
 * `anthropic` provider pointed at the Anthropic stand-in, Cline's `openai-native` provider at the
 * Responses stand-in. One `hookd serve --http` runs the example guard and two hooks of this test's
 * (`rewrite`: `echo before` becomes `echo after`, and `echo whoami` says which subagent ran it;
 * `shout`, the example that upper-cases results); `hookd setup AGENT` (in-process, as a user would)
 * writes the agent's own files in a temp HOME: OpenCode's plugin entry in opencode.json, Cline's
 * scripts in ~/.cline/hooks/. Each agent then runs one task whose turns are a refusal (the guard's
 * confirm, which neither can put to a person, so it refuses), a rewrite, and a subagent's call.
 * The contracts these rely on are in contracts/opencode-contract.test.ts and cline-contract.test.ts.
 */
import { existsSync } from 'node:fs'
import { cp, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Serving, runInProcess, startServe, stopProcess } from '../../support/processes.js'
import { EXAMPLE_HOOKS } from '../../support/sidecar.js'
import { type Reply, startAnthropicApi, toolResults } from '../support/anthropic-api.js'
import { agentCli } from '../support/cli.js'
import { functionOutputs, startOpenAiApi } from '../support/openai-api.js'
import { isolatedEnv, projectWithVictim, run, tempDir } from '../support/other-clis.js'

const TEST_TIMEOUT = 300_000

let state = ''
let serving: Serving
const cleanup: string[] = []

/** Rewrites `echo before` to `echo after`, and `echo whoami` to say the subagent that runs it; serves beforeRun, so a run's start is in the audit log. */
const REWRITE = `module.exports = {
  beforeRun: function () {
    return {}
  },
  beforeToolExecute: function (ctx, call) {
    if (call.name !== 'shell') return {}
    var command = call.arguments.command
    if (command === 'echo before') return { arguments: { command: 'echo after' } }
    if (command === 'echo whoami') return { arguments: { command: 'echo subagent:' + (call.subagent ? call.subagent.id : 'none') } }
    return {}
  },
}
`

beforeAll(async () => {
  state = await mkdtemp(join(tmpdir(), 'hookd-cline-opencode-state-'))
  const hooks = join(state, 'hooks')
  await mkdir(join(hooks, 'rewrite'), { recursive: true })
  await cp(join(EXAMPLE_HOOKS, 'guard'), join(hooks, 'guard'), { recursive: true })
  await cp(join(EXAMPLE_HOOKS, 'shout'), join(hooks, 'shout'), { recursive: true })
  await writeFile(join(hooks, 'rewrite', 'hook.json'), JSON.stringify({ description: 'rewrites two test commands' }))
  await writeFile(join(hooks, 'rewrite', 'index.js'), REWRITE)
  serving = await startServe(['--hooks', hooks, '--listen', `unix:${join(state, 'hookd.sock')}`, '--http', '0', '--workers', '1', '--audit', join(state, 'audit.jsonl')], {
    cwd: state,
    timeoutMs: 60_000,
  })
}, 120_000)

afterAll(async () => {
  if (serving) await stopProcess(serving.child)
  await Promise.all([state, ...cleanup].map((dir) => rm(dir, { recursive: true, force: true })))
})

async function setUp(agent: string, hooks: string, before?: (home: string) => Promise<void>): Promise<{ home: string; project: string }> {
  const home = await tempDir(`${agent}-home`)
  const project = await projectWithVictim(`${agent}-project`)
  cleanup.push(home, project)
  await before?.(home)
  const setup = await runInProcess(['setup', agent, '--hooks', hooks], { cwd: state, env: { HOME: home } })
  expect(setup.code, setup.stderr).toBe(0)
  return { home, project }
}

const survived = (project: string): boolean => existsSync(join(project, 'victim', 'keep.txt'))

async function audited(agent: string): Promise<Array<Record<string, unknown>>> {
  const text = await readFile(join(state, 'audit.jsonl'), 'utf8')
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.agent === agent)
}

const bash = (command: string): Reply => ({ tools: [{ name: 'bash', input: { command, description: 'Run it' } }] })

describe('OpenCode 1.18.33 through hookd plugin', () => {
  it(
    'the guard refuses `rm -rf victim` (its confirm cannot be asked), a rewrite changes a command, a result is rewritten, and a subagent names itself',
    async () => {
      const opencode = await agentCli('opencode')
      // Main turns in order: the parent's three calls, its task (a subagent), the subagent's call and end, the parent's end.
      const turns: Reply[] = [
        bash('rm -rf victim'),
        bash('echo before'),
        { tools: [{ name: 'task', input: { description: 'sub', prompt: 'SUBTASK: run echo whoami', subagent_type: 'general' } }] },
        bash('echo whoami'),
        { text: 'sub done' },
        { text: 'done' },
      ]
      const api = await startAnthropicApi({ script: (_request, index) => turns[index] ?? { text: 'done' } })
      try {
        // The user's opencode.json names the stand-in; setup merges hookd's plugin beside it.
        const provider = { provider: { anthropic: { options: { baseURL: `${api.url}/v1`, apiKey: 'stub-key' } } }, model: 'anthropic/claude-sonnet-4-5' }
        const { home, project } = await setUp('opencode', 'guard,rewrite,shout', async (h) => {
          await mkdir(join(h, '.config', 'opencode'), { recursive: true })
          await writeFile(join(h, '.config', 'opencode', 'opencode.json'), JSON.stringify(provider))
        })
        const written = JSON.parse(await readFile(join(home, '.config', 'opencode', 'opencode.json'), 'utf8')) as { plugin: unknown[] }
        expect(written).toMatchObject(provider)
        expect(written.plugin).toEqual([
          [expect.stringMatching(/^file:\/\/.*\/dist\/agents\/opencode\/plugin\.js$/), { url: expect.stringMatching(/\/opencode\/guard,rewrite,shout$/), tokenFile: join(state, '.hookd', 'http-token'), timeoutS: 30, events: expect.arrayContaining(['tool.execute.before', 'tool.execute.after']) }],
        ])
        const ran = await run(opencode, ['run', 'Please delete the victim folder.'], {
          cwd: project,
          env: isolatedEnv(home, { XDG_DATA_HOME: join(home, '.local', 'share'), XDG_STATE_HOME: join(home, '.local', 'state'), OPENCODE_DISABLE_MODELS_FETCH: '1', OPENCODE_DISABLE_AUTOUPDATE: '1', OPENCODE_DISABLE_LSP_DOWNLOAD: '1', OPENCODE_DISABLE_SHARE: '1' }),
          timeoutMs: 200_000,
        })
        expect(ran.code, ran.stderr).toBe(0)
        expect(survived(project)).toBe(true)
        const results = api.main.map((r) => toolResults(r).map((t) => ({ error: t.is_error, text: t.text })))
        expect(results[1]).toEqual([{ error: true, text: 'refused by the user' }])
        expect(results[2]).toEqual([{ error: false, text: expect.stringContaining('AFTER') }])
        expect(results[4]?.[0]?.text).toMatch(/SUBAGENT:SES_/)
        const gates = (await audited('opencode')).filter((l) => l.point === 'beforeToolExecute')
        expect(gates.length).toBeGreaterThanOrEqual(4)
        // A lifecycle event: chat.message (or session.created) opens the run once, for the root session
        // and its subagent alike (beforeRun). The run's end, session.idle, is posted as OpenCode exits,
        // and did not always reach hookd before `opencode run` was gone (measured: 2 runs of 5 had no
        // afterRun line, with the plugin's dispose waiting), so it is not asserted here.
        expect((await audited('opencode')).filter((l) => l.point === 'beforeRun').map((l) => l.session)).toEqual([gates[0]?.session])
      } finally {
        await api.stop()
      }
    },
    TEST_TIMEOUT,
  )
})

describe('Cline 3.0.65 through its hook scripts and the shim', () => {
  it(
    'a rewrite becomes overrideInput, a subagent names itself, and the guard refuses `rm -rf victim` by stopping the task',
    async () => {
      const cline = await agentCli('cline')
      const turns = [
        { calls: [{ name: 'run_commands', arguments: { commands: ['echo before'] } }] },
        { calls: [{ name: 'spawn_agent', arguments: { systemPrompt: 'You run one command.', task: 'SUBTASK: run echo whoami' } }] },
        { calls: [{ name: 'run_commands', arguments: { commands: ['echo whoami'] } }] },
        { text: 'sub done' },
        { calls: [{ name: 'run_commands', arguments: { commands: ['rm -rf victim'] } }] },
        { text: 'done' },
      ]
      const api = await startOpenAiApi((_request, index) => turns[index] ?? { text: 'done' })
      try {
        const { home, project } = await setUp('cline', 'guard,rewrite')
        const scripts = (await readdir(join(home, '.cline', 'hooks'))).sort()
        expect(scripts).toEqual(['PreToolUse', 'SessionShutdown', 'TaskCancel', 'TaskComplete', 'TaskError', 'TaskResume', 'TaskStart', 'UserPromptSubmit'])
        const env = isolatedEnv(home)
        const auth = await run(cline, ['auth', 'openai-native', '-k', 'stub-key', '-m', 'gpt-5.5', '-b', api.baseUrl], { cwd: project, env, timeoutMs: 60_000 })
        expect(auth.code, auth.stderr).toBe(0)
        const ran = await run(cline, ['--json', 'Please delete the victim folder.'], { cwd: project, env, timeoutMs: 200_000 })
        expect(survived(project)).toBe(true)
        const outputs = api.requests.map((r) => functionOutputs(r.body).map((o) => o.output).join('\n'))
        expect(outputs[1]).toContain('after')
        expect(outputs[3]).toMatch(/subagent:agent_/)
        // The refusal stops the task: no turn after the refused call.
        expect(api.requests.length, ran.stdout).toBe(5)
        expect(ran.stdout).toMatch(/"finishReason":"aborted"/)
        const gates = (await audited('cline')).filter((l) => l.point === 'beforeToolExecute')
        expect(gates.at(-1)).toMatchObject({ decision: { outcome: 'refused' } })
        // Lifecycle events: TaskStart opens the run once (the subagent's is subagent:start), and the stopped
        // task's TaskError or SessionShutdown ends it (afterRun, which the guard serves).
        expect((await audited('cline')).filter((l) => l.point === 'beforeRun').length).toBe(1)
        await expect.poll(async () => (await audited('cline')).filter((l) => l.point === 'afterRun').length, { timeout: 10_000 }).toBe(1)
      } finally {
        await api.stop()
      }
    },
    TEST_TIMEOUT,
  )
})
