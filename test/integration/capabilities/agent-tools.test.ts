/**
 * `hookd agent`'s tools as docs/agent.md documents them (issue 15, item 19): the built command, talking
 * to a fake Messages API on loopback, sends the model exactly the input schemas the docs show, and the
 * documented arguments (list_files with `path` left out) run, seen by a hook as documented.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROOT, runHookd as hookd } from '../../support/processes.js'
import { type FakeApi, startFakeApi } from '../../reference-agent/fake-api.js'

let dir: string
let api: FakeApi | undefined

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hookd-agent-tools-'))
  await mkdir(join(dir, 'hooks', 'seen'), { recursive: true })
  await mkdir(join(dir, 'work'))
  await writeFile(join(dir, 'work', 'a.txt'), 'hello\n')
  // Logs every call and result it sees, as JSON, so the test reads what a hook receives.
  await writeFile(
    join(dir, 'hooks', 'seen', 'index.js'),
    `module.exports = {
  beforeToolExecute: (ctx, call) => { ctx.log('call ' + JSON.stringify({ name: call.name, arguments: call.arguments })) },
  afterToolExecute: (ctx, call, result) => { ctx.log('result ' + JSON.stringify(result)) },
}\n`,
  )
})

afterAll(async () => {
  await api?.stop()
  await rm(dir, { recursive: true, force: true })
})

describe('hookd agent tools', { timeout: 90_000 }, () => {
  it('sends the schemas docs/agent.md shows, and runs the documented arguments', async () => {
    const docs = await readFile(join(ROOT, 'docs', 'agent.md'), 'utf8')
    const block = /by tool name[\s\S]*?```json\n([\s\S]*?)\n```/.exec(docs)?.[1]
    expect(block).toBeDefined()
    const documented = JSON.parse(block as string) as Record<string, unknown>

    api = await startFakeApi([
      { text: 'Looking.', tools: [{ id: 'toolu_1', name: 'list_files', input: {} }] },
      { text: 'Reading.', tools: [{ id: 'toolu_2', name: 'read_file', input: { path: 'a.txt' } }] },
      { text: 'Done.' },
    ])
    const ran = await hookd(['agent', '--hooks', join(dir, 'hooks'), '--workdir', join(dir, 'work'), '--model', 'claude-test', 'look around'], {
      env: { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: api.url, NO_COLOR: '1' },
      timeoutMs: 80_000,
    })
    expect(ran.code).toBe(0)

    const sent = Object.fromEntries((api.requests[0]?.body.tools ?? []).map((t) => [t.name, t.input_schema]))
    expect(sent).toEqual(documented)
    expect(Object.keys(sent)).toEqual(['shell', 'read_file', 'write_file', 'list_files'])

    expect(ran.stderr).toContain('[seen] call {"name":"list_files","arguments":{}}')
    expect(ran.stderr).toContain('[seen] result {"text":"a.txt","isError":false}')
    expect(ran.stderr).toContain('[seen] call {"name":"read_file","arguments":{"path":"a.txt"}}')
    expect(ran.stderr).toContain('[seen] result {"text":"hello\\n","isError":false}')
  })
})
