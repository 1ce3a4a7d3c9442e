/**
 * OpenCode 1.18.33's plugin contract, measured with the real CLI (`opencode run PROMPT`, its
 * `anthropic` provider pointed at the Anthropic stand-in) and a recording plugin of this test's (not
 * hookd's: src/agents/opencode/plugin.ts rests on what this pins). The plugin is an ES module listed
 * in the user's opencode.json as `[file URL, options]`; OpenCode calls its export with the project and
 * the options, and each hook with `(input, output)`.
 *
 * One run, one bash call per turn: the plugin throws for `rm -rf victim` (a refusal), changes
 * `output.args.command` in place for `echo before` (a rewrite), puts a new object in `output.args` for
 * `echo original` (which OpenCode does not run), and replaces `output.output` after `echo loud`.
 */
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AnthropicApi, type Reply, startAnthropicApi, toolResults } from '../support/anthropic-api.js'
import { agentCli } from '../support/cli.js'
import { isolatedEnv, projectWithVictim, run, tempDir } from '../support/other-clis.js'

const TEST_TIMEOUT = 240_000
const COMMANDS = ['rm -rf victim', 'echo before', 'echo original', 'echo loud']

/** The recording plugin: every hook's input and output, one JSON line each, then its answer. */
const PLUGIN = (log: string): string => `import { appendFileSync } from 'node:fs'
const record = (hook, input, output) => appendFileSync(${JSON.stringify(log)}, JSON.stringify({ hook, input, output }) + '\\n')
export const Recorder = async (project, options) => {
  record('init', { directory: project.directory, keys: Object.keys(project).sort() }, options)
  return {
    'tool.execute.before': async (input, output) => {
      record('tool.execute.before', input, output)
      const command = output.args.command
      if (command.includes('rm -r')) throw new Error('guard: rm -r is not allowed here')
      if (command === 'echo before') output.args.command = 'echo after'
      if (command === 'echo original') output.args = { command: 'echo replaced' }
    },
    'tool.execute.after': async (input, output) => {
      record('tool.execute.after', input, { keys: Object.keys(output).sort(), output: output.output })
      if (input.args.command === 'echo loud') output.output = 'REPLACED RESULT'
    },
    'chat.message': async (input, output) => record('chat.message', { keys: Object.keys(input).sort(), agent: typeof input.agent === 'string' ? input.agent : { type: typeof input.agent, value: input.agent ?? null } }, { parts: output.parts.map((p) => p.type) }),
    event: async ({ event }) => record('event', { type: event.type }, null),
  }
}
`

let api: AnthropicApi
let project = ''
let log = ''
let ran: { code: number | null; stdout: string; stderr: string }
const cleanup: string[] = []
const bash = (command: string): Reply => ({ tools: [{ name: 'bash', input: { command, description: 'Run it' } }] })

type Line = { hook: string; input: Record<string, unknown>; output: Record<string, unknown> | null }
const lines = async (): Promise<Line[]> => (await readFile(log, 'utf8')).split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Line)

beforeAll(async () => {
  const opencode = await agentCli('opencode')
  api = await startAnthropicApi({ script: (_request, index) => (COMMANDS[index] !== undefined ? bash(COMMANDS[index] as string) : { text: 'done' }) })
  const home = await tempDir('opencode-contract-home')
  project = await projectWithVictim('opencode-contract')
  cleanup.push(home, project)
  log = join(home, 'plugin.log')
  const plugin = join(home, 'recorder.js')
  await writeFile(plugin, PLUGIN(log))
  await mkdir(join(home, '.config', 'opencode'), { recursive: true })
  const config = {
    plugin: [[pathToFileURL(plugin).href, { url: 'http://127.0.0.1:1/opencode/x', tokenFile: '/t', timeoutS: 5 }]],
    provider: { anthropic: { options: { baseURL: `${api.url}/v1`, apiKey: 'stub-key' } } },
    model: 'anthropic/claude-sonnet-4-5',
  }
  await writeFile(join(home, '.config', 'opencode', 'opencode.json'), JSON.stringify(config))
  ran = await run(opencode, ['run', 'Please delete the victim folder.'], {
    cwd: project,
    env: isolatedEnv(home, { XDG_DATA_HOME: join(home, '.local', 'share'), XDG_STATE_HOME: join(home, '.local', 'state'), OPENCODE_DISABLE_MODELS_FETCH: '1', OPENCODE_DISABLE_AUTOUPDATE: '1', OPENCODE_DISABLE_LSP_DOWNLOAD: '1', OPENCODE_DISABLE_SHARE: '1' }),
    timeoutMs: 200_000,
  })
}, 600_000)

afterAll(async () => {
  await api?.stop()
  await Promise.all(cleanup.map((dir) => rm(dir, { recursive: true, force: true })))
})

/** The tool result the model read for the call made at main turn `turn`. */
const resultOf = (turn: number) => toolResults(api.main[turn + 1] as never)[0]

describe('OpenCode 1.18.33: plugins', () => {
  it('the plugin gets the project (directory) and the options of its [file URL, options] entry', async () => {
    expect(ran.code, ran.stderr).toBe(0)
    const init = (await lines()).find((l) => l.hook === 'init')
    expect(init?.input.directory).toBe(project)
    expect(init?.output).toEqual({ url: 'http://127.0.0.1:1/opencode/x', tokenFile: '/t', timeoutS: 5 })
  }, TEST_TIMEOUT)

  it('tool.execute.before gets {tool, sessionID, callID} and {args}; a throw refuses the call, and the model reads its message as the error', async () => {
    const before = (await lines()).filter((l) => l.hook === 'tool.execute.before')
    expect(before.length).toBe(COMMANDS.length)
    expect(Object.keys(before[0]?.input ?? {}).sort()).toEqual(['callID', 'sessionID', 'tool'])
    expect(before[0]).toMatchObject({ input: { tool: 'bash', sessionID: expect.stringMatching(/^ses_/) }, output: { args: { command: 'rm -rf victim' } } })
    expect(existsSync(join(project, 'victim', 'keep.txt'))).toBe(true)
    expect(resultOf(0)).toMatchObject({ is_error: true, text: 'guard: rm -r is not allowed here' })
  })

  it('arguments changed in place run; a new object put in output.args does not', () => {
    expect(resultOf(1)?.text).toContain('after')
    expect(resultOf(2)?.text).toContain('original')
    expect(resultOf(2)?.text).not.toContain('replaced')
  })

  it('tool.execute.after gets {tool, sessionID, callID, args} and {title, output, metadata}; output replaced is what the model reads', async () => {
    const after = (await lines()).filter((l) => l.hook === 'tool.execute.after')
    expect(Object.keys(after[0]?.input ?? {}).sort()).toEqual(['args', 'callID', 'sessionID', 'tool'])
    expect(after[0]?.output).toMatchObject({ keys: expect.arrayContaining(['metadata', 'output', 'title']) })
    expect(resultOf(3)?.text).toBe('REPLACED RESULT')
  })

  it('chat.message names the session (and its agent, where OpenCode has one); the bus events include session.created and session.idle', async () => {
    const all = await lines()
    // `opencode run` names no agent for its own prompt (the input has the key, undefined).
    expect(all.find((l) => l.hook === 'chat.message')?.input).toEqual({ keys: ['agent', 'messageID', 'model', 'sessionID', 'variant'], agent: { type: 'undefined', value: null } })
    const types = new Set(all.filter((l) => l.hook === 'event').map((l) => l.input.type))
    expect(types.has('session.created')).toBe(true)
    expect(types.has('session.idle')).toBe(true)
  })
})
