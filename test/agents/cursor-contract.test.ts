/**
 * Cursor's command-hook contract, checked on paper: the Cursor agent cannot run here.
 *
 * Why not: Cursor's agent ships in the Cursor editor and in the `cursor-agent` CLI, which installs with
 * a script downloaded from cursor.com (no npm package: the npm name `cursor-agent` is an unrelated
 * project), and both talk only to Cursor's own backend with a Cursor account; no documented setting or
 * variable points them at another model endpoint. Neither the install nor a model turn is possible
 * offline.
 *
 * What this file checks instead: the test guard (a POSIX `sh` script) fed, through a real `sh`, the
 * documented `beforeShellExecution` and `preToolUse` payloads field for field, answering in the
 * documented output shape. Sources:
 * - cursor.com/docs/agent/hooks, as stored in the pcomans/caruso repository at
 *   `reference/cursor_hooks.md`: the config `{"version":1,"hooks":{...}}`, the common input fields
 *   (conversation_id, generation_id, model, hook_event_name, cursor_version, workspace_roots, user_email),
 *   beforeShellExecution input {command, cwd} and output {permission: allow|deny|ask, user_message,
 *   agent_message}, beforeMCPExecution input {tool_name, tool_input (a JSON string), url | command};
 * - the current page's event list (preToolUse / postToolUse / postToolUseFailure are newer events
 *   that fire for every tool, matched on tool names such as `Shell`, `Read`, `Write`).
 */
import { execFile } from 'node:child_process'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { guardScript, tempDir, writeScript } from './support/other-clis.js'

const DENY_JSON = '{"permission":"deny","user_message":"Blocked: rm -r","agent_message":"guard: rm -r is not allowed here"}'

const COMMON = {
  conversation_id: 'conv-0001',
  generation_id: 'gen-0001',
  model: 'default',
  cursor_version: '1.7.2',
  workspace_roots: ['/work/project'],
  user_email: null,
}

function beforeShellExecution(command: string): Record<string, unknown> {
  return { ...COMMON, hook_event_name: 'beforeShellExecution', command, cwd: '/work/project' }
}

function sh(script: string, arg: string, stdin: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = execFile('sh', [script, arg], (err, stdout, stderr) => {
      // On a non-zero exit, execFile's error carries the exit status as `code`.
      done({ code: err ? Number((err as { code?: unknown }).code) : 0, stdout, stderr })
    })
    child.stdin?.end(stdin)
  })
}

let dir: string
let guard: string

beforeAll(async () => {
  dir = await tempDir('cursor-guard')
  guard = await writeScript(join(dir, 'guard.sh'), guardScript({ denyJson: DENY_JSON }))
})

afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('Cursor hooks (documented contract; the agent cannot run offline)', () => {
  it('denies a documented beforeShellExecution payload for rm -rf with the documented output fields', async () => {
    const out = await sh(guard, 'json', JSON.stringify(beforeShellExecution('rm -rf victim')))
    expect(out.code).toBe(0)
    const answer = JSON.parse(out.stdout) as Record<string, unknown>
    expect(Object.keys(answer).sort()).toEqual(['agent_message', 'permission', 'user_message'])
    expect(['allow', 'deny', 'ask']).toContain(answer['permission'])
    expect(answer['permission']).toBe('deny')
  })

  it('says nothing, and exits 0, for a harmless command', async () => {
    const out = await sh(guard, 'json', JSON.stringify(beforeShellExecution('ls -la')))
    expect(out).toEqual({ code: 0, stdout: '', stderr: '' })
  })

  it('can refuse by exit code 2 with the reason on stderr', async () => {
    const out = await sh(guard, 'exit2', JSON.stringify(beforeShellExecution('rm -rf victim')))
    expect(out.code).toBe(2)
    expect(out.stderr).toContain('rm -r is not allowed')
  })

  it('sees the command inside a documented beforeMCPExecution payload only as part of a JSON string', async () => {
    // tool_input is documented as "<json params>": a string, so the command is escaped inside it.
    const payload = { ...COMMON, hook_event_name: 'beforeMCPExecution', tool_name: 'run', tool_input: JSON.stringify({ cmd: 'rm -rf victim' }), command: 'npx mcp-server' }
    const text = JSON.stringify(payload)
    expect(text).toContain('\\"cmd\\":\\"rm -rf victim\\"')
    const out = await sh(guard, 'json', text)
    expect(JSON.parse(out.stdout)).toMatchObject({ permission: 'deny' })
  })
})
