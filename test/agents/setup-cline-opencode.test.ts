/**
 * `hookd setup cline` and `hookd setup opencode` against a running front door: Cline's scripts in its
 * hooks folder (one per event, only the ones hookd wrote ever replaced or removed, never through a
 * link), OpenCode's plugin item in opencode.json (merged beside everything else, the token's file named,
 * never the token), and `hookd init`'s refusal for both. The files they write drive the real CLIs in
 * cline-opencode-hookd.test.ts.
 */
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PLUGIN_SPEC } from '../../src/agents/opencode/opencode-settings.js'
import { shimPath } from '../../src/agents/settings/shim-command.js'
import { Sidecar } from '../../src/sidecar/sidecar.js'
import { runInProcess } from '../support/processes.js'
import { EXAMPLE_HOOKS } from '../support/sidecar.js'

let sidecar: Sidecar
let url = ''
let state = ''
let tokenFile = ''
const TOKEN = 'hkd_setup-test-token-0123456789abcdefghijklmnopq'
const dirs: string[] = []

beforeAll(async () => {
  state = await mkdtemp(join(tmpdir(), 'hookd-setup-co-state-'))
  await mkdir(join(state, '.hookd'), { mode: 0o700 })
  tokenFile = join(state, '.hookd', 'http-token')
  await writeFile(tokenFile, `${TOKEN}\n`, { mode: 0o600 })
  sidecar = await Sidecar.create({ hooks: EXAMPLE_HOOKS, workers: 1, watch: false })
  url = await sidecar.listenHttp('127.0.0.1', 0, { token: TOKEN, report: () => {} })
  await writeFile(join(state, '.hookd', 'http-url'), `${url}\n`, { mode: 0o600 })
}, 60_000)

afterAll(async () => {
  await sidecar?.stop()
  await Promise.all([state, ...dirs].map((d) => rm(d, { recursive: true, force: true })))
})

async function project(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'hookd-setup-co-project-'))
  dirs.push(dir)
  return dir
}

const setup = (args: string[]) => runInProcess(['setup', ...args], { cwd: state, env: { HOME: state } })

/** The script hookd writes for one of Cline's events. */
const script = (event: string, route: string, failOpen: boolean): string =>
  `#!/bin/sh\n# Cline runs this for its ${event} event; hookd setup wrote it, and 'hookd setup cline --remove' takes it out.\nexec ${shimPath()}${failOpen ? ' --fail-open' : ''} --token-file ${tokenFile} --timeout 30 ${url}/cline/${route}\n`

const GUARD_EVENTS = ['PreToolUse', 'SessionShutdown', 'TaskCancel', 'TaskComplete', 'TaskError', 'TaskResume', 'TaskStart', 'UserPromptSubmit']

describe('hookd setup cline', () => {
  it("writes one script per event the hooks need in .cline/hooks/, failing open where Cline runs it detached, beside the user's own scripts", async () => {
    const dir = await project()
    await mkdir(join(dir, '.cline', 'hooks'), { recursive: true })
    await writeFile(join(dir, '.cline', 'hooks', 'PreToolUse.sh'), '#!/bin/sh\necho mine\n')
    const ran = await setup(['cline', '--dir', dir, '--hooks', 'guard'])
    expect(ran.code, ran.stderr).toBe(0)
    expect((await readdir(join(dir, '.cline', 'hooks'))).sort()).toEqual([...GUARD_EVENTS, 'PreToolUse.sh'].sort())
    expect(await readFile(join(dir, '.cline', 'hooks', 'PreToolUse'), 'utf8')).toBe(script('PreToolUse', 'guard', false))
    expect(await readFile(join(dir, '.cline', 'hooks', 'TaskStart'), 'utf8')).toBe(script('TaskStart', 'guard', true))
    expect(await readFile(join(dir, '.cline', 'hooks', 'PreToolUse.sh'), 'utf8')).toBe('#!/bin/sh\necho mine\n')
    expect(ran.stdout).toContain(`  PreToolUse       -> ${url}/cline/guard`)
    // No token in any script: the shim reads the token's file.
    for (const event of GUARD_EVENTS) expect(await readFile(join(dir, '.cline', 'hooks', event), 'utf8')).not.toContain(TOKEN)
  })

  it("a second setup rewrites hookd's scripts for the new hooks and removes the ones no hook needs; --remove takes out hookd's alone", async () => {
    const dir = await project()
    expect((await setup(['cline', '--dir', dir, '--hooks', 'guard'])).code).toBe(0)
    const again = await setup(['cline', '--dir', dir, '--hooks', 'shout'])
    expect(again.code, again.stderr).toBe(0)
    expect(await readdir(join(dir, '.cline', 'hooks'))).toEqual(['PostToolUse'])
    expect(again.stdout).toContain(`hookd setup: removed ${join(dir, '.cline', 'hooks', 'PreToolUse')} (the old one is `)
    await writeFile(join(dir, '.cline', 'hooks', 'TaskStart.py'), 'print(1)\n')
    const removed = await setup(['cline', '--dir', dir, '--remove'])
    expect(removed.code, removed.stderr).toBe(0)
    expect(await readdir(join(dir, '.cline', 'hooks'))).toEqual(['TaskStart.py'])
  })

  it("refuses to put its script where a file of the event's name is not hookd's, and writes nothing", async () => {
    const dir = await project()
    await mkdir(join(dir, '.cline', 'hooks'), { recursive: true })
    await writeFile(join(dir, '.cline', 'hooks', 'PreToolUse'), '#!/bin/sh\n# mine\n')
    const ran = await setup(['cline', '--dir', dir, '--hooks', 'guard'])
    expect(ran.code).toBe(1)
    expect(ran.stderr).toContain(`${join(dir, '.cline', 'hooks', 'PreToolUse')} is not a script hookd wrote, and Cline runs PreToolUse hooks from that name; rename it (Cline runs PreToolUse.sh beside it too) and run setup again`)
    expect(await readdir(join(dir, '.cline', 'hooks'))).toEqual(['PreToolUse'])
    expect(await readFile(join(dir, '.cline', 'hooks', 'PreToolUse'), 'utf8')).toBe('#!/bin/sh\n# mine\n')
  })

  it("writes no script through a .cline a repository made a link (to the user's own hooks folder)", async () => {
    const dir = await project()
    const elsewhere = await project()
    await symlink(elsewhere, join(dir, '.cline'))
    const ran = await setup(['cline', '--dir', dir, '--hooks', 'guard'])
    expect(ran.code).toBe(1)
    expect(ran.stderr).toContain(`${join(dir, '.cline')} is a symbolic link`)
    expect(await readdir(elsewhere)).toEqual([])
  })

  it('--dry-run shows each script it would write and writes none', async () => {
    const dir = await project()
    const ran = await setup(['cline', '--dir', dir, '--hooks', 'guard', '--dry-run'])
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout).toContain(`hookd setup: would write ${join(dir, '.cline', 'hooks', 'PreToolUse')}:`)
    expect(ran.stdout).toContain("+ # Cline runs this for its PreToolUse event; hookd setup wrote it, and 'hookd setup cline --remove' takes it out.")
    expect(existsSync(join(dir, '.cline'))).toBe(false)
  })

  it("writes the user's ~/.cline/hooks by default, and $CLINE_DIR/hooks when Cline's variable is set", async () => {
    const home = await project()
    const ran = await runInProcess(['setup', 'cline', '--hooks', 'guard'], { cwd: state, env: { HOME: home } })
    expect(ran.code, ran.stderr).toBe(0)
    expect(existsSync(join(home, '.cline', 'hooks', 'PreToolUse'))).toBe(true)
    const cline = join(home, 'elsewhere')
    const moved = await runInProcess(['setup', 'cline', '--hooks', 'guard'], { cwd: state, env: { HOME: home, CLINE_DIR: cline } })
    expect(moved.code, moved.stderr).toBe(0)
    expect(existsSync(join(cline, 'hooks', 'PreToolUse'))).toBe(true)
  })
})

describe('hookd setup opencode', () => {
  const item = (route: string, events: string[]) => [PLUGIN_SPEC, { url: `${url}/opencode/${route}`, tokenFile, timeoutS: 30, events }]

  it("adds hookd's plugin with the route, the token's file and the events, beside everything else in opencode.json", async () => {
    const dir = await project()
    const theirs = ['opencode-wakatime', ['file:///opt/mine.js', { a: 1 }]]
    await writeFile(join(dir, 'opencode.json'), JSON.stringify({ $schema: 'https://opencode.ai/config.json', model: 'anthropic/x', plugin: theirs }))
    const ran = await setup(['opencode', '--dir', dir, '--hooks', 'guard'])
    expect(ran.code, ran.stderr).toBe(0)
    const text = await readFile(join(dir, 'opencode.json'), 'utf8')
    expect(text).not.toContain(TOKEN)
    expect(JSON.parse(text)).toEqual({ $schema: 'https://opencode.ai/config.json', model: 'anthropic/x', plugin: [...theirs, item('guard', ['chat.message', 'session.created', 'tool.execute.before', 'session.idle', 'session.error'])] })
    expect(PLUGIN_SPEC).toMatch(/^file:\/\/\/.*\/dist\/agents\/opencode\/plugin\.js$/)
  })

  it("a second setup replaces hookd's item; --remove takes it out and leaves the others", async () => {
    const dir = await project()
    await writeFile(join(dir, 'opencode.json'), JSON.stringify({ plugin: ['mine'] }))
    expect((await setup(['opencode', '--dir', dir, '--hooks', 'guard'])).code).toBe(0)
    expect((await setup(['opencode', '--dir', dir, '--hooks', 'shout'])).code).toBe(0)
    expect(JSON.parse(await readFile(join(dir, 'opencode.json'), 'utf8'))).toEqual({ plugin: ['mine', item('shout', ['tool.execute.after'])] })
    expect((await setup(['opencode', '--dir', dir, '--remove'])).code).toBe(0)
    expect(JSON.parse(await readFile(join(dir, 'opencode.json'), 'utf8'))).toEqual({ plugin: ['mine'] })
  })

  it("an item that only looks like hookd's (another plugin file, an extra option) is another's, kept", async () => {
    const dir = await project()
    const lookalikes = [
      ['file:///tmp/evil/dist/agents/opencode/plugin.js', { url: `${url}/opencode/guard`, tokenFile, timeoutS: 30, events: ['tool.execute.before'] }],
      [PLUGIN_SPEC, { url: `${url}/opencode/guard`, tokenFile, timeoutS: 30, events: ['tool.execute.before'], extra: true }],
    ]
    await writeFile(join(dir, 'opencode.json'), JSON.stringify({ plugin: lookalikes }))
    expect((await setup(['opencode', '--dir', dir, '--remove'])).code).toBe(0)
    expect(JSON.parse(await readFile(join(dir, 'opencode.json'), 'utf8'))).toEqual({ plugin: lookalikes })
  })
})

describe('hookd init', () => {
  it.each([
    ['opencode', "'hookd init opencode' writes nothing: OpenCode's plugin entry names this machine's paths"],
    ['cline', "'hookd init cline' writes nothing: Cline's hooks are scripts in .cline/hooks/"],
  ])('refuses %s, saying to run setup on each machine', async (agent, message) => {
    const dir = await project()
    const ran = await runInProcess(['init', agent, '--hooks', 'guard', '--dir', dir], { cwd: dir })
    expect(ran.code).toBe(2)
    expect(ran.stderr).toContain(message)
    expect(ran.stderr).toContain(`run 'hookd setup ${agent}`)
    expect(await readdir(dir)).toEqual([])
  })
})
