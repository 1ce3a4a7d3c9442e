/**
 * `hookd setup claude-code` against a running front door: what it writes into Claude Code's settings,
 * what it leaves alone, and what it says when it cannot. (The settings it writes drive the real CLI
 * in claude-code-hookd.test.ts.)
 */
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { shimPath } from '../../src/agents/settings/shim-command.js'
import { Sidecar } from '../../src/sidecar/sidecar.js'
import { runInProcess } from '../support/processes.js'
import { EXAMPLE_HOOKS } from '../support/sidecar.js'

let sidecar: Sidecar
let url = ''
let state = ''
const TOKEN = 'hkd_setup-test-token-0123456789abcdefghijklmnopq'

beforeAll(async () => {
  state = await mkdtemp(join(tmpdir(), 'hookd-setup-state-'))
  await mkdir(join(state, '.hookd'), { mode: 0o700 })
  await writeFile(join(state, '.hookd', 'http-token'), `${TOKEN}\n`, { mode: 0o600 })
  sidecar = await Sidecar.create({ hooks: EXAMPLE_HOOKS, workers: 1, watch: false })
  url = await sidecar.listenHttp('127.0.0.1', 0, { token: TOKEN, report: () => {} })
  await writeFile(join(state, '.hookd', 'http-url'), `${url}\n`, { mode: 0o600 })
}, 60_000)

afterAll(async () => {
  await sidecar?.stop()
  await rm(state, { recursive: true, force: true })
})

async function project(local?: unknown): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'hookd-setup-project-'))
  if (local !== undefined) {
    await mkdir(join(dir, '.claude'))
    await writeFile(join(dir, '.claude', 'settings.local.json'), typeof local === 'string' ? local : JSON.stringify(local))
  }
  return dir
}

const settingsOf = async (dir: string): Promise<Record<string, unknown>> => JSON.parse(await readFile(join(dir, '.claude', 'settings.local.json'), 'utf8')) as Record<string, unknown>

/** hookd's entry for one event: the shim, proving itself with the sidecar's token file (failing open at the end events). */
const entry = (route: string, failClosed: boolean, origin = url): Record<string, unknown> => ({
  type: 'command',
  command: `${shimPath()}${failClosed ? '' : ' --fail-open'} --token-file ${join(state, '.hookd', 'http-token')} --timeout 30 ${origin}/claude-code/${route}`,
  timeout: 35,
})

/** The same with --transport http: Claude Code's own http entry, the token in its header. */
const httpEntry = (route: string, failClosed: boolean): Record<string, unknown> => ({
  type: 'http',
  url: `${url}/claude-code/${route}`,
  headers: { Authorization: `Bearer ${TOKEN}` },
  timeout: 30,
  ...(failClosed ? { onFailure: 'block' } : {}),
})

describe('hookd setup claude-code', () => {
  it('merges fail-closed entries for the events the hooks need, keeps everything else, and backs up the old file', async () => {
    const mine = { hooks: [{ type: 'command', command: 'echo mine' }] }
    const old = { model: 'opus', permissions: { allow: ['Bash(ls)'] }, hooks: { Stop: [mine] } }
    const dir = await project(old)
    const ran = await runInProcess(['setup', 'claude-code', '--dir', dir, '--hooks', 'guard,shout'], { cwd: state })
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout).toContain(`hookd setup: wrote ${join(dir, '.claude', 'settings.local.json')} (the old one is `)
    expect(ran.stdout).toContain(`  PreToolUse         -> ${url}/claude-code/guard,shout`)
    expect(await settingsOf(dir)).toEqual({
      model: 'opus',
      permissions: { allow: ['Bash(ls)'] },
      hooks: {
        Stop: [mine, { hooks: [entry('guard,shout', false)] }],
        UserPromptSubmit: [{ hooks: [entry('guard,shout', true)] }],
        PreToolUse: [{ matcher: '*', hooks: [entry('guard,shout', true)] }],
        PostToolUse: [{ matcher: '*', hooks: [entry('guard,shout', true)] }],
        PostToolUseFailure: [{ matcher: '*', hooks: [entry('guard,shout', true)] }],
        // guard may ask: PermissionDenied says an ask was denied (auto mode); it refuses nothing, so it fails open.
        PermissionDenied: [{ matcher: '*', hooks: [entry('guard,shout', false)] }],
        StopFailure: [{ hooks: [entry('guard,shout', false)] }],
        SessionEnd: [{ hooks: [entry('guard,shout', false)] }],
      },
    })
    expect((await stat(join(dir, '.claude', 'settings.local.json'))).mode & 0o777).toBe(0o600)
    // No secret in the settings, and the backup lives in the user's state folder, not in the project.
    expect(await readFile(join(dir, '.claude', 'settings.local.json'), 'utf8')).not.toContain(TOKEN)
    expect((await readdir(join(dir, '.claude'))).filter((f) => f.endsWith('.bak'))).toEqual([])
    const backup = /\(the old one is (\S+)\)/.exec(ran.stdout)?.[1] as string
    expect(backup.startsWith(join(process.env.HOOKD_STATE_DIR as string, 'backups'))).toBe(true)
    expect((await stat(backup)).mode & 0o777).toBe(0o600)
    expect(JSON.parse(await readFile(backup, 'utf8'))).toEqual(old)
    await rm(dir, { recursive: true, force: true })
  })

  it("--transport http writes Claude Code's own http entries, with the token, failing closed", async () => {
    const dir = await project()
    const ran = await runInProcess(['setup', 'claude-code', '--dir', dir, '--hooks', 'guard', '--transport', 'http', '--events', 'PreToolUse'], { cwd: state })
    expect(ran.code, ran.stderr).toBe(0)
    expect(await settingsOf(dir)).toEqual({ hooks: { PreToolUse: [{ matcher: '*', hooks: [httpEntry('guard', true)] }] } })
    // Run again with the command transport: the http entries go, the command entries come.
    expect((await runInProcess(['setup', 'claude-code', '--dir', dir, '--hooks', 'guard', '--events', 'PreToolUse'], { cwd: state })).code).toBe(0)
    expect(await settingsOf(dir)).toEqual({ hooks: { PreToolUse: [{ matcher: '*', hooks: [entry('guard', true)] }] } })
    const bad = await runInProcess(['setup', 'claude-code', '--dir', dir, '--hooks', 'guard', '--transport', 'carrier-pigeon'], { cwd: state })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("--transport takes command or http, not 'carrier-pigeon'")
    await rm(dir, { recursive: true, force: true })
  })

  it('run again, it replaces its own entries and nothing else; --remove takes them out', async () => {
    const mine = { matcher: 'Bash', hooks: [{ type: 'command', command: 'echo mine' }] }
    const dir = await project({ hooks: { PreToolUse: [mine] } })
    expect((await runInProcess(['setup', 'claude-code', '--dir', dir, '--hooks', 'guard,shout'], { cwd: state })).code).toBe(0)
    expect((await runInProcess(['setup', 'claude-code', '--dir', dir, '--hooks', 'https-only'], { cwd: state })).code).toBe(0)
    expect(await settingsOf(dir)).toEqual({ hooks: { PreToolUse: [mine, { matcher: '*', hooks: [entry('https-only', true)] }] } })
    const again = await runInProcess(['setup', 'claude-code', '--dir', dir, '--hooks', 'https-only'], { cwd: state })
    expect(again.stdout).toContain('already says this; nothing changed')
    expect((await runInProcess(['setup', 'claude-code', '--dir', dir, '--remove'], { cwd: state })).code).toBe(0)
    expect(await settingsOf(dir)).toEqual({ hooks: { PreToolUse: [mine] } })
    await rm(dir, { recursive: true, force: true })
  })

  it('--dry-run shows the change, without the token, and writes nothing; --remove --dry-run masks an old setup\'s token too', async () => {
    const dir = await project()
    const ran = await runInProcess(['setup', 'claude-code', '--dir', dir, '--hooks', 'https-only', '--dry-run', '--transport', 'http'], { cwd: state })
    expect(ran.code).toBe(0)
    expect(ran.stdout).toContain(`would write ${join(dir, '.claude', 'settings.local.json')}`)
    expect(ran.stdout).toContain('+               "Authorization": "Bearer <token>"')
    expect(ran.stdout).not.toContain(TOKEN)
    await expect(stat(join(dir, '.claude'))).rejects.toThrow()
    // A file an older setup wrote, its token in the header, and one from another sidecar's token.
    const other = 'hkd_another-sidecars-token-0123456789abcdefghijk'
    const old = await project({ hooks: { PreToolUse: [{ matcher: '*', hooks: [httpEntry('guard', true), { ...httpEntry('audit', true), headers: { Authorization: `Bearer ${other}` } }] }] } })
    const remove = await runInProcess(['setup', 'claude-code', '--dir', old, '--remove', '--dry-run'], { cwd: state })
    expect(remove.code).toBe(0)
    expect(remove.stdout).toContain('"Authorization":"Bearer <token>"')
    expect(remove.stdout).not.toContain(TOKEN)
    expect(remove.stdout).not.toContain(other)
    await rm(dir, { recursive: true, force: true })
    await rm(old, { recursive: true, force: true })
  })

  it('--hooks given twice runs both hooks, in the order given; a one-value flag given twice is refused', async () => {
    const dir = await project()
    const ran = await runInProcess(['setup', 'claude-code', '--dir', dir, '--hooks', 'guard', '--hooks', 'https-only', '--dry-run'], { cwd: state })
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout).toContain(`${url}/claude-code/guard,https-only`)
    const twice = await runInProcess(['setup', 'claude-code', '--dir', dir, '--hooks', 'guard', '--url', 'http://127.0.0.1:9', '--url', 'http://127.0.0.1:8'], { cwd: state })
    expect(twice.code).toBe(2)
    expect(twice.stderr).toContain("--url was given twice ('http://127.0.0.1:9', then 'http://127.0.0.1:8'); it takes one value: give it once")
    await rm(dir, { recursive: true, force: true })
  })

  it("--user writes the user's settings, a profile posts to its route, --events skips asking", async () => {
    const home = await mkdtemp(join(tmpdir(), 'hookd-setup-home-'))
    const ran = await runInProcess(['setup', 'claude-code', '--user', '--profile', 'strict', '--events', 'PreToolUse', '--url', 'http://127.0.0.1:9'], {
      cwd: state,
      env: { HOME: home },
    })
    expect(ran.code, ran.stderr).toBe(0)
    const user = JSON.parse(await readFile(join(home, '.claude', 'settings.json'), 'utf8')) as Record<string, unknown>
    expect(user).toEqual({
      hooks: { PreToolUse: [{ matcher: '*', hooks: [entry('profile/strict', true, 'http://127.0.0.1:9')] }] },
    })
    await rm(home, { recursive: true, force: true })
  })

  it('warns when other settings would keep the hooks from running', async () => {
    const dir = await project({ disableAllHooks: true, allowedHttpHookUrls: ['https://corp.example/*'] })
    const ran = await runInProcess(['setup', 'claude-code', '--dir', dir, '--hooks', 'https-only', '--transport', 'http'], { cwd: state })
    expect(ran.code).toBe(0)
    expect(ran.stderr).toContain('sets "disableAllHooks": true, which turns off every hook of every settings file')
    expect(ran.stderr).toContain(`lists "allowedHttpHookUrls" and none matches ${url}/claude-code/https-only: Claude Code will not post to hookd (add "${url}/*")`)
    await rm(dir, { recursive: true, force: true })
    // The committed settings.json may switch hooks off too; a setting of the wrong type drops the file
    // written (measured: Claude Code skips a file whose "env" is a string); a malformed entry does nothing.
    const other = await project({ env: 'PATH=/x', hooks: { Stop: [{ hooks: [{ type: 'command' }] }] } })
    await writeFile(join(other, '.claude', 'settings.json'), JSON.stringify({ disableAllHooks: true }))
    const more = await runInProcess(['setup', 'claude-code', '--dir', other, '--hooks', 'https-only'], { cwd: state })
    expect(more.code).toBe(0)
    expect(more.stderr).toContain(`hookd setup: warning: ${join(other, '.claude', 'settings.json')} sets "disableAllHooks": true`)
    expect(more.stderr).toContain(`hookd setup: warning: ${join(other, '.claude', 'settings.local.json')}: env`)
    expect(more.stderr).toContain("Claude Code drops this whole file when a setting has the wrong type, hookd's entries with it")
    expect(more.stderr).toContain(`${join(other, '.claude', 'settings.local.json')}: hooks.Stop[0].hooks[0] is a command hook with no "command"; Claude Code runs nothing for it`)
    expect(more.stderr).not.toContain('allowedHttpHookUrls')
    await rm(other, { recursive: true, force: true })
  })

  it('says what is wrong, and changes nothing, when it cannot do its job', async () => {
    const dir = await project('{"hooks": ')
    const bad = await runInProcess(['setup', 'claude-code', '--dir', dir, '--hooks', 'guard'], { cwd: state })
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain('settings.local.json is not valid JSON')
    expect(await readFile(join(dir, '.claude', 'settings.local.json'), 'utf8')).toBe('{"hooks": ')
    await rm(dir, { recursive: true, force: true })

    const fresh = await project()
    const unknown = await runInProcess(['setup', 'claude-code', '--dir', fresh, '--hooks', 'gaurd'], { cwd: state })
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain(`hookd setup: hookd at ${url}/claude-code/gaurd answered 404: unknown hook 'gaurd' (available: audit, guard, https-only, redact, shout, today)`)
    const dead = createServer()
    await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve))
    const port = (dead.address() as AddressInfo).port
    await new Promise<void>((resolve) => dead.close(() => resolve()))
    const down = await runInProcess(['setup', 'claude-code', '--dir', fresh, '--hooks', 'guard', '--url', `http://127.0.0.1:${port}`], { cwd: state })
    expect(down.code).toBe(1)
    expect(down.stderr).toContain(`cannot reach hookd at http://127.0.0.1:${port} (connect ECONNREFUSED 127.0.0.1:${port}); start 'hookd serve --http ...' first`)
    const noToken = await runInProcess(['setup', 'claude-code', '--dir', fresh, '--hooks', 'guard', '--url', url], { cwd: fresh })
    expect(noToken.code).toBe(2)
    expect(noToken.stderr).toContain(`no token: ${join(fresh, '.hookd', 'http-token')} is missing or empty`)
    const both = await runInProcess(['setup', 'claude-code', '--dir', fresh, '--hooks', 'guard', '--profile', 'x'], { cwd: state })
    expect(both.code).toBe(2)
    expect(both.stderr).toContain('pass --hooks a,b or --profile NAME (one of them)')
    const start = await runInProcess(['setup', 'claude-code', '--dir', fresh, '--events', 'SessionStart', '--hooks', 'guard', '--transport', 'http'], { cwd: state })
    expect(start.stderr).toContain('Claude Code does not send SessionStart to http hooks')
    await expect(stat(join(fresh, '.claude'))).rejects.toThrow()
    await rm(fresh, { recursive: true, force: true })
  })
})
