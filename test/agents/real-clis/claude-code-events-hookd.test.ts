/**
 * The real Claude Code CLI (pinned 2.1.328) through `hookd serve --http` for the events of issue 30,
 * offline against the Messages API stand-in, each project set up by `hookd setup claude-code` as a
 * user would: a permission dialog a hook answers (PermissionRequest, in the default permission mode
 * with Bash not allowed), a subagent's tool call named with its subagent and its SubagentStart, and
 * hook.json "tools" keeping a tool no hook cares about from reaching hookd at all (setup's matcher),
 * counted in the sidecar's audit log.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type MessagesRequest, type Reply, promptText, startAnthropicApi, toolResults } from '../support/anthropic-api.js'
import { survived } from '../support/bash-calls.js'
import { agentCli } from '../support/cli.js'
import { projectDir, runClaude } from '../support/claude-run.js'
import { type Serving, runInProcess, startServe, stopProcess } from '../../support/processes.js'
import { hook, writeTree } from '../../support/sidecar.js'
import { type AuditLine, auditLines as readAuditLines } from '../../support/audit-lines.js'

const TEST_TIMEOUT = 240_000
const KEEP = 'keep me\n'

let claude = ''
let state = ''
let hooks = ''
let audit = ''
let serving: Serving
const leftovers: string[] = []

beforeAll(async () => {
  claude = await agentCli('claude')
  hooks = await writeTree({
    // Answers Claude Code's permission dialog: rm -rf is denied, anything else allowed with its command rewritten.
    'dialog/index.js': hook({
      'permission:request': `function (ctx, event) {
        if (/rm -rf/.test(String(event.arguments.command))) { event.decision = 'deny'; event.reason = 'no rm -rf, said the dialog hook' }
        else { event.decision = 'allow'; event.arguments = { ...event.arguments, command: 'touch rewritten-by-the-dialog-hook' } }
      }`,
    }),
    // Tells who makes each shell call, and that a subagent started.
    'who/index.js': hook({
      beforeToolExecute: `function (ctx, call) { ctx.notify({ title: 'call', body: JSON.stringify({ name: call.name, subagent: call.subagent ?? null }) }) }`,
      'subagent:start': `function (ctx, event) { ctx.notify({ title: 'subagent:start', body: JSON.stringify(event.subagent) }); event.context = 'hookd says: stay in this folder' }`,
    }),
    // Gates file writes only: its hook.json lists write_file, so a Bash call never reaches hookd.
    'writes/index.js': hook({ beforeToolExecute: `function () { return { allow: false, reason: 'no writes' } }` }),
    'writes/hook.json': JSON.stringify({ tools: ['write_file'] }),
    'every/index.js': hook({ beforeToolExecute: `function () {}` }),
    'watcher/index.js': hook({ notification: `function (ctx, event) { ctx.log.info(event.message) }`, 'config:change': `function (ctx, event) { event.block = true; event.reason = 'hooks are not yours to change' }` }),
    'later/index.js': hook({ beforeToolExecute: `function (ctx, call) { if (/deploy/.test(String(call.arguments.command))) return { defer: true, reason: 'after the release window' } }` }),
  })
  state = await mkdtemp(join(tmpdir(), 'hookd-claude-events-'))
  audit = join(state, 'audit.jsonl')
  serving = await startServe(['--hooks', hooks, '--listen', `unix:${join(state, 'hookd.sock')}`, '--http', '0', '--workers', '1', '--audit', audit], { cwd: state, timeoutMs: 60_000 })
}, 15 * 60_000)

afterAll(async () => {
  if (serving) await stopProcess(serving.child)
  await Promise.all([state, hooks, ...leftovers].map((dir) => rm(dir, { recursive: true, force: true })))
})

async function project(files: Record<string, string>, args: string[]): Promise<{ dir: string; settings: Record<string, unknown>; setupOut: string }> {
  const dir = await projectDir(files)
  leftovers.push(dir)
  const setup = await runInProcess(['setup', 'claude-code', '--dir', dir, ...args], { cwd: state })
  expect(setup.code, setup.stderr).toBe(0)
  const settings = JSON.parse(await readFile(join(dir, '.claude', 'settings.local.json'), 'utf8')) as Record<string, unknown>
  return { dir, settings, setupOut: setup.stdout }
}

const linesOf = async (dir: string): Promise<AuditLine[]> => {
  const workdir = await realpath(dir)
  return (await readAuditLines(audit)).filter((l) => l.workdir === workdir)
}

describe('Claude Code 2.1.328: a permission dialog answered by a hook (PermissionRequest -> permission:request)', () => {
  it(
    'with Bash not allowed, the dialog hook denies rm -rf (the folder survives, the model reads why) and allows another call with its command rewritten',
    async () => {
      const calls = [
        { id: 'toolu_perm_rm', command: 'rm -rf victim' },
        // Not read-only (Claude Code lets `echo` through without a dialog): the dialog opens for it.
        { id: 'toolu_perm_touch', command: 'touch original' },
      ]
      const stand = await startAnthropicApi({
        script: (_r: MessagesRequest, i: number): Reply => {
          const call = calls[i]
          return call ? { tools: [{ id: call.id, name: 'Bash', input: { command: call.command, description: 'run it' } }] } : { text: 'done.' }
        },
      })
      try {
        const { dir, settings } = await project({ 'victim/keep.txt': KEEP }, ['--hooks', 'dialog'])
        expect(Object.keys(settings.hooks as object)).toEqual(['PermissionRequest'])
        // The default permission mode, and no tool allowed: Claude Code would open its dialog for Bash.
        const run = await runClaude({ claude, apiUrl: stand.url, cwd: dir, args: [] })
        leftovers.push(run.home)
        expect(run.code, run.stderr).toBe(0)
        expect(survived(dir, 'victim')).toBe(true)
        const results = stand.main.flatMap((r) => toolResults(r))
        expect(results.find((r) => r.tool_use_id === 'toolu_perm_rm')).toMatchObject({ is_error: true, text: expect.stringContaining('no rm -rf, said the dialog hook') })
        expect(results.find((r) => r.tool_use_id === 'toolu_perm_touch')).toMatchObject({ is_error: false })
        expect(existsSync(join(dir, 'rewritten-by-the-dialog-hook')), 'the rewritten command ran').toBe(true)
        expect(existsSync(join(dir, 'original')), 'the original command did not').toBe(false)
        const points = (await linesOf(dir)).map((l) => l.point)
        expect(points.filter((p) => p === 'permission:request')).toHaveLength(2)
      } finally {
        await stand.stop()
      }
    },
    TEST_TIMEOUT,
  )
})

describe("Claude Code 2.1.328: a subagent's tool call (the Agent tool) and its SubagentStart", () => {
  it(
    "the subagent's Bash call reaches beforeToolExecute with call.subagent, and SubagentStart runs subagent:start",
    async () => {
      // The main agent starts a subagent (which Claude Code runs in the background) and ends its turn; the
      // subagent, whose prompt is 'run ls', asks for Bash once, then ends.
      const script = (request: MessagesRequest, i: number): Reply => {
        const tools = (request.tools ?? []).map((t) => t.name)
        if (promptText(request).includes('run ls')) {
          const ran = request.messages.some((m) => Array.isArray(m.content) && m.content.some((b) => b.type === 'tool_result'))
          return ran ? { text: 'listed.' } : { tools: [{ id: 'toolu_sub_ls', name: 'Bash', input: { command: 'echo from the subagent', description: 'run it' } }] }
        }
        if (i === 0) return { tools: [{ id: 'toolu_spawn', name: tools.includes('Agent') ? 'Agent' : 'Task', input: { description: 'list files', prompt: 'run ls', subagent_type: 'general-purpose' } }] }
        return { text: 'done.' }
      }
      const stand = await startAnthropicApi({ script })
      try {
        const { dir, settings } = await project({}, ['--hooks', 'who'])
        expect(Object.keys(settings.hooks as object).sort()).toEqual(['PreToolUse', 'SubagentStart'])
        const before = serving.output.stderr.length
        const run = await runClaude({ claude, apiUrl: stand.url, cwd: dir, args: ['--allowedTools', 'Bash,Agent,Task'] })
        leftovers.push(run.home)
        expect(run.code, run.stderr).toBe(0)
        const notes = serving.output.stderr.slice(before).split('\n').filter((l) => l.includes('[who] notify'))
        const subagentCalls = notes.filter((l) => l.includes('"name":"shell"'))
        expect(notes.some((l) => l.includes('subagent:start')), notes.join('\n')).toBe(true)
        expect(subagentCalls.length, notes.join('\n')).toBeGreaterThan(0)
        expect(subagentCalls[0]).toMatch(/"subagent":\{"id":"[^"]+","type":"general-purpose"\}/)
      } finally {
        await stand.stop()
      }
    },
    TEST_TIMEOUT,
  )
})

describe('Claude Code 2.1.328: hook.json "tools" keeps a tool no hook cares about from reaching hookd', () => {
  it(
    'a route whose only gate lists write_file gets PreToolUse with the matcher Write: five Bash calls make no hook call; a gate listing none makes five',
    async () => {
      const calls = [1, 2, 3, 4, 5].map((n) => ({ id: `toolu_cond_${n}`, command: `echo call ${n}` }))
      const script = (_r: MessagesRequest, i: number): Reply => {
        const call = calls[i]
        return call ? { tools: [{ id: call.id, name: 'Bash', input: { command: call.command, description: 'run it' } }] } : { text: 'done.' }
      }
      const posts: Record<string, number> = {}
      for (const route of ['writes', 'every']) {
        const stand = await startAnthropicApi({ script })
        try {
          const { dir, settings } = await project({}, ['--hooks', route])
          const group = ((settings.hooks as Record<string, Array<{ matcher?: string }>>).PreToolUse ?? [])[0]
          expect(group?.matcher).toBe(route === 'writes' ? 'Write' : '*')
          const run = await runClaude({ claude, apiUrl: stand.url, cwd: dir })
          leftovers.push(run.home)
          expect(run.code, run.stderr).toBe(0)
          posts[route] = (await linesOf(dir)).filter((l) => l.point === 'beforeToolExecute').length
        } finally {
          await stand.stop()
        }
      }
      expect(posts).toEqual({ writes: 0, every: 5 })
    },
    TEST_TIMEOUT * 2,
  )
})

describe("Claude Code 2.1.328: a hook defers a call (beforeToolExecute defer -> PreToolUse defer)", () => {
  it(
    'in -p the turn ends with the call deferred: it does not run, and the result names it',
    async () => {
      const stand = await startAnthropicApi({
        script: (_r: MessagesRequest, i: number): Reply => (i === 0 ? { tools: [{ id: 'toolu_deploy', name: 'Bash', input: { command: 'touch deploy-ran', description: 'deploy' } }] } : { text: 'done.' }),
      })
      try {
        const { dir } = await project({}, ['--hooks', 'later'])
        const run = await runClaude({ claude, apiUrl: stand.url, cwd: dir })
        leftovers.push(run.home)
        expect(existsSync(join(dir, 'deploy-ran')), 'the deferred call did not run').toBe(false)
        expect(run.result, run.stdout).toMatchObject({ stop_reason: 'tool_deferred', deferred_tool_use: { id: 'toolu_deploy', name: 'Bash' } })
      } finally {
        await stand.stop()
      }
    },
    TEST_TIMEOUT,
  )
})

describe('hookd setup claude-code for observe-only events and gates of the agents\' own points', () => {
  it('Notification gets a command entry with async: true (hookd only observes it), ConfigChange does not; setup run again replaces both; http entries take no async', async () => {
    const { dir, settings } = await project({}, ['--hooks', 'watcher'])
    const entries = (e: string, s: Record<string, unknown>) => ((s.hooks as Record<string, Array<{ hooks: Array<Record<string, unknown>> }>>)[e] ?? []).flatMap((g) => g.hooks)
    expect(Object.keys(settings.hooks as object).sort()).toEqual(['ConfigChange', 'Notification'])
    expect(entries('Notification', settings)).toEqual([expect.objectContaining({ type: 'command', async: true })])
    expect(entries('ConfigChange', settings)[0]).not.toHaveProperty('async')
    const again = await runInProcess(['setup', 'claude-code', '--dir', dir, '--hooks', 'watcher'], { cwd: state })
    expect(again.code, again.stderr).toBe(0)
    const after = JSON.parse(await readFile(join(dir, '.claude', 'settings.local.json'), 'utf8')) as Record<string, unknown>
    expect(entries('Notification', after)).toHaveLength(1)
    const http = await runInProcess(['setup', 'claude-code', '--dir', dir, '--hooks', 'watcher', '--transport', 'http'], { cwd: state })
    expect(http.code, http.stderr).toBe(0)
    const viaHttp = JSON.parse(await readFile(join(dir, '.claude', 'settings.local.json'), 'utf8')) as Record<string, unknown>
    expect(entries('Notification', viaHttp)).toEqual([expect.not.objectContaining({ async: true })])
    expect(entries('ConfigChange', viaHttp)).toEqual([expect.objectContaining({ type: 'http', onFailure: 'block' })])
  })
})

// ConfigChange itself does not arrive under `claude -p`: measured with 2.1.328, a Bash call emptying
// settings.local.json mid-run (then `sleep 3`, then another call) sent no ConfigChange to hookd's entry,
// and the session went on with the hooks it started with. What config:change answers is in the dialect's
// table (test/unit/agents/claude-code-dialect.test.ts); this holds what -p does.
describe('Claude Code 2.1.328: a model changing the settings that hold its hooks', () => {
  it(
    'the model empties settings.local.json with Bash under -p: the session keeps its hooks (every later call still reaches the gate), and no ConfigChange is sent',
    async () => {
      const calls = ["printf '{}' > .claude/settings.local.json", 'sleep 3', 'echo after']
      const stand = await startAnthropicApi({
        script: (_r: MessagesRequest, i: number): Reply => (i < calls.length ? { tools: [{ id: `toolu_cfg_${i}`, name: 'Bash', input: { command: calls[i] as string, description: 'run it' } }] } : { text: 'done.' }),
      })
      try {
        const { dir } = await project({}, ['--hooks', 'watcher,every'])
        const run = await runClaude({ claude, apiUrl: stand.url, cwd: dir })
        leftovers.push(run.home)
        expect(run.code, run.stderr).toBe(0)
        const lines = await linesOf(dir)
        expect(lines.filter((l) => l.point === 'beforeToolExecute')).toHaveLength(3)
        expect(lines.filter((l) => l.point === 'config:change')).toHaveLength(0)
      } finally {
        await stand.stop()
      }
    },
    TEST_TIMEOUT,
  )
})
