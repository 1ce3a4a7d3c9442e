/**
 * GitHub Copilot CLI 1.0.102's command-hook contract, measured with the real CLI. It runs offline:
 * `COPILOT_OFFLINE=true` with a BYOK provider (`COPILOT_PROVIDER_BASE_URL`, here with
 * `COPILOT_PROVIDER_WIRE_API=responses` so the Responses API stand-in serves it) needs no GitHub
 * account or token (`copilot help environment`).
 *
 * Each test writes a project holding `victim/` and `.github/hooks/guard.json` (a `preToolUse` command
 * hook), runs `copilot -p ... --allow-all-tools --trust-folder` in a temp HOME, and the stand-in
 * model asks for `rm -rf victim` through the `bash` tool. `--trust-folder` is needed: without it,
 * repository hooks are not loaded at all, silently.
 */
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { functionOutputs, startOpenAiApi, type OpenAiApi } from './support/openai-api.js'
import { agentCli } from './support/cli.js'
import { copilotEnv, guardScript, projectWithVictim, run, tempDir, writeScript } from './support/other-clis.js'

const DENY_JSON = '{"permissionDecision":"deny","permissionDecisionReason":"guard: rm -r is not allowed here"}'

let copilot: string
const cleanup: string[] = []

beforeAll(async () => {
  copilot = await agentCli('copilot')
}, 600_000)

afterAll(async () => {
  await Promise.all(cleanup.map((dir) => rm(dir, { recursive: true, force: true })))
})

interface Setup {
  /** The `.github/hooks/guard.json` `hooks` object, or none. */
  hooks?: Record<string, unknown>
  /** Whether to pass --trust-folder (default true). */
  trust?: boolean
}

interface Outcome {
  api: OpenAiApi
  project: string
  stdout: string
  stderr: string
  code: number | null
  toolResults: string[]
}

async function runCopilot(setup: Setup): Promise<Outcome> {
  const api = await startOpenAiApi((_request, index) =>
    index === 0 ? { calls: [{ name: 'bash', arguments: { command: 'rm -rf victim', description: 'Delete the victim folder' } }] } : { text: `turn ${index + 1}: done` },
  )
  const home = await tempDir('copilot-home')
  const project = await projectWithVictim('copilot-project')
  cleanup.push(home, project)
  if (setup.hooks) {
    await mkdir(join(project, '.github', 'hooks'), { recursive: true })
    await writeFile(join(project, '.github', 'hooks', 'guard.json'), JSON.stringify({ version: 1, hooks: setup.hooks }))
  }
  try {
    const ran = await run(copilot, ['--allow-all-tools', ...(setup.trust === false ? [] : ['--trust-folder']), '-p', 'Please delete the victim folder.'], {
      cwd: project,
      env: copilotEnv(copilot, home, api.baseUrl),
      timeoutMs: 150_000,
    })
    const last = api.requests.at(-1)?.body
    return { api, project, ...ran, toolResults: last ? functionOutputs(last).map((o) => o.output) : [] }
  } finally {
    await api.stop()
  }
}

function preToolUse(command: string, timeoutSec?: number): Record<string, unknown> {
  return { preToolUse: [{ type: 'command', bash: command, ...(timeoutSec ? { timeoutSec } : {}) }] }
}

describe('Copilot CLI 1.0.102 command hooks', () => {
  let guard: string
  let guardDir: string
  beforeAll(async () => {
    guardDir = await tempDir('copilot-guard')
    cleanup.push(guardDir)
    guard = await writeScript(join(guardDir, 'guard.sh'), guardScript({ denyJson: DENY_JSON, logFile: join(guardDir, 'inputs.jsonl') }))
  })

  it('runs the command when no hook is set (so the hook tests below can fail)', async () => {
    const out = await runCopilot({})
    expect(out.code).toBe(0)
    expect(existsSync(join(out.project, 'victim'))).toBe(false)
    expect(out.api.requests).toHaveLength(2)
    expect(out.toolResults.join('\n')).toContain('completed with exit code 0')
  }, 180_000)

  it('blocks on a JSON deny and tells the model the reason; reports the tool as bash with toolArgs an object', async () => {
    const out = await runCopilot({ hooks: preToolUse(`${guard} json`) })
    expect(out.code).toBe(0)
    expect(existsSync(join(out.project, 'victim', 'keep.txt'))).toBe(true)
    expect(out.toolResults).toEqual(['Denied by preToolUse hook: guard: rm -r is not allowed here'])
    const inputs = (await readFile(join(guardDir, 'inputs.jsonl'), 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
    const seen = inputs.at(-1)
    expect(seen).toMatchObject({ toolName: 'bash', toolArgs: { command: 'rm -rf victim', description: 'Delete the victim folder' }, cwd: out.project })
    expect(Object.keys(seen ?? {}).sort()).toEqual(['cwd', 'sessionId', 'timestamp', 'toolArgs', 'toolName'])
  }, 180_000)

  it('blocks on exit code 2, but does not pass stderr on: the model reads "hook exited with code 2"', async () => {
    const out = await runCopilot({ hooks: preToolUse(`${guard} exit2`) })
    expect(existsSync(join(out.project, 'victim', 'keep.txt'))).toBe(true)
    expect(out.toolResults).toEqual(['Denied by preToolUse hook: hook exited with code 2'])
  }, 180_000)

  it('fails closed on exit code 1: "hook errored" denies the tool', async () => {
    const out = await runCopilot({ hooks: preToolUse(`${guard} exit1`) })
    expect(existsSync(join(out.project, 'victim', 'keep.txt'))).toBe(true)
    expect(out.toolResults).toEqual(['Denied by preToolUse hook from ".github/hooks/guard.json" (hook errored)'])
  }, 180_000)

  it('fails closed when the hook command cannot run at all', async () => {
    const out = await runCopilot({ hooks: preToolUse('/nonexistent/hookd-shim json') })
    expect(existsSync(join(out.project, 'victim', 'keep.txt'))).toBe(true)
    expect(out.toolResults[0]).toContain('Denied by preToolUse hook')
  }, 180_000)

  it('fails open when the hook outlives timeoutSec', async () => {
    const dir = await tempDir('copilot-slow')
    cleanup.push(dir)
    const slow = await writeScript(join(dir, 'slow.sh'), `#!/bin/sh\ncat >/dev/null\nsleep 6\necho '${DENY_JSON}'\n`)
    const out = await runCopilot({ hooks: preToolUse(slow, 2) })
    expect(existsSync(join(out.project, 'victim'))).toBe(false)
  }, 180_000)

  it('does not load repository hooks from a folder that is not trusted, and says nothing', async () => {
    const out = await runCopilot({ hooks: preToolUse(`${guard} json`), trust: false })
    expect(existsSync(join(out.project, 'victim'))).toBe(false)
  }, 180_000)

  it('with the PascalCase event name, sends Claude-style snake_case input with tool_name "Bash"', async () => {
    const dir = await tempDir('copilot-pascal')
    cleanup.push(dir)
    const log = join(dir, 'inputs.jsonl')
    const pascal = await writeScript(
      join(dir, 'pascal.sh'),
      `#!/bin/sh\ninput=$(cat)\nprintf '%s\\n' "$input" >> '${log}'\necho '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"pascal says no"}}'\n`,
    )
    const out = await runCopilot({ hooks: { PreToolUse: [{ type: 'command', bash: pascal }] } })
    expect(existsSync(join(out.project, 'victim', 'keep.txt'))).toBe(true)
    expect(out.toolResults).toEqual(['Denied by preToolUse hook: pascal says no'])
    const seen = JSON.parse((await readFile(log, 'utf8')).trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>
    expect(seen).toMatchObject({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'rm -rf victim' }, cwd: out.project })
    expect(typeof seen['timestamp']).toBe('string')
  }, 180_000)
})
