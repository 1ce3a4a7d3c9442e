/**
 * Gemini CLI 0.61.0's command-hook contract, measured with the real CLI in headless mode
 * (`gemini -p ... --yolo --skip-trust`) against the Gemini API stand-in. Each run writes its own
 * HOME with `~/.gemini/settings.json` (API-key auth, and `BeforeTool` command hooks), points
 * `GOOGLE_GEMINI_BASE_URL` at the stand-in, and the stand-in model asks for tool calls, one per turn.
 *
 * A CLI start costs seconds, so there is one run: the model asks for one call per scenario, each on a
 * victim of its own (`rm -rf victim-json`, `rm -rf victim-exit2`, ...), and one hook command matching
 * `run_shell_command` answers by the victim its input names (support/scenario-hook.ts). The call on
 * victim-free is one the hook lets through, and it runs: so a folder that survives another call survived
 * that call's hook, not a refusal of Gemini CLI's own. For the
 * missing-command call, that hook's command line runs a path that does not exist, in the bash Gemini
 * starts for every hook command. The timeout needs a hook of its own, and Gemini picks hooks by tool
 * name only: that scenario is the same run's `write_file` call, under a second `BeforeTool` group
 * whose hook has `timeout: 1000`. Each test reads only its own call: its victim, the tool result
 * sent back under its call id, the hook input logged for it, and a line on stderr that only its own
 * hook's answer can cause (the exit-1 warning, the timeout).
 *
 * `--yolo` is needed: without it, headless Gemini CLI does not offer `run_shell_command` at all.
 * `GEMINI_CLI_NO_RELAUNCH=true` spares a Node start: by default the CLI starts, then starts itself
 * again as a child with a larger heap and this variable set, and the child does all the work.
 *
 * The last describe reads the shipped bundle instead of running it: its eleven hook events, the
 * answer fields its hook outputs read (the model events' too), and that it ignores PreCompress's answer.
 */
import { existsSync } from 'node:fs'
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GEMINI_AGENT } from '../../../src/agents/gemini/gemini-agent.js'
import { functionResponses, startGeminiApi, type GeminiApi, type GeminiCall } from '../support/gemini-api.js'
import { agentCli } from '../support/cli.js'
import { geminiEnv, projectWithVictims, run, tempDir, writeScript } from '../support/other-clis.js'
import { loggedInputs, routedCommand, scenarioScript, shQuote } from '../support/scenario-hook.js'

const REASON = 'guard: rm -r is not allowed here'
const DENY_JSON = `{"decision":"deny","reason":"${REASON}"}`
const TEST_TIMEOUT = 180_000

let gemini: string
const cleanup: string[] = []

beforeAll(async () => {
  gemini = await agentCli('gemini')
}, 600_000)

afterAll(async () => {
  await Promise.all(cleanup.map((dir) => rm(dir, { recursive: true, force: true })))
})

interface Setup {
  /** The calls the model asks for, one per turn; each call's id is `call-` and the victim it names. */
  calls: GeminiCall[]
  /** Victim folders made in the project, each holding keep.txt. */
  victims: string[]
  /** Other folders made in the project. */
  dirs?: string[]
  /** The settings.json `hooks` object (given the HOME), or none. */
  hooks?: (home: string) => Promise<Record<string, unknown>>
}

interface Outcome {
  api: GeminiApi
  project: string
  stdout: string
  stderr: string
  code: number | null
  /** Every hook input the scenario scripts logged, in order. */
  inputs: Array<Record<string, unknown>>
}

const logFile = (home: string): string => join(home, 'inputs.jsonl')
const callId = (victim: string): string => `call-${victim}`

async function runGemini(setup: Setup): Promise<Outcome> {
  const api = await startGeminiApi((_request, index) => {
    const call = setup.calls[index]
    return call ? { calls: [call] } : { text: `turn ${index + 1}: done` }
  })
  const home = await tempDir('gemini-home')
  const project = await projectWithVictims('gemini-project', setup.victims)
  cleanup.push(home, project)
  for (const dir of setup.dirs ?? []) await mkdir(join(project, dir), { recursive: true })
  await mkdir(join(home, '.gemini'), { recursive: true })
  const hooks = await setup.hooks?.(home)
  await writeFile(join(home, '.gemini', 'settings.json'), JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } }, ...(hooks ? { hooks } : {}) }))
  try {
    const ran = await run(gemini, ['--skip-trust', '--yolo', '-m', 'gemini-2.5-flash', '-p', 'Please delete the victim folders.'], {
      cwd: project,
      env: { ...geminiEnv(home, api.baseUrl), GEMINI_CLI_NO_RELAUNCH: 'true' },
      timeoutMs: 150_000,
    })
    return { api, project, ...ran, inputs: await loggedInputs(logFile(home)) }
  } finally {
    await api.stop()
  }
}

/** The `response` of the one tool result the model was sent for the call on `victim`. */
function resultOf(out: Outcome, victim: string): Record<string, unknown> {
  const last = out.api.turns.at(-1)?.body
  const results = (last ? functionResponses(last) : []).filter((r) => r.id === callId(victim))
  expect(results, `one tool result for ${callId(victim)}`).toHaveLength(1)
  return results[0]?.response ?? {}
}

/** The one hook input logged for the call on `victim`. */
function inputFor(out: Outcome, victim: string): Record<string, unknown> | undefined {
  const inputs = out.inputs.filter((input) => JSON.stringify(input['tool_input']).includes(victim))
  expect(inputs, `one hook input for ${victim}`).toHaveLength(1)
  return inputs[0]
}

function shell(victim: string, args: Record<string, unknown> = {}): GeminiCall {
  return { name: 'run_shell_command', id: callId(victim), args: { command: `rm -rf ${victim}`, ...args } }
}

function group(matcher: string, command: string, timeout?: number): Record<string, unknown> {
  return { matcher, hooks: [{ type: 'command', command, ...(timeout ? { timeout } : {}) }] }
}

describe('Gemini CLI 0.61.0 command hooks', () => {
  describe('hooks answering one call per scenario (one run)', () => {
    const REWRITE = '{"hookSpecificOutput":{"hookEventName":"BeforeTool","tool_input":{"command":"pwd > where.txt"}}}'
    const victims = ['victim-json', 'victim-exit2', 'victim-exit1', 'victim-mute', 'victim-missing', 'victim-rewrite', 'victim-free']
    const calls: GeminiCall[] = [
      ...victims.filter((v) => v !== 'victim-rewrite' && v !== 'victim-free').map((v) => shell(v)),
      shell('victim-rewrite', { dir_path: 'sub' }),
      // Named in no answer below: the hook lets it through.
      shell('victim-free'),
      // The slow hook would refuse this file, were it waited for.
      { name: 'write_file', id: callId('victim-slow'), args: { file_path: 'victim-slow.txt', content: 'written\n' } },
    ]
    let out: Outcome
    beforeAll(async () => {
      out = await runGemini({
        calls,
        victims,
        dirs: ['sub'],
        hooks: async (home) => {
          const scenarios = await writeScript(
            join(home, 'scenarios.sh'),
            scenarioScript({
              logFile: logFile(home),
              answers: {
                'victim-json': `printf '%s\\n' ${shQuote(DENY_JSON)}; exit 0`,
                'victim-exit2': `echo ${shQuote(REASON)} >&2; exit 2`,
                'victim-exit1': `echo ${shQuote(REASON)} >&2; exit 1`,
                'victim-mute': 'exit 2',
                'victim-rewrite': `printf '%s\\n' ${shQuote(REWRITE)}; exit 0`,
              },
            }),
          )
          // The sleep holds none of the hook's pipes, so the kill at the timeout ends the hook at once.
          const slow = await writeScript(
            join(home, 'slow.sh'),
            scenarioScript({ logFile: logFile(home), answers: { 'victim-slow': `sleep 4 </dev/null >/dev/null 2>&1 & wait $!; printf '%s\\n' ${shQuote(DENY_JSON)}; exit 0` } }),
          )
          return {
            BeforeTool: [
              group('run_shell_command', routedCommand(scenarios, { folder: 'victim-missing', command: '/nonexistent/hookd-shim json' })),
              group('write_file', slow, 1000),
            ],
          }
        },
      })
    }, TEST_TIMEOUT)

    it("runs each call's matching hook once, and the model gets every call's result", () => {
      expect(out.code, out.stderr).toBe(0)
      expect(out.api.turns).toHaveLength(calls.length + 1)
      // Every call but victim-missing's reaches a script, which logs it.
      expect(out.inputs.map((input) => [input['tool_name'], input['tool_input']])).toEqual(
        calls.filter((call) => call.id !== callId('victim-missing')).map((call) => [call.name, call.args]),
      )
    })

    it('runs a call the hook lets through: `rm -rf victim-free` removes its folder (so the folders below survived their hooks)', () => {
      expect(inputFor(out, 'victim-free')).toMatchObject({ tool_name: 'run_shell_command', tool_input: { command: 'rm -rf victim-free' } })
      expect(existsSync(join(out.project, 'victim-free'))).toBe(false)
      expect(JSON.stringify(resultOf(out, 'victim-free'))).toContain('Output: (empty)')
    })

    it('blocks on a JSON deny, sends the reason to the model as the tool error, and reports the tool as run_shell_command', () => {
      expect(existsSync(join(out.project, 'victim-json', 'keep.txt'))).toBe(true)
      expect(resultOf(out, 'victim-json')).toEqual({ error: `Tool execution blocked: ${REASON}` })
      const seen = inputFor(out, 'victim-json')
      expect(seen).toMatchObject({ hook_event_name: 'BeforeTool', tool_name: 'run_shell_command', tool_input: { command: 'rm -rf victim-json' }, cwd: out.project })
      expect(Object.keys(seen ?? {}).sort()).toEqual(['cwd', 'hook_event_name', 'session_id', 'timestamp', 'tool_input', 'tool_name', 'transcript_path'])
    })

    it('blocks on exit code 2, taking the reason from stderr', () => {
      expect(existsSync(join(out.project, 'victim-exit2', 'keep.txt'))).toBe(true)
      expect(resultOf(out, 'victim-exit2')).toEqual({ error: `Tool execution blocked: ${REASON}` })
    })

    it('fails open on exit code 1 (a warning): the command runs, and stderr shows the warning', () => {
      expect(existsSync(join(out.project, 'victim-exit1'))).toBe(false)
      expect(JSON.stringify(resultOf(out, 'victim-exit1'))).toContain('Output: (empty)')
      expect(out.stderr).toContain(`Hook system message: Warning: ${REASON}`)
    })

    it('fails open on exit code 2 with nothing on stderr', () => {
      expect(existsSync(join(out.project, 'victim-mute'))).toBe(false)
      expect(JSON.stringify(resultOf(out, 'victim-mute'))).toContain('Output: (empty)')
    })

    it('fails closed when the hook command cannot run: bash says "No such file or directory" on stderr with exit 127, which reads as a deny', () => {
      expect(existsSync(join(out.project, 'victim-missing', 'keep.txt'))).toBe(true)
      expect(resultOf(out, 'victim-missing')).toEqual({ error: expect.stringMatching(/^Tool execution blocked: bash: (line 1: )?\/nonexistent\/hookd-shim: No such file or directory$/) })
    })

    it('fails open when the hook outlives its timeout (milliseconds): the write_file call goes ahead', async () => {
      expect(inputFor(out, 'victim-slow')).toMatchObject({ tool_name: 'write_file' })
      expect(await readFile(join(out.project, 'victim-slow.txt'), 'utf8')).toBe('written\n')
      expect(JSON.stringify(resultOf(out, 'victim-slow'))).toContain('Successfully created and wrote to new file')
      expect(out.stderr).toContain('Hook timed out after 1000ms')
    })

    it('replaces the arguments with hookSpecificOutput.tool_input: arguments the hook leaves out are dropped, not merged', async () => {
      expect(inputFor(out, 'victim-rewrite')).toMatchObject({ tool_input: { command: 'rm -rf victim-rewrite', dir_path: 'sub' } })
      expect(existsSync(join(out.project, 'victim-rewrite', 'keep.txt'))).toBe(true)
      // Merged, the command would have run in sub/ (dir_path); replaced, it runs in the project root.
      expect(existsSync(join(out.project, 'sub', 'where.txt'))).toBe(false)
      expect((await readFile(join(out.project, 'where.txt'), 'utf8')).trim()).toBe(out.project)
      expect(JSON.stringify(resultOf(out, 'victim-rewrite'))).toContain('were modified by a hook before execution')
    })
  })
})

/**
 * What the shipped bundle itself says (no run): the events of Gemini CLI's HookEventName, and the
 * fields its hook outputs read, which the dialect answers in (gemini-dialect.ts, model-events.ts).
 */
describe("Gemini CLI 0.61.0's bundle: its hook events and the answer fields it reads", () => {
  let bundle = ''
  beforeAll(async () => {
    const dir = dirname(gemini)
    const files = (await readdir(dir)).filter((f) => f.endsWith('.js'))
    const texts = await Promise.all(files.map((f) => readFile(join(dir, f), 'utf8')))
    bundle = texts.find((t) => t.includes('var HookEventName = ')) ?? ''
    expect(bundle, 'the chunk defining HookEventName').not.toBe('')
  })

  it('has exactly the events the dialect reads', () => {
    const events = [...bundle.matchAll(/HookEventName2\["(\w+)"\] = "\w+"/g)].map((m) => m[1])
    expect(new Set(events).size).toBe(11)
    expect([...new Set(events)].sort()).toEqual([...GEMINI_AGENT.dialect.events].sort())
  })

  it.each(['llm_request', 'llm_response', 'toolConfig', 'tool_input', 'additionalContext'])('reads hookSpecificOutput.%s', (field) => {
    expect(bundle).toContain(`"${field}" in this.hookSpecificOutput`)
  })

  it('reads a tool config as mode and allowedFunctionNames, and a request as messages, model and the four generation fields', () => {
    expect(bundle).toMatch(/mode: hookToolConfig\.mode,\s+allowedFunctionNames: hookToolConfig\.allowedFunctionNames/)
    for (const field of ['temperature', 'maxOutputTokens', 'topP', 'topK']) expect(bundle).toContain(`${field}: hookRequest.config.${field}`)
    expect(bundle).toContain('model: hookRequest.model ?? baseRequest?.model')
  })

  it("does not read PreCompress's answer: a block there cannot stop the compression", () => {
    expect(bundle).toMatch(/\n\s+await [\w$]+\.getHookSystem\(\)\?\.firePreCompressEvent\([\w$]+\);\n/)
  })
})
