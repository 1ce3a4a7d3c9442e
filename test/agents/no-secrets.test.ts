/**
 * No secret lands in the project tree (docs/agents.md): after `hookd serve --http` and `hookd setup`
 * in a git repository, `git status` (untracked files included) shows no file that holds the token,
 * for every agent and both Claude Code transports; backups are kept in the user's state folder, and
 * `git add .` would commit nothing secret.
 */
import { execFileSync } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runInProcess, serveInProcess, type ServingInProcess } from '../support/processes.js'
import { EXAMPLE_HOOKS } from '../support/sidecar.js'

let repo = ''
let home = ''
let served: ServingInProcess
let token = ''

const git = (...args: string[]): string => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: repo, encoding: 'utf8' })

/** The files `git status` shows (untracked ones one by one), and which of them hold the token. */
async function secretsInStatus(): Promise<{ shown: string[]; holding: string[] }> {
  const shown = git('status', '--porcelain', '--untracked-files=all').split('\n').filter(Boolean).map((l) => l.slice(3))
  const holding: string[] = []
  for (const file of shown) if ((await readFile(join(repo, file), 'utf8').catch(() => '')).includes(token)) holding.push(file)
  return { shown, holding }
}

beforeAll(async () => {
  repo = await mkdtemp(join(tmpdir(), 'hookd-no-secrets-'))
  home = await mkdtemp(join(tmpdir(), 'hookd-no-secrets-home-'))
  git('init', '-q')
  served = await serveInProcess(['--hooks', EXAMPLE_HOOKS, '--listen', `unix:${join(repo, '.hookd', 'hookd.sock')}`, '--http', '0', '--workers', '1', '--no-watch'], { cwd: repo })
  token = (await readFile(join(repo, '.hookd', 'http-token'), 'utf8')).trim()
}, 60_000)

afterAll(async () => {
  await served?.stop()
  await rm(repo, { recursive: true, force: true })
  await rm(home, { recursive: true, force: true })
})

describe('after hookd serve --http and hookd setup in a git repository', () => {
  it('git status shows nothing of the state folder', async () => {
    expect(await secretsInStatus()).toEqual({ shown: [], holding: [] })
  })

  it('shows no file that holds the token, whichever agent and transport, run twice (the backups are not in the project)', async () => {
    const runs = [
      ['setup', 'claude-code', '--hooks', 'guard'],
      ['setup', 'claude-code', '--hooks', 'guard,audit'],
      ['setup', 'claude-code', '--hooks', 'guard', '--transport', 'http'],
      ['setup', 'claude-code', '--hooks', 'guard,audit', '--transport', 'http'],
      ['setup', 'codex', '--hooks', 'guard', '--dir', '.'],
      ['setup', 'gemini', '--hooks', 'guard', '--dir', '.'],
      ['setup', 'copilot', '--hooks', 'guard', '--dir', '.'],
      ['setup', 'cursor', '--hooks', 'guard', '--dir', '.'],
      ['setup', 'opencode', '--hooks', 'guard', '--dir', '.'],
      ['setup', 'opencode', '--hooks', 'guard,audit', '--dir', '.'],
      ['setup', 'cline', '--hooks', 'guard', '--dir', '.'],
      ['setup', 'cline', '--hooks', 'guard,audit', '--dir', '.'],
    ]
    for (const args of runs) {
      const ran = await runInProcess(args, { cwd: repo, env: { HOME: home, HOOKD_TOKEN: '' } })
      expect(ran.code, `${args.join(' ')}: ${ran.stderr}`).toBe(0)
      const { holding } = await secretsInStatus()
      expect(holding, args.join(' ')).toEqual([])
    }
    // The http transport's settings hold the token, and the repository's own exclude list hides them.
    expect(await readFile(join(repo, '.claude', 'settings.local.json'), 'utf8')).toContain(token)
    expect(await readFile(join(repo, '.git', 'info', 'exclude'), 'utf8')).toContain('/.claude/settings.local.json')
    git('add', '.')
    const staged = git('diff', '--cached', '--name-only').split('\n').filter(Boolean)
    for (const file of staged) expect(await readFile(join(repo, file), 'utf8'), file).not.toContain(token)
    expect(staged.filter((f) => f.endsWith('.bak'))).toEqual([])
  })
})
