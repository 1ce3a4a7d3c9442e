/**
 * Claude Code's hook contract, as hookd's front door will meet it: the real CLI (pinned, installed into
 * .cache/agents/ on first use), driven offline by the Messages API stand-in, with hooks served by a
 * tiny HTTP server written here. Each test has the model ask for `rm -rf victim` and checks whether the
 * folder survived and what tool_result the model was sent next.
 */
import { existsSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { type IncomingHttpHeaders, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type AnthropicApi, type MessagesRequest, type Reply, startAnthropicApi, toolResults } from './support/anthropic-api.js'
import { agentCli } from './support/cli.js'
import { type ClaudeRun, type ClaudeRunOptions, runClaude as runClaudeOnce } from './support/claude-run.js'

const TEST_TIMEOUT = 240_000

interface HookServer {
  url: string
  calls: Array<{ path: string; headers: IncomingHttpHeaders; body: Record<string, unknown> }>
  stop(): Promise<void>
}

/** Answers every POST with `answer(body)` as JSON (status 200), and records it. */
async function startHookServer(answer: (body: Record<string, unknown>) => unknown): Promise<HookServer> {
  const calls: HookServer['calls'] = []
  const server = createServer((req, res) => {
    let raw = ''
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')))
    req.on('end', () => {
      const body = JSON.parse(raw) as Record<string, unknown>
      calls.push({ path: req.url ?? '', headers: req.headers, body })
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify(answer(body)))
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

/** Turn 1: Bash `rm -rf victim`; turn 2: finish, quoting the tool_result the model got. */
function rmVictimScript(request: MessagesRequest, index: number): Reply {
  if (index === 0) return { tools: [{ name: 'Bash', input: { command: 'rm -rf victim', description: 'Remove the victim folder' } }] }
  return { text: `seen: ${toolResults(request).map((r) => r.text).join(' | ')}` }
}

function preToolUse(hook: Record<string, unknown>): unknown {
  return { hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [hook] }] } }
}

const VICTIM = { 'victim/keep.txt': 'keep me\n' }

let claude = ''
const cleanups: Array<() => Promise<void>> = []

beforeAll(async () => {
  claude = await agentCli('claude')
}, 15 * 60_000)

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup()
})

async function api(): Promise<AnthropicApi> {
  const started = await startAnthropicApi({ script: rmVictimScript })
  cleanups.push(() => started.stop())
  return started
}

async function hooks(answer: (body: Record<string, unknown>) => unknown): Promise<HookServer> {
  const started = await startHookServer(answer)
  cleanups.push(() => started.stop())
  return started
}

/** Runs the CLI and removes its temp project and HOME after the test. */
async function runClaude(options: ClaudeRunOptions): Promise<ClaudeRun> {
  const run = await runClaudeOnce(options)
  cleanups.push(async () => {
    await rm(run.cwd, { recursive: true, force: true })
    await rm(run.home, { recursive: true, force: true })
  })
  return run
}

/** The tool_result blocks of the model's second turn (what it was told about the Bash call). */
function secondTurnResults(stand: AnthropicApi): ReturnType<typeof toolResults> {
  const second = stand.main[1]
  expect(second, 'the model was called a second time').toBeDefined()
  return toolResults(second as MessagesRequest)
}

describe('Claude Code 2.1.328 hooks, offline', () => {
  it(
    'a PreToolUse http hook that denies stops `rm -rf victim`, and the model reads the reason',
    async () => {
      const stand = await api()
      const server = await hooks(() => ({
        hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'hookd says no: rm -rf' },
      }))
      const run = await runClaude({ claude, apiUrl: stand.url, files: VICTIM, settings: preToolUse({ type: 'http', url: `${server.url}/pre` }) })

      expect(run.code, run.stderr).toBe(0)
      expect(existsSync(join(run.cwd, 'victim', 'keep.txt'))).toBe(true)
      expect(server.calls).toHaveLength(1)
      const event = server.calls[0]?.body
      expect(event).toMatchObject({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'rm -rf victim' }, cwd: run.cwd })
      expect(typeof event?.session_id).toBe('string')
      expect(typeof event?.tool_use_id).toBe('string')
      const results = secondTurnResults(stand)
      expect(results).toHaveLength(1)
      expect(results[0]?.is_error).toBe(true)
      expect(results[0]?.text).toBe('PreToolUse:Bash hook error: hookd says no: rm -rf')
      expect(run.result?.permission_denials).toEqual([expect.objectContaining({ tool_name: 'Bash' })])
    },
    TEST_TIMEOUT,
  )

  it(
    'an unreachable PreToolUse http hook fails open: the tool runs',
    async () => {
      const stand = await api()
      const run = await runClaude({ claude, apiUrl: stand.url, files: VICTIM, settings: preToolUse({ type: 'http', url: await deadUrl('/pre') }) })

      expect(run.code, run.stderr).toBe(0)
      expect(existsSync(join(run.cwd, 'victim'))).toBe(false)
      const results = secondTurnResults(stand)
      expect(results[0]?.is_error).toBe(false)
      expect(results[0]?.text).toBe('(Bash completed with no output)')
    },
    TEST_TIMEOUT,
  )

  it(
    'an unreachable PreToolUse http hook with onFailure "block" fails closed',
    async () => {
      const stand = await api()
      const url = await deadUrl('/pre')
      const run = await runClaude({ claude, apiUrl: stand.url, files: VICTIM, settings: preToolUse({ type: 'http', url, onFailure: 'block' }) })

      expect(run.code, run.stderr).toBe(0)
      expect(existsSync(join(run.cwd, 'victim', 'keep.txt'))).toBe(true)
      const results = secondTurnResults(stand)
      expect(results[0]?.is_error).toBe(true)
      expect(results[0]?.text).toContain('blocking because onFailure is "block"')
      expect(results[0]?.text).toContain('ECONNREFUSED')
    },
    TEST_TIMEOUT,
  )

  it(
    'a command-hook curl shim with nothing listening blocks the tool (exit 2)',
    async () => {
      const stand = await api()
      const url = await deadUrl('/pre')
      const shim = `curl -sS --fail -X POST -H 'content-type: application/json' --data-binary @- ${url} || exit 2`
      const run = await runClaude({ claude, apiUrl: stand.url, files: VICTIM, settings: preToolUse({ type: 'command', command: shim }) })

      expect(run.code, run.stderr).toBe(0)
      expect(existsSync(join(run.cwd, 'victim', 'keep.txt'))).toBe(true)
      const results = secondTurnResults(stand)
      expect(results[0]?.is_error).toBe(true)
      expect(results[0]?.text).toMatch(/^PreToolUse:Bash hook error: .*curl: \(7\)/s)
    },
    TEST_TIMEOUT,
  )

  it(
    'the same curl shim passes the server\'s deny through when the server is up',
    async () => {
      const stand = await api()
      const server = await hooks((body) => ({
        hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: `shim saw ${String((body.tool_input as { command?: string }).command)}` },
      }))
      const shim = `curl -sS --fail -X POST -H 'content-type: application/json' --data-binary @- ${server.url}/pre || exit 2`
      const run = await runClaude({ claude, apiUrl: stand.url, files: VICTIM, settings: preToolUse({ type: 'command', command: shim }) })

      expect(run.code, run.stderr).toBe(0)
      expect(existsSync(join(run.cwd, 'victim', 'keep.txt'))).toBe(true)
      expect(server.calls.map((c) => c.body.hook_event_name)).toEqual(['PreToolUse'])
      expect(secondTurnResults(stand)[0]?.text).toBe('PreToolUse:Bash hook error: shim saw rm -rf victim')
    },
    TEST_TIMEOUT,
  )
})
