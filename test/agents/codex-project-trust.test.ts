/**
 * What Codex CLI 0.169.0 needs before it runs a project's committed hooks, and what trusting the
 * project hands it besides (what src/agents/codex/trust.ts and src/agents/codex/project-reads.ts rest on),
 * measured with the real CLI (`codex exec`) against the Responses API stand-in. Each run is a git
 * repository with `.codex/hooks.json` whose hook leaves a mark, and a CODEX_HOME whose config.toml
 * says what the user trusts; the hashes are the ones hookd records (src/agents/codex/trust-toml.ts trustHash).
 */
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { trustHash } from '../../src/agents/codex/trust-toml.js'
import { agentCli } from './support/cli.js'
import { startOpenAiApi } from './support/openai-api.js'
import { codexConfig, isolatedEnv, run, tempDir } from './support/other-clis.js'

const TEST_TIMEOUT = 180_000
let codex = ''
let root = ''

beforeAll(async () => {
  codex = await agentCli('codex')
  root = await tempDir('codex-project-trust')
}, 60_000)

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true })
})

interface Case {
  /** The event the project's hook is under, and its group's matcher. */
  event: 'UserPromptSubmit' | 'PreToolUse'
  matcher?: string
  /** What the user's config.toml records: the project trusted, and the hook's hash (with which matcher). */
  projectTrusted: boolean
  hash?: { matcher?: string }
  /** Files of the repository besides .codex/hooks.json, given the folder where marks go. */
  files?: (marks: string) => Record<string, string>
  /** The folder below the repository Codex runs in. */
  cwd?: string
}

/** Runs Codex once in a repository set up as `c` says; which marks were left. */
async function codexIn(name: string, c: Case): Promise<{ hook: boolean; other: boolean }> {
  const repo = join(root, name, 'repo')
  const home = join(root, name, 'home')
  const marks = join(root, name)
  await mkdir(join(repo, '.codex'), { recursive: true })
  await mkdir(join(home, '.codex'), { recursive: true })
  execFileSync('git', ['init', '-q', repo])
  const command = `touch ${join(marks, 'hook-ran')}`
  const hooksFile = join(repo, '.codex', 'hooks.json')
  const group = { ...(c.matcher !== undefined ? { matcher: c.matcher } : {}), hooks: [{ type: 'command', command, timeout: 10 }] }
  await writeFile(hooksFile, JSON.stringify({ hooks: { [c.event]: [group] } }))
  for (const [file, text] of Object.entries(c.files?.(marks) ?? {})) {
    await mkdir(join(repo, file, '..'), { recursive: true })
    await writeFile(join(repo, file), text)
  }
  // One tool call on the first turn (PreToolUse fires), then an answer.
  const api = await startOpenAiApi((_request, index) => (index === 0 ? { calls: [{ name: 'exec_command', arguments: { cmd: 'echo hi' } }] } : { text: 'done' }))
  let config = codexConfig(api.baseUrl)
  if (c.projectTrusted) config += `\n[projects.${JSON.stringify(repo)}]\ntrust_level = "trusted"\n`
  if (c.hash) config += `\n[hooks.state.${JSON.stringify(`${hooksFile}:${c.event === 'PreToolUse' ? 'pre_tool_use' : 'user_prompt_submit'}:0:0`)}]\ntrusted_hash = ${JSON.stringify(trustHash(c.event, command, 10, c.hash.matcher))}\n`
  await writeFile(join(home, '.codex', 'config.toml'), config)
  const cwd = join(repo, c.cwd ?? '')
  await mkdir(cwd, { recursive: true })
  try {
    const ran = await run(codex, ['exec', '--dangerously-bypass-approvals-and-sandbox', 'hello'], {
      cwd,
      env: isolatedEnv(home, { CODEX_HOME: join(home, '.codex'), STUB_OPENAI_KEY: 'stub-key' }),
      timeoutMs: 150_000,
    })
    expect(ran.code, ran.stderr).toBe(0)
    // The model was asked, and the tool call answered: the run went through the events tested.
    expect(api.requests).toHaveLength(2)
  } finally {
    await api.stop()
  }
  return { hook: existsSync(join(marks, 'hook-ran')), other: existsSync(join(marks, 'other-ran')) }
}

const mcpServer = (marks: string): string => `[mcp_servers.helper]\ncommand = "sh"\nargs = ["-c", "touch ${join(marks, 'other-ran')}; sleep 1"]\n`

describe("Codex 0.169.0 and a project's committed hooks", () => {
  it(
    "runs a project's hook only with both the project trusted and the hook's hash recorded",
    async () => {
      expect((await codexIn('hash-only', { event: 'UserPromptSubmit', projectTrusted: false, hash: {} })).hook).toBe(false)
      expect((await codexIn('project-only', { event: 'UserPromptSubmit', projectTrusted: true })).hook).toBe(false)
      expect((await codexIn('both', { event: 'UserPromptSubmit', projectTrusted: true, hash: {} })).hook).toBe(true)
    },
    TEST_TIMEOUT,
  )

  it(
    "hashes a tool event's group matcher in: hookd's hash holds it",
    async () => {
      expect((await codexIn('matcher-left-out', { event: 'PreToolUse', matcher: '.*', projectTrusted: true, hash: {} })).hook).toBe(false)
      expect((await codexIn('matcher-in', { event: 'PreToolUse', matcher: '.*', projectTrusted: true, hash: { matcher: '.*' } })).hook).toBe(true)
    },
    TEST_TIMEOUT,
  )

  it(
    "reads a matcher of letters, digits, _ and | as exact names, tested against the name the event carries (setup's narrowed matchers, codex-agent.ts)",
    async () => {
      const shellCall = (name: string, matcher: string) => codexIn(name, { event: 'PreToolUse', matcher, projectTrusted: true, hash: { matcher } })
      expect((await shellCall('exact-bash', 'Bash')).hook).toBe(true)
      expect((await shellCall('exact-list', 'Bash|apply_patch')).hook).toBe(true)
      // Neither another tool's name nor a part of Bash's (which an unanchored regular expression would match).
      expect((await shellCall('exact-patch', 'apply_patch')).hook).toBe(false)
      expect((await shellCall('exact-part', 'Bas')).hook).toBe(false)
    },
    TEST_TIMEOUT * 2,
  )

  it(
    "takes no hook trust from the project's own config.toml, but, once trusted, starts the MCP servers a .codex below names",
    async () => {
      const selfTrust = await codexIn('self-trust', {
        event: 'UserPromptSubmit',
        projectTrusted: true,
        files: (marks) => ({
          '.codex/config.toml': `[hooks.state.${JSON.stringify(`${join(root, 'self-trust', 'repo', '.codex', 'hooks.json')}:user_prompt_submit:0:0`)}]\ntrusted_hash = ${JSON.stringify(trustHash('UserPromptSubmit', `touch ${join(marks, 'hook-ran')}`, 10))}\n`,
        }),
      })
      expect(selfTrust.hook).toBe(false)
      const below = await codexIn('below', { event: 'UserPromptSubmit', projectTrusted: true, hash: {}, cwd: 'tools/sub', files: (marks) => ({ 'tools/sub/.codex/config.toml': mcpServer(marks) }) })
      expect(below).toEqual({ hook: true, other: true })
      const untrusted = await codexIn('untrusted', { event: 'UserPromptSubmit', projectTrusted: false, hash: {}, files: (marks) => ({ '.codex/config.toml': mcpServer(marks) }) })
      expect(untrusted).toEqual({ hook: false, other: false })
    },
    TEST_TIMEOUT,
  )
})
