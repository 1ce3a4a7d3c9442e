/**
 * Cline CLI 3.0.65's hook-script contract, measured with the real CLI (`cline --json PROMPT`, its
 * `openai-native` provider pointed at the Responses API stand-in with `cline auth -b`) and read in its
 * shipped code (@cline/core in the pinned install). Hook scripts are files named after their event in
 * the project's `.cline/hooks/`; each gets the event's JSON on stdin.
 *
 * One run, one call per turn, each on a victim folder of its own; one PreToolUse script answers by the
 * victim its input names (support/scenario-hook.ts): exit 2 with a reason on stderr (victim-exit2),
 * `overrideInput` (victim-rewrite), context without `cancel` (victim-context), and last `cancel`
 * (victim-cancel), which stops the task. A TaskStart script logs its input: Cline runs it detached.
 */
import { existsSync } from 'node:fs'
import { readFile, rm } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { agentCli } from '../support/cli.js'
import { functionOutputs, type OpenAiApi, startOpenAiApi } from '../support/openai-api.js'
import { isolatedEnv, projectWithVictims, run, tempDir, writeScript } from '../support/other-clis.js'
import { loggedInputs, scenarioScript } from '../support/scenario-hook.js'

const TEST_TIMEOUT = 240_000
const VICTIMS = ['victim-exit2', 'victim-rewrite', 'victim-context', 'victim-cancel']

let cline: string
let api: OpenAiApi
let project = ''
let log = ''
let startLog = ''
let ran: { code: number | null; stdout: string; stderr: string }
const cleanup: string[] = []

beforeAll(async () => {
  cline = await agentCli('cline')
  api = await startOpenAiApi((_request, index) => {
    const victim = VICTIMS[index]
    return victim ? { calls: [{ name: 'run_commands', arguments: { commands: [`rm -rf ${victim}`] }, callId: `call-${victim}` }] } : { text: 'done' }
  })
  const home = await tempDir('cline-contract-home')
  project = await projectWithVictims('cline-contract', VICTIMS)
  cleanup.push(home, project)
  log = join(home, 'pre.log')
  startLog = join(home, 'start.log')
  await writeScript(
    join(project, '.cline', 'hooks', 'PreToolUse'),
    scenarioScript({
      logFile: log,
      answers: {
        'victim-exit2': "echo 'guard: no' >&2; exit 2",
        'victim-rewrite': `printf '%s\\n' '{"overrideInput": {"commands": ["echo rewritten"]}}'; exit 0`,
        'victim-context': `printf '%s\\n' '{"contextModification": "NOTE from the hook"}'; exit 0`,
        'victim-cancel': `printf '%s\\n' '{"cancel": true, "errorMessage": "guard: rm -r is not allowed here"}'; exit 0`,
      },
    }),
  )
  await writeScript(join(project, '.cline', 'hooks', 'TaskStart'), `#!/bin/sh\ncat >> '${startLog}'\n`)
  const env = isolatedEnv(home)
  const auth = await run(cline, ['auth', 'openai-native', '-k', 'stub-key', '-m', 'gpt-5.5', '-b', api.baseUrl], { cwd: project, env, timeoutMs: 60_000 })
  expect(auth.code, auth.stderr).toBe(0)
  ran = await run(cline, ['--json', 'Please delete the victim folders.'], { cwd: project, env, timeoutMs: 200_000 })
}, 600_000)

afterAll(async () => {
  await api?.stop()
  await Promise.all(cleanup.map((dir) => rm(dir, { recursive: true, force: true })))
})

const gone = (victim: string): boolean => !existsSync(join(project, victim, 'keep.txt'))
const outputOf = (victim: string): string | undefined =>
  api.requests.flatMap((r) => functionOutputs(r.body)).find((o) => o.callId === `call-${victim}`)?.output

describe('Cline 3.0.65: PreToolUse', () => {
  it(
    'the event: hookName tool_call, the call as {id, name, input}, the workspace, the root session and the agent ids',
    async () => {
      const inputs = await loggedInputs(log)
      expect(inputs.length).toBe(VICTIMS.length)
      expect(inputs[0]).toMatchObject({
        hookName: 'tool_call',
        taskId: expect.any(String),
        sessionContext: { rootSessionId: expect.any(String) },
        workspaceRoots: [project],
        agent_id: expect.any(String),
        parent_agent_id: null,
        tool_call: { id: 'call-victim-exit2', name: 'run_commands', input: { commands: ['rm -rf victim-exit2'] } },
        preToolUse: { toolName: 'run_commands', parameters: { commands: '["rm -rf victim-exit2"]' } },
      })
    },
    TEST_TIMEOUT,
  )

  it('exit 2 with a reason on stderr is no refusal: Cline reads no exit code, and the call runs', () => {
    expect(gone('victim-exit2')).toBe(true)
  })

  it('overrideInput replaces the whole input: the rewritten command runs instead', () => {
    expect(gone('victim-rewrite')).toBe(false)
    expect(outputOf('victim-rewrite')).toContain('rewritten')
  })

  it('context without cancel is no refusal: the call runs, the text reaches the model', () => {
    expect(gone('victim-context')).toBe(true)
    expect(JSON.stringify(api.requests.at(-1)?.body.input ?? [])).toContain('NOTE from the hook')
  })

  it('cancel stops the task: the call does not run, and the model gets no turn after it', () => {
    expect(gone('victim-cancel')).toBe(false)
    expect(api.requests.length, ran.stdout).toBe(VICTIMS.length)
    expect(ran.stdout).toMatch(/"finishReason":"aborted"/)
  })
})

describe('Cline 3.0.65: the other hook files', () => {
  it('TaskStart runs (detached) with hookName agent_start and the same session', async () => {
    await expect.poll(async () => (existsSync(startLog) ? (await readFile(startLog, 'utf8')).length : 0), { timeout: 10_000 }).toBeGreaterThan(0)
    const start = JSON.parse(await readFile(startLog, 'utf8')) as Record<string, unknown>
    const pre = (await loggedInputs(log))[0] as Record<string, unknown>
    expect(start).toMatchObject({ hookName: 'agent_start', taskStart: { taskMetadata: {} }, sessionContext: pre.sessionContext, workspaceRoots: [project] })
  })

  it("PreCompact's file is listed but never run: the shipped code gives it no hook name (not mappable)", async () => {
    const core = join(dirname(dirname(dirname(cline))), '@cline', 'core', 'dist', 'index.js')
    const code = await readFile(core, 'utf8')
    expect(code).toContain('["PreCompact"]:void 0')
    expect(code).toContain('["PreToolUse"]:"tool_call"')
  })
})
