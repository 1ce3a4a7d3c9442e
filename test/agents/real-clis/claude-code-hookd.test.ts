/**
 * hookd guarding the real Claude Code CLI (pinned 2.1.328, installed into .cache/agents/ on first use),
 * driven offline by the Messages API stand-in: one `hookd serve --http` for the whole file runs the
 * example hooks, `hookd setup claude-code` writes each project's settings as a user would (run
 * in-process: the same main(argv, io) as the built command), and `claude -p` runs the task.
 *
 * Starting Claude Code is what costs here, so one run covers every scenario that fits one
 * configuration: the model asks for one Bash call per turn, each with its own victim folder and its own
 * expected outcome (guard's ask refused by -p, a rewritten command, a rewritten result, a throwing hook
 * with onError refuse, a call no hook objects to), and each test checks its own call's tool_result
 * (by tool_use id) and its own folder; beforeRun and afterRun are counted over that whole run. What
 * needs its own configuration runs alone: a profile whose confirm answers no, the sidecar down, a wrong
 * token.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AnthropicApi, startAnthropicApi } from '../support/anthropic-api.js'
import { type BashCall, oneCallPerTurn, resultOf, survived } from '../support/bash-calls.js'
import { agentCli } from '../support/cli.js'
import { type ClaudeRun, projectDir, runClaude } from '../support/claude-run.js'
import { type Serving, runInProcess, startServe, stopProcess } from '../../support/processes.js'
import { EXAMPLE_HOOKS, hook, writeTree } from '../../support/sidecar.js'
import { type AuditLine, auditLines as readAuditLines } from '../../support/audit-lines.js'

const TEST_TIMEOUT = 240_000
const KEEP = 'keep me\n'

let claude = ''
let state = ''
let hooks = ''
let serving: Serving
/** The sidecar's audit log (--audit). */
let audit = ''
const leftovers: string[] = []

/** The audit log's lines, parsed. */
const auditLines = (): Promise<AuditLine[]> => readAuditLines(audit)

/** The sidecar's metrics, as a scrape gets them. */
async function scrape(): Promise<string> {
  const url = /^hookd: metrics on (\S+)$/m.exec(serving.output.stderr)?.[1]
  if (!url) throw new Error(`hookd printed no metrics line: ${serving.output.stderr.slice(0, 2000)}`)
  return (await fetch(url)).text()
}

/** The value of one series in a scrape (0 when it is not there). */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `))
  return line ? Number(line.slice(series.length + 1)) : 0
}

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
    // Throws for the calls on victim-throw only, so it can share a run with the other scenarios.
    'strict-thrower/index.js': hook({
      beforeToolExecute: "function (ctx, call) { if (/victim-throw/.test(String(call.arguments.command))) throw new Error('policy service unreachable') }",
    }),
    'strict-thrower/hook.json': JSON.stringify({ onError: 'refuse' }),
    'strict.profile.json': JSON.stringify({ hooks: ['guard'], confirm: 'deny' }),
  })
  state = await mkdtemp(join(tmpdir(), 'hookd-claude-state-'))
  audit = join(state, 'audit.jsonl')
  serving = await startServe(['--hooks', hooks, '--listen', `unix:${join(state, 'hookd.sock')}`, '--http', '0', '--workers', '1', '--audit', audit, '--metrics', '127.0.0.1:0'], {
    cwd: state,
    timeoutMs: 60_000,
  })
}, 15 * 60_000)

afterAll(async () => {
  if (serving) await stopProcess(serving.child)
  await Promise.all([state, hooks, ...leftovers].map((dir) => rm(dir, { recursive: true, force: true })))
})

/** A project folder holding `files`, set up by `hookd setup claude-code --dir DIR ...args` run where hookd serves. */
async function project(files: Record<string, string>, args: string[]): Promise<string> {
  const dir = await projectDir(files)
  leftovers.push(dir)
  const setup = await runInProcess(['setup', 'claude-code', '--dir', dir, ...args], { cwd: state })
  expect(setup.code, setup.stderr).toBe(0)
  return dir
}

interface Task {
  dir: string
  stand: AnthropicApi
  run: ClaudeRun
}

/** `claude -p` in a project set up with `args`, the model asking for `calls` one per turn; every call gets its turn. */
async function task(calls: readonly BashCall[], files: Record<string, string>, args: string[]): Promise<Task> {
  const stand = await startAnthropicApi({ script: oneCallPerTurn(calls) })
  try {
    const dir = await project(files, args)
    const run = await runClaude({ claude, apiUrl: stand.url, cwd: dir })
    leftovers.push(run.home)
    expect(run.code, run.stderr).toBe(0)
    expect(stand.main, 'one turn per call, then the last').toHaveLength(calls.length + 1)
    return { dir, stand, run }
  } finally {
    await stand.stop()
  }
}

describe('hookd guards Claude Code 2.1.328: one run, the hooks guard,rewrite-shell,shout,strict-thrower,lifecycle', () => {
  const calls = [
    { id: 'toolu_stand_in_ask', command: 'rm -rf victim-ask' },
    { id: 'toolu_stand_in_rewrite', command: 'echo original' },
    { id: 'toolu_stand_in_shout', command: 'echo quiet words' },
    { id: 'toolu_stand_in_throw', command: 'rm -r victim-throw' },
    { id: 'toolu_stand_in_free', command: 'rm -r victim-free' },
  ] as const satisfies readonly BashCall[]
  let a: Task
  let stderrBefore = 0
  /** Claude Code's own account of the calls it did not run (the result's permission_denials). */
  const denials = (): Array<{ tool_use_id?: unknown; tool_name?: unknown }> => (a.run.result?.permission_denials ?? []) as Array<{ tool_use_id?: unknown }>
  const denied = (id: string): unknown[] => denials().filter((d) => d.tool_use_id === id)

  beforeAll(async () => {
    stderrBefore = serving.output.stderr.length
    a = await task(calls, { 'victim-ask/keep.txt': KEEP, 'victim-throw/keep.txt': KEEP, 'victim-free/keep.txt': KEEP }, ['--hooks', 'guard,rewrite-shell,shout,strict-thrower,lifecycle'])
  }, TEST_TIMEOUT)

  it("guard refuses `rm -rf victim-ask` through Claude Code's own prompt (ask, which -p denies): the folder survives and the model reads why", () => {
    expect(survived(a.dir, 'victim-ask')).toBe(true)
    expect(resultOf(a.stand, calls, 'toolu_stand_in_ask')).toMatchObject({ is_error: true, text: "Dangerous command: rm -rf victim-ask (asked by hookd hook 'guard')" })
    expect(denied('toolu_stand_in_ask')).toEqual([expect.objectContaining({ tool_name: 'Bash', tool_input: expect.objectContaining({ command: 'rm -rf victim-ask' }) })])
  })

  it("the decision log tells what happened: the ask is recorded asked with its question, then denied by the agent (issue 28's repro)", async () => {
    const dir = await realpath(a.dir)
    // The audit line of the ask: asked, with the question; never allow: true.
    const lines = await auditLines()
    const asked = lines.filter((l) => (l.decision as { outcome?: unknown } | undefined)?.outcome === 'asked')
    expect(asked).toHaveLength(1)
    const line = asked[0] as Record<string, unknown>
    expect(line).toMatchObject({
      point: 'beforeToolExecute',
      agent: 'claude-code',
      workdir: dir,
      decision: { outcome: 'asked', asked: [{ hook: 'guard', title: 'Dangerous command', body: 'rm -rf victim-ask' }] },
    })
    expect(line.decision).not.toHaveProperty('allow')
    expect(line.hooks).toEqual(expect.arrayContaining([expect.objectContaining({ hook: 'guard', version: expect.stringMatching(/^[0-9a-f]{12}$/) })]))
    // Its second line: the turn ended (Stop) with no PostToolUse for the call, so it did not run.
    const id = line.decisionId as string
    await expect.poll(async () => (await auditLines()).filter((l) => l.decisionId === id && 'outcome' in l), { timeout: 10_000 }).toEqual([
      expect.objectContaining({ decisionId: id, agent: 'claude-code', workdir: dir, outcome: 'denied', by: 'agent', via: 'run ended' }),
    ])
    // Every other gate call of the run is allowed or refused, never asked, and has no outcome line.
    const gates = lines.filter((l) => l.point === 'beforeToolExecute' && l.workdir === dir)
    expect(gates.map((l) => (l.decision as { outcome: string }).outcome).sort()).toEqual(['allowed', 'allowed', 'allowed', 'asked', 'refused'])
    expect((await auditLines()).filter((l) => 'outcome' in l && l.workdir === dir)).toHaveLength(1)
    // The operator's log says asked, with the question, and then what became of it.
    expect(serving.output.stderr).toContain(`decision ${id}: beforeToolExecute asked: "Dangerous command: rm -rf victim-ask" (guard)`)
    expect(serving.output.stderr).toContain(`decision ${id} (asked): denied by the agent (run ended)`)
    expect(serving.output.stderr).not.toContain(`decision ${id}: beforeToolExecute allowed`)
    // The metrics count it asked, not allowed, and count its outcome.
    const text = await scrape()
    expect(sample(text, 'hookd_point_calls_total{tenant="",point="beforeToolExecute",outcome="asked"}')).toBe(1)
    expect(sample(text, 'hookd_point_calls_total{tenant="",point="beforeToolExecute",outcome="allowed"}')).toBe(3)
    expect(sample(text, 'hookd_ask_outcomes_total{tenant="",outcome="denied",by="agent",via="run ended"}')).toBe(1)
  })

  it('a hook rewrites a shell command, and the rewritten command is the one that runs (its output shouted by shout)', () => {
    expect(resultOf(a.stand, calls, 'toolu_stand_in_rewrite')).toMatchObject({ is_error: false, text: 'REWRITTEN BY HOOKD' })
  })

  it('shout rewrites a result, and the model reads it changed', () => {
    expect(resultOf(a.stand, calls, 'toolu_stand_in_shout')).toMatchObject({ is_error: false, text: 'QUIET WORDS' })
  })

  it('a throwing hook with "onError": "refuse" refuses the call, and the model reads why', () => {
    expect(survived(a.dir, 'victim-throw')).toBe(true)
    expect(resultOf(a.stand, calls, 'toolu_stand_in_throw')).toEqual({
      tool_use_id: 'toolu_stand_in_throw',
      is_error: true,
      text: "PreToolUse:Bash hook error: hookd refused the call: hook 'strict-thrower' could not decide (it threw)",
    })
    expect(denied('toolu_stand_in_throw')).toEqual([expect.objectContaining({ tool_name: 'Bash' })])
  })

  it('a call no hook objects to runs: `rm -r victim-free` removes its folder (so the folders above survived the hooks, not the tool)', () => {
    expect(existsSync(join(a.dir, 'victim-free'))).toBe(false)
    expect(resultOf(a.stand, calls, 'toolu_stand_in_free').is_error).toBe(false)
    expect(denials().map((d) => d.tool_use_id), 'only the two refused calls are denials').toEqual(['toolu_stand_in_ask', 'toolu_stand_in_throw'])
  })

  it('beforeRun and afterRun run once each for the run of five tool calls', async () => {
    const lines = (): string[] => serving.output.stderr.slice(stderrBefore).split('\n').filter((l) => l.includes('[lifecycle] notify'))
    await expect.poll(lines, { timeout: 10_000 }).toHaveLength(2)
    expect(lines().map((l) => l.slice(l.indexOf('notify: ') + 8))).toEqual(['beforeRun: claude-code', 'afterRun: end_turn'])
  })

  it('setup registered the events these hooks need, and for run points alone only the run events', async () => {
    const events = async (dir: string): Promise<string[]> => {
      const settings = JSON.parse(await readFile(join(dir, '.claude', 'settings.local.json'), 'utf8')) as { hooks: Record<string, unknown> }
      return Object.keys(settings.hooks)
    }
    // guard may ask: the events that say what became of an ask come with it.
    expect(await events(a.dir)).toEqual(['UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PermissionDenied', 'Stop', 'StopFailure', 'SessionEnd'])
    // Routes whose guard may ask: the gate, what says a call ran, and the end of the turn (guard's afterRun adds the prompt); the same for either transport.
    const askOnly = ['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PermissionDenied', 'Stop', 'StopFailure', 'SessionEnd']
    expect(await events(await project({}, ['--hooks', 'strict-thrower,rewrite-shell,guard']))).toEqual(['UserPromptSubmit', ...askOnly])
    expect(await events(await project({}, ['--hooks', 'guard', '--transport', 'http']))).toEqual(['UserPromptSubmit', ...askOnly])
    expect(await events(await project({}, ['--hooks', 'lifecycle']))).toEqual(['UserPromptSubmit', 'Stop', 'StopFailure', 'SessionEnd'])
    // Guards that never ask cost no event more than their gate.
    expect(await events(await project({}, ['--hooks', 'rewrite-shell,strict-thrower']))).toEqual(['PreToolUse'])
  })
})

describe('hookd guards Claude Code 2.1.328: configurations of their own', () => {
  const victim = { 'victim/keep.txt': KEEP }
  const rmVictim = [{ id: 'toolu_stand_in_rm', command: 'rm -rf victim' }] as const satisfies readonly BashCall[]

  it(
    "with a profile that answers ctx.confirm no, guard's own refusal is Claude Code's deny",
    async () => {
      const { dir, stand } = await task(rmVictim, victim, ['--profile', 'strict'])
      expect(survived(dir, 'victim')).toBe(true)
      expect(resultOf(stand, rmVictim, 'toolu_stand_in_rm')).toEqual({ tool_use_id: 'toolu_stand_in_rm', is_error: true, text: 'PreToolUse:Bash hook error: refused by the user' })
    },
    TEST_TIMEOUT,
  )

  it(
    "with --transport http (Claude Code's own http entries) and PostToolBatch registered by hand, the ask is denied at the end of its batch",
    async () => {
      const { dir, stand } = await task(rmVictim, victim, ['--hooks', 'guard', '--transport', 'http', '--events', 'PreToolUse,PostToolUse,PostToolBatch'])
      expect(survived(dir, 'victim')).toBe(true)
      expect(resultOf(stand, rmVictim, 'toolu_stand_in_rm')).toMatchObject({ is_error: true, text: "Dangerous command: rm -rf victim (asked by hookd hook 'guard')" })
      const workdir = await realpath(dir)
      const asked = (await auditLines()).find((l) => l.workdir === workdir && l.point === 'beforeToolExecute')
      expect(asked).toMatchObject({ agent: 'claude-code', decision: { outcome: 'asked', asked: [{ hook: 'guard', title: 'Dangerous command', body: 'rm -rf victim' }] } })
      await expect.poll(async () => (await auditLines()).filter((l) => l.decisionId === asked?.decisionId && 'outcome' in l), { timeout: 10_000 }).toEqual([
        expect.objectContaining({ outcome: 'denied', by: 'agent', via: 'PostToolBatch' }),
      ])
    },
    TEST_TIMEOUT,
  )

  it(
    'with the sidecar down, the call is refused: the tool does not run',
    async () => {
      const dead = createServer()
      await new Promise<void>((resolve) => dead.listen(0, '127.0.0.1', resolve))
      const port = (dead.address() as AddressInfo).port
      await new Promise<void>((resolve) => dead.close(() => resolve()))
      const { dir, stand } = await task(rmVictim, victim, ['--hooks', 'guard', '--url', `http://127.0.0.1:${port}`, '--events', 'PreToolUse'])
      expect(survived(dir, 'victim')).toBe(true)
      const read = resultOf(stand, rmVictim, 'toolu_stand_in_rm')
      expect(read.is_error).toBe(true)
      expect(read.text).toContain(`hookd-hook: cannot reach hookd at http://127.0.0.1:${port}/claude-code/guard (connection refused: is 'hookd serve --http' running?); the call is refused (hookd-hook fails closed)`)
    },
    TEST_TIMEOUT,
  )

  it(
    "with a stranger on hookd's port, Claude Code does not take its answer: the call is refused and the stranger never sees the token",
    async () => {
      const seen: string[] = []
      // Answers every request with an allow, as a squatter on the port would while hookd is down.
      const squatter = createServer((req, res) => {
        seen.push(JSON.stringify(req.headers))
        req.resume()
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow' } }))
      })
      await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve))
      const port = (squatter.address() as AddressInfo).port
      try {
        const { dir, stand } = await task(rmVictim, victim, ['--hooks', 'guard', '--url', `http://127.0.0.1:${port}`, '--events', 'PreToolUse'])
        expect(survived(dir, 'victim')).toBe(true)
        const read = resultOf(stand, rmVictim, 'toolu_stand_in_rm')
        expect(read.is_error).toBe(true)
        expect(read.text).toContain(`hookd-hook: the answer from http://127.0.0.1:${port}/claude-code/guard does not prove it came from hookd (HTTP 200)`)
        expect(seen.length).toBeGreaterThan(0)
        const token = (await readFile(join(state, '.hookd', 'http-token'), 'utf8')).trim()
        for (const headers of seen) expect(headers).not.toContain(token)
      } finally {
        await new Promise<void>((resolve) => squatter.close(() => resolve()))
      }
    },
    TEST_TIMEOUT,
  )

  it(
    'with a wrong token, hookd answers 401 and the call is refused: the tool does not run',
    async () => {
      const { dir, stand } = await task(rmVictim, victim, ['--hooks', 'guard', '--token', 'hkd_not-the-sidecars-token-0123456789abcdef', '--events', 'PreToolUse'])
      expect(survived(dir, 'victim')).toBe(true)
      const read = resultOf(stand, rmVictim, 'toolu_stand_in_rm')
      expect(read.is_error).toBe(true)
      expect(read.text).toContain('refused the token (HTTP 401)')
    },
    TEST_TIMEOUT,
  )
})
