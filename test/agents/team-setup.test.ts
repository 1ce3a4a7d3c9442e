/**
 * A team sets hookd up once and commits it (docs/agents.md, "A team sets up once"): `hookd init
 * claude-code` writes the project's committed `.claude/settings.json`, with no secret and nothing of
 * this machine's; a second user (a home folder of their own) clones the repository, runs `hookd up`
 * once, and the real Claude Code (pinned 2.1.328, offline against the Messages API stand-in) in that
 * clone is guarded by the clone's own hooks folder. With hookd stopped, or its state folder lost, the
 * call is refused with the command that starts it; `hookd up` again brings it back, with nothing
 * changed in the project.
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { teamCommand } from '../../src/agents/settings/shim-command.js'
import { startAnthropicApi } from './support/anthropic-api.js'
import { type BashCall, oneCallPerTurn, resultOf, survived } from './support/bash-calls.js'
import { agentCli } from './support/cli.js'
import { functionResponses, startGeminiApi } from './support/gemini-api.js'
import { functionOutputs, startOpenAiApi } from './support/openai-api.js'
import { codexConfig, copilotEnv, isolatedEnv, run } from './support/other-clis.js'
import { runClaude } from './support/claude-run.js'
import { ROOT, runHookd, runInProcess } from '../support/processes.js'
import { EXAMPLE_HOOKS } from '../support/sidecar.js'

const TEST_TIMEOUT = 240_000
const KEEP = 'keep me\n'

let root = ''
let claude = ''
let repo = ''
let clone = ''
let home = ''
/** The second user's environment: their own home, hookd's state under it (not the suite's). */
let env: Record<string, string> = {}

beforeAll(async () => {
  claude = await agentCli('claude')
  root = await mkdtemp(join(tmpdir(), 'hookd-team-'))
  repo = join(root, 'repo')
  await mkdir(join(repo, 'hooks'), { recursive: true })
  await cp(join(EXAMPLE_HOOKS, 'guard', 'index.js'), join(repo, 'hooks', 'guard', 'index.js'))
  for (const name of ['victim-up', 'victim-down', 'victim-lost', 'victim-back']) {
    await mkdir(join(repo, name))
    await writeFile(join(repo, name, 'keep.txt'), KEEP)
  }
  home = join(root, 'home2')
  await mkdir(home)
  env = { HOME: home, HOOKD_STATE_DIR: '' }
}, 15 * 60_000)

afterAll(async () => {
  if (home) await runHookd(['down'], { env })
  await rm(root, { recursive: true, force: true })
})

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'init.defaultBranch=main', ...args], { cwd, encoding: 'utf8' })

/** `claude -p` in the clone, as the second user: the model asks for one `rm -rf victim`. */
async function rmIn(victim: string): Promise<{ read: ReturnType<typeof resultOf>; survived: boolean }> {
  const calls: BashCall[] = [{ id: `toolu_${victim.replace(/\W/g, '_')}`, command: `rm -rf ${victim}` }]
  const stand = await startAnthropicApi({ script: oneCallPerTurn(calls) })
  try {
    const run = await runClaude({ claude, apiUrl: stand.url, cwd: clone, env: { HOME: home } })
    expect(run.code, run.stderr).toBe(0)
    return { read: resultOf(stand, calls, calls[0]?.id as string), survived: survived(clone, victim) }
  } finally {
    await stand.stop()
  }
}

/**
 * `claude -p` in the clone while hookd cannot be asked: its entry refuses the prompt itself
 * (UserPromptSubmit fails closed), so the model is never called; what Claude Code says is returned.
 */
async function refusedPrompt(victim: string): Promise<string> {
  const stand = await startAnthropicApi({ script: oneCallPerTurn([{ id: 'toolu_refused', command: `rm -rf ${victim}` }]) })
  try {
    const run = await runClaude({ claude, apiUrl: stand.url, cwd: clone, env: { HOME: home } })
    expect(run.code, run.stderr).toBe(0)
    expect(stand.main).toHaveLength(0)
    expect(survived(clone, victim)).toBe(true)
    return String(run.result?.result)
  } finally {
    await stand.stop()
  }
}

describe('a team sets hookd up once: hookd init, commit, clone, hookd up', () => {
  it('hookd init writes committed settings with no secret and nothing of this machine', async () => {
    const ran = await runInProcess(['init', 'claude-code', '--hooks', 'guard'], { cwd: repo })
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout).toContain("hookd init: commit .claude/settings.json; each teammate then runs 'npx hookd-sandbox up' once")
    const text = await readFile(join(repo, '.claude', 'settings.json'), 'utf8')
    // Nothing of this machine: no path of it, no token.
    for (const local of [repo, root, tmpdir(), process.env.HOME ?? '/root', ROOT]) expect(text).not.toContain(local)
    expect(text).not.toMatch(/hkd_|Bearer/)
    const settings = JSON.parse(text) as { hooks: Record<string, Array<{ hooks: Array<{ type: string; command: string }> }>> }
    // guard may ask (ctx.confirm): the events that say what became of an ask come with its gate.
    expect(Object.keys(settings.hooks).sort()).toEqual(['PermissionDenied', 'PostToolUse', 'PostToolUseFailure', 'PreToolUse', 'SessionEnd', 'Stop', 'StopFailure', 'UserPromptSubmit'])
    expect(settings.hooks.PreToolUse?.[0]?.hooks[0]?.command).toBe(teamCommand('/claude-code/guard', 'hooks', 30, false))
    expect(settings.hooks.PermissionDenied?.[0]?.hooks[0]?.command).toBe(teamCommand('/claude-code/guard', 'hooks', 30, true))
    // The agents with committed hooks files, set up the same way.
    for (const agent of ['codex', 'gemini', 'copilot']) {
      const other = await runInProcess(['init', agent, '--hooks', 'guard'], { cwd: repo })
      expect(other.code, other.stderr).toBe(0)
    }
    for (const file of ['.codex/hooks.json', '.gemini/settings.json', '.github/hooks/hookd.json']) {
      const committed = await readFile(join(repo, file), 'utf8')
      for (const local of [repo, root, tmpdir(), ROOT]) expect(committed, file).not.toContain(local)
      expect(committed).toContain('hookd-hook')
    }
    // Run again, init replaces its own entries and nothing else.
    const again = await runInProcess(['init', 'codex', '--hooks', 'guard'], { cwd: repo })
    expect(again.stdout).toContain('already says this; nothing changed')
    git(repo, 'init', '-q')
    git(repo, 'add', '.')
    git(repo, 'commit', '-qm', 'hooks and their settings')
    clone = join(root, 'clone')
    git(root, 'clone', '-q', repo, clone)
  })

  it(
    "the second user runs hookd up once, and the real Claude Code in the clone is guarded by the clone's hooks",
    async () => {
      const up = await runHookd(['up', '--service', 'process'], { env, cwd: clone, timeoutMs: 90_000 })
      expect(up.code, up.stderr).toBe(0)
      expect(up.stdout).toContain(`hookd up: installed the shim at ${join(home, '.local', 'state', 'hookd', 'bin', 'hookd-hook')}`)
      expect(up.stdout).toContain("is up for this user, on ")
      const status = await runHookd(['status'], { env })
      expect(status.code).toBe(0)
      expect(status.stdout).toContain('hookd status: running')
      const { read, survived: kept } = await rmIn('victim-up')
      expect(kept).toBe(true)
      expect(read).toMatchObject({ is_error: true, text: "Dangerous command: rm -rf victim-up (asked by hookd hook 'guard')" })
      // The clone's own hooks folder serves: an edit there is what the next call runs.
      await writeFile(join(clone, 'hooks', 'guard', 'index.js'), "module.exports = { beforeToolExecute(ctx, call) { if (/victim/.test(call.arguments.command)) return { allow: false, reason: 'the clone says no' } } }\n")
      await new Promise((resolve) => setTimeout(resolve, 1500))
      const edited = await rmIn('victim-back')
      expect(edited.survived).toBe(true)
      expect(edited.read.text).toContain('the clone says no')
    },
    TEST_TIMEOUT,
  )

  it(
    'with hookd stopped, or its state folder lost, the call is refused, saying how to start it; hookd up brings it back',
    async () => {
      expect((await runHookd(['down'], { env })).stdout).toContain("this user's hookd is stopped")
      const down = await refusedPrompt('victim-down')
      expect(down).toContain('UserPromptSubmit operation blocked by hook')
      expect(down).toContain(`hookd is not running for this user (nothing answers on ${join(home, '.local', 'state', 'hookd', 'front.sock')}): start it with 'npx hookd-sandbox up'`)

      await rm(join(home, '.local', 'state', 'hookd'), { recursive: true, force: true })
      const lost = await refusedPrompt('victim-lost')
      expect(lost).toContain("hookd is not set up for this user: run 'npx hookd-sandbox up'")

      const again = await runHookd(['up', '--service', 'process'], { env, cwd: home, timeoutMs: 90_000 })
      expect(again.code, again.stderr).toBe(0)
      expect(git(clone, 'status', '--porcelain')).toBe(' M hooks/guard/index.js\n')
      const back = await rmIn('victim-lost')
      expect(back.survived).toBe(true)
      expect(back.read.text).toContain('the clone says no')
    },
    TEST_TIMEOUT,
  )
})

describe('the same committed setup guards Codex, Gemini CLI and Copilot CLI in the clone', () => {
  const PROMPT = 'Please delete the victim folder.'
  // The clone's guard refuses any call on a victim folder by now (edited above).
  /** The CLI's environment, as the second user's shell would give it: no HOOKD_STATE_DIR (the suite's own is not theirs). */
  const withoutState = (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv => {
    const { HOOKD_STATE_DIR: _, ...rest } = env
    return rest
  }
  const cliEnv = (extra: Record<string, string>): NodeJS.ProcessEnv => withoutState(isolatedEnv(home, extra))

  it(
    'Codex 0.169.0, once the user trusts the project with hookd init codex --trust',
    async () => {
      const codex = await agentCli('codex')
      const api = await startOpenAiApi((_request, index) => (index === 0 ? { calls: [{ name: 'exec_command', arguments: { cmd: 'rm -rf victim-codex' } }] } : { text: 'done' }))
      try {
        await mkdir(join(clone, 'victim-codex'))
        await writeFile(join(clone, 'victim-codex', 'keep.txt'), KEEP)
        await mkdir(join(home, '.codex'), { recursive: true })
        await writeFile(join(home, '.codex', 'config.toml'), codexConfig(api.baseUrl))
        const trust = await runInProcess(['init', 'codex', '--trust'], { cwd: clone, env: { HOME: home, CODEX_HOME: join(home, '.codex') } })
        expect(trust.code, trust.stderr).toBe(0)
        expect(await readFile(join(home, '.codex', 'config.toml'), 'utf8')).toContain(`[projects.${JSON.stringify(clone)}]\ntrust_level = "trusted"`)
        const ran = await run(codex, ['exec', '--dangerously-bypass-approvals-and-sandbox', PROMPT], {
          cwd: clone,
          env: cliEnv({ CODEX_HOME: join(home, '.codex'), STUB_OPENAI_KEY: 'stub-key' }),
          timeoutMs: 150_000,
        })
        expect(ran.code, ran.stderr).toBe(0)
        expect(survived(clone, 'victim-codex')).toBe(true)
        const last = api.requests.at(-1)?.body
        expect(last && functionOutputs(last).map((o) => o.output)).toEqual(['Command blocked by PreToolUse hook: the clone says no. Command: rm -rf victim-codex'])
      } finally {
        await api.stop()
      }
    },
    TEST_TIMEOUT,
  )

  it(
    'Gemini CLI 0.61.0, in a trusted folder',
    async () => {
      const gemini = await agentCli('gemini')
      const api = await startGeminiApi((_request, index) => (index === 0 ? { calls: [{ name: 'run_shell_command', args: { command: 'rm -rf victim-gemini' } }] } : { text: 'done' }))
      try {
        await mkdir(join(clone, 'victim-gemini'))
        await writeFile(join(clone, 'victim-gemini', 'keep.txt'), KEEP)
        await mkdir(join(home, '.gemini'), { recursive: true })
        await writeFile(join(home, '.gemini', 'settings.json'), JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } }, privacy: { usageStatisticsEnabled: false } }))
        const ran = await run(gemini, ['--yolo', '-m', 'gemini-2.5-flash', '-p', PROMPT], {
          cwd: clone,
          env: { ...cliEnv({ GEMINI_API_KEY: 'stub-key', GOOGLE_GEMINI_BASE_URL: api.baseUrl }), GEMINI_CLI_NO_RELAUNCH: 'true', GEMINI_CLI_TRUST_WORKSPACE: 'true' },
          timeoutMs: 150_000,
        })
        expect(ran.code, ran.stderr).toBe(0)
        expect(survived(clone, 'victim-gemini')).toBe(true)
        const last = api.turns.at(-1)?.body
        expect(last && functionResponses(last).map((r) => r.response)).toEqual([{ error: 'Tool execution blocked: the clone says no' }])
      } finally {
        await api.stop()
      }
    },
    TEST_TIMEOUT,
  )

  it(
    'Copilot CLI 1.0.102, in a trusted folder',
    async () => {
      const copilot = await agentCli('copilot')
      const api = await startOpenAiApi((_request, index) =>
        index === 0 ? { calls: [{ name: 'bash', arguments: { command: 'rm -rf victim-copilot', description: 'Delete the victim folder' } }] } : { text: 'done' },
      )
      try {
        await mkdir(join(clone, 'victim-copilot'))
        await writeFile(join(clone, 'victim-copilot', 'keep.txt'), KEEP)
        const ran = await run(copilot, ['--allow-all-tools', '--trust-folder', '-p', PROMPT], {
          cwd: clone,
          env: withoutState(copilotEnv(copilot, home, api.baseUrl)),
          timeoutMs: 150_000,
        })
        expect(ran.code, ran.stderr).toBe(0)
        expect(survived(clone, 'victim-copilot')).toBe(true)
        const last = api.requests.at(-1)?.body
        expect(last && functionOutputs(last).map((o) => o.output)).toEqual(['Denied by preToolUse hook: the clone says no'])
      } finally {
        await api.stop()
      }
    },
    TEST_TIMEOUT,
  )
})

describe("the committed entry's own fallback", () => {
  it('refuses (exit 2) saying to run hookd up where the shim is missing, and lets end events through', () => {
    const empty = spawnSync('sh', ['-c', teamCommand('/claude-code/guard', 'hooks', 30, false)], { env: { HOME: '/nonexistent-home', PATH: '/usr/bin:/bin' }, encoding: 'utf8', input: '{}' })
    expect(empty.status).toBe(2)
    expect(empty.stderr).toBe("hookd is not set up for this user: run 'npx hookd-sandbox up' (hookd's docs/agents.md)\n")
    const end = spawnSync('sh', ['-c', teamCommand('/claude-code/guard', 'hooks', 30, true)], { env: { HOME: '/nonexistent-home', PATH: '/usr/bin:/bin' }, encoding: 'utf8', input: '{}' })
    expect(end.status).toBe(0)
  })
})
