/**
 * hookd-sandbox/claude-agent-sdk with the real Claude Agent SDK (pinned 0.3.332, installed into .cache/agents/
 * on first use; it runs its own bundled Claude Code), offline against the Messages API stand-in, with
 * one real sidecar over gRPC for the file.
 *
 * Each query starts a Claude Code process, so one query covers the scenarios that share a
 * configuration: the model asks for one Bash call per turn, each with its own victim folder, and each
 * test checks its own call's tool_result (by tool_use id) and folder. The application's own confirm
 * (answering no), a rewritten command and result, and beforeRun/afterRun counted over the run share
 * one query; confirm left to canUseTool is another; a guard hot-fixed between two tool calls of a
 * running query is another (on a sidecar of its own that watches its folder); hookd gone away is two
 * more (tool events only, and with run points), which come last: the file's sidecar stops for them.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type HookdHooks, hookdHooks } from '../../../src/agents/claude-agent-sdk/index.js'
import { type AnthropicApi, startAnthropicApi } from '../support/anthropic-api.js'
import { type BashCall, oneCallPerTurn, resultOf, survived } from '../support/bash-calls.js'
import { agentCli } from '../support/cli.js'
import { offlineEnv, projectDir } from '../support/claude-run.js'
import { EXAMPLE_HOOKS, type Running, hook, startSidecar, writeTree } from '../../support/sidecar.js'

const TEST_TIMEOUT = 240_000
const KEEP = 'keep me\n'

/** The part of the SDK this test uses. */
type Query = (args: { prompt: string; options: Record<string, unknown> }) => AsyncIterable<Record<string, unknown>>

let query: Query
let running: Running
let hooks = ''
const leftovers: string[] = []

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
  await Promise.all([hooks, ...leftovers].map((dir) => rm(dir, { recursive: true, force: true })))
})

interface Queried {
  dir: string
  stand: AnthropicApi
  result: Record<string, unknown> | undefined
}

/**
 * Runs one query in a new project holding `files`, the model asking for `calls` one per turn, then
 * closes `hookd` (which would end a run left open as interrupted).
 */
async function run(calls: readonly BashCall[], files: Record<string, string>, hookd: HookdHooks, extra: Record<string, unknown> = {}): Promise<Queried> {
  const stand = await startAnthropicApi({ script: oneCallPerTurn(calls) })
  try {
    const dir = await projectDir(files)
    const home = await mkdtemp(join(tmpdir(), 'hookd-sdk-home-'))
    leftovers.push(dir, home)
    let result: Record<string, unknown> | undefined
    for await (const message of query({
      prompt: 'do the task',
      options: { cwd: dir, env: offlineEnv(stand.url, home), allowedTools: ['Bash'], settingSources: [], hooks: hookd.hooks, ...extra },
    })) {
      if (message.type === 'result') result = message
    }
    return { dir, stand, result }
  } finally {
    await hookd.close()
    await stand.stop()
  }
}

describe('hookd-sandbox/claude-agent-sdk with the Claude Agent SDK 0.3.332: one query, the hooks guard,rewrite-shell,shout,lifecycle and a confirm handler', () => {
  const calls = [
    { id: 'toolu_stand_in_confirm', command: 'rm -rf victim-confirm' },
    { id: 'toolu_stand_in_rewrite', command: 'echo original' },
    { id: 'toolu_stand_in_free', command: 'rm -r victim-free' },
  ] as const satisfies readonly BashCall[]
  const asked: string[] = []
  const notes: string[] = []
  let x: Queried

  beforeAll(async () => {
    const hookd = await hookdHooks({
      client: running.client,
      hooks: ['guard', 'rewrite-shell', 'shout', 'lifecycle'],
      confirm: (m) => (asked.push(`${m.title}: ${m.body}`), false),
      capabilities: { notify: (m) => void notes.push(`${m.title}: ${m.body}`) },
    })
    x = await run(calls, { 'victim-confirm/keep.txt': KEEP, 'victim-free/keep.txt': KEEP }, hookd)
    expect(x.stand.main, 'one turn per call, then the last').toHaveLength(calls.length + 1)
  }, TEST_TIMEOUT)

  it("guard, with the application answering ctx.confirm no: the SDK's tool call is refused and the model reads why", () => {
    expect(survived(x.dir, 'victim-confirm')).toBe(true)
    expect(asked, 'asked once, for the rm -rf call alone').toEqual(['Dangerous command: rm -rf victim-confirm'])
    expect(resultOf(x.stand, calls, 'toolu_stand_in_confirm')).toMatchObject({ is_error: true, text: 'PreToolUse:Bash hook error: refused by the user' })
  })

  it('a rewritten command runs, and a rewritten result is what the model reads', () => {
    expect(resultOf(x.stand, calls, 'toolu_stand_in_rewrite')).toMatchObject({ is_error: false, text: 'REWRITTEN BY HOOKD' })
  })

  it('a call no hook objects to runs: `rm -r victim-free` removes its folder (so victim-confirm survived the hook, not the tool)', () => {
    expect(existsSync(join(x.dir, 'victim-free'))).toBe(false)
    expect(resultOf(x.stand, calls, 'toolu_stand_in_free').is_error).toBe(false)
  })

  it('beforeRun and afterRun run once each for the query of three tool calls (guard notifies at afterRun too)', () => {
    expect(notes).toEqual(['beforeRun: claude-code', 'rienda: run finished: end_turn', 'afterRun: end_turn'])
  })
})

describe('hookd-sandbox/claude-agent-sdk with the Claude Agent SDK 0.3.332', () => {
  it(
    "without a confirm handler, guard's question goes to canUseTool (ask), which decides, and only for the call that asked",
    async () => {
      const hookd = await hookdHooks({ client: running.client, hooks: ['guard'] })
      // guard may ask: the events that say what became of an ask are registered (claude-agent-sdk-asks.test.ts follows them).
      expect(hookd.events).toEqual(['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PostToolBatch', 'PermissionDenied', 'Stop', 'StopFailure', 'SessionEnd'])
      const reasons: unknown[] = []
      const canUseTool = async (_tool: string, _input: unknown, options: { decisionReason?: unknown }): Promise<unknown> => {
        reasons.push(options.decisionReason)
        return { behavior: 'deny', message: 'the application said no' }
      }
      const calls = [
        { id: 'toolu_stand_in_ask', command: 'rm -rf victim-ask' },
        { id: 'toolu_stand_in_echo', command: 'echo not asked' },
      ] as const satisfies readonly BashCall[]
      const { dir, stand } = await run(calls, { 'victim-ask/keep.txt': KEEP }, hookd, { canUseTool })
      expect(stand.main).toHaveLength(calls.length + 1)
      expect(survived(dir, 'victim-ask')).toBe(true)
      expect(reasons).toEqual(["Dangerous command: rm -rf victim-ask (asked by hookd hook 'guard')"])
      expect(resultOf(stand, calls, 'toolu_stand_in_ask')).toMatchObject({ is_error: true, text: 'the application said no' })
      expect(resultOf(stand, calls, 'toolu_stand_in_echo')).toMatchObject({ is_error: false, text: 'not asked' })
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

  describe('a query already running, whose guard is hot-fixed between two tool calls', () => {
    let watched: Running | undefined
    let folder = ''
    afterAll(async () => {
      await watched?.stop()
      if (folder) await rm(folder, { recursive: true, force: true })
    })

    it(
      "refuses `rm -rf` from the next tool call on, though the guard served no PreToolUse when the query started",
      async () => {
        folder = await writeTree({ 'late-guard/index.js': hook({ afterToolExecute: `function (ctx, call, result) {}` }) })
        watched = await startSidecar({ hooks: folder, watch: true })
        const pushed: string[] = []
        const hookd = await hookdHooks({ client: watched.client, hooks: ['late-guard'], onDiagnostic: (d) => void pushed.push(`${d.kind} ${d.hook}`) })
        const calls = [
          { id: 'toolu_stand_in_before', command: 'rm -r victim-before' },
          { id: 'toolu_stand_in_after', command: 'rm -rf victim-after' },
        ] as const satisfies readonly BashCall[]
        const turns = oneCallPerTurn(calls)
        const stand = await startAnthropicApi({
          script: async (request, index) => {
            if (index === 1) {
              // The first call ran unguarded; now the guard gains its gate, and the running query hears of it.
              await writeFile(join(folder, 'late-guard', 'index.js'), hook({
                afterToolExecute: `function (ctx, call, result) {}`,
                beforeToolExecute: `function (ctx, call) { if (/rm -rf/.test(String(call.arguments.command))) return { allow: false, reason: 'hot-fixed: no rm -rf' } }`,
              }))
              for (let i = 0; i < 600 && !pushed.includes('reload late-guard'); i++) await new Promise((r) => setTimeout(r, 25))
            }
            return turns(request, index)
          },
        })
        try {
          const dir = await projectDir({ 'victim-before/keep.txt': KEEP, 'victim-after/keep.txt': KEEP })
          const home = await mkdtemp(join(tmpdir(), 'hookd-sdk-home-'))
          leftovers.push(dir, home)
          for await (const message of query({
            prompt: 'do the task',
            options: { cwd: dir, env: offlineEnv(stand.url, home), allowedTools: ['Bash'], settingSources: [], hooks: hookd.hooks },
          })) void message
          expect(pushed).toContain('reload late-guard')
          expect(stand.main).toHaveLength(calls.length + 1)
          expect(existsSync(join(dir, 'victim-before')), 'nothing guarded the first call').toBe(false)
          expect(survived(dir, 'victim-after')).toBe(true)
          expect(resultOf(stand, calls, 'toolu_stand_in_after')).toMatchObject({ is_error: true, text: 'PreToolUse:Bash hook error: hot-fixed: no rm -rf' })
        } finally {
          await hookd.close()
          await stand.stop()
        }
      },
      TEST_TIMEOUT,
    )
  })

  describe('when hookd goes away', () => {
    const rmVictim = [{ id: 'toolu_stand_in_rm', command: 'rm -rf victim' }] as const satisfies readonly BashCall[]
    let toolEventsOnly: HookdHooks
    let withRunPoints: HookdHooks

    // The file's sidecar goes away for both (so these come last): each HookdHooks, on a connection
    // of its own, checks its hooks while the sidecar is up; then it stops.
    beforeAll(async () => {
      toolEventsOnly = await hookdHooks({ address: running.address, hooks: ['guard'], events: ['PreToolUse'] })
      withRunPoints = await hookdHooks({ address: running.address, hooks: ['guard'] })
      await running.stop()
    }, TEST_TIMEOUT)

    it(
      'a guarded tool call is refused and the model reads why',
      async () => {
        const { dir, stand } = await run(rmVictim, { 'victim/keep.txt': KEEP }, toolEventsOnly)
        expect(stand.main).toHaveLength(2)
        expect(survived(dir, 'victim')).toBe(true)
        const read = resultOf(stand, rmVictim, 'toolu_stand_in_rm')
        expect(read.is_error).toBe(true)
        expect(read.text).toMatch(/^PreToolUse:Bash hook error: hookd could not check this call, so it is refused: /)
      },
      TEST_TIMEOUT,
    )

    it(
      'and the hooks have run points, the prompt itself is blocked: nothing runs unguarded',
      async () => {
        const { dir, stand, result } = await run(rmVictim, { 'victim/keep.txt': KEEP }, withRunPoints)
        expect(survived(dir, 'victim')).toBe(true)
        expect(stand.main).toHaveLength(0)
        expect(String(result?.result)).toContain('UserPromptSubmit operation blocked by hook')
      },
      TEST_TIMEOUT,
    )
  })
})
