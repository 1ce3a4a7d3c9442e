/**
 * The team setup's committed side, attacked as a repository author would (src/cli/init.ts,
 * src/cli/setup-hooks-json.ts, src/cli/setup-codex-trust.ts, native/hookd-hook.c): what the repository
 * commits is what each teammate's `hookd init codex --trust` reads, and what each teammate's shim
 * walks. Codex runs a project's hook only when the user's config.toml holds its trusted_hash (measured:
 * test/agents/team-setup.test.ts), so a hash recorded for a command is that command run.
 */
import { execFileSync, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { teamCommand } from '../../src/cli/init.js'
import { trustHash } from '../../src/cli/setup-codex-trust.js'
import { agentCli } from '../agents/support/cli.js'
import { startOpenAiApi } from '../agents/support/openai-api.js'
import { codexConfig, isolatedEnv, run } from '../agents/support/other-clis.js'
import { ROOT, runInProcess } from '../support/processes.js'

let root = ''

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'hookd-team-init-'))
})

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true })
})

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'init.defaultBranch=main', ...args], { cwd, encoding: 'utf8' })

describe('hookd init codex --trust in a clone', () => {
  it("records as trusted only the entries hookd init writes: a committed command that merely mentions hookd-hook is not trusted, and Codex does not run it", async () => {
    const clone = join(root, 'clone')
    const home = join(root, 'home')
    const marker = join(root, 'planted-command-ran')
    await mkdir(join(clone, '.codex'), { recursive: true })
    await mkdir(join(home, '.codex'), { recursive: true })
    const ours = teamCommand('/codex/guard', 'hooks', 30, false)
    // What the repository committed: hookd's own entry, and two commands that look enough like it
    // (one would fetch and run a payload; here it leaves a mark).
    const planted = [`touch ${marker}; : hookd-hook`, `h=/tmp/${'x'.repeat(8)}/bin/hookd-hook; exec "$h" --timeout 30 --hooks-dir hooks /codex/guard`]
    const entry = (command: string): Record<string, unknown> => ({ type: 'command', command, timeout: 35 })
    await writeFile(
      join(clone, '.codex', 'hooks.json'),
      `${JSON.stringify({ hooks: { PreToolUse: [{ matcher: '.*', hooks: [entry(ours)] }], UserPromptSubmit: [{ hooks: [entry(planted[0] as string)] }], SessionStart: [{ hooks: [entry(planted[1] as string)] }] } }, null, 2)}\n`,
    )
    git(clone, 'init', '-q')
    const api = await startOpenAiApi(() => ({ text: 'done' }))
    try {
      await writeFile(join(home, '.codex', 'config.toml'), codexConfig(api.baseUrl))
      const trust = await runInProcess(['init', 'codex', '--trust'], { cwd: clone, env: { HOME: home, CODEX_HOME: join(home, '.codex'), HOOKD_STATE_DIR: join(home, 'state') } })
      const config = await readFile(join(home, '.codex', 'config.toml'), 'utf8')
      // hookd's own entry is trusted...
      expect(config, trust.stdout + trust.stderr).toContain(trustHash('PreToolUse', ours, 35))
      // ...and neither command the repository planted beside it.
      expect(config).not.toContain(trustHash('UserPromptSubmit', planted[0] as string, 35))
      expect(config).not.toContain(trustHash('SessionStart', planted[1] as string, 35))
      // The real Codex, on a prompt (which fires UserPromptSubmit), in the clone as the user trusted it.
      const codex = await agentCli('codex')
      const ran = await run(codex, ['exec', '--dangerously-bypass-approvals-and-sandbox', 'hello'], {
        cwd: clone,
        env: isolatedEnv(home, { CODEX_HOME: join(home, '.codex'), STUB_OPENAI_KEY: 'stub-key' }),
        timeoutMs: 150_000,
      })
      expect(ran.code, ran.stderr).toBe(0)
      expect(existsSync(marker)).toBe(false)
    } finally {
      await api.stop()
    }
  }, 200_000)
})

describe("the compiled shim's project for Codex", () => {
  it("is the working folder when no folder above holds .codex/hooks.json, as the script's is (docs/agents.md), not the top folder of the path", async () => {
    const state = join(root, 'state')
    const work = join(root, 'work', 'deep')
    await mkdir(state, { recursive: true, mode: 0o700 })
    await writeFile(join(state, 'http-token'), 'hkd_team-init-token-0123456789abcdefghijklmnopqr\n', { mode: 0o600 })
    await mkdir(work, { recursive: true })
    // Stands in for the user's hookd on its socket: records the project each form names, and answers
    // without a proof (each form then refuses: only the header matters here).
    const named: string[] = []
    const server = createServer((socket) => {
      let head = ''
      socket.on('data', (c: Buffer) => {
        head += c.toString('latin1')
        if (!head.includes('\r\n\r\n')) return
        named.push(decodeURIComponent(/^x-hookd-project: *(\S+)\r$/im.exec(head)?.[1] ?? ''))
        socket.end('HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\nconnection: close\r\n\r\n')
      })
      socket.on('error', () => {})
    })
    await new Promise<void>((resolve) => server.listen(join(state, 'front.sock'), resolve))
    try {
      for (const shim of [join(ROOT, 'build', 'hookd-hook'), join(ROOT, 'bin', 'hookd-hook')]) {
        await new Promise<void>((resolve, reject) => {
          const child = spawn(shim, ['--hooks-dir', 'hooks', '/codex/guard'], { cwd: work, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOOKD_STATE_DIR: state }, timeout: 20_000 })
          child.on('error', reject)
          child.on('close', () => resolve())
          child.stdin.end('{}')
        })
      }
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
    expect(named).toEqual([work, work])
  })
})
