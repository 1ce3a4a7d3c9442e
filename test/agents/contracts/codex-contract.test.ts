/**
 * Codex CLI 0.169.0's command-hook contract, measured with the real CLI (`codex exec`) against the
 * Responses API stand-in. Each run writes its own CODEX_HOME (config.toml with a custom model
 * provider, hooks.json with a PreToolUse command hook) and a project folder holding victim folders,
 * and the stand-in model asks, one call per turn, for `rm -r victim-...` through the `exec_command`
 * tool, which Codex reports to hooks as tool_name `Bash` with tool_input `{ "command": ... }`.
 *
 * A CLI start costs seconds, so there are four runs: no hook at all; one hook command answering five
 * scenarios, one call each (it answers by the victim folder its input names: support/scenario-hook.ts;
 * for the missing-command call, the hook's command line runs a path that does not exist, in the shell
 * Codex starts for every hook command); a hook with a timeout of its own; and a hook whose recorded
 * trust is stale. Each test reads only its own call: its folder, the tool result sent back under its
 * call id, the hook input logged for it, and the lines Codex printed from its hook's start to the next.
 *
 * Why `rm -r` and not `rm -rf`: Codex refuses `rm -f`-style commands on its own, hook or not (second
 * test), so a test of the hook with `rm -rf` could not fail.
 *
 * Trust: Codex skips, silently, user hooks whose hash is not recorded as trusted in config.toml. The
 * scenario run records the hash, as `hookd setup codex` does; the timeout run passes
 * `--dangerously-bypass-hook-trust` instead; the last run shows that a stale hash skips the hook.
 */
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { functionOutputs, startOpenAiApi, type OpenAiApi } from '../support/openai-api.js'
import { agentCli } from '../support/cli.js'
import { codexConfig, isolatedEnv, projectWithVictims, run, tempDir, writeScript } from '../support/other-clis.js'
import { loggedInputs, routedCommand, scenarioScript, shQuote } from '../support/scenario-hook.js'

const REASON = 'guard: rm -r is not allowed here'
const DENY_JSON = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"${REASON}"}}`
const TEST_TIMEOUT = 180_000

let codex: string
const cleanup: string[] = []

beforeAll(async () => {
  codex = await agentCli('codex')
}, 600_000)

afterAll(async () => {
  await Promise.all(cleanup.map((dir) => rm(dir, { recursive: true, force: true })))
})

interface Setup {
  /** The shell commands the model asks for, one per turn; `rm -r NAME` makes NAME a victim folder. */
  commands: string[]
  /** The hooks.json `hooks` object (given the HOME), or none. */
  hooks?: (home: string) => Promise<Record<string, unknown>>
  /** Extra config.toml text, made after `hooks` (given the HOME: the trust key names hooks.json by its path). */
  config?: (home: string) => string
  /** Extra CLI flags. */
  flags?: string[]
}

interface Outcome {
  api: OpenAiApi
  project: string
  home: string
  stdout: string
  stderr: string
  code: number | null
  /** Every hook input the scenario script logged, in order. */
  inputs: Array<Record<string, unknown>>
}

/** The folder a call works on, which names the call: `rm -r victim-json` -> `victim-json`. */
function folderOf(command: string): string {
  return command.split(' ').at(-1) ?? command
}

const callId = (folder: string): string => `call-${folder}`

async function runCodex(setup: Setup): Promise<Outcome> {
  const api = await startOpenAiApi((_request, index) => {
    const command = setup.commands[index]
    return command === undefined
      ? { text: `turn ${index + 1}: done` }
      : { calls: [{ name: 'exec_command', arguments: { cmd: command }, callId: callId(folderOf(command)) }] }
  })
  const home = await tempDir('codex-home')
  const project = await projectWithVictims('codex-project', setup.commands.map(folderOf))
  cleanup.push(home, project)
  const codexHome = join(home, '.codex')
  await mkdir(codexHome, { recursive: true })
  if (setup.hooks) await writeFile(join(codexHome, 'hooks.json'), JSON.stringify({ hooks: await setup.hooks(home) }))
  await writeFile(join(codexHome, 'config.toml'), `${codexConfig(api.baseUrl)}${setup.config?.(home) ?? ''}`)
  try {
    const ran = await run(
      codex,
      ['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', ...(setup.flags ?? []), 'Please delete the victim folders.'],
      { cwd: project, env: isolatedEnv(home, { CODEX_HOME: codexHome, STUB_OPENAI_KEY: 'stub-key' }), timeoutMs: 120_000 },
    )
    return { api, project, home, ...ran, inputs: await loggedInputs(logFile(home)) }
  } finally {
    await api.stop()
  }
}

const logFile = (home: string): string => join(home, 'inputs.jsonl')

/** The text of the one tool result the model was sent for the call on `folder`. */
function resultOf(out: Outcome, folder: string): string {
  const last = out.api.requests.at(-1)?.body
  const results = (last ? functionOutputs(last) : []).filter((o) => o.callId === callId(folder))
  expect(results, `one tool result for ${callId(folder)}`).toHaveLength(1)
  return results[0]?.output ?? ''
}

/** The hook inputs logged for the call on `folder`. */
function inputsFor(out: Outcome, folder: string): Array<Record<string, unknown>> {
  return out.inputs.filter((input) => input['tool_use_id'] === callId(folder))
}

/**
 * What Codex printed on stderr for the call on `folder`: from its hook's `hook: PreToolUse` line to the
 * next one. The calls come one per turn, so their hooks' lines do not interleave.
 */
function printedFor(out: Outcome, folder: string): string {
  const pieces = out.stderr.split(/^hook: PreToolUse$/m).slice(1)
  const mine = pieces.filter((piece) => piece.includes(folder))
  expect(mine, `one stretch of hook output naming ${folder}`).toHaveLength(1)
  return mine[0] ?? ''
}

function preToolUse(command: string, timeout?: number): Record<string, unknown> {
  return { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command, ...(timeout ? { timeout } : {}) }] }] }
}

/** The trust hash Codex records for one command handler: sha256 of the handler's canonical JSON identity. */
function trustHash(command: string): string {
  const identity = { event_name: 'pre_tool_use', hooks: [{ async: false, command, timeout: 600, type: 'command' }], matcher: 'Bash' }
  return `sha256:${createHash('sha256').update(JSON.stringify(identity)).digest('hex')}`
}

function trustConfig(home: string, hash: string): string {
  return `\n[hooks.state."${join(home, '.codex', 'hooks.json')}:pre_tool_use:0:0"]\ntrusted_hash = "${hash}"\n`
}

/** The hook script for a run: its answers by victim folder; any other call is allowed. */
async function scenarioHook(home: string, answers: Record<string, string>): Promise<string> {
  return writeScript(join(home, 'hook.sh'), scenarioScript({ logFile: logFile(home), answers }))
}

const MISSING = '/nonexistent/hookd-shim json'

/** The command line of the scenario run's hook: its script, or the missing command for victim-missing. */
async function scenarioCommand(home: string): Promise<string> {
  const script = await scenarioHook(home, {
    'victim-json': `printf '%s\\n' ${shQuote(DENY_JSON)}; exit 0`,
    'victim-exit2': `echo ${shQuote(REASON)} >&2; exit 2`,
    'victim-exit1': `echo ${shQuote(REASON)} >&2; exit 1`,
    // A deny with one field Codex does not know.
    'victim-extra': `printf '%s\\n' ${shQuote(DENY_JSON.replace(/}$/, ',"hookd":1}'))}; exit 0`,
  })
  return routedCommand(script, { folder: 'victim-missing', command: MISSING })
}

const blocked = (folder: string): string => `Command blocked by PreToolUse hook: ${REASON}. Command: rm -r ${folder}`

describe('Codex CLI 0.169.0 command hooks', () => {
  describe('with no hook (one run: `rm -r victim`, then `rm -rf victim-f`)', () => {
    let out: Outcome
    beforeAll(async () => {
      out = await runCodex({ commands: ['rm -r victim', 'rm -rf victim-f'] })
    }, TEST_TIMEOUT)

    it('runs the command when no hook is set (so the hook tests below can fail)', () => {
      expect(out.code, out.stderr).toBe(0)
      expect(existsSync(join(out.project, 'victim'))).toBe(false)
      expect(out.api.requests).toHaveLength(3)
      expect(resultOf(out, 'victim')).toContain('Process exited with code 0')
    })

    it('refuses `rm -rf` on its own, with no hook at all', () => {
      expect(existsSync(join(out.project, 'victim-f', 'keep.txt'))).toBe(true)
      expect(resultOf(out, 'victim-f')).toContain('rm -f style commands are not permitted')
    })
  })

  describe('one trusted hook command, one call per scenario, with no bypass flag', () => {
    const folders = ['victim-json', 'victim-exit2', 'victim-exit1', 'victim-missing', 'victim-extra']
    let out: Outcome
    beforeAll(async () => {
      let command = ''
      out = await runCodex({
        commands: folders.map((folder) => `rm -r ${folder}`),
        hooks: async (home) => {
          command = await scenarioCommand(home)
          return preToolUse(command)
        },
        config: (home) => trustConfig(home, trustHash(command)),
      })
    }, TEST_TIMEOUT)

    it('runs a user hook whose hash is recorded as trusted, once per call, reporting the tool as Bash with tool_input.command', () => {
      expect(out.code, out.stderr).toBe(0)
      // The model got every call's result and went on: one request per call, and the last.
      expect(out.api.requests).toHaveLength(folders.length + 1)
      // The script logs every call but victim-missing's, which never reaches it.
      for (const folder of folders.filter((f) => f !== 'victim-missing')) {
        const inputs = inputsFor(out, folder)
        expect(inputs, folder).toHaveLength(1)
        expect(inputs[0]).toMatchObject({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: `rm -r ${folder}` }, cwd: out.project })
      }
      expect(out.inputs).toHaveLength(folders.length - 1)
    })

    it('blocks on a JSON deny with a reason, and tells the model the reason', () => {
      expect(existsSync(join(out.project, 'victim-json', 'keep.txt'))).toBe(true)
      expect(resultOf(out, 'victim-json')).toBe(blocked('victim-json'))
      expect(printedFor(out, 'victim-json')).toContain('hook: PreToolUse Blocked')
    })

    it('blocks on exit code 2, taking the reason from stderr', () => {
      expect(existsSync(join(out.project, 'victim-exit2', 'keep.txt'))).toBe(true)
      expect(resultOf(out, 'victim-exit2')).toBe(blocked('victim-exit2'))
      expect(printedFor(out, 'victim-exit2')).toContain('hook: PreToolUse Blocked')
    })

    it('fails open on exit code 1: the command runs', () => {
      expect(existsSync(join(out.project, 'victim-exit1'))).toBe(false)
      expect(resultOf(out, 'victim-exit1')).toContain('Process exited with code 0')
      expect(printedFor(out, 'victim-exit1')).toContain('hook: PreToolUse Failed')
    })

    it('fails open when the hook command cannot run at all', () => {
      expect(existsSync(join(out.project, 'victim-missing'))).toBe(false)
      expect(resultOf(out, 'victim-missing')).toContain('Process exited with code 0')
      expect(printedFor(out, 'victim-missing')).toContain('hook: PreToolUse Failed')
    })

    it('fails open on a deny with an unknown extra field: the output is parsed strictly', () => {
      expect(existsSync(join(out.project, 'victim-extra'))).toBe(false)
      expect(resultOf(out, 'victim-extra')).toContain('Process exited with code 0')
      expect(printedFor(out, 'victim-extra')).toContain('hook: PreToolUse Failed')
    })
  })

  it(
    'fails open when the hook outlives its timeout (run with --dangerously-bypass-hook-trust, which runs the untrusted hook)',
    async () => {
      const out = await runCodex({
        commands: ['rm -r victim-slow'],
        // The sleep holds no pipe of the hook's, so killing the script ends the hook at once.
        hooks: async (home) => preToolUse(await scenarioHook(home, { 'victim-slow': `sleep 5 </dev/null >/dev/null 2>&1 & wait $!; printf '%s\\n' ${shQuote(DENY_JSON)}; exit 0` }), 1),
        flags: ['--dangerously-bypass-hook-trust'],
      })
      expect(out.code, out.stderr).toBe(0)
      expect(inputsFor(out, 'victim-slow')).toHaveLength(1)
      expect(existsSync(join(out.project, 'victim-slow'))).toBe(false)
      expect(resultOf(out, 'victim-slow')).toContain('Process exited with code 0')
      expect(printedFor(out, 'victim-slow')).toContain('hook: PreToolUse Failed')
    },
    TEST_TIMEOUT,
  )

  it(
    'skips, without a word, a user hook whose recorded hash is stale',
    async () => {
      let command = ''
      const out = await runCodex({
        commands: ['rm -r victim-stale'],
        hooks: async (home) => {
          command = await scenarioHook(home, { 'victim-stale': `echo ${shQuote(REASON)} >&2; exit 2` })
          return preToolUse(command)
        },
        config: (home) => trustConfig(home, trustHash(`${command} changed`)),
      })
      expect(out.code, out.stderr).toBe(0)
      expect(existsSync(join(out.project, 'victim-stale'))).toBe(false)
      expect(out.inputs).toEqual([])
      expect(out.stderr + out.stdout).not.toContain('hook: PreToolUse')
    },
    TEST_TIMEOUT,
  )
})
