/**
 * Claude Code's hook contract, as hookd's front door will meet it: the real CLI (pinned, installed into
 * .cache/agents/ on first use), driven offline by the Messages API stand-in, with hooks served by a
 * tiny HTTP server written here.
 *
 * One run covers every scenario: the project holds one `victim-NAME/keep.txt` per scenario, and the
 * model asks for `rm -rf victim-NAME` through Bash, one call per turn. `.claude/settings.json` holds one
 * PreToolUse hook per scenario, each with an `if` rule (`Bash(rm -rf victim-NAME)`, permission-rule
 * syntax) so that it runs for its own call only. Each test checks whether its folder survived and
 * what tool_result the model was sent for its call in the next turn. The hook server's log, the
 * run's permission_denials and the session transcript (where Claude Code records a hook's
 * non-blocking failure) show which hook acted on which call.
 */
import { existsSync } from 'node:fs'
import { readFile, readdir, rm } from 'node:fs/promises'
import { type IncomingHttpHeaders, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AnthropicApi, type MessagesRequest, type Reply, startAnthropicApi, toolResults } from '../support/anthropic-api.js'
import { agentCli } from '../support/cli.js'
import { type ClaudeRun, runClaude } from '../support/claude-run.js'

const TEST_TIMEOUT = 240_000

interface HookServer {
  url: string
  calls: Array<{ path: string; headers: IncomingHttpHeaders; body: Record<string, unknown> }>
  stop(): Promise<void>
}

/** Answers every POST with `answer(path, body)` as JSON (status 200), and records it. */
async function startHookServer(answer: (path: string, body: Record<string, unknown>) => unknown): Promise<HookServer> {
  const calls: HookServer['calls'] = []
  const server = createServer((req, res) => {
    let raw = ''
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')))
    req.on('end', () => {
      const body = JSON.parse(raw) as Record<string, unknown>
      const path = req.url ?? ''
      calls.push({ path, headers: req.headers, body })
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify(answer(path, body)))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** A loopback URL where nothing listens: a port that was just bound and released. */
async function deadUrl(path: string): Promise<string> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return `http://127.0.0.1:${port}${path}`
}

/** The scenarios, in the order the model asks for their calls. */
const SCENARIOS = ['http-deny', 'dead-open', 'dead-block', 'shim-dead', 'shim-live'] as const
type Scenario = (typeof SCENARIOS)[number]

const command = (scenario: Scenario): string => `rm -rf victim-${scenario}`
const toolUseId = (scenario: Scenario): string => `toolu_${scenario.replace('-', '_')}`

/** Turn i: Bash `rm -rf victim-<scenario i>`; then finish, quoting the tool_result the model got. */
function scenarioScript(request: MessagesRequest, index: number): Reply {
  const scenario = SCENARIOS[index]
  if (scenario) return { tools: [{ id: toolUseId(scenario), name: 'Bash', input: { command: command(scenario), description: `Remove the victim-${scenario} folder` } }] }
  return { text: `seen: ${toolResults(request).map((r) => r.text).join(' | ')}` }
}

/** A command hook that pipes the event to `url` with curl, and blocks (exit 2) when curl fails. */
function curlShim(url: string): string {
  return `curl -sS --fail -X POST -H 'content-type: application/json' --data-binary @- ${url} || exit 2`
}

/** Each scenario's PreToolUse hook; `if` makes it run for that scenario's call only. */
function scenarioHooks(server: HookServer, dead: string): Record<Scenario, Record<string, unknown>> {
  return {
    'http-deny': { type: 'http', url: `${server.url}/pre` },
    'dead-open': { type: 'http', url: dead },
    'dead-block': { type: 'http', url: dead, onFailure: 'block' },
    'shim-dead': { type: 'command', command: curlShim(dead) },
    'shim-live': { type: 'command', command: curlShim(`${server.url}/shim`) },
  }
}

interface ScenarioRun {
  run: ClaudeRun
  stand: AnthropicApi
  server: HookServer
  dead: string
  /** The session transcript's attachment records (Claude Code writes hook outcomes there). */
  attachments: Array<Record<string, unknown>>
}

async function runScenarios(): Promise<ScenarioRun> {
  const stand = await startAnthropicApi({ script: scenarioScript })
  const server = await startHookServer((path, body) => ({
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: 'deny',
      permissionDecisionReason: path === '/pre' ? 'hookd says no: rm -rf' : `shim saw ${String((body.tool_input as { command?: string }).command)}`,
    },
  }))
  cleanups.push(() => stand.stop(), () => server.stop())
  const dead = await deadUrl('/pre')
  const hooks = scenarioHooks(server, dead)
  const settings = { hooks: { PreToolUse: [{ matcher: 'Bash', hooks: SCENARIOS.map((s) => ({ ...hooks[s], if: `Bash(${command(s)})` })) }] } }
  const files = Object.fromEntries(SCENARIOS.map((s) => [`victim-${s}/keep.txt`, 'keep me\n']))
  const run = await runClaude({ claude, apiUrl: stand.url, files, settings })
  cleanups.push(async () => {
    await rm(run.cwd, { recursive: true, force: true })
    await rm(run.home, { recursive: true, force: true })
  })
  // The transcript is <HOME>/.claude/projects/<project>/<session>.jsonl.
  const projects = join(run.home, '.claude', 'projects')
  const transcripts = existsSync(projects) ? (await readdir(projects, { recursive: true })).filter((f) => f.endsWith('.jsonl')) : []
  expect(transcripts, 'one session transcript').toHaveLength(1)
  const lines = (await readFile(join(projects, transcripts[0] ?? ''), 'utf8')).trim().split('\n')
  const attachments = lines
    .map((line) => JSON.parse(line) as { type?: string; attachment?: Record<string, unknown> })
    .flatMap((record) => (record.type === 'attachment' && record.attachment ? [record.attachment] : []))
  return { run, stand, server, dead, attachments }
}

let claude = ''
const cleanups: Array<() => Promise<void>> = []

beforeAll(async () => {
  claude = await agentCli('claude')
}, 15 * 60_000)

afterAll(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

/** The tool_result the model was sent for `scenario`'s call: the only one of the turn after it. */
function resultFor(out: ScenarioRun, scenario: Scenario): ReturnType<typeof toolResults>[number] | undefined {
  const next = out.stand.main[SCENARIOS.indexOf(scenario) + 1]
  expect(next, `the model was called after the ${scenario} call`).toBeDefined()
  const results = toolResults(next as MessagesRequest)
  expect(results.map((r) => r.tool_use_id)).toEqual([toolUseId(scenario)])
  return results[0]
}

const kept = (out: ScenarioRun, scenario: Scenario): boolean => existsSync(join(out.run.cwd, `victim-${scenario}`, 'keep.txt'))

describe('Claude Code 2.1.328 hooks, offline', () => {
  // One run serves every test below; the first test to need it starts it.
  let started: Promise<ScenarioRun> | undefined
  const scenarios = (): Promise<ScenarioRun> => (started ??= runScenarios())

  it(
    'runs each scenario\'s hook for its own call only, and ends normally',
    async () => {
      const out = await scenarios()
      expect(out.run.code, out.run.stderr).toBe(0)
      expect(out.stand.main).toHaveLength(SCENARIOS.length + 1)
      // The live server heard from the http-deny hook and the shim-live hook, each once.
      expect(out.server.calls.map((c) => `${c.path} ${String((c.body.tool_input as { command?: string }).command)}`)).toEqual([
        `/pre ${command('http-deny')}`,
        `/shim ${command('shim-live')}`,
      ])
      // Every call but dead-open's was denied.
      expect(out.run.result?.permission_denials).toEqual(
        SCENARIOS.filter((s) => s !== 'dead-open').map((s) => expect.objectContaining({ tool_name: 'Bash', tool_use_id: toolUseId(s), tool_input: expect.objectContaining({ command: command(s) }) })),
      )
    },
    TEST_TIMEOUT,
  )

  it(
    'a PreToolUse http hook that denies stops `rm -rf victim`, and the model reads the reason',
    async () => {
      const out = await scenarios()
      expect(kept(out, 'http-deny')).toBe(true)
      const pre = out.server.calls.filter((c) => c.path === '/pre')
      expect(pre).toHaveLength(1)
      const event = pre[0]?.body
      expect(event).toMatchObject({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: command('http-deny') }, cwd: out.run.cwd })
      expect(typeof event?.session_id).toBe('string')
      expect(event?.tool_use_id).toBe(toolUseId('http-deny'))
      const result = resultFor(out, 'http-deny')
      expect(result?.is_error).toBe(true)
      expect(result?.text).toBe('PreToolUse:Bash hook error: hookd says no: rm -rf')
      expect(out.run.result?.permission_denials).toContainEqual(expect.objectContaining({ tool_name: 'Bash', tool_use_id: toolUseId('http-deny') }))
    },
    TEST_TIMEOUT,
  )

  it(
    'an unreachable PreToolUse http hook fails open: the tool runs',
    async () => {
      const out = await scenarios()
      expect(existsSync(join(out.run.cwd, 'victim-dead-open'))).toBe(false)
      const result = resultFor(out, 'dead-open')
      expect(result?.is_error).toBe(false)
      expect(result?.text).toBe('(Bash completed with no output)')
      // The hook did run for this call, and its failure was recorded as a non-blocking error.
      const errors = out.attachments.filter((a) => a['type'] === 'hook_non_blocking_error')
      expect(errors).toEqual([expect.objectContaining({ hookEvent: 'PreToolUse', toolUseID: toolUseId('dead-open'), stderr: expect.stringContaining('ECONNREFUSED') })])
    },
    TEST_TIMEOUT,
  )

  it(
    'an unreachable PreToolUse http hook with onFailure "block" fails closed',
    async () => {
      const out = await scenarios()
      expect(kept(out, 'dead-block')).toBe(true)
      const result = resultFor(out, 'dead-block')
      expect(result?.is_error).toBe(true)
      expect(result?.text).toContain(`[${out.dead}]`)
      expect(result?.text).toContain('blocking because onFailure is "block"')
      expect(result?.text).toContain('ECONNREFUSED')
    },
    TEST_TIMEOUT,
  )

  it(
    'a command-hook curl shim with nothing listening blocks the tool (exit 2)',
    async () => {
      const out = await scenarios()
      expect(kept(out, 'shim-dead')).toBe(true)
      const result = resultFor(out, 'shim-dead')
      expect(result?.is_error).toBe(true)
      expect(result?.text).toMatch(/^PreToolUse:Bash hook error: .*curl: \(7\)/s)
      expect(result?.text).toContain(curlShim(out.dead))
    },
    TEST_TIMEOUT,
  )

  it(
    'the same curl shim passes the server\'s deny through when the server is up',
    async () => {
      const out = await scenarios()
      expect(kept(out, 'shim-live')).toBe(true)
      expect(out.server.calls.filter((c) => c.path === '/shim').map((c) => c.body.hook_event_name)).toEqual(['PreToolUse'])
      expect(resultFor(out, 'shim-live')?.text).toBe(`PreToolUse:Bash hook error: shim saw ${command('shim-live')}`)
    },
    TEST_TIMEOUT,
  )
})
