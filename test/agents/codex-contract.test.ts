/**
 * Codex CLI 0.169.0's command-hook contract, measured with the real CLI (`codex exec`) against the
 * Responses API stand-in. Each test writes its own CODEX_HOME (config.toml with a custom model
 * provider, hooks.json with a PreToolUse command hook) and a project folder holding `victim/`, and the
 * stand-in model asks for `rm -r victim` through the `exec_command` tool, which Codex reports to
 * hooks as tool_name `Bash` with tool_input `{ "command": ... }`.
 *
 * Why `rm -r` and not `rm -rf`: Codex refuses `rm -f`-style commands on its own, hook or not (first
 * test), so a test of the hook with `rm -rf` could not fail. The guard refuses anything containing
 * `rm -r`, which covers `rm -rf` too.
 *
 * Why `--dangerously-bypass-hook-trust`: Codex skips, silently, user hooks whose hash is not recorded
 * as trusted in config.toml; one test records the hash instead and one shows a stale hash skips.
 */
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { rm, writeFile, mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { functionOutputs, startOpenAiApi, type OpenAiApi } from './support/openai-api.js'
import { agentCli } from './support/cli.js'
import { codexConfig, guardScript, isolatedEnv, projectWithVictim, run, tempDir, writeScript } from './support/other-clis.js'

const DENY_JSON = '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"guard: rm -r is not allowed here"}}'

let codex: string
const cleanup: string[] = []

beforeAll(async () => {
  codex = await agentCli('codex')
}, 600_000)

afterAll(async () => {
  await Promise.all(cleanup.map((dir) => rm(dir, { recursive: true, force: true })))
})

interface Setup {
  /** The hooks.json `hooks` object, or none. */
  hooks?: Record<string, unknown>
  /** Extra config.toml text. */
  config?: string
  /** Extra CLI flags. */
  flags?: string[]
  /** The shell command the model asks for. */
  command?: string
  /** The HOME to use (the trust key names hooks.json by its path), or a new temp folder. */
  home?: string
}

interface Outcome {
  api: OpenAiApi
  project: string
  home: string
  stdout: string
  stderr: string
  code: number | null
  /** The text of every tool result the model was sent. */
  toolResults: string[]
}

async function runCodex(setup: Setup): Promise<Outcome> {
  const command = setup.command ?? 'rm -r victim'
  const api = await startOpenAiApi((_request, index) =>
    index === 0 ? { calls: [{ name: 'exec_command', arguments: { cmd: command } }] } : { text: `turn ${index + 1}: done` },
  )
  const home = setup.home ?? (await tempDir('codex-home'))
  const project = await projectWithVictim('codex-project')
  cleanup.push(home, project)
  const codexHome = join(home, '.codex')
  await mkdir(codexHome, { recursive: true })
  await writeFile(
    join(codexHome, 'config.toml'),
    `${codexConfig(api.baseUrl)}${setup.config ?? ''}`,
  )
  if (setup.hooks) await writeFile(join(codexHome, 'hooks.json'), JSON.stringify({ hooks: setup.hooks }))
  try {
    const ran = await run(
      codex,
      ['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', ...(setup.flags ?? []), 'Please delete the victim folder.'],
      { cwd: project, env: isolatedEnv(home, { CODEX_HOME: codexHome, STUB_OPENAI_KEY: 'stub-key' }), timeoutMs: 120_000 },
    )
    const last = api.requests.at(-1)?.body
    return { api, project, home, ...ran, toolResults: last ? functionOutputs(last).map((o) => o.output) : [] }
  } finally {
    await api.stop()
  }
}

function preToolUse(command: string, timeout?: number): Record<string, unknown> {
  return { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command, ...(timeout ? { timeout } : {}) }] }] }
}

const TRUST_BYPASS = ['--dangerously-bypass-hook-trust']

describe('Codex CLI 0.169.0 command hooks', () => {
  let guard: string
  beforeAll(async () => {
    const dir = await tempDir('codex-guard')
    cleanup.push(dir)
    guard = await writeScript(join(dir, 'guard.sh'), guardScript({ denyJson: DENY_JSON }))
  })

  it('runs the command when no hook is set (so the hook tests below can fail)', async () => {
    const out = await runCodex({})
    expect(out.code).toBe(0)
    expect(existsSync(join(out.project, 'victim'))).toBe(false)
    expect(out.api.requests).toHaveLength(2)
    expect(out.toolResults.join('\n')).toContain('Process exited with code 0')
  }, 180_000)

  it('refuses `rm -rf` on its own, with no hook at all', async () => {
    const out = await runCodex({ command: 'rm -rf victim' })
    expect(existsSync(join(out.project, 'victim'))).toBe(true)
    expect(out.toolResults.join('\n')).toContain('rm -f style commands are not permitted')
  }, 180_000)

  it('blocks on a JSON deny with a reason, and tells the model the reason', async () => {
    const out = await runCodex({ hooks: preToolUse(`${guard} json`), flags: TRUST_BYPASS })
    expect(out.code).toBe(0)
    expect(existsSync(join(out.project, 'victim', 'keep.txt'))).toBe(true)
    expect(out.api.requests).toHaveLength(2)
    expect(out.toolResults).toEqual(['Command blocked by PreToolUse hook: guard: rm -r is not allowed here. Command: rm -r victim'])
  }, 180_000)

  it('blocks on exit code 2, taking the reason from stderr', async () => {
    const out = await runCodex({ hooks: preToolUse(`${guard} exit2`), flags: TRUST_BYPASS })
    expect(existsSync(join(out.project, 'victim', 'keep.txt'))).toBe(true)
    expect(out.toolResults).toEqual(['Command blocked by PreToolUse hook: guard: rm -r is not allowed here. Command: rm -r victim'])
  }, 180_000)

  it('fails open on exit code 1: the command runs', async () => {
    const out = await runCodex({ hooks: preToolUse(`${guard} exit1`), flags: TRUST_BYPASS })
    expect(existsSync(join(out.project, 'victim'))).toBe(false)
    expect(out.stderr + out.stdout).toContain('hook: PreToolUse Failed')
  }, 180_000)

  it('fails open when the hook command cannot run at all', async () => {
    const out = await runCodex({ hooks: preToolUse('/nonexistent/hookd-shim json'), flags: TRUST_BYPASS })
    expect(existsSync(join(out.project, 'victim'))).toBe(false)
    expect(out.stderr + out.stdout).toContain('hook: PreToolUse Failed')
  }, 180_000)

  it('fails open when the hook outlives its timeout', async () => {
    const dir = await tempDir('codex-slow')
    cleanup.push(dir)
    const slow = await writeScript(join(dir, 'slow.sh'), `#!/bin/sh\ncat >/dev/null\nsleep 5\necho '${DENY_JSON}'\n`)
    const out = await runCodex({ hooks: preToolUse(slow, 1), flags: TRUST_BYPASS })
    expect(existsSync(join(out.project, 'victim'))).toBe(false)
  }, 180_000)

  it('fails open on a deny with an unknown extra field: the output is parsed strictly', async () => {
    const dir = await tempDir('codex-extra')
    cleanup.push(dir)
    const extra = DENY_JSON.replace(/}$/, ',"hookd":1}')
    const script = await writeScript(join(dir, 'extra.sh'), `#!/bin/sh\ncat >/dev/null\necho '${extra}'\n`)
    const out = await runCodex({ hooks: preToolUse(script), flags: TRUST_BYPASS })
    expect(existsSync(join(out.project, 'victim'))).toBe(false)
  }, 180_000)

  describe('hook trust without the bypass flag', () => {
    /** The trust hash Codex records for one command handler: sha256 of the handler's canonical JSON identity. */
    function trustHash(command: string): string {
      const identity = { event_name: 'pre_tool_use', hooks: [{ async: false, command, timeout: 600, type: 'command' }], matcher: 'Bash' }
      return `sha256:${createHash('sha256').update(JSON.stringify(identity)).digest('hex')}`
    }
    function trustConfig(home: string, hash: string): string {
      return `\n[hooks.state."${join(home, '.codex', 'hooks.json')}:pre_tool_use:0:0"]\ntrusted_hash = "${hash}"\n`
    }

    it('runs a user hook whose hash is recorded as trusted', async () => {
      const home = await tempDir('codex-trust')
      cleanup.push(home)
      const command = `${guard} exit2`
      const out = await runCodex({ home, hooks: preToolUse(command), config: trustConfig(home, trustHash(command)) })
      expect(existsSync(join(out.project, 'victim', 'keep.txt'))).toBe(true)
      expect(out.toolResults[0]).toContain('Command blocked by PreToolUse hook')
    }, 180_000)

    it('skips, without a word, a user hook whose recorded hash is stale', async () => {
      const home = await tempDir('codex-stale')
      cleanup.push(home)
      const command = `${guard} exit2`
      const out = await runCodex({ home, hooks: preToolUse(command), config: trustConfig(home, trustHash(`${command} changed`)) })
      expect(existsSync(join(out.project, 'victim'))).toBe(false)
      expect(out.stderr + out.stdout).not.toContain('hook: PreToolUse')
    }, 180_000)
  })
})
