/**
 * hookd guarding the real Claude Code CLI (pinned 2.1.328, installed into .cache/agents/ on first use),
 * driven offline by the Messages API stand-in: `hookd serve --http` runs the example hooks, `hookd
 * setup claude-code` writes the project's settings as a user would, and `claude -p` runs the task.
 * Each test checks what happened on disk and what the model read next.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type AnthropicApi, type MessagesRequest, type Reply, bash, startAnthropicApi, toolResults } from './support/anthropic-api.js'
import { agentCli } from './support/cli.js'
import { type ClaudeRun, projectDir, runClaude } from './support/claude-run.js'
import { type Serving, runHookd, startServe, stopProcess } from '../support/processes.js'
import { EXAMPLE_HOOKS, hook, writeTree } from '../support/sidecar.js'

const TEST_TIMEOUT = 240_000
const VICTIM = { 'victim/keep.txt': 'keep me\n' }

let claude = ''
let state = ''
let hooks = ''
let serving: Serving
let url = ''
const cleanups: Array<() => Promise<void>> = []

beforeAll(async () => {
  claude = await agentCli('claude')
  const examples = Object.fromEntries(
    await Promise.all(['guard', 'shout'].map(async (name) => [`${name}/index.js`, await readFile(join(EXAMPLE_HOOKS, name, 'index.js'), 'utf8')] as const)),
  )
  hooks = await writeTree({
    ...examples,
    'rewrite-shell/index.js': hook({
      beforeToolExecute: `function (ctx, call) { if (call.name === 'shell' && call.arguments.command === 'echo original') return { arguments: { command: 'echo rewritten by hookd' } } }`,
    }),
    'lifecycle/index.js': hook({
      beforeRun: `function (ctx, run) { ctx.notify({ title: 'beforeRun', body: run.agentId }) }`,
      afterRun: `function (ctx, event) { ctx.notify({ title: 'afterRun', body: event.reason }) }`,
    }),
    'strict-thrower/index.js': hook({ beforeToolExecute: "function () { throw new Error('policy service unreachable') }" }),
    'strict-thrower/hook.json': JSON.stringify({ onError: 'refuse' }),
    'strict.profile.json': JSON.stringify({ hooks: ['guard'], confirm: 'deny' }),
  })
  state = await mkdtemp(join(tmpdir(), 'hookd-claude-state-'))
  serving = await startServe(['--hooks', hooks, '--listen', `unix:${join(state, 'hookd.sock')}`, '--http', '0', '--workers', '1'], { cwd: state, timeoutMs: 60_000 })
  url = (/^hookd: http on (\S+)$/m.exec(serving.output.stderr) as RegExpExecArray)[1] as string
}, 15 * 60_000)

afterAll(async () => {
  if (serving) await stopProcess(serving.child)
  await rm(state, { recursive: true, force: true })
  await rm(hooks, { recursive: true, force: true })
})

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

/** The stand-in API with a two-turn script: `first` (a tool call), then a final text. */
async function api(...turns: Reply[]): Promise<AnthropicApi> {
  const started = await startAnthropicApi({ script: (_request: MessagesRequest, index: number) => turns[index] ?? { text: 'done.' } })
  cleanups.push(() => started.stop())
  return started
}

/** A project folder with `victim/`, set up by `hookd setup claude-code ...args` run where hookd serves. */
async function project(...args: string[]): Promise<string> {
  const dir = await projectDir(VICTIM)
  cleanups.push(() => rm(dir, { recursive: true, force: true }))
  const setup = await runHookd(['setup', 'claude-code', '--dir', dir, ...args], { cwd: state })
  expect(setup.code, setup.stderr).toBe(0)
  return dir
}

async function claudeIn(cwd: string, stand: AnthropicApi): Promise<ClaudeRun> {
  const run = await runClaude({ claude, apiUrl: stand.url, cwd })
  cleanups.push(() => rm(run.home, { recursive: true, force: true }))
  expect(run.code, run.stderr).toBe(0)
  return run
}

/** What the model read about its tool call: the tool_result of the second turn. */
function readBack(stand: AnthropicApi): { is_error: boolean; text: string } {
  const second = stand.main[1]
  expect(second, 'the model was called a second time').toBeDefined()
  const [result] = toolResults(second as MessagesRequest)
  expect(result).toBeDefined()
  return result as { is_error: boolean; text: string }
}

describe('hookd guards Claude Code 2.1.328', () => {
  it(
    "guard refuses `rm -rf victim` through Claude Code's own prompt (ask, which -p denies): the folder survives and the model reads why",
    async () => {
      const stand = await api(bash('rm -rf victim', 'Remove the victim folder'))
      const dir = await project('--hooks', 'guard')
      const run = await claudeIn(dir, stand)
      expect(existsSync(join(dir, 'victim', 'keep.txt'))).toBe(true)
      expect(readBack(stand)).toMatchObject({ is_error: true, text: "Dangerous command: rm -rf victim (asked by hookd hook 'guard')" })
      expect(run.result?.permission_denials).toEqual([expect.objectContaining({ tool_name: 'Bash' })])
    },
    TEST_TIMEOUT,
  )

  it(
    "with a profile that answers ctx.confirm no, guard's own refusal is Claude Code's deny",
    async () => {
      const stand = await api(bash('rm -rf victim', 'Remove the victim folder'))
      const dir = await project('--profile', 'strict')
      await claudeIn(dir, stand)
      expect(existsSync(join(dir, 'victim', 'keep.txt'))).toBe(true)
      expect(readBack(stand)).toEqual({ tool_use_id: expect.any(String), is_error: true, text: 'PreToolUse:Bash hook error: refused by the user' })
    },
    TEST_TIMEOUT,
  )

  it(
    'a hook rewrites a shell command, and the rewritten command is the one that runs',
    async () => {
      const stand = await api(bash('echo original'))
      const dir = await project('--hooks', 'rewrite-shell')
      await claudeIn(dir, stand)
      expect(readBack(stand)).toMatchObject({ is_error: false, text: 'rewritten by hookd' })
    },
    TEST_TIMEOUT,
  )

  it(
    'shout rewrites a result, and the model reads it changed',
    async () => {
      const stand = await api(bash('echo quiet words'))
      const dir = await project('--hooks', 'shout')
      await claudeIn(dir, stand)
      expect(readBack(stand)).toMatchObject({ is_error: false, text: 'QUIET WORDS' })
    },
    TEST_TIMEOUT,
  )

  it(
    'a throwing hook with "onError": "refuse" refuses the call, and the model reads why',
    async () => {
      const stand = await api(bash('rm -rf victim', 'Remove the victim folder'))
      const dir = await project('--hooks', 'strict-thrower')
      await claudeIn(dir, stand)
      expect(existsSync(join(dir, 'victim', 'keep.txt'))).toBe(true)
      const read = readBack(stand)
      expect(read.is_error).toBe(true)
      expect(read.text).toBe("PreToolUse:Bash hook error: hookd refused the call: hook 'strict-thrower' could not decide (it threw)")
    },
    TEST_TIMEOUT,
  )

  it(
    'with the sidecar down, Claude Code set up to fail closed does not run the tool',
    async () => {
      const dead = createServer()
      await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve))
      const port = (dead.address() as AddressInfo).port
      await new Promise<void>((resolve) => dead.close(() => resolve()))
      const stand = await api(bash('rm -rf victim', 'Remove the victim folder'))
      const dir = await project('--hooks', 'guard', '--url', `http://127.0.0.1:${port}`, '--events', 'PreToolUse')
      await claudeIn(dir, stand)
      expect(existsSync(join(dir, 'victim', 'keep.txt'))).toBe(true)
      const read = readBack(stand)
      expect(read.is_error).toBe(true)
      expect(read.text).toContain('blocking because onFailure is "block"')
      expect(read.text).toContain('ECONNREFUSED')
    },
    TEST_TIMEOUT,
  )

  it(
    'with a wrong token, hookd answers 401 and Claude Code set up to fail closed does not run the tool',
    async () => {
      const stand = await api(bash('rm -rf victim', 'Remove the victim folder'))
      const dir = await project('--hooks', 'guard', '--token', 'hkd_not-the-sidecars-token-0123456789abcdef', '--events', 'PreToolUse')
      await claudeIn(dir, stand)
      expect(existsSync(join(dir, 'victim', 'keep.txt'))).toBe(true)
      const read = readBack(stand)
      expect(read.is_error).toBe(true)
      expect(read.text).toContain('blocking because onFailure is "block"')
      expect(read.text).toContain('HTTP 401')
    },
    TEST_TIMEOUT,
  )

  it(
    'beforeRun and afterRun run once each for a run of several tool calls',
    async () => {
      const stand = await api(bash('echo one'), bash('echo two'), bash('echo three'))
      const dir = await project('--hooks', 'lifecycle')
      const settings = JSON.parse(await readFile(join(dir, '.claude', 'settings.local.json'), 'utf8')) as { hooks: Record<string, unknown> }
      expect(Object.keys(settings.hooks)).toEqual(['UserPromptSubmit', 'Stop', 'StopFailure', 'SessionEnd'])
      const before = serving.output.stderr.length
      await claudeIn(dir, stand)
      expect(stand.main).toHaveLength(4)
      const lines = (): string[] => serving.output.stderr.slice(before).split('\n').filter((l) => l.includes('[lifecycle] notify'))
      await expect.poll(lines, { timeout: 10_000 }).toHaveLength(2)
      expect(lines().map((l) => l.slice(l.indexOf('notify: ') + 8))).toEqual(['beforeRun: claude-code', 'afterRun: end_turn'])
    },
    TEST_TIMEOUT,
  )
})
