/**
 * Gemini CLI 0.61.0's command-hook contract, measured with the real CLI in headless mode
 * (`gemini -p ... --yolo --skip-trust`) against the Gemini API stand-in. Each test writes its own
 * HOME with `~/.gemini/settings.json` (API-key auth, and a `BeforeTool` command hook matching
 * `run_shell_command`), points `GOOGLE_GEMINI_BASE_URL` at the stand-in, and the stand-in model asks
 * for `rm -rf victim` through `run_shell_command`.
 *
 * `--yolo` is needed: without it, headless Gemini CLI does not offer `run_shell_command` at all.
 */
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { functionResponses, startGeminiApi, type GeminiApi } from './support/gemini-api.js'
import { agentCli } from './support/cli.js'
import { geminiEnv, guardScript, projectWithVictim, run, tempDir, writeScript } from './support/other-clis.js'

const DENY_JSON = '{"decision":"deny","reason":"guard: rm -r is not allowed here"}'

let gemini: string
const cleanup: string[] = []

beforeAll(async () => {
  gemini = await agentCli('gemini')
}, 600_000)

afterAll(async () => {
  await Promise.all(cleanup.map((dir) => rm(dir, { recursive: true, force: true })))
})

interface Setup {
  /** The settings.json `hooks` object, or none. */
  hooks?: Record<string, unknown>
  /** The arguments the model gives run_shell_command. */
  args?: Record<string, unknown>
  /** Made in the project before the run. */
  dirs?: string[]
}

interface Outcome {
  api: GeminiApi
  project: string
  stdout: string
  stderr: string
  code: number | null
  /** The `response` of every tool result the model was sent in its last turn. */
  toolResults: Array<Record<string, unknown>>
}

async function runGemini(setup: Setup): Promise<Outcome> {
  const api = await startGeminiApi((_request, index) =>
    index === 0 ? { calls: [{ name: 'run_shell_command', args: setup.args ?? { command: 'rm -rf victim' } }] } : { text: `turn ${index + 1}: done` },
  )
  const home = await tempDir('gemini-home')
  const project = await projectWithVictim('gemini-project')
  cleanup.push(home, project)
  for (const dir of setup.dirs ?? []) await mkdir(join(project, dir), { recursive: true })
  await mkdir(join(home, '.gemini'), { recursive: true })
  await writeFile(
    join(home, '.gemini', 'settings.json'),
    JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } }, ...(setup.hooks ? { hooks: setup.hooks } : {}) }),
  )
  try {
    const ran = await run(gemini, ['--skip-trust', '--yolo', '-m', 'gemini-2.5-flash', '-p', 'Please delete the victim folder.'], {
      cwd: project,
      env: geminiEnv(home, api.baseUrl),
      timeoutMs: 150_000,
    })
    const last = api.turns.at(-1)?.body
    return { api, project, ...ran, toolResults: last ? functionResponses(last).map((r) => r.response) : [] }
  } finally {
    await api.stop()
  }
}

function beforeTool(command: string, timeout?: number): Record<string, unknown> {
  return { BeforeTool: [{ matcher: 'run_shell_command', hooks: [{ type: 'command', command, ...(timeout ? { timeout } : {}) }] }] }
}

describe('Gemini CLI 0.61.0 command hooks', () => {
  let guard: string
  let guardDir: string
  beforeAll(async () => {
    guardDir = await tempDir('gemini-guard')
    cleanup.push(guardDir)
    guard = await writeScript(join(guardDir, 'guard.sh'), guardScript({ denyJson: DENY_JSON, logFile: join(guardDir, 'inputs.jsonl') }))
  })

  it('runs the command when no hook is set (so the hook tests below can fail)', async () => {
    const out = await runGemini({})
    expect(out.code).toBe(0)
    expect(existsSync(join(out.project, 'victim'))).toBe(false)
    expect(out.api.turns).toHaveLength(2)
    expect(JSON.stringify(out.toolResults)).toContain('Output: (empty)')
  }, 180_000)

  it('blocks on a JSON deny, sends the reason to the model as the tool error, and reports the tool as run_shell_command', async () => {
    const out = await runGemini({ hooks: beforeTool(`${guard} json`) })
    expect(out.code).toBe(0)
    expect(existsSync(join(out.project, 'victim', 'keep.txt'))).toBe(true)
    expect(out.toolResults).toEqual([{ error: 'Tool execution blocked: guard: rm -r is not allowed here' }])
    const inputs = (await readFile(join(guardDir, 'inputs.jsonl'), 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
    const seen = inputs.at(-1)
    expect(seen).toMatchObject({ hook_event_name: 'BeforeTool', tool_name: 'run_shell_command', tool_input: { command: 'rm -rf victim' }, cwd: out.project })
    expect(Object.keys(seen ?? {}).sort()).toEqual(['cwd', 'hook_event_name', 'session_id', 'timestamp', 'tool_input', 'tool_name', 'transcript_path'])
  }, 180_000)

  it('blocks on exit code 2, taking the reason from stderr', async () => {
    const out = await runGemini({ hooks: beforeTool(`${guard} exit2`) })
    expect(existsSync(join(out.project, 'victim', 'keep.txt'))).toBe(true)
    expect(out.toolResults).toEqual([{ error: 'Tool execution blocked: guard: rm -r is not allowed here' }])
  }, 180_000)

  it('fails open on exit code 1 (a warning): the command runs', async () => {
    const out = await runGemini({ hooks: beforeTool(`${guard} exit1`) })
    expect(existsSync(join(out.project, 'victim'))).toBe(false)
  }, 180_000)

  it('fails open on exit code 2 with nothing on stderr', async () => {
    const dir = await tempDir('gemini-mute')
    cleanup.push(dir)
    const mute = await writeScript(join(dir, 'mute.sh'), '#!/bin/sh\ncat >/dev/null\nexit 2\n')
    const out = await runGemini({ hooks: beforeTool(mute) })
    expect(existsSync(join(out.project, 'victim'))).toBe(false)
  }, 180_000)

  it('fails closed when the hook command cannot run: bash says "not found" on stderr with exit 127, which reads as a deny', async () => {
    const out = await runGemini({ hooks: beforeTool('/nonexistent/hookd-shim json') })
    expect(existsSync(join(out.project, 'victim', 'keep.txt'))).toBe(true)
    expect(JSON.stringify(out.toolResults)).toMatch(/Tool execution blocked: .*\/nonexistent\/hookd-shim: No such file or directory/)
  }, 180_000)

  it('fails open when the hook outlives its timeout (milliseconds)', async () => {
    const dir = await tempDir('gemini-slow')
    cleanup.push(dir)
    const slow = await writeScript(join(dir, 'slow.sh'), `#!/bin/sh\ncat >/dev/null\nsleep 4\necho '${DENY_JSON}'\n`)
    const out = await runGemini({ hooks: beforeTool(slow, 1000) })
    expect(existsSync(join(out.project, 'victim'))).toBe(false)
  }, 180_000)

  it('replaces the arguments with hookSpecificOutput.tool_input: arguments the hook leaves out are dropped, not merged', async () => {
    const dir = await tempDir('gemini-rewrite')
    cleanup.push(dir)
    const rewrite = await writeScript(
      join(dir, 'rewrite.sh'),
      `#!/bin/sh\ncat >/dev/null\necho '{"hookSpecificOutput":{"hookEventName":"BeforeTool","tool_input":{"command":"pwd > where.txt"}}}'\n`,
    )
    const out = await runGemini({ hooks: beforeTool(rewrite), dirs: ['sub'], args: { command: 'rm -rf victim', dir_path: 'sub' } })
    expect(existsSync(join(out.project, 'victim', 'keep.txt'))).toBe(true)
    // Merged, the command would have run in sub/ (dir_path); replaced, it runs in the project root.
    expect(existsSync(join(out.project, 'sub', 'where.txt'))).toBe(false)
    expect((await readFile(join(out.project, 'where.txt'), 'utf8')).trim()).toBe(out.project)
    expect(JSON.stringify(out.toolResults)).toContain('were modified by a hook before execution')
  }, 180_000)
})
