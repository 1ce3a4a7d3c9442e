/**
 * GitHub Copilot CLI 1.0.102's command-hook contract, measured with the real CLI. It runs offline:
 * `COPILOT_OFFLINE=true` with a BYOK provider (`COPILOT_PROVIDER_BASE_URL`, here with
 * `COPILOT_PROVIDER_WIRE_API=responses` so the Responses API stand-in serves it) needs no GitHub
 * account or token (`copilot help environment`).
 *
 * Two runs of `copilot -p ... --allow-all-tools` in a temp HOME, each in a project holding one
 * victim folder (with a keep.txt) per tool call; the stand-in model asks for `rm -rf FOLDER` through
 * the `bash` tool, one call per turn, and reads each call's result in its next request:
 *  - The scenario run (`--trust-folder`): `.github/hooks/guard.json` holds three command hooks, in
 *    this order: `preToolUse` guard, `preToolUse` slow (timeoutSec 1), and `PreToolUse` pascal (the
 *    Claude-style event name). One script serves all three; each acts only on the call that names its
 *    own victim (json, exit2, exit1, missing, slow, pascal) and answers nothing, exit 0 and no output,
 *    to every other call. Copilot runs a call's hooks in the file's order and stops at the first that
 *    denies (a test checks this from the hooks' own log), so every scenario is decided by its own
 *    hook on its own call. The call for victim-allowed is refused by no hook and runs: so a folder that
 *    survives another call survived that call's hook, not a refusal of Copilot's own.
 *  - The same hooks file without `--trust-folder`, for victim-json: repository hooks are then not
 *    loaded at all, silently.
 */
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { functionOutputs, startOpenAiApi, userTexts, type OpenAiApi } from '../support/openai-api.js'
import { agentCli } from '../support/cli.js'
import { copilotEnv, run, tempDir, writeScript } from '../support/other-clis.js'

const TEST_TIMEOUT = 180_000
const DENY_JSON = '{"permissionDecision":"deny","permissionDecisionReason":"guard: rm -r is not allowed here"}'
const PASCAL_DENY = '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"pascal says no"}}'

/** The scenario run's calls, in the order the model asks for them. */
const SCENARIOS = ['json', 'exit2', 'exit1', 'missing', 'slow', 'pascal', 'allowed'] as const
type Scenario = (typeof SCENARIOS)[number]

let copilot: string
const cleanup: string[] = []

beforeAll(async () => {
  copilot = await agentCli('copilot')
}, 600_000)

afterAll(async () => {
  await Promise.all(cleanup.map((dir) => rm(dir, { recursive: true, force: true })))
})

/**
 * The one script behind the three hook entries; `$1` names the entry. It logs every input it gets
 * (`ENTRY<TAB>JSON`, one line per run, in the order Copilot ran them) and acts only on its own call.
 * Copilot runs a hook's `bash` string with `/bin/bash --norc --noprofile -c`, so a hook whose program
 * is missing ends with the shell's "not found" and exit 127: the guard ends the same way for
 * victim-missing by exec'ing a path that does not exist.
 */
function hookScript(log: string): string {
  const call = (name: Scenario): string => `*'"rm -rf victim-${name}"'*`
  return `#!/bin/sh
input=$(cat)
printf '%s\\t%s\\n' "$1" "$input" >> '${log}'
case $1 in
  guard)
    case $input in
      ${call('json')}) printf '%s\\n' '${DENY_JSON}' ;;
      ${call('exit2')}) echo 'guard: rm -r is not allowed here' >&2; exit 2 ;;
      ${call('exit1')}) echo 'guard: rm -r is not allowed here' >&2; exit 1 ;;
      ${call('missing')}) exec /nonexistent/hookd-shim json ;;
    esac ;;
  slow)
    case $input in
      ${call('slow')}) sleep 5; printf '%s\\n' '${DENY_JSON}' ;;
    esac ;;
  pascal)
    case $input in
      ${call('pascal')}) printf '%s\\n' '${PASCAL_DENY}' ;;
    esac ;;
esac
exit 0
`
}

interface Setup {
  /** The victims the model deletes, one `rm -rf` call each, in order. */
  victims: string[]
  /** Whether to write the three-entry hooks file (default: no hooks file). */
  hooks?: boolean
  /** Whether to pass --trust-folder (default true). */
  trust?: boolean
}

interface Outcome {
  api: OpenAiApi
  project: string
  stdout: string
  stderr: string
  code: number | null
  /** Each call's tool result, by victim, as the model was sent it. */
  results: Map<string, string[]>
  /** What each hook entry was given, in the order they ran: [entry, parsed input]. */
  hookInputs: Array<[string, Record<string, unknown>]>
}

async function runCopilot(setup: Setup): Promise<Outcome> {
  const callId = (victim: string): string => `call_${victim}`
  const api = await startOpenAiApi((_request, index) => {
    const victim = setup.victims[index]
    if (victim === undefined) return { text: `turn ${index + 1}: done` }
    return { calls: [{ name: 'bash', callId: callId(victim), arguments: { command: `rm -rf ${victim}`, description: `Delete the ${victim} folder` } }] }
  })
  const home = await tempDir('copilot-home')
  const project = await tempDir('copilot-project')
  const hooksDir = await tempDir('copilot-hooks')
  cleanup.push(home, project, hooksDir)
  for (const victim of setup.victims) {
    await mkdir(join(project, victim))
    await writeFile(join(project, victim, 'keep.txt'), 'precious\n')
  }
  const log = join(hooksDir, 'inputs.tsv')
  if (setup.hooks) {
    const script = await writeScript(join(hooksDir, 'hook.sh'), hookScript(log))
    const hooks = {
      preToolUse: [
        { type: 'command', bash: `${script} guard` },
        { type: 'command', bash: `${script} slow`, timeoutSec: 1 },
      ],
      PreToolUse: [{ type: 'command', bash: `${script} pascal` }],
    }
    await mkdir(join(project, '.github', 'hooks'), { recursive: true })
    await writeFile(join(project, '.github', 'hooks', 'guard.json'), JSON.stringify({ version: 1, hooks }))
  }
  try {
    const ran = await run(copilot, ['--allow-all-tools', ...(setup.trust === false ? [] : ['--trust-folder']), '-p', 'Please delete the victim folders.'], {
      cwd: project,
      env: copilotEnv(copilot, home, api.baseUrl),
      timeoutMs: 150_000,
    })
    const results = new Map<string, string[]>()
    const last = api.requests.at(-1)?.body
    for (const output of last ? functionOutputs(last) : []) {
      const victim = setup.victims.find((v) => callId(v) === output.callId) ?? `unknown call ${output.callId}`
      results.set(victim, [...(results.get(victim) ?? []), output.output])
    }
    const logged = existsSync(log) ? (await readFile(log, 'utf8')).trim().split('\n') : []
    const hookInputs = logged.map((line): [string, Record<string, unknown>] => {
      const tab = line.indexOf('\t')
      return [line.slice(0, tab), JSON.parse(line.slice(tab + 1)) as Record<string, unknown>]
    })
    return { api, project, ...ran, results, hookInputs }
  } finally {
    await api.stop()
  }
}

/** The victim a logged hook input is about, in either input shape (camelCase or snake_case). */
function victimOf(input: Record<string, unknown>): string {
  const args = (input['toolArgs'] ?? input['tool_input']) as { command?: string } | undefined
  return String(args?.command).replace(/^rm -rf /, '')
}

describe('Copilot CLI 1.0.102 command hooks', () => {
  // One run serves every scenario below; the first test to need it starts it.
  let scenarioRun: Promise<Outcome> | undefined
  const scenarios = (): Promise<Outcome> => (scenarioRun ??= runCopilot({ victims: SCENARIOS.map((s) => `victim-${s}`), hooks: true }))
  const kept = (out: Outcome, scenario: Scenario): boolean => existsSync(join(out.project, `victim-${scenario}`, 'keep.txt'))
  const entriesFor = (out: Outcome, scenario: Scenario): string[] => out.hookInputs.filter(([, input]) => victimOf(input) === `victim-${scenario}`).map(([entry]) => entry)

  it('runs each call through the hooks in the file\'s order and stops at the first deny; runs a call no hook refuses', async () => {
    const out = await scenarios()
    expect(out.code, out.stderr).toBe(0)
    expect(out.api.requests).toHaveLength(SCENARIOS.length + 1)
    expect([...out.results.keys()]).toEqual(SCENARIOS.map((s) => `victim-${s}`))
    expect(out.hookInputs.map(([entry, input]) => `${entry} ${victimOf(input)}`)).toEqual([
      'guard victim-json',
      'guard victim-exit2',
      'guard victim-exit1',
      'guard victim-missing',
      'guard victim-slow',
      'slow victim-slow',
      'pascal victim-slow',
      'guard victim-pascal',
      'slow victim-pascal',
      'pascal victim-pascal',
      'guard victim-allowed',
      'slow victim-allowed',
      'pascal victim-allowed',
    ])
    expect(existsSync(join(out.project, 'victim-allowed'))).toBe(false)
    expect(out.results.get('victim-allowed')).toEqual([expect.stringContaining('completed with exit code 0')])
  }, TEST_TIMEOUT)

  it('blocks on a JSON deny and tells the model the reason; reports the tool as bash with toolArgs an object', async () => {
    const out = await scenarios()
    expect(kept(out, 'json')).toBe(true)
    expect(out.results.get('victim-json')).toEqual(['Denied by preToolUse hook: guard: rm -r is not allowed here'])
    expect(entriesFor(out, 'json')).toEqual(['guard'])
    const seen = out.hookInputs.find(([entry, input]) => entry === 'guard' && victimOf(input) === 'victim-json')?.[1]
    expect(seen).toMatchObject({ toolName: 'bash', toolArgs: { command: 'rm -rf victim-json', description: 'Delete the victim-json folder' }, cwd: out.project })
    expect(Object.keys(seen ?? {}).sort()).toEqual(['cwd', 'sessionId', 'timestamp', 'toolArgs', 'toolName'])
  }, TEST_TIMEOUT)

  // The guard's refusals other than JSON: each scenario asserts the same three things about its own call.
  const refusals: Array<{ title: string; scenario: Scenario; told: string }> = [
    {
      title: 'blocks on exit code 2, but does not pass stderr on: the model reads "hook exited with code 2"',
      scenario: 'exit2',
      told: 'Denied by preToolUse hook: hook exited with code 2',
    },
    {
      title: 'fails closed on exit code 1: "hook errored" denies the tool',
      scenario: 'exit1',
      told: 'Denied by preToolUse hook from ".github/hooks/guard.json" (hook errored)',
    },
    {
      title: 'fails closed when the hook\'s program is not found (exit 127): "hook errored" denies the tool',
      scenario: 'missing',
      told: 'Denied by preToolUse hook from ".github/hooks/guard.json" (hook errored)',
    },
  ]
  for (const { title, scenario, told } of refusals) {
    it(title, async () => {
      const out = await scenarios()
      expect(kept(out, scenario)).toBe(true)
      expect(entriesFor(out, scenario)).toEqual(['guard'])
      expect(out.results.get(`victim-${scenario}`)).toEqual([told])
    }, TEST_TIMEOUT)
  }

  it('fails open when the hook outlives timeoutSec', async () => {
    const out = await scenarios()
    // The slow hook got the call and would have denied it after 5 s; Copilot went on without it.
    expect(entriesFor(out, 'slow')).toEqual(['guard', 'slow', 'pascal'])
    expect(existsSync(join(out.project, 'victim-slow'))).toBe(false)
    expect(out.results.get('victim-slow')).toEqual([expect.stringContaining('completed with exit code 0')])
  }, TEST_TIMEOUT)

  it('with the PascalCase event name, sends Claude-style snake_case input with tool_name "Bash"', async () => {
    const out = await scenarios()
    expect(kept(out, 'pascal')).toBe(true)
    expect(out.results.get('victim-pascal')).toEqual(['Denied by preToolUse hook: pascal says no'])
    const seen = out.hookInputs.find(([entry, input]) => entry === 'pascal' && victimOf(input) === 'victim-pascal')?.[1]
    expect(seen).toMatchObject({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'rm -rf victim-pascal' }, cwd: out.project })
    expect(typeof seen?.['timestamp']).toBe('string')
  }, TEST_TIMEOUT)

  it('does not load repository hooks from a folder that is not trusted, and says nothing', async () => {
    // The hooks file of the scenario run, whose guard denies victim-json there.
    const out = await runCopilot({ victims: ['victim-json'], hooks: true, trust: false })
    expect(out.code).toBe(0)
    expect(existsSync(join(out.project, 'victim-json'))).toBe(false)
    expect(out.hookInputs).toEqual([])
    expect(out.results.get('victim-json')).toEqual([expect.stringContaining('completed with exit code 0')])
    expect(`${out.stdout}\n${out.stderr}`).not.toMatch(/hook|trust/i)
  }, TEST_TIMEOUT)
})

/**
 * Every camelCase event of Copilot CLI 1.0.102, as it sends them to a command hook: one run
 * (`copilot -p` without --allow-all-tools, so shell calls go through permissionRequest, which the
 * hook allows) in which the model runs `echo hi`, starts an explore subagent (which runs `echo
 * from-sub`, then calls `task`, a tool it does not have), views a path outside the project (a path
 * permission, which -p cannot grant), and then gets an HTTP 400 from the model API. The hook logs
 * each event; the dialect (src/agents/copilot/copilot-dialect.ts, copilot-points.ts) reads these fields.
 */
describe('Copilot CLI 1.0.102: every camelCase event, field for field', () => {
  const EVENTS = [
    'sessionStart',
    'sessionEnd',
    'userPromptSubmitted',
    'userPromptTransformed',
    'preToolUse',
    'postToolUse',
    'postToolUseFailure',
    'permissionRequest',
    'agentStop',
    'subagentStart',
    'subagentStop',
    'preCompact',
    'errorOccurred',
    'notification',
  ]
  const SUB_TASK = 'SUBAGENT_TASK: look around'
  let logged: Promise<{ inputs: Array<[string, Record<string, unknown>]>; code: number | null }> | undefined
  const everyEvent = () =>
    (logged ??= (async () => {
      const api = await startOpenAiApi((request) => {
        const outputs = functionOutputs(request).length
        if (userTexts(request).some((t) => t.includes(SUB_TASK))) {
          if (outputs === 0) return { calls: [{ name: 'bash', callId: 's1', arguments: { command: 'echo from-sub', description: 'sub' } }] }
          if (outputs === 1) return { calls: [{ name: 'task', callId: 's2', arguments: { description: 'nested', prompt: 'x', agent_type: 'explore' } }] }
          return { text: 'subagent done' }
        }
        if (outputs === 0) return { calls: [{ name: 'bash', callId: 'c1', arguments: { command: 'echo hi', description: 'say hi' } }] }
        if (outputs === 1) return { calls: [{ name: 'task', callId: 'c2', arguments: { description: 'look', prompt: SUB_TASK, agent_type: 'explore', name: 'looker' } }] }
        if (outputs === 2) return { calls: [{ name: 'view', callId: 'c3', arguments: { path: '/nonexistent/file.txt' } }] }
        return { status: 400, message: 'stand-in refuses' }
      })
      const home = await tempDir('copilot-events-home')
      const project = await tempDir('copilot-events-project')
      cleanup.push(home, project)
      const log = join(home, 'inputs.tsv')
      const script = await writeScript(
        join(home, 'hook.sh'),
        `#!/bin/sh\ninput=$(cat)\nprintf '%s\\t%s\\n' "$1" "$input" >> '${log}'\n[ "$1" = permissionRequest ] && printf '%s\\n' '{"behavior":"allow"}'\nexit 0\n`,
      )
      const hooks = Object.fromEntries(EVENTS.map((e) => [e, [{ type: 'command', bash: `${script} ${e}` }]]))
      await mkdir(join(project, '.github', 'hooks'), { recursive: true })
      await writeFile(join(project, '.github', 'hooks', 'events.json'), JSON.stringify({ version: 1, hooks }))
      try {
        const ran = await run(copilot, ['--trust-folder', '-p', 'Please look around.'], { cwd: project, env: copilotEnv(copilot, home, api.baseUrl), timeoutMs: 150_000 })
        const inputs = (await readFile(log, 'utf8'))
          .trim()
          .split('\n')
          .map((line): [string, Record<string, unknown>] => [line.slice(0, line.indexOf('\t')), JSON.parse(line.slice(line.indexOf('\t') + 1)) as Record<string, unknown>])
        return { inputs, code: ran.code }
      } finally {
        await api.stop()
      }
    })())

  const keysOf = (input: Record<string, unknown>): string[] => Object.keys(input).sort()
  const SUBAGENT = ['agentId', 'agentType', 'parentAgentId']
  const COMMON = ['cwd', 'sessionId', 'timestamp']

  it('sends these events, in this order (preCompact fires only when the context is compacted)', async () => {
    const { inputs, code } = await everyEvent()
    // The model API's 400 ends the run with an error.
    expect(code).toBe(1)
    const sub = (e: string) => `${e} (subagent)`
    const order = inputs.map(([e, i]) => (i.agentId !== undefined && e !== 'subagentStart' && e !== 'subagentStop' ? sub(e) : e))
    expect(order).toEqual([
      'sessionStart',
      'userPromptSubmitted',
      'userPromptTransformed',
      'preToolUse',
      'permissionRequest',
      'postToolUse',
      'preToolUse',
      'subagentStart',
      sub('userPromptSubmitted'),
      sub('userPromptTransformed'),
      sub('preToolUse'),
      sub('permissionRequest'),
      sub('postToolUse'),
      sub('preToolUse'),
      sub('postToolUseFailure'),
      sub('agentStop'),
      'subagentStop',
      'postToolUse',
      'preToolUse',
      'notification',
      'errorOccurred',
      'sessionEnd',
    ])
  }, TEST_TIMEOUT)

  it("gives each event the fields the dialect reads; a subagent's events carry its id as sessionId, agentType and parentAgentId", async () => {
    const { inputs } = await everyEvent()
    const first = (name: string, sub = false) => inputs.find(([e, i]) => e === name && (i.agentId !== undefined) === sub)?.[1] ?? {}
    const root = first('sessionStart').sessionId
    expect(keysOf(first('userPromptTransformed'))).toEqual([...COMMON, 'prompt', 'transformedPrompt'].sort())
    expect(first('userPromptTransformed').transformedPrompt).toMatch(/^<current_datetime>.*<\/current_datetime>\n\nPlease look around\.$/)
    expect(first('permissionRequest')).toEqual({ hookName: 'permissionRequest', sessionId: root, timestamp: expect.any(Number), cwd: expect.any(String), toolName: 'bash', toolInput: { command: 'echo hi' }, permissionSuggestions: [] })
    const subStart = first('subagentStart', true)
    expect(keysOf(subStart)).toEqual([...COMMON, ...SUBAGENT, 'agentName', 'transcriptPath'].sort())
    expect(subStart).toMatchObject({ sessionId: root, agentName: 'explore', agentType: 'explore', parentAgentId: root })
    const subId = subStart.agentId
    expect(first('preToolUse', true)).toMatchObject({ sessionId: subId, agentId: subId, agentType: 'explore', parentAgentId: root, toolName: 'bash', toolArgs: { command: 'echo from-sub', description: 'sub' } })
    // The subagent's permission request is in its parent's session, naming the subagent.
    expect(first('permissionRequest', true)).toMatchObject({ sessionId: root, agentId: subId, parentAgentId: root, toolInput: { command: 'echo from-sub' } })
    expect(first('postToolUseFailure', true)).toMatchObject({ sessionId: subId, toolName: 'task', error: "Tool 'task' does not exist." })
    expect(keysOf(first('agentStop', true))).toEqual([...COMMON, ...SUBAGENT, 'stopReason', 'stop_hook_active', 'transcriptPath'].sort())
    expect(first('subagentStop', true)).toMatchObject({ sessionId: root, agentId: subId, agentType: 'explore', agentName: 'explore', response: 'subagent done', stopReason: 'end_turn', stop_hook_active: false })
    expect(first('notification')).toMatchObject({ hook_event_name: 'Notification', notification_type: 'permission_prompt', title: 'Permission needed', message: 'Path permission needed: /nonexistent/file.txt' })
    expect(first('errorOccurred')).toMatchObject({ errorContext: 'model_call', recoverable: true, error: { name: 'Error', message: expect.stringContaining('stand-in refuses') } })
    expect(first('sessionEnd')).toMatchObject({ sessionId: root, reason: 'error' })
  }, TEST_TIMEOUT)
})
