/**
 * A repository cannot steer `hookd setup` or `hookd serve` (docs/containment.md, "The agents' path"):
 * nothing a repository commits under `.hookd/` (a URL, a token, links) is taken as hookd's own state,
 * and setup never writes through a committed link or runs the folder's own git commands. Each case is
 * a checkout an attacker prepared; an "attacker" server on loopback records what reaches it. Where
 * setup keeps the token out of git (`--transport http`), it writes only the repository's own exclude
 * list, and never a token into a file git tracks.
 */
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { chmod, lstat, mkdir, mkdtemp, readFile, readdir, readlink, rm, symlink, writeFile } from 'node:fs/promises'
import { type IncomingHttpHeaders, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newToken } from '../../../src/sidecar/tenancy/tenant-token.js'
import { runInProcess, serveInProcess } from '../../support/processes.js'
import { EXAMPLE_HOOKS } from '../../support/sidecar.js'

let attacker: { url: string; seen: Array<{ path: string; headers: IncomingHttpHeaders }>; close(): Promise<void> }
let root: string

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'hookd-repo-state-'))
  const seen: Array<{ path: string; headers: IncomingHttpHeaders }> = []
  const server = createServer((req, res) => {
    seen.push({ path: req.url ?? '', headers: req.headers })
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ hooks: [{ name: 'guard', status: 'ready', points: ['beforeToolExecute'] }], events: ['PreToolUse'] }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  attacker = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, close: () => new Promise((resolve) => server.close(() => resolve())) }
})

afterAll(async () => {
  await attacker.close()
  await rm(root, { recursive: true, force: true })
})

/** The regular files under `dir` (links not followed) whose text holds `needle`. */
async function filesHolding(dir: string, needle: string): Promise<string[]> {
  const found: string[] = []
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name)
    if (entry.isFile() && (await readFile(path, 'utf8')).includes(needle)) found.push(path)
  }
  return found
}

/** A checkout: a project folder, a home with a secret, and `.hookd/` as the repository committed it. */
async function checkout(name: string, state: Record<string, string | { link: string }>, mode = 0o755): Promise<{ project: string; home: string; secret: string }> {
  const project = join(root, name, 'project')
  const home = join(root, name, 'home')
  await mkdir(join(project, '.hookd'), { recursive: true })
  await mkdir(join(home, '.ssh'), { recursive: true })
  const secret = `vault-${newToken()}`
  await writeFile(join(home, '.vault-token'), `${secret}\n`, { mode: 0o600 })
  await writeFile(join(home, '.ssh', 'authorized_keys'), 'ssh-ed25519 AAAA the-user\n', { mode: 0o600 })
  for (const [file, content] of Object.entries(state)) {
    const path = join(project, '.hookd', file)
    if (typeof content === 'string') await writeFile(path, content, { mode: mode === 0o700 ? 0o600 : 0o644 })
    else await symlink(content.link.replace('$HOME', home), path)
  }
  await chmod(join(project, '.hookd'), mode)
  return { project, home, secret }
}

describe('a repository cannot steer hookd setup', () => {
  it("a committed .hookd/http-url does not send $HOOKD_TOKEN to the repository's URL", async () => {
    const { project, home } = await checkout('url', { 'http-url': `${attacker.url}\n`, 'http-token': `${newToken()}\n` })
    const before = attacker.seen.length
    const ran = await runInProcess(['setup', 'claude-code', '--hooks', 'guard'], { cwd: project, env: { HOME: home, HOOKD_TOKEN: 'tenant-secret-token-xxxxxxxxxxxxxxxxxxxxxxxxxxxxx' } })
    expect(ran.code).not.toBe(0)
    expect(ran.stderr).toContain(`${join(project, '.hookd')} is open to other users (mode 0755, hookd makes it 0700), so hookd does not trust it as its own state`)
    expect(attacker.seen.length).toBe(before)
    expect(existsSync(join(project, '.claude'))).toBe(false)
  })

  it("a committed .hookd/http-token that links to one of the user's secrets is never read, sent or adopted", async () => {
    // As a checkout under umask 077 would make it: the folder and files pass the mode rule, the link does not.
    const { project, home, secret } = await checkout('link', { 'http-url': `${attacker.url}\n`, 'http-token': { link: '$HOME/.vault-token' } }, 0o700)
    const before = attacker.seen.length
    const setup = await runInProcess(['setup', 'claude-code', '--hooks', 'guard'], { cwd: project, env: { HOME: home, HOOKD_TOKEN: '' } })
    expect(setup.code).not.toBe(0)
    expect(setup.stderr).toContain(`${join(project, '.hookd', 'http-token')} is a symbolic link`)
    expect(attacker.seen.length).toBe(before)
    expect(JSON.stringify(attacker.seen)).not.toContain(secret)

    const serve = await runInProcess(['serve', '--hooks', EXAMPLE_HOOKS, '--listen', `unix:${join(project, 'hookd.sock')}`, '--http', '0', '--workers', '1', '--no-watch'], { cwd: project, env: { HOME: home } })
    expect(serve.code).toBe(1)
    expect(serve.stderr).toContain(`${join(project, '.hookd', 'http-token')} is a symbolic link`)
    expect(await readFile(join(home, '.vault-token'), 'utf8')).toBe(`${secret}\n`)
  })

  it('a URL from the state folder must be a loopback address', async () => {
    const { project, home } = await checkout('remote', { 'http-url': 'http://hookd.example.com:7390\n', 'http-token': `${newToken()}\n` }, 0o700)
    const ran = await runInProcess(['setup', 'claude-code', '--hooks', 'guard'], { cwd: project, env: { HOME: home, HOOKD_TOKEN: '' } })
    expect(ran.code).toBe(2)
    expect(ran.stderr).toContain(`${join(project, '.hookd', 'http-url')} names http://hookd.example.com:7390, which is not a loopback address`)
    expect(ran.stderr).toContain('pass --url')
  })
})

describe('a repository cannot steer hookd serve', () => {
  it("never writes through a committed link (the URL does not land in ~/.ssh/authorized_keys)", async () => {
    const { project, home } = await checkout('serve-link', { 'http-url': { link: '$HOME/.ssh/authorized_keys' } }, 0o700)
    const served = await serveInProcess(['--hooks', EXAMPLE_HOOKS, '--listen', `unix:${join(project, 'hookd.sock')}`, '--http', '0', '--workers', '1', '--no-watch'], { cwd: project, env: { HOME: home } })
    try {
      expect(served.output.stderr).toMatch(/hookd: http on http:\/\/127\.0\.0\.1:\d+/)
    } finally {
      expect(await served.stop()).toBe(0)
    }
    expect(await readFile(join(home, '.ssh', 'authorized_keys'), 'utf8')).toBe('ssh-ed25519 AAAA the-user\n')
    // The link was replaced by hookd's own file, not written through.
    const url = await lstat(join(project, '.hookd', 'http-url'))
    expect(url.isFile()).toBe(true)
    expect(url.mode & 0o777).toBe(0o600)
  })

  it('refuses a committed state folder, saying what to do', async () => {
    const { project, home } = await checkout('serve-open', { 'http-token': `${newToken()}\n` })
    const ran = await runInProcess(['serve', '--hooks', EXAMPLE_HOOKS, '--listen', `unix:${join(project, 'hookd.sock')}`, '--http', '0', '--workers', '1', '--no-watch'], { cwd: project, env: { HOME: home } })
    expect(ran.code).toBe(1)
    expect(ran.stderr).toContain(`${join(project, '.hookd')} is open to other users (mode 0755, hookd makes it 0700)`)
    expect(ran.stderr).toContain(`remove ${join(project, '.hookd')} if hookd did not make it`)
  })

  it('a FIFO as the token file is refused at once, not waited on', async () => {
    const dir = join(root, 'fifo')
    await mkdir(dir, { recursive: true, mode: 0o700 })
    execFileSync('mkfifo', ['-m', '600', join(dir, 'token')])
    const ran = await runInProcess(['serve', '--hooks', EXAMPLE_HOOKS, '--listen', `unix:${join(dir, 'hookd.sock')}`, '--http', '0', '--http-token-file', 'token', '--workers', '1', '--no-watch'], { cwd: dir })
    expect(ran.code).toBe(1)
    expect(ran.stderr).toContain(`${join(dir, 'token')} is not a regular file`)
  })
})

describe('hookd setup --dir in a prepared checkout', () => {
  const flags = ['--hooks', 'guard', '--events', 'PreToolUse', '--url', 'http://127.0.0.1:7390', '--token', 'tok-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx']

  it("refuses a committed .claude that links to the user's own settings", async () => {
    const { project, home } = await checkout('claude-link', {})
    await mkdir(join(home, '.claude'), { recursive: true })
    await writeFile(join(home, '.claude', 'settings.local.json'), '{"theme":"mine"}\n')
    await symlink(join(home, '.claude'), join(project, '.claude'))
    const ran = await runInProcess(['setup', 'claude-code', ...flags, '--dir', project], { cwd: project, env: { HOME: home, HOOKD_TOKEN: '' } })
    expect(ran.code).toBe(1)
    expect(ran.stderr).toContain(`${join(project, '.claude')} is a symbolic link`)
    expect(await readFile(join(home, '.claude', 'settings.local.json'), 'utf8')).toBe('{"theme":"mine"}\n')
  })

  it("refuses a settings file that links to one of the user's files, and copies none of it into the project", async () => {
    const { project, home } = await checkout('file-link', {})
    await writeFile(join(home, '.bashrc'), 'export SECRET_KEY=xyz\n')
    await mkdir(join(project, '.claude'))
    await symlink(join(home, '.bashrc'), join(project, '.claude', 'settings.local.json'))
    const ran = await runInProcess(['setup', 'claude-code', ...flags, '--dir', project], { cwd: project, env: { HOME: home, HOOKD_TOKEN: '' } })
    expect(ran.code).toBe(1)
    expect(ran.stderr).toContain(`${join(project, '.claude', 'settings.local.json')} is a symbolic link`)
    expect(await readFile(join(home, '.bashrc'), 'utf8')).toBe('export SECRET_KEY=xyz\n')
    expect(await filesHolding(project, 'SECRET_KEY')).toEqual([])
  })

  it('refuses a dangling link, which would create a file elsewhere', async () => {
    const { project, home } = await checkout('dangling', {})
    await mkdir(join(project, '.codex'))
    await symlink(join(home, 'planted.json'), join(project, '.codex', 'hooks.json'))
    const ran = await runInProcess(['setup', 'codex', ...flags, '--dir', project], { cwd: project, env: { HOME: home, HOOKD_TOKEN: '' } })
    expect(ran.code).toBe(1)
    expect(ran.stderr).toContain(`${join(project, '.codex', 'hooks.json')} is a symbolic link`)
    expect(existsSync(join(home, 'planted.json'))).toBe(false)
    expect(await readlink(join(project, '.codex', 'hooks.json'))).toBe(join(home, 'planted.json'))
  })

  const git = (cwd: string, ...args: string[]): string =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'init.defaultBranch=main', ...args], { cwd, encoding: 'utf8' })

  it("never appends to another repository's exclude list through a .git file, and says what to add where", async () => {
    const { project, home } = await checkout('gitdir-file', {})
    const other = join(root, 'gitdir-file', 'other')
    git(root, 'init', '-q', other)
    const exclude = join(other, '.git', 'info', 'exclude')
    const before = await readFile(exclude, 'utf8')
    // What git follows wherever it points: this folder's git commands run on the other repository.
    await writeFile(join(project, '.git'), `gitdir: ${join(other, '.git')}\n`)
    const ran = await runInProcess(['setup', 'claude-code', ...flags, '--transport', 'http', '--dir', project], { cwd: project, env: { HOME: home, HOOKD_TOKEN: '' } })
    expect(ran.code, ran.stderr).toBe(0)
    expect(await readFile(exclude, 'utf8')).toBe(before)
    expect(ran.stderr).toContain(
      `hookd setup: warning: ${join(project, '.git')} names ${join(other, '.git')}, which is not a worktree of this folder (a worktree's is <repository>/worktrees/<name>: this may be a submodule's, or another repository's); hookd setup writes to no exclude list it cannot tell is this repository's own. Keep ${join(project, '.claude', 'settings.local.json')} out of git yourself: add '/.claude/settings.local.json' to this repository's info/exclude`,
    )
    expect(await readFile(join(project, '.claude', 'settings.local.json'), 'utf8')).toContain('"type": "http"')
    // A worktree's gitdir that does not point back at this .git file is not followed either.
    const worktrees = join(other, '.git', 'worktrees', 'planted')
    await mkdir(worktrees, { recursive: true })
    await writeFile(join(worktrees, 'gitdir'), `${join(other, 'elsewhere', '.git')}\n`)
    await writeFile(join(worktrees, 'commondir'), '../..\n')
    await writeFile(join(project, '.git'), `gitdir: ${worktrees}\n`)
    const again = await runInProcess(['setup', 'claude-code', ...flags, '--transport', 'http', '--dir', project], { cwd: project, env: { HOME: home, HOOKD_TOKEN: '' } })
    expect(again.code, again.stderr).toBe(0)
    expect(again.stderr).toContain(`(its gitdir file does not point back at ${join(project, '.git')})`)
    expect(await readFile(exclude, 'utf8')).toBe(before)
  })

  it('a real git worktree gets the exclude of the repository it belongs to, which git reads for it', async () => {
    const { home } = await checkout('worktree', {})
    const main = join(root, 'worktree', 'main')
    const tree = join(root, 'worktree', 'tree')
    git(root, 'init', '-q', main)
    git(main, 'commit', '-q', '--allow-empty', '-m', 'first')
    git(main, 'worktree', 'add', '-q', '-b', 'side', tree)
    const ran = await runInProcess(['setup', 'claude-code', ...flags, '--transport', 'http', '--dir', tree], { cwd: tree, env: { HOME: home, HOOKD_TOKEN: '' } })
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stderr).toBe('')
    expect(await readFile(join(main, '.git', 'info', 'exclude'), 'utf8')).toContain("# hookd setup: this file holds hookd's token\n/.claude/settings.local.json\n")
    expect(git(tree, 'status', '--porcelain', '--untracked-files=all')).toBe('')
  })

  it("refuses --transport http where git tracks .claude/settings.local.json, writing nothing; the default transport still works", async () => {
    const { project, home } = await checkout('tracked', {})
    git(project, 'init', '-q')
    await mkdir(join(project, '.claude'))
    await writeFile(join(project, '.claude', 'settings.local.json'), '{"theme":"team"}\n')
    git(project, 'add', '.claude/settings.local.json')
    git(project, 'commit', '-qm', 'settings')
    const file = join(project, '.claude', 'settings.local.json')
    const ran = await runInProcess(['setup', 'claude-code', ...flags, '--transport', 'http', '--dir', project], { cwd: project, env: { HOME: home, HOOKD_TOKEN: '' } })
    expect(ran.code).toBe(1)
    expect(ran.stderr).toBe(
      `hookd setup: ${file} is tracked by git (git ls-files lists it), so --transport http would put hookd's token in a file that is committed. Untrack it ('git rm --cached ${file}', and add it to .gitignore), or use the default --transport command, whose entries hold no secret\n`,
    )
    expect(await readFile(file, 'utf8')).toBe('{"theme":"team"}\n')
    expect(await filesHolding(project, 'tok-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx')).toEqual([])
    // The default transport's entries name the token's file, never the token: written.
    const command = await runInProcess(['setup', 'claude-code', ...flags, '--dir', project], { cwd: project, env: { HOME: home, HOOKD_TOKEN: '' } })
    expect(command.code, command.stderr).toBe(0)
    expect(await readFile(file, 'utf8')).toContain('"type": "command"')
    expect(await filesHolding(project, 'tok-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx')).toEqual([])
    // Untracked, --transport http works as before.
    git(project, 'rm', '-q', '--cached', '.claude/settings.local.json')
    const http = await runInProcess(['setup', 'claude-code', ...flags, '--transport', 'http', '--dir', project], { cwd: project, env: { HOME: home, HOOKD_TOKEN: '' } })
    expect(http.code, http.stderr).toBe(0)
    // Its removal from the index is staged; the file itself is excluded, so `git add .` leaves it out.
    expect(git(project, 'status', '--porcelain', '--untracked-files=all')).toBe('D  .claude/settings.local.json\n')
  })

  it("never runs the folder's own git commands (core.fsmonitor)", async () => {
    const { project, home } = await checkout('fsmonitor', {})
    execFileSync('git', ['init', '-q', project])
    const marker = join(root, 'fsmonitor', 'pwned')
    execFileSync('git', ['-C', project, 'config', 'core.fsmonitor', `touch ${marker}`])
    const ran = await runInProcess(['setup', 'claude-code', ...flags, '--dir', project], { cwd: project, env: { HOME: home, HOOKD_TOKEN: '' } })
    expect(ran.code).toBe(0)
    expect(existsSync(marker)).toBe(false)
  })
})
