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
import { teamCommand } from '../../src/cli/init.js'
import { startAnthropicApi } from './support/anthropic-api.js'
import { type BashCall, oneCallPerTurn, resultOf, survived } from './support/bash-calls.js'
import { agentCli } from './support/cli.js'
import { runClaude } from './support/claude-run.js'
import { runHookd, runInProcess } from '../support/processes.js'
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
    for (const local of [repo, root, tmpdir(), process.env.HOME ?? '/root', '/work/']) expect(text).not.toContain(local)
    expect(text).not.toMatch(/hkd_|Bearer/)
    const settings = JSON.parse(text) as { hooks: Record<string, Array<{ hooks: Array<{ type: string; command: string }> }>> }
    expect(Object.keys(settings.hooks).sort()).toEqual(['PreToolUse', 'SessionEnd', 'Stop', 'StopFailure', 'UserPromptSubmit'])
    expect(settings.hooks.PreToolUse?.[0]?.hooks[0]?.command).toBe(teamCommand('/claude-code/guard', 'hooks', 30, false))
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

describe("the committed entry's own fallback", () => {
  it('refuses (exit 2) saying to run hookd up where the shim is missing, and lets end events through', () => {
    const empty = spawnSync('sh', ['-c', teamCommand('/claude-code/guard', 'hooks', 30, false)], { env: { HOME: '/nonexistent-home', PATH: '/usr/bin:/bin' }, encoding: 'utf8', input: '{}' })
    expect(empty.status).toBe(2)
    expect(empty.stderr).toBe("hookd is not set up for this user: run 'npx hookd-sandbox up' (hookd's docs/agents.md)\n")
    const end = spawnSync('sh', ['-c', teamCommand('/claude-code/guard', 'hooks', 30, true)], { env: { HOME: '/nonexistent-home', PATH: '/usr/bin:/bin' }, encoding: 'utf8', input: '{}' })
    expect(end.status).toBe(0)
  })
})
