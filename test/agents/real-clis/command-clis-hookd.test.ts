/**
 * hookd guarding the real Codex CLI, Gemini CLI and Copilot CLI (pinned in scripts/agent-cli.sh,
 * installed into .cache/agents/ on first use), each driven offline by a stand-in of the model API it
 * speaks. One `hookd serve --http` runs the example guard for all three; `hookd setup AGENT --hooks
 * guard` (run in-process: the same main(argv, io) as the built command, without a process start)
 * writes the agent's own user hooks file in a temp HOME, as a user would, so the test covers what
 * setup writes (for Codex: the trust it records, without which Codex skips the hooks silently).
 * Each agent then runs one task: the model asks to run `rm -rf victim`, the guard refuses through
 * the shim setup wrote (build/hookd-hook, compiled at install), the folder survives and the model
 * reads why.
 *
 * Cursor is not here: its agent cannot run offline (cursor-contract.test.ts says why and checks its
 * documented JSON instead). The contracts these rely on, fail-open cases included, are measured in
 * codex-contract.test.ts, gemini-contract.test.ts and copilot-contract.test.ts.
 */
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Serving, runInProcess, startServe, stopProcess } from '../../support/processes.js'
import { EXAMPLE_HOOKS } from '../../support/sidecar.js'
import { agentCli } from '../support/cli.js'
import { functionResponses, startGeminiApi } from '../support/gemini-api.js'
import { functionOutputs, startOpenAiApi } from '../support/openai-api.js'
import { codexConfig, copilotEnv, geminiEnv, isolatedEnv, projectWithVictim, run, tempDir } from '../support/other-clis.js'

const TEST_TIMEOUT = 240_000
const PROMPT = 'Please delete the victim folder.'

let state = ''
let serving: Serving
const cleanup: string[] = []

beforeAll(async () => {
  state = await mkdtemp(join(tmpdir(), 'hookd-command-clis-state-'))
  serving = await startServe(['--hooks', EXAMPLE_HOOKS, '--listen', `unix:${join(state, 'hookd.sock')}`, '--http', '0', '--workers', '1', '--audit', join(state, 'audit.jsonl')], {
    cwd: state,
    timeoutMs: 60_000,
  })
}, 120_000)

afterAll(async () => {
  if (serving) await stopProcess(serving.child)
  await Promise.all([state, ...cleanup].map((dir) => rm(dir, { recursive: true, force: true })))
})

/** A temp HOME and a project holding victim/, with `hookd setup AGENT --hooks guard` run for that HOME. */
async function setUp(agent: string, before?: (home: string) => Promise<void>): Promise<{ home: string; project: string }> {
  const home = await tempDir(`${agent}-home`)
  const project = await projectWithVictim(`${agent}-project`)
  cleanup.push(home, project)
  await before?.(home)
  const setup = await runInProcess(['setup', agent, '--hooks', 'guard'], { cwd: state, env: { HOME: home, CODEX_HOME: '' } })
  expect(setup.code, setup.stderr).toBe(0)
  return { home, project }
}

const survived = (project: string): boolean => existsSync(join(project, 'victim', 'keep.txt'))

describe('hookd guards the agents with command hooks', () => {
  it(
    'Codex 0.169.0: the guard refuses `rm -rf victim` through the trusted hooks setup wrote; the model reads why',
    async () => {
      const codex = await agentCli('codex')
      const api = await startOpenAiApi((_request, index) => (index === 0 ? { calls: [{ name: 'exec_command', arguments: { cmd: 'rm -rf victim' } }] } : { text: 'done' }))
      try {
        const { home, project } = await setUp('codex', async (h) => {
          await mkdir(join(h, '.codex'))
          await writeFile(join(h, '.codex', 'config.toml'), codexConfig(api.baseUrl))
        })
        // No --dangerously-bypass-hook-trust: the hooks run because setup recorded them as trusted.
        const ran = await run(codex, ['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', PROMPT], {
          cwd: project,
          env: isolatedEnv(home, { CODEX_HOME: join(home, '.codex'), STUB_OPENAI_KEY: 'stub-key' }),
          timeoutMs: 150_000,
        })
        expect(ran.code, ran.stderr).toBe(0)
        expect(survived(project)).toBe(true)
        const last = api.requests.at(-1)?.body
        expect(last && functionOutputs(last).map((o) => o.output)).toEqual(['Command blocked by PreToolUse hook: refused by the user. Command: rm -rf victim'])
      } finally {
        await api.stop()
      }
    },
    TEST_TIMEOUT,
  )

  it(
    'Gemini CLI 0.61.0: the guard refuses `rm -rf victim` (setup merged into settings.json beside the auth); the model reads why',
    async () => {
      const gemini = await agentCli('gemini')
      const api = await startGeminiApi((_request, index) => (index === 0 ? { calls: [{ name: 'run_shell_command', args: { command: 'rm -rf victim' } }] } : { text: 'done' }))
      try {
        const { home, project } = await setUp('gemini', async (h) => {
          await mkdir(join(h, '.gemini'))
          // Usage statistics off: offline, their upload only delays the exit.
          const settings = { security: { auth: { selectedType: 'gemini-api-key' } }, privacy: { usageStatisticsEnabled: false } }
          await writeFile(join(h, '.gemini', 'settings.json'), JSON.stringify(settings))
        })
        const merged = JSON.parse(await readFile(join(home, '.gemini', 'settings.json'), 'utf8')) as Record<string, unknown>
        expect(merged).toMatchObject({ security: { auth: { selectedType: 'gemini-api-key' } }, privacy: { usageStatisticsEnabled: false }, hooks: { BeforeTool: expect.any(Array) } })
        const ran = await run(gemini, ['--skip-trust', '--yolo', '-m', 'gemini-2.5-flash', '-p', PROMPT], {
          cwd: project,
          // Gemini CLI restarts itself once to raise Node's heap limit (seconds of a second start here);
          // it runs its hooks the same either way, and sets this variable for them itself.
          env: { ...geminiEnv(home, api.baseUrl), GEMINI_CLI_NO_RELAUNCH: 'true' },
          timeoutMs: 150_000,
        })
        expect(ran.code, ran.stderr).toBe(0)
        expect(survived(project)).toBe(true)
        const last = api.turns.at(-1)?.body
        expect(last && functionResponses(last).map((r) => r.response)).toEqual([{ error: 'Tool execution blocked: refused by the user' }])
      } finally {
        await api.stop()
      }
    },
    TEST_TIMEOUT,
  )

  it(
    "Copilot CLI 1.0.102: the guard's confirm is Copilot's ask, which -p denies: `rm -rf victim` does not run; the model reads why",
    async () => {
      const copilot = await agentCli('copilot')
      const api = await startOpenAiApi((_request, index) =>
        index === 0 ? { calls: [{ name: 'bash', arguments: { command: 'rm -rf victim', description: 'Delete the victim folder' } }] } : { text: 'done' },
      )
      try {
        const { home, project } = await setUp('copilot')
        const ran = await run(copilot, ['--allow-all-tools', '-p', PROMPT], {
          cwd: project,
          env: copilotEnv(copilot, home, api.baseUrl),
          timeoutMs: 150_000,
        })
        expect(ran.code, ran.stderr).toBe(0)
        expect(survived(project)).toBe(true)
        const last = api.requests.at(-1)?.body
        expect(last && functionOutputs(last).map((o) => o.output)).toEqual(["Denied by preToolUse hook (unable to ask user for confirmation): Dangerous command: rm -rf victim (asked by hookd hook 'guard')"])
        // The decision log: asked, with the question; then denied, since no postToolUse came for the call by agentStop.
        const audited = async (): Promise<Array<Record<string, unknown>>> =>
          (await readFile(join(state, 'audit.jsonl'), 'utf8')).split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>)
        const asked = (await audited()).filter((l) => l.agent === 'copilot' && l.point === 'beforeToolExecute')
        expect(asked).toEqual([expect.objectContaining({ decision: { outcome: 'asked', asked: [{ hook: 'guard', title: 'Dangerous command', body: 'rm -rf victim' }] } })])
        await expect.poll(async () => (await audited()).filter((l) => l.decisionId === asked[0]?.decisionId && 'outcome' in l), { timeout: 10_000 }).toEqual([
          expect.objectContaining({ outcome: 'denied', by: 'agent', via: 'run ended' }),
        ])
      } finally {
        await api.stop()
      }
    },
    TEST_TIMEOUT,
  )
})

