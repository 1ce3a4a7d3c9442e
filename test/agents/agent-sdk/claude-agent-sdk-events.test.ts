/**
 * hookd-sandbox/claude-agent-sdk with the real Claude Agent SDK (pinned 0.3.332) for the events of
 * issue 30, offline against the Messages API stand-in, over one sidecar of its own: the SDK's hook
 * callbacks get the same events as Claude Code's hooks and go through the same dialect, so a hook at
 * subagent:start runs for the SDK's SubagentStart, a subagent's tool call carries call.subagent, and a
 * hook at permission:request answers the SDK's PermissionRequest.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hookdHooks } from '../../../src/agents/claude-agent-sdk/index.js'
import { type MessagesRequest, type Reply, promptText, startAnthropicApi, toolResults } from '../support/anthropic-api.js'
import { agentCli } from '../support/cli.js'
import { offlineEnv, projectDir } from '../support/claude-run.js'
import { type Running, hook, startSidecar, writeTree } from '../../support/sidecar.js'

const TEST_TIMEOUT = 240_000

type Query = (args: { prompt: string; options: Record<string, unknown> }) => AsyncIterable<Record<string, unknown>>

let query: Query
let running: Running
let hooks = ''
const leftovers: string[] = []

beforeAll(async () => {
  const sdk = await agentCli('claude-agent-sdk')
  query = ((await import(pathToFileURL(join(sdk, 'sdk.mjs')).href)) as { query: Query }).query
  hooks = await writeTree({
    'who/index.js': hook({
      beforeToolExecute: `function (ctx, call) { ctx.notify({ title: 'call', body: JSON.stringify({ name: call.name, subagent: call.subagent ?? null }) }) }`,
      'subagent:start': `function (ctx, event) { ctx.notify({ title: 'subagent:start', body: JSON.stringify(event.subagent) }) }`,
    }),
    'dialog/index.js': hook({
      'permission:request': `function (ctx, event) { if (/rm -rf/.test(String(event.arguments.command))) { event.decision = 'deny'; event.reason = 'no rm -rf, said the dialog hook' } }`,
    }),
  })
  running = await startSidecar({ hooks, watch: false })
}, 15 * 60_000)

afterAll(async () => {
  await running?.stop()
  await Promise.all([hooks, ...leftovers].map((dir) => rm(dir, { recursive: true, force: true })))
})

async function queried(script: (r: MessagesRequest, i: number) => Reply, options: Record<string, unknown>, files: Record<string, string> = {}) {
  const stand = await startAnthropicApi({ script })
  const dir = await projectDir(files)
  const home = await mkdtemp(join(tmpdir(), 'hookd-sdk-home-'))
  leftovers.push(dir, home)
  try {
    for await (const message of query({ prompt: 'do the task', options: { cwd: dir, env: offlineEnv(stand.url, home), settingSources: [], ...options } })) void message
    return { dir, stand }
  } finally {
    await stand.stop()
  }
}

describe('the Claude Agent SDK 0.3.332: the agents\' own events through hookd-sandbox/claude-agent-sdk', () => {
  it(
    "SubagentStart reaches subagent:start, and the subagent's Bash call carries call.subagent",
    async () => {
      const notes: string[] = []
      const hookd = await hookdHooks({ client: running.client, hooks: ['who'], capabilities: { notify: (m) => void notes.push(`${m.title}: ${m.body}`) } })
      expect(hookd.events).toContain('SubagentStart')
      const script = (request: MessagesRequest, i: number): Reply => {
        const tools = (request.tools ?? []).map((t) => t.name)
        if (promptText(request).includes('run ls')) {
          const ran = request.messages.some((m) => Array.isArray(m.content) && m.content.some((b) => b.type === 'tool_result'))
          return ran ? { text: 'listed.' } : { tools: [{ id: 'toolu_sub_ls', name: 'Bash', input: { command: 'echo from the subagent', description: 'run it' } }] }
        }
        if (i === 0) return { tools: [{ id: 'toolu_spawn', name: tools.includes('Agent') ? 'Agent' : 'Task', input: { description: 'list files', prompt: 'run ls', subagent_type: 'general-purpose' } }] }
        return { text: 'done.' }
      }
      try {
        await queried(script, { allowedTools: ['Bash', 'Agent', 'Task'], hooks: hookd.hooks })
      } finally {
        await hookd.close()
      }
      expect(notes.some((n) => n.startsWith('subagent:start: {"id":')), notes.join('\n')).toBe(true)
      expect(notes.filter((n) => n.includes('"name":"shell"')).some((n) => /"subagent":\{"id":"[^"]+","type":"general-purpose"\}/.test(n)), notes.join('\n')).toBe(true)
    },
    TEST_TIMEOUT,
  )

  it(
    'PermissionRequest (Bash not allowed) reaches permission:request, and its deny refuses the call',
    async () => {
      const hookd = await hookdHooks({ client: running.client, hooks: ['dialog'] })
      expect(hookd.events).toContain('PermissionRequest')
      const script = (_r: MessagesRequest, i: number): Reply => (i === 0 ? { tools: [{ id: 'toolu_rm', name: 'Bash', input: { command: 'rm -rf victim', description: 'run it' } }] } : { text: 'done.' })
      let stand
      let dir = ''
      try {
        ;({ stand, dir } = await queried(script, { hooks: hookd.hooks }, { 'victim/keep.txt': 'keep me\n' }))
      } finally {
        await hookd.close()
      }
      expect(existsSync(join(dir, 'victim', 'keep.txt'))).toBe(true)
      const result = stand.main.flatMap((r) => toolResults(r)).find((r) => r.tool_use_id === 'toolu_rm')
      expect(result).toMatchObject({ is_error: true, text: expect.stringContaining('no rm -rf, said the dialog hook') })
    },
    TEST_TIMEOUT,
  )
})
