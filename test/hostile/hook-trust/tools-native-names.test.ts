/**
 * hook.json "tools" against the agents' native tools: a guard that lists the canonical tools it guards
 * ("tools": ["write_file", "edit_file"], the example docs/writing-hooks.md gives for "refuses writes to
 * protected files") must still see every call that writes, or the call must be refused. An agent's
 * native tool that reads as a canonical one only in some shapes (Codex's apply_patch of several files
 * or a delete, Cline's read_files of a line range) reaches the chain under its own name, and the
 * planner (src/sidecar/session/step-planner.ts) skips the guard for it: the write goes through with no
 * hook called. Each test posts the agent's own event JSON to a real sidecar's front door.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Sidecar } from '../../../src/sidecar/sidecar.js'
import { hook, writeTree } from '../../support/sidecar.js'
import { postEvent } from '../../agents/support/front-door-post.js'
import { clinePre } from '../../agents/support/agent-events.js'

const TOKEN = 'hkd_tools-native-names-test-token-0123456789abcd'

let sidecar: Sidecar
let url = ''
let hooks = ''
let project = ''

beforeAll(async () => {
  hooks = await writeTree({
    // Refuses every call it is called for, naming it: with "tools", it must be called for every write.
    'guard-writes/index.js': hook({ beforeToolExecute: `function (ctx, call) { return { allow: false, reason: 'no writes: ' + call.name } }` }),
    'guard-writes/hook.json': JSON.stringify({ description: 'refuses writes to protected files', tools: ['write_file', 'edit_file'], onError: 'refuse' }),
    // Refuses every read it is called for.
    'guard-reads/index.js': hook({ beforeToolExecute: `function (ctx, call) { return { allow: false, reason: 'no reads: ' + call.name } }` }),
    'guard-reads/hook.json': JSON.stringify({ description: 'refuses reads of secrets', tools: ['read_file'], onError: 'refuse' }),
  })
  project = await mkdtemp(join(tmpdir(), 'hookd-tools-native-'))
  sidecar = await Sidecar.create({ hooks, workers: 1, watch: false })
  url = await sidecar.listenHttp('127.0.0.1', 0, { token: TOKEN })
}, 60_000)

afterAll(async () => {
  await sidecar?.stop()
  await rm(hooks, { recursive: true, force: true })
  await rm(project, { recursive: true, force: true })
})

let sessions = 0
const session = (): string => `tools-native-${process.pid}-${++sessions}`
const post = (path: string, body: unknown): Promise<{ status: number; json: unknown }> => postEvent(url, TOKEN, path, body)

const codexPre = (tool: string, input: Record<string, unknown>): Record<string, unknown> => ({
  session_id: session(),
  turn_id: 't1',
  cwd: project,
  hook_event_name: 'PreToolUse',
  model: 'gpt-5.5',
  permission_mode: 'default',
  tool_name: tool,
  tool_input: input,
  tool_use_id: 'call_1',
})
const codexDeny = (reason: string) => ({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } })
const patch = (...lines: string[]): string => ['*** Begin Patch', ...lines, '*** End Patch', ''].join('\n')

describe('a guard whose "tools" lists write_file and edit_file', () => {
  it('refuses a Codex patch that adds one file (read as write_file): the control', async () => {
    const out = await post('/codex/guard-writes', codexPre('apply_patch', { command: patch('*** Add File: .env', '+SECRET=1') }))
    expect(out.json).toEqual(codexDeny('no writes: write_file'))
  })

  it('is not skipped for a Codex patch that adds two files (it writes .env all the same)', async () => {
    const out = await post('/codex/guard-writes', codexPre('apply_patch', { command: patch('*** Add File: .env', '+SECRET=1', '*** Add File: notes.txt', '+hello') }))
    // Wanted: the guard sees the call (apply_patch) and refuses it, or hookd refuses a write it cannot
    // show as write_file/edit_file to a guard that lists them. Got: 204, no hook called, the patch runs.
    expect(out.status).toBe(200)
    expect(out.json).toEqual(codexDeny('no writes: apply_patch'))
  })

  it('is not skipped for a Codex patch that deletes a file', async () => {
    const out = await post('/codex/guard-writes', codexPre('apply_patch', { command: patch('*** Delete File: .env') }))
    expect(out.status).toBe(200)
    expect(out.json).toEqual(codexDeny('no writes: apply_patch'))
  })

  it('is not skipped for a Codex patch that edits two blocks of one file', async () => {
    const out = await post('/codex/guard-writes', codexPre('apply_patch', { command: patch('*** Update File: .env', '@@', '-A=1', '+A=2', '@@', '-B=1', '+B=2') }))
    expect(out.status).toBe(200)
    expect(out.json).toEqual(codexDeny('no writes: apply_patch'))
  })
})

describe("a guard whose \"tools\" lists write_file and edit_file, at Copilot CLI", () => {
  const copilot = (patchText: string): Record<string, unknown> => ({ sessionId: session(), timestamp: 1796053931718, cwd: project, toolName: 'apply_patch', toolArgs: patchText })
  const copilotDeny = (reason: string) => ({ permissionDecision: 'deny', permissionDecisionReason: reason })

  it('refuses a patch that adds one file: the control', async () => {
    const out = await post('/copilot/guard-writes?event=preToolUse', copilot(patch('*** Add File: .env', '+SECRET=1')))
    expect(out.json).toEqual(copilotDeny('no writes: write_file'))
  })

  it('is not skipped for a patch that adds two files', async () => {
    const out = await post('/copilot/guard-writes?event=preToolUse', copilot(patch('*** Add File: .env', '+SECRET=1', '*** Add File: notes.txt', '+hello')))
    expect(out.status).toBe(200)
    expect(out.json).toEqual(copilotDeny('no writes: apply_patch'))
  })
})

describe('a guard whose "tools" lists read_file', () => {
  const cline = (input: Record<string, unknown>): Record<string, unknown> => clinePre(project, session(), 'read_files', input)
  const cancel = (reason: string) => ({ cancel: true, errorMessage: reason })

  it('refuses a Cline read_files of one whole file: the control', async () => {
    const out = await post('/cline/guard-reads', cline({ files: [{ path: join(project, '.env') }] }))
    expect(out.json).toEqual(cancel('no reads: read_file'))
  })

  it('is not skipped for a Cline read_files of the same file from line 1', async () => {
    const out = await post('/cline/guard-reads', cline({ files: [{ path: join(project, '.env'), start_line: 1, end_line: 10_000 }] }))
    expect(out.status).toBe(200)
    expect(out.json).toEqual(cancel('no reads: read_files'))
  })

  it('is not skipped for a Cline read_files of the file beside another', async () => {
    const out = await post('/cline/guard-reads', cline({ files: [{ path: join(project, 'README.md') }, { path: join(project, '.env') }] }))
    expect(out.status).toBe(200)
    expect(out.json).toEqual(cancel('no reads: read_files'))
  })
})

describe('an operator floor guard whose "tools" lists write_file and edit_file', () => {
  let floored: Sidecar | undefined
  let floorUrl = ''
  let floor = ''
  let below = ''

  beforeAll(async () => {
    floor = await writeTree({
      '00-protect/index.js': hook({ beforeToolExecute: `function (ctx, call) { return { allow: false, reason: 'floor: no writes: ' + call.name } }` }),
      '00-protect/hook.json': JSON.stringify({ tools: ['write_file', 'edit_file'] }),
    })
    below = await writeTree({ 'quiet/index.js': hook({ beforeToolExecute: `function () {}` }) })
    floored = await Sidecar.create({ hooks: below, floor, floorReport: () => {}, workers: 1, watch: false })
    floorUrl = await floored.listenHttp('127.0.0.1', 0, { token: TOKEN })
  }, 60_000)

  afterAll(async () => {
    await floored?.stop()
    for (const dir of [floor, below]) if (dir) await rm(dir, { recursive: true, force: true })
  })

  it('refuses a one-file Codex patch in every session: the control', async () => {
    const out = await postEvent(floorUrl, TOKEN, '/codex/quiet', codexPre('apply_patch', { command: patch('*** Add File: .env', '+SECRET=1') }))
    expect(out.json).toEqual(codexDeny('floor: no writes: write_file'))
  })

  it('is not escaped by a Codex patch of two files', async () => {
    const out = await postEvent(floorUrl, TOKEN, '/codex/quiet', codexPre('apply_patch', { command: patch('*** Add File: .env', '+SECRET=1', '*** Add File: notes.txt', '+hello') }))
    expect(out.status).toBe(200)
    expect(out.json).toEqual(codexDeny('floor: no writes: apply_patch'))
  })
})
