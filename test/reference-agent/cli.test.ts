/**
 * `hookd agent` as a person runs it: the command with an embedded sidecar, the SDK pointed at a fake
 * Messages API through ANTHROPIC_BASE_URL, exit codes, stdout and stderr. The command runs in-process
 * (main(argv, io), with its own environment) where the test is about what it prints and returns; Ctrl-C
 * is sent to a real process of the built command, since it is about the signal and the exit status.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { readFile, symlink } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { EXAMPLE_HOOKS } from '../support/sidecar.js'
import { type FakeApi, startFakeApi } from './fake-api.js'
import { workdir } from './support.js'
import { BUILT_CLI, ROOT, type Ran, runInProcess } from '../support/processes.js'

/** The variables a developer's shell may hold for the real API: none of them reaches the command. */
const API_VARIABLES = Object.fromEntries(Object.keys(process.env).filter((name) => name.startsWith('ANTHROPIC_')).map((name) => [name, undefined]))

/** `hookd agent ...args` in-process, from the repository folder (as the real process below runs). */
const hookd = (args: string[], env: Record<string, string> = {}): Promise<Ran> => runInProcess(['agent', ...args], { env: { ...API_VARIABLES, NO_COLOR: '1', ...env } })

function environment(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('ANTHROPIC_')) env[name] = value
  return { ...env, NO_COLOR: '1', ...extra }
}

/** The built command as its own process. */
function start(args: string[], env: Record<string, string> = {}): { child: ChildProcess; done: Promise<Ran> } {
  // From the repository folder, so the embedded sidecar's workers find tsx too.
  const child = spawn(process.execPath, [BUILT_CLI, 'agent', ...args], { cwd: ROOT, env: environment(env), stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()))
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()))
  const done = new Promise<Ran>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })))
  return { child, done }
}

let api: FakeApi | undefined
afterEach(async () => {
  await api?.stop()
  api = undefined
})

// Each test starts an embedded sidecar and its worker process (and one test the CLI): allow for a busy machine.
describe('hookd agent', { timeout: 90_000 }, () => {
  it('answers --help', async () => {
    const ran = await hookd(['--help'])
    expect(ran.code).toBe(0)
    expect(ran.stdout).toContain('Usage: hookd agent [options] "task"')
    expect(ran.stdout).toContain('--model NAME')
    expect(ran.stdout).toContain('ANTHROPIC_API_KEY')
  })

  it('says exactly what to set when there is no key (exit 2)', async () => {
    const ran = await hookd(['list the files'])
    expect(ran.code).toBe(2)
    expect(ran.stderr).toBe(
      'hookd agent: ANTHROPIC_API_KEY is not set. Set it to your Anthropic API key (export ANTHROPIC_API_KEY=sk-ant-...), ' +
        'and ANTHROPIC_BASE_URL too if you reach the API through a proxy; or replay a recorded run without a key: --model scripted:FILE\n',
    )
  })

  it('runs a task against the API at ANTHROPIC_BASE_URL with hooks, records it, and replays the recording without a key', async () => {
    api = await startFakeApi([
      { text: 'Removing the build.', tools: [{ id: 'toolu_rm', name: 'shell', input: { command: 'rm -rf build' } }] },
      { text: 'guard kept it.' },
    ])
    const dir = await workdir({ 'build/keep.txt': 'x' })
    const record = join(dir, 'run.json')
    const args = ['--hooks', EXAMPLE_HOOKS, '--hook', 'guard,audit', '--workdir', dir, '--model', 'claude-test', '--record', record, 'clean', 'the', 'build']
    const ran = await hookd(args, { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url })

    expect(ran.stderr).not.toContain('unexpected failure')
    expect(ran.code).toBe(0)
    expect(ran.stdout).toBe('Removing the build.\nguard kept it.\n')
    expect(ran.stderr).toContain('[guard] refused shell: refused by the user')
    expect(ran.stderr).toMatch(/\[audit\] notify: audit: session agent-[\w-]+ ended: end_turn/)
    expect(api.requests[0]?.headers.authorization ?? api.requests[0]?.headers['x-api-key']).toContain('test-key')
    expect(api.requests[0]?.body.messages).toEqual([{ role: 'user', content: 'clean the build' }])
    expect(api.requests[1]?.body.messages.at(-1)).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_rm', content: 'refused by the user', is_error: true }],
    })
    expect(JSON.parse(await readFile(record, 'utf8'))).toMatchObject({ version: 1, model: 'claude-test', task: 'clean the build' })

    const replay = await hookd(['--hooks', EXAMPLE_HOOKS, '--hook', 'guard', '--workdir', dir, '--model', `scripted:${record}`, 'clean the build'])
    expect(replay.code).toBe(0)
    expect(replay.stdout).toBe(ran.stdout)
    expect(replay.stderr).toContain('[guard] refused shell: refused by the user')
    expect(api.requests).toHaveLength(2)
  })

  it('refuses a --record that names a link before the run starts (exit 2), and leaves what it points at alone', async () => {
    const dir = await workdir({ 'victim.txt': 'keep me\n' })
    const record = join(dir, 'run.json')
    await symlink(join(dir, 'victim.txt'), record)
    const ran = await hookd(['--workdir', dir, '--model', 'claude-test', '--record', record, 'hello'], { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' })
    expect(ran.code).toBe(2)
    expect(ran.stderr).toBe(`hookd agent: --record '${record}': it is a symbolic link, and hookd writes a recording only to a file of its own; remove the link or record to another file\n`)
    expect(await readFile(join(dir, 'victim.txt'), 'utf8')).toBe('keep me\n')
  })

  it('exits 1 with a clear message when the API refuses the key', async () => {
    api = await startFakeApi([{ status: 401, type: 'authentication_error', message: 'invalid x-api-key' }])
    const ran = await hookd(['--workdir', await workdir(), 'hello'], { ANTHROPIC_API_KEY: 'bad-key', ANTHROPIC_BASE_URL: api.url })
    expect(ran.code).toBe(1)
    expect(ran.stderr).toContain(
      'hookd agent: stopped by an error: the Anthropic API refused the key (401 authentication_error: invalid x-api-key); check that ANTHROPIC_API_KEY holds a valid, active API key',
    )
  })

  it('stops on Ctrl-C with afterRun reason interrupted (exit 130)', async () => {
    api = await startFakeApi([{ hang: 'Thinking about' }])
    const { child, done } = start(['--hooks', EXAMPLE_HOOKS, '--hook', 'audit', '--workdir', await workdir(), 'hello'], {
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: api.url,
    })
    await api.hanging
    child.kill('SIGINT')
    const ran = await done
    expect(ran.code).toBe(130)
    expect(ran.stderr).toMatch(/\[audit\] notify: audit: session agent-[\w-]+ ended: interrupted/)
    expect(ran.stderr).toContain('hookd agent: interrupted\n')
  })

  it('refuses a scripted file that is not a script, saying what is wrong (exit 2)', async () => {
    const dir = await workdir({ 'bad.json': '{"version": 1, "turns": [{"toolCalls": [{"name": 3}]}]}' })
    const ran = await hookd(['--workdir', dir, '--model', `scripted:${join(dir, 'bad.json')}`, 'hello'])
    expect(ran.code).toBe(2)
    expect(ran.stderr).toContain(`hookd agent: ${join(dir, 'bad.json')} is not a hookd agent script: turns[0].toolCalls[0].name:`)
  })
})
