/**
 * hookd-sandbox/claude-agent-sdk with the real Claude Agent SDK (pinned 0.3.332, installed into .cache/agents/
 * on first use; it runs its own bundled Claude Code), offline against the Messages API stand-in, with
 * a real sidecar over gRPC.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type HookdHooks, hookdHooks } from '../../src/agents/claude-agent-sdk/index.js'
import { type AnthropicApi, type MessagesRequest, type Reply, bash, startAnthropicApi, toolResults } from './support/anthropic-api.js'
import { agentCli } from './support/cli.js'
import { offlineEnv, projectDir } from './support/claude-run.js'
import { EXAMPLE_HOOKS, type Running, hook, startSidecar, writeTree } from '../support/sidecar.js'

const TEST_TIMEOUT = 240_000

/** The part of the SDK this test uses. */
type Query = (args: { prompt: string; options: Record<string, unknown> }) => AsyncIterable<Record<string, unknown>>

let query: Query
let running: Running
let hooks = ''
const cleanups: Array<() => Promise<void>> = []

beforeAll(async () => {
  const sdk = await agentCli('claude-agent-sdk')
  query = ((await import(pathToFileURL(join(sdk, 'sdk.mjs')).href)) as { query: Query }).query
  hooks = await writeTree({
    'guard/index.js': await readFile(join(EXAMPLE_HOOKS, 'guard', 'index.js'), 'utf8'),
    'shout/index.js': await readFile(join(EXAMPLE_HOOKS, 'shout', 'index.js'), 'utf8'),
    'rewrite-shell/index.js': hook({
      beforeToolExecute: `function (ctx, call) { if (call.name === 'shell' && call.arguments.command === 'echo original') return { arguments: { command: 'echo rewritten by hookd' } } }`,
    }),
    'lifecycle/index.js': hook({
      beforeRun: `function (ctx, run) { ctx.notify({ title: 'beforeRun', body: run.agentId }) }`,
      afterRun: `function (ctx, event) { ctx.notify({ title: 'afterRun', body: event.reason }) }`,
    }),
  })
  running = await startSidecar({ hooks, watch: false })
}, 15 * 60_000)

afterAll(async () => {
  await running?.stop()
  await rm(hooks, { recursive: true, force: true })
})

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

async function api(...turns: Reply[]): Promise<AnthropicApi> {
  const started = await startAnthropicApi({ script: (_r: MessagesRequest, index: number) => turns[index] ?? { text: 'done.' } })
  cleanups.push(() => started.stop())
  return started
}

/** Runs one query in a new project with `victim/`, and returns the project and the result message. */
async function run(stand: AnthropicApi, hookd: HookdHooks, extra: Record<string, unknown> = {}): Promise<{ dir: string; result: Record<string, unknown> | undefined }> {
  const dir = await projectDir({ 'victim/keep.txt': 'keep me\n' })
  const home = await mkdtemp(join(tmpdir(), 'hookd-sdk-home-'))
  cleanups.push(() => rm(dir, { recursive: true, force: true }), () => rm(home, { recursive: true, force: true }), () => hookd.close())
  let result: Record<string, unknown> | undefined
  for await (const message of query({
    prompt: 'do the task',
    options: { cwd: dir, env: offlineEnv(stand.url, home), allowedTools: ['Bash'], settingSources: [], hooks: hookd.hooks, ...extra },
  })) {
    if (message.type === 'result') result = message
  }
  return { dir, result }
}

function readBack(stand: AnthropicApi): { is_error: boolean; text: string } {
  const second = stand.main[1]
  expect(second, 'the model was called a second time').toBeDefined()
  return toolResults(second as MessagesRequest)[0] as { is_error: boolean; text: string }
}

describe('hookd-sandbox/claude-agent-sdk with the Claude Agent SDK 0.3.332', () => {
  it(
    "guard, with the application answering ctx.confirm no: the SDK's tool call is refused and the model reads why",
    async () => {
      const asked: string[] = []
      const hookd = await hookdHooks({ client: running.client, hooks: ['guard'], confirm: (m) => (asked.push(`${m.title}: ${m.body}`), false) })
      expect(hookd.events).toEqual(['UserPromptSubmit', 'PreToolUse', 'Stop', 'StopFailure', 'SessionEnd'])
      const stand = await api(bash('rm -rf victim', 'Remove the victim folder'))
      const { dir } = await run(stand, hookd)
      expect(existsSync(join(dir, 'victim', 'keep.txt'))).toBe(true)
      expect(asked).toEqual(['Dangerous command: rm -rf victim'])
      expect(readBack(stand)).toMatchObject({ is_error: true, text: 'PreToolUse:Bash hook error: refused by the user' })
    },
    TEST_TIMEOUT,
  )

  it(
    "without a confirm handler, the hook's question goes to canUseTool (ask), which decides",
    async () => {
      const hookd = await hookdHooks({ client: running.client, hooks: ['guard'] })
      const reasons: unknown[] = []
      const canUseTool = async (_tool: string, _input: unknown, options: { decisionReason?: unknown }): Promise<unknown> => {
        reasons.push(options.decisionReason)
        return { behavior: 'deny', message: 'the application said no' }
      }
      const stand = await api(bash('rm -rf victim', 'Remove the victim folder'))
      const { dir } = await run(stand, hookd, { canUseTool })
      expect(existsSync(join(dir, 'victim', 'keep.txt'))).toBe(true)
      expect(reasons).toEqual(["Dangerous command: rm -rf victim (asked by hookd hook 'guard')"])
      expect(readBack(stand)).toMatchObject({ is_error: true, text: 'the application said no' })
    },
    TEST_TIMEOUT,
  )

  it(
    'a rewritten command runs, and a rewritten result is what the model reads',
    async () => {
      const hookd = await hookdHooks({ client: running.client, hooks: ['rewrite-shell', 'shout'] })
      const stand = await api(bash('echo original'))
      await run(stand, hookd)
      expect(readBack(stand)).toMatchObject({ is_error: false, text: 'REWRITTEN BY HOOKD' })
    },
    TEST_TIMEOUT,
  )

  it(
    'beforeRun and afterRun run once each',
    async () => {
      const notes: string[] = []
      const hookd = await hookdHooks({ client: running.client, hooks: ['lifecycle'], capabilities: { notify: (m) => void notes.push(`${m.title}: ${m.body}`) } })
      const stand = await api(bash('echo one'), bash('echo two'))
      await run(stand, hookd)
      expect(notes).toEqual(['beforeRun: claude-code', 'afterRun: end_turn'])
    },
    TEST_TIMEOUT,
  )

  it(
    'when hookd goes away, a guarded tool call is refused and the model reads why',
    async () => {
      const gone = await startSidecar({ hooks, watch: false })
      const hookd = await hookdHooks({ address: gone.address, hooks: ['guard'], events: ['PreToolUse'] })
      await gone.stop()
      const stand = await api(bash('rm -rf victim', 'Remove the victim folder'))
      const { dir } = await run(stand, hookd)
      expect(existsSync(join(dir, 'victim', 'keep.txt'))).toBe(true)
      const read = readBack(stand)
      expect(read.is_error).toBe(true)
      expect(read.text).toMatch(/^PreToolUse:Bash hook error: hookd could not check this call, so it is refused: /)
    },
    TEST_TIMEOUT,
  )

  it(
    'when hookd goes away and the hooks have run points, the prompt itself is blocked: nothing runs unguarded',
    async () => {
      const gone = await startSidecar({ hooks, watch: false })
      const hookd = await hookdHooks({ address: gone.address, hooks: ['guard'] })
      await gone.stop()
      const stand = await api(bash('rm -rf victim', 'Remove the victim folder'))
      const { dir, result } = await run(stand, hookd)
      expect(existsSync(join(dir, 'victim', 'keep.txt'))).toBe(true)
      expect(stand.main).toHaveLength(0)
      expect(String(result?.result)).toContain('UserPromptSubmit operation blocked by hook')
    },
    TEST_TIMEOUT,
  )

  it('an unknown hook fails at once, naming it', async () => {
    await expect(hookdHooks({ client: running.client, hooks: ['gaurd'] })).rejects.toThrow("unknown hook 'gaurd' (available: guard, lifecycle, rewrite-shell, shout)")
  })

  it('is the package export hookd-sandbox/claude-agent-sdk', async () => {
    // Resolved through package.json's exports (the built dist/), as an application imports it.
    const specifier = 'hookd-sandbox/claude-agent-sdk'
    const mod = (await import(specifier)) as { hookdHooks?: unknown }
    expect(typeof mod.hookdHooks).toBe('function')
  })
})
