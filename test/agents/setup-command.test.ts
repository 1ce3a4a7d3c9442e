/**
 * `hookd setup codex|gemini|copilot|cursor` against a running front door: what it merges into each
 * agent's hooks file, what it leaves alone, that no token lands in those files, and what it says when
 * it cannot. (What it writes drives the real CLIs in command-clis-hookd.test.ts.)
 */
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { trustHash } from '../../src/agents/codex/trust-toml.js'
import { Sidecar } from '../../src/sidecar/sidecar.js'
import { runInProcess } from '../support/processes.js'
import { EXAMPLE_HOOKS } from '../support/sidecar.js'
import { ROOT } from './support/cli.js'

const TOKEN = 'hkd_setup-command-token-0123456789abcdefghijklmn'
// What setup writes on a machine where the install compiled the shim (command-agents.test.ts checks it was).
const SHIM = join(ROOT, 'build', 'hookd-hook')

let sidecar: Sidecar
let url = ''
let state = ''
let tokenFile = ''
const cleanup: string[] = []

beforeAll(async () => {
  state = await mkdtemp(join(tmpdir(), 'hookd-setup-command-state-'))
  await mkdir(join(state, '.hookd'), { mode: 0o700 })
  tokenFile = join(state, '.hookd', 'http-token')
  await writeFile(tokenFile, `${TOKEN}\n`, { mode: 0o600 })
  sidecar = await Sidecar.create({ hooks: EXAMPLE_HOOKS, workers: 1, watch: false })
  url = await sidecar.listenHttp('127.0.0.1', 0, { token: TOKEN, report: () => {} })
  await writeFile(join(state, '.hookd', 'http-url'), `${url}\n`, { mode: 0o600 })
}, 60_000)

afterAll(async () => {
  await sidecar?.stop()
  await Promise.all([state, ...cleanup].map((dir) => rm(dir, { recursive: true, force: true })))
})

async function temp(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `hookd-setup-command-${prefix}-`))
  cleanup.push(dir)
  return dir
}

const json = async (file: string): Promise<unknown> => JSON.parse(await readFile(file, 'utf8'))

/** The command setup writes for one event: the shim, its flags, the route. */
const shim = (route: string, options: { failOpen?: boolean; token?: string } = {}): string =>
  [SHIM, ...(options.failOpen ? ['--fail-open'] : []), '--token-file', options.token ?? tokenFile, '--timeout', '30', route.includes('?') ? `'${route}'` : route].join(' ')

describe('hookd setup codex', () => {
  it("merges into the user's hooks.json, keeps the user's own hooks and config, records hookd's hooks as trusted, and backs up", async () => {
    const home = await temp('codex-home')
    const codexHome = join(home, '.codex')
    await mkdir(codexHome)
    const mine = { matcher: 'Bash', hooks: [{ type: 'command', command: 'echo mine' }] }
    await writeFile(join(codexHome, 'hooks.json'), JSON.stringify({ hooks: { PreToolUse: [mine] } }))
    await writeFile(join(codexHome, 'config.toml'), 'model = "gpt-5.5"\n')
    const ran = await runInProcess(['setup', 'codex', '--hooks', 'guard'], { cwd: state, env: { HOME: home, CODEX_HOME: codexHome } })
    expect(ran.code, ran.stderr).toBe(0)
    const route = `${url}/codex/guard`
    const entry = (failOpen: boolean): unknown => ({ hooks: [{ type: 'command', command: shim(route, { failOpen }), timeout: 35 }] })
    expect(await json(join(codexHome, 'hooks.json'))).toEqual({
      hooks: { PreToolUse: [mine, entry(false)], UserPromptSubmit: [entry(false)], Stop: [entry(true)], Interrupt: [entry(true)], SessionEnd: [entry(true)] },
    })
    const hooksFile = join(codexHome, 'hooks.json')
    const trusted = (event: string, snake: string, group: number, failOpen: boolean): string =>
      `[hooks.state."${hooksFile}:${snake}:${group}:0"]\ntrusted_hash = "${trustHash(event, shim(route, { failOpen }), 35)}"`
    expect(await readFile(join(codexHome, 'config.toml'), 'utf8')).toBe(
      [
        'model = "gpt-5.5"',
        '',
        `# hookd: the hooks in ${hooksFile}, trusted (hookd setup codex --remove, or hookd init codex --remove, takes this block out)`,
        trusted('UserPromptSubmit', 'user_prompt_submit', 0, false),
        trusted('PreToolUse', 'pre_tool_use', 1, false),
        trusted('Stop', 'stop', 0, true),
        trusted('Interrupt', 'interrupt', 0, true),
        trusted('SessionEnd', 'session_end', 0, true),
        `# hookd: end of ${hooksFile}`,
        '',
      ].join('\n'),
    )
    expect(ran.stdout).toContain(`  5 hooks recorded as trusted in ${join(codexHome, 'config.toml')}`)
    expect(ran.stdout).toContain(`  PreToolUse           -> ${route}`)
    // The old files are kept in the user's state folder, 0600, none beside them.
    expect((await readdir(codexHome)).filter((f) => f.endsWith('.bak'))).toEqual([])
    const backups = [...ran.stdout.matchAll(/\(the old one is (\S+)\)/g)].map((m) => m[1] as string)
    expect(backups).toHaveLength(2)
    for (const backup of backups) {
      expect(backup.startsWith(join(process.env.HOOKD_STATE_DIR as string, 'backups'))).toBe(true)
      expect((await stat(backup)).mode & 0o777).toBe(0o600)
    }
    for (const file of ['hooks.json', 'config.toml']) expect(await readFile(join(codexHome, file), 'utf8')).not.toContain(TOKEN)

    const again = await runInProcess(['setup', 'codex', '--hooks', 'guard'], { cwd: state, env: { HOME: home, CODEX_HOME: codexHome } })
    expect(again.stdout).toContain(`${hooksFile} already says this; nothing changed`)
    const removed = await runInProcess(['setup', 'codex', '--remove'], { cwd: state, env: { HOME: home, CODEX_HOME: codexHome } })
    expect(removed.code, removed.stderr).toBe(0)
    expect(await json(hooksFile)).toEqual({ hooks: { PreToolUse: [mine] } })
    expect(await readFile(join(codexHome, 'config.toml'), 'utf8')).toBe('model = "gpt-5.5"\n')
  })
})

describe('hookd setup codex, where Codex trusts hooks by their place', () => {
  it("keeps hookd's entry where it was, and warns when taking it out moves the user's hooks", async () => {
    const home = await temp('codex-places')
    const codexHome = join(home, '.codex')
    await mkdir(codexHome)
    const hooksFile = join(codexHome, 'hooks.json')
    const mine = { matcher: 'Bash', hooks: [{ type: 'command', command: 'echo mine' }] }
    // An entry an earlier setup wrote with the script form of the shim: still hookd's, so replaced.
    const old = { hooks: [{ type: 'command', command: `${join(ROOT, 'bin', 'hookd-hook')} --token-file /old/token --timeout 20 http://127.0.0.1:1/codex/guard`, timeout: 25 }] }
    await writeFile(hooksFile, JSON.stringify({ hooks: { PreToolUse: [old, mine] } }))
    const env = { HOME: home, CODEX_HOME: codexHome }
    const ran = await runInProcess(['setup', 'codex', '--hooks', 'https-only'], { cwd: state, env })
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stderr).toBe('')
    const route = `${url}/codex/https-only`
    expect(await json(hooksFile)).toEqual({ hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: shim(route), timeout: 35 }] }, mine] } })
    expect(await readFile(join(codexHome, 'config.toml'), 'utf8')).toContain(`[hooks.state."${hooksFile}:pre_tool_use:0:0"]`)

    const removed = await runInProcess(['setup', 'codex', '--remove'], { cwd: state, env })
    expect(removed.code, removed.stderr).toBe(0)
    expect(await json(hooksFile)).toEqual({ hooks: { PreToolUse: [mine] } })
    expect(removed.stderr).toContain(`hookd setup: warning: other hooks of PreToolUse in ${hooksFile} moved; Codex trusts hooks by their place, so review them in Codex (/hooks) or they are skipped`)
  })
})

describe('hookd setup gemini|copilot|cursor --dir', () => {
  it("writes each agent's project file in its own shape, says the agent must trust the project, and no token", async () => {
    const dir = await temp('project')
    const run = (agent: string): ReturnType<typeof runInProcess> => runInProcess(['setup', agent, '--dir', dir, '--hooks', 'guard,shout'], { cwd: state, env: { HOME: dir } })
    const gemini = await run('gemini')
    expect(gemini.code, gemini.stderr).toBe(0)
    expect(gemini.stderr).toContain("hookd setup: note: Gemini CLI runs a project's hooks only in a trusted folder")
    const g = (failOpen: boolean, matcher?: string): unknown => ({
      ...(matcher ? { matcher } : {}),
      hooks: [{ type: 'command', command: shim(`${url}/gemini/guard,shout`, { failOpen }), name: 'hookd', timeout: 35_000 }],
    })
    expect(await json(join(dir, '.gemini', 'settings.json'))).toEqual({
      hooks: { BeforeAgent: [g(false)], BeforeTool: [g(false, '*')], AfterTool: [g(false, '*')], AfterAgent: [g(true)], SessionEnd: [g(true)] },
    })

    expect((await run('copilot')).code).toBe(0)
    const c = (event: string, failOpen = false): unknown => [{ type: 'command', bash: shim(`${url}/copilot/guard,shout?event=${event}`, { failOpen }), timeoutSec: 35 }]
    expect(await json(join(dir, '.github', 'hooks', 'hookd.json'))).toEqual({
      version: 1,
      hooks: {
        userPromptSubmitted: c('userPromptSubmitted', true),
        preToolUse: c('preToolUse'),
        postToolUse: c('postToolUse'),
        postToolUseFailure: c('postToolUseFailure'),
        agentStop: c('agentStop', true),
        sessionEnd: c('sessionEnd', true),
      },
    })

    expect((await run('cursor')).code).toBe(0)
    const k = (failOpen = false): unknown => [{ command: shim(`${url}/cursor/guard,shout`, { failOpen }) }]
    const cursor = (await json(join(dir, '.cursor', 'hooks.json'))) as { version: number; hooks: Record<string, unknown> }
    expect(cursor.version).toBe(1)
    expect(Object.keys(cursor.hooks)).toEqual([
      'beforeSubmitPrompt',
      'beforeShellExecution',
      'beforeMCPExecution',
      'beforeReadFile',
      'afterShellExecution',
      'afterMCPExecution',
      'afterFileEdit',
      'stop',
    ])
    expect(cursor.hooks.beforeShellExecution).toEqual(k())
    expect(cursor.hooks.stop).toEqual(k(true))
    for (const file of [join(dir, '.gemini', 'settings.json'), join(dir, '.github', 'hooks', 'hookd.json'), join(dir, '.cursor', 'hooks.json')]) {
      expect(await readFile(file, 'utf8')).not.toContain(TOKEN)
    }
  })
})

describe('hookd setup with a tenant token', () => {
  it('keeps a --token in a 0600 file under ~/.config/hookd/tokens/ that the entries name; --dry-run shows it as <token> and writes nothing', async () => {
    const home = await temp('token-home')
    const args = ['setup', 'cursor', '--hooks', 'guard', '--token', TOKEN]
    const dry = await runInProcess([...args, '--dry-run'], { cwd: state, env: { HOME: home } })
    expect(dry.code, dry.stderr).toBe(0)
    expect(dry.stdout).toContain(`hookd setup: would write ${join(home, '.cursor', 'hooks.json')}:`)
    expect(dry.stdout).toContain(`would write ${join(home, '.config', 'hookd', 'tokens')}`)
    expect(dry.stdout).toContain('+ <token>')
    expect(dry.stdout).not.toContain(TOKEN)
    await expect(stat(join(home, '.cursor'))).rejects.toThrow()
    await expect(stat(join(home, '.config'))).rejects.toThrow()

    const ran = await runInProcess(args, { cwd: state, env: { HOME: home } })
    expect(ran.code, ran.stderr).toBe(0)
    const [kept] = await readdir(join(home, '.config', 'hookd', 'tokens'))
    const keptFile = join(home, '.config', 'hookd', 'tokens', kept as string)
    expect(await readFile(keptFile, 'utf8')).toBe(`${TOKEN}\n`)
    expect((await stat(keptFile)).mode & 0o777).toBe(0o600)
    const text = await readFile(join(home, '.cursor', 'hooks.json'), 'utf8')
    expect(text).not.toContain(TOKEN)
    expect((JSON.parse(text) as { hooks: Record<string, unknown> }).hooks.beforeShellExecution).toEqual([{ command: shim(`${url}/cursor/guard`, { token: keptFile }) }])
  })
})

describe('hookd setup for a command agent, when it cannot do its job', () => {
  it('says what is wrong and changes nothing', async () => {
    const home = await temp('bad-home')
    await mkdir(join(home, '.gemini'))
    await writeFile(join(home, '.gemini', 'settings.json'), '{"hooks": ')
    const bad = await runInProcess(['setup', 'gemini', '--hooks', 'guard'], { cwd: state, env: { HOME: home } })
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain('settings.json is not valid JSON')
    expect(await readFile(join(home, '.gemini', 'settings.json'), 'utf8')).toBe('{"hooks": ')

    const event = await runInProcess(['setup', 'codex', '--hooks', 'guard', '--events', 'PreToolUse,BeforeTool'], { cwd: state, env: { HOME: home } })
    expect(event.code).toBe(2)
    expect(event.stderr).toContain("'BeforeTool' is not a Codex event hookd maps; known: SessionStart, UserPromptSubmit, PreToolUse, PermissionRequest, PostToolUse, SubagentStart, SubagentStop, PreCompact, PostCompact, Stop, Interrupt, SessionEnd")
    const agent = await runInProcess(['setup', 'aider', '--hooks', 'guard'], { cwd: state, env: { HOME: home } })
    expect(agent.code).toBe(2)
    expect(agent.stderr).toContain("'hookd setup' knows the agents claude-code, codex, gemini, copilot, cursor, opencode, cline; 'aider' is not one of them")
    const unknown = await runInProcess(['setup', 'copilot', '--hooks', 'gaurd'], { cwd: state, env: { HOME: home } })
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain(`hookd at ${url}/copilot/gaurd answered 404: unknown hook 'gaurd'`)
    await expect(stat(join(home, '.codex'))).rejects.toThrow()
    await expect(stat(join(home, '.copilot'))).rejects.toThrow()
  })
})
