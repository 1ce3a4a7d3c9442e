/**
 * hook.json "permissions" keeps approving apart from rewriting: "decide": {"approve": true} is what lets
 * a hook approve a call the agent would ask its person about (widenedPermissions names it "approves
 * calls the agent would ask its person about", and hookd trust must approve it). A hook that declares
 * only "rewriteArguments": ["shell"] may change a command, not approve it. At Claude Code's PreToolUse
 * hookd says so: the rewrite goes as updatedInput with no permissionDecision, so Claude Code's own
 * permission rules still apply (claude-code-dialect.ts). At Copilot CLI's preToolUse the same rewrite
 * is answered `permissionDecision: "allow"` (copilot-dialect.ts), and Copilot 1.0.102's changelog says
 * "preToolUse hook permissionDecision 'allow' now suppresses the tool approval prompt": the rewriting
 * hook approves the call for the person. Copilot's answer carries no rewrite without an allow, so this
 * stays, and docs/writing-hooks.md ("Permissions") says so: grant rewriteArguments only to a hook you
 * would let approve. The case pins that behaviour, so a change to it is seen (and the docs changed).
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Sidecar } from '../../../src/sidecar/sidecar.js'
import { hook, writeTree } from '../../support/sidecar.js'
import { postEvent } from '../../agents/support/front-door-post.js'

const TOKEN = 'hkd_rewrite-approves-test-token-0123456789abcdefg'

let sidecar: Sidecar
let url = ''
let hooks = ''
let project = ''

beforeAll(async () => {
  hooks = await writeTree({
    // May rewrite shell commands, and nothing else: no "approve".
    'no-color/index.js': hook({
      beforeToolExecute: `function (ctx, call) { if (call.name === 'shell') return { arguments: { ...call.arguments, command: call.arguments.command + ' --color=never' } } }`,
    }),
    'no-color/hook.json': JSON.stringify({ permissions: { decide: { rewriteArguments: ['shell'] } } }),
  })
  project = await mkdtemp(join(tmpdir(), 'hookd-rewrite-approves-'))
  sidecar = await Sidecar.create({ hooks, workers: 1, watch: false })
  url = await sidecar.listenHttp('127.0.0.1', 0, { token: TOKEN })
}, 60_000)

afterAll(async () => {
  await sidecar?.stop()
  await rm(hooks, { recursive: true, force: true })
  await rm(project, { recursive: true, force: true })
})

let sessions = 0
const session = (): string => `rewrite-approves-${process.pid}-${++sessions}`
const post = (path: string, body: unknown): Promise<{ status: number; json: unknown }> => postEvent(url, TOKEN, path, body)

describe('a hook that may rewrite shell commands but not approve calls', () => {
  it("at Claude Code's PreToolUse, rewrites without approving: the control", async () => {
    const out = await post('/claude-code/no-color', {
      session_id: session(),
      cwd: project,
      hook_event_name: 'PreToolUse',
      permission_mode: 'default',
      tool_name: 'Bash',
      tool_input: { command: 'git log' },
      tool_use_id: 'toolu_1',
    })
    expect(out.json).toEqual({ hookSpecificOutput: { hookEventName: 'PreToolUse', updatedInput: { command: 'git log --color=never' } } })
  })

  it("at Copilot CLI's preToolUse, the rewrite also approves, as docs/writing-hooks.md says", async () => {
    const out = await post('/copilot/no-color?event=preToolUse', {
      sessionId: session(),
      timestamp: 1796053931718,
      cwd: project,
      toolName: 'bash',
      toolArgs: JSON.stringify({ command: 'git log', description: 'history' }),
    })
    const answer = out.json as Record<string, unknown>
    // The rewrite arrives...
    expect(JSON.stringify(answer.modifiedArgs)).toContain('git log --color=never')
    // ...and with it an approval: Copilot takes modifiedArgs only with an allow (docs/writing-hooks.md).
    expect(answer.permissionDecision).toBe('allow')
  })
})
