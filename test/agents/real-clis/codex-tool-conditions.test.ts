/**
 * hook.json "tools" keeping a tool no hook cares about from reaching hookd at all, with the real Codex
 * 0.169.0 (pinned in scripts/agent-cli.sh) driven offline by the Responses API stand-in: `hookd setup
 * codex --hooks ROUTE` writes its tool events' groups with a matcher naming only Codex's names for the
 * tools the route's hooks list (src/agents/codex/codex-agent.ts), and records the entries as trusted
 * under the hash that holds that matcher (src/agents/codex/trust.ts). Codex calls hookd only for them.
 *
 * Three routes, one run each, the model making the same shell calls:
 * - `writes`, whose only hook refuses every call and lists write_file: no shell call reaches hookd
 *   (the audit log has no line for it) and each runs; a patch adding a file does reach it (the narrowed
 *   entry is trusted and runs) and is refused.
 * - `shell`, whose only hook refuses `rm -rf` and lists shell: every shell call reaches it, and
 *   `rm -rf victim` is refused.
 * - `every`, whose hook lists no tools: no matcher, every call reaches hookd.
 */
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AuditLine, auditLines } from '../../support/audit-lines.js'
import { type Serving, runInProcess, startServe, stopProcess } from '../../support/processes.js'
import { agentCli } from '../support/cli.js'
import { type FunctionCall, type CustomCall, type ResponsesRequest, functionOutputs, startOpenAiApi } from '../support/openai-api.js'
import { codexConfig, isolatedEnv, projectWithVictims, run, tempDir } from '../support/other-clis.js'

const TEST_TIMEOUT = 240_000
const PATCH = '*** Begin Patch\n*** Add File: added.txt\n+written by the model\n*** End Patch\n'

let state = ''
let serving: Serving
const cleanup: string[] = []

beforeAll(async () => {
  state = await mkdtemp(join(tmpdir(), 'hookd-codex-tools-state-'))
  const hooks = join(state, 'hooks')
  const hook = async (name: string, index: string, json?: unknown): Promise<void> => {
    await mkdir(join(hooks, name), { recursive: true })
    await writeFile(join(hooks, name, 'index.js'), index)
    if (json !== undefined) await writeFile(join(hooks, name, 'hook.json'), JSON.stringify(json))
  }
  await hook('writes', `module.exports = { beforeToolExecute() { return { allow: false, reason: 'no writes' } } }\n`, { tools: ['write_file'] })
  await hook('shell', `module.exports = { beforeToolExecute(ctx, call) { if (/rm -rf/.test(String(call.arguments.command))) return { allow: false, reason: 'no rm -rf' } } }\n`, { tools: ['shell'] })
  await hook('every', `module.exports = { beforeToolExecute() {} }\n`)
  serving = await startServe(['--hooks', hooks, '--listen', `unix:${join(state, 'hookd.sock')}`, '--http', '0', '--workers', '1', '--audit', join(state, 'audit.jsonl')], {
    cwd: state,
    timeoutMs: 60_000,
  })
}, 120_000)

afterAll(async () => {
  if (serving) await stopProcess(serving.child)
  await Promise.all([state, ...cleanup].map((dir) => rm(dir, { recursive: true, force: true })))
})

/** The audit log's beforeToolExecute lines for Codex's calls in `project`. */
async function gated(project: string): Promise<AuditLine[]> {
  const workdir = await realpath(project)
  return (await auditLines(join(state, 'audit.jsonl'))).filter((l) => l.agent === 'codex' && l.point === 'beforeToolExecute' && l.workdir === workdir)
}

/** `hookd setup codex --hooks ROUTE` for a fresh HOME pointed at the stand-in, then one `codex exec` making `calls` in turn. */
async function runRoute(route: string, calls: Array<FunctionCall | CustomCall>) {
  const api = await startOpenAiApi((request: ResponsesRequest) => {
    const next = calls[functionOutputs(request).length]
    return next ? { calls: [next] } : { text: 'done' }
  })
  try {
    const home = await tempDir('codex-tools-home')
    const project = await projectWithVictims('codex-tools-project', ['victim'])
    cleanup.push(home, project)
    await mkdir(join(home, '.codex'))
    // A model Codex knows (its own model table), which it offers apply_patch: it offers a model it does not know none.
    await writeFile(join(home, '.codex', 'config.toml'), codexConfig(api.baseUrl).replace('model = "test-model"', 'model = "gpt-5.5"'))
    const setup = await runInProcess(['setup', 'codex', '--hooks', route], { cwd: state, env: { HOME: home, CODEX_HOME: '' } })
    expect(setup.code, setup.stderr).toBe(0)
    const hooksJson = JSON.parse(await readFile(join(home, '.codex', 'hooks.json'), 'utf8')) as { hooks: Record<string, Array<{ matcher?: string }>> }
    const codex = await agentCli('codex')
    const ran = await run(codex, ['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', 'Please work.'], {
      cwd: project,
      env: isolatedEnv(home, { CODEX_HOME: join(home, '.codex'), STUB_OPENAI_KEY: 'stub-key' }),
      timeoutMs: 150_000,
    })
    expect(ran.code, ran.stderr).toBe(0)
    const outputs = new Map(api.requests.flatMap((r) => functionOutputs(r.body)).map((o) => [o.callId, o.output]))
    return { project, hooksJson, outputs, setup: setup.stdout, requests: api.requests }
  } finally {
    await api.stop()
  }
}

const echo = (n: number): FunctionCall => ({ name: 'exec_command', arguments: { cmd: `echo call-${n}` }, callId: `call-echo-${n}` })

describe('Codex 0.169.0: hook.json "tools" keeps a tool no hook cares about from reaching hookd', () => {
  it(
    'a route whose only hook lists write_file: PreToolUse matches apply_patch alone, three shell calls run with no hook call, a patch reaches the hook and is refused',
    async () => {
      const r = await runRoute('writes', [echo(1), echo(2), echo(3), { name: 'apply_patch', input: PATCH, callId: 'call-patch' }])
      expect(r.hooksJson.hooks.PreToolUse).toEqual([expect.objectContaining({ matcher: 'apply_patch' })])
      for (const n of [1, 2, 3]) expect(r.outputs.get(`call-echo-${n}`)).toContain(`call-${n}`)
      // The narrowed entry is trusted and runs: the patch reached the hook, which refused it.
      expect(r.outputs.get('call-patch')).toBe(`Command blocked by PreToolUse hook: no writes. Command: ${PATCH}`)
      expect(existsSync(join(r.project, 'added.txt'))).toBe(false)
      const lines = await gated(r.project)
      expect(lines).toEqual([expect.objectContaining({ hooks: [expect.objectContaining({ hook: 'writes', outcome: 'refused' })] })])
    },
    TEST_TIMEOUT,
  )

  it(
    'a route whose only hook lists shell: PreToolUse matches Bash, every shell call reaches it, and rm -rf is refused',
    async () => {
      const r = await runRoute('shell', [echo(1), echo(2), { name: 'exec_command', arguments: { cmd: 'rm -rf victim' }, callId: 'call-rm' }])
      expect(r.hooksJson.hooks.PreToolUse).toEqual([expect.objectContaining({ matcher: 'Bash' })])
      expect(r.outputs.get('call-rm')).toBe('Command blocked by PreToolUse hook: no rm -rf. Command: rm -rf victim')
      expect(existsSync(join(r.project, 'victim', 'keep.txt'))).toBe(true)
      expect((await gated(r.project)).length).toBe(3)
    },
    TEST_TIMEOUT,
  )

  it(
    'a route whose hook lists no tools: no matcher, every shell call reaches hookd',
    async () => {
      const r = await runRoute('every', [echo(1), echo(2), echo(3)])
      expect(r.hooksJson.hooks.PreToolUse).toEqual([expect.not.objectContaining({ matcher: expect.anything() })])
      expect((await gated(r.project)).length).toBe(3)
    },
    TEST_TIMEOUT,
  )
})
