/**
 * Replayable runs: a recorded conversation played instead of the API (--model scripted:FILE), and
 * --record writing one from a live run.
 */
import { chmod, lstat, readFile, readdir, stat, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AgentError, ScriptedModel, parseScript } from '../../src/host/reference-agent/index.js'
import { EXAMPLE_HOOKS, type Running, startSidecar } from '../support/sidecar.js'
import { startFakeApi } from './fake-api.js'
import { apiModel, runCaptured, workdir } from './support.js'

let sidecar: Running

beforeAll(async () => {
  sidecar = await startSidecar({ hooks: EXAMPLE_HOOKS, watch: false })
})

afterAll(() => sidecar?.stop())

describe('--model scripted:FILE', () => {
  it('plays the recorded turns through the hooks, without an API', async () => {
    const dir = await workdir()
    const model = new ScriptedModel(
      parseScript(
        JSON.stringify({
          version: 1,
          turns: [
            { text: 'Writing the note.', toolCalls: [{ name: 'write_file', arguments: { path: 'note.txt', content: 'hi' } }] },
            { text: 'Cleaning.', toolCalls: [{ name: 'shell', arguments: { command: 'rm -rf .' } }, { name: 'read_file', arguments: { path: 'note.txt' } }] },
            { text: 'Done.' },
          ],
        }),
        'run.json',
      ),
    )
    const ran = await runCaptured({ model, hooks: ['guard', 'shout'], address: sidecar.address, workdir: dir })

    expect(ran.result).toMatchObject({ reason: 'end_turn', turns: 3, answer: 'Done.' })
    expect(await readFile(join(dir, 'note.txt'), 'utf8')).toBe('hi')
    expect(ran.stdout).toBe('Writing the note.\nCleaning.\nDone.\n')
    expect(ran.result.messages[4]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'call_2_1', content: 'refused by the user', is_error: true },
        { type: 'tool_result', tool_use_id: 'call_2_2', content: 'HI' },
      ],
    })
    expect(ran.stderr).toContain('[guard] refused shell: refused by the user')
    expect(ran.stderr).toContain('hookd agent: scripted, hooks guard, shout')
  })

  it('ends with an error that says what to add when the script runs out of turns', async () => {
    const model = new ScriptedModel(parseScript('{"version": 1, "turns": [{"toolCalls": [{"name": "list_files"}]}]}', 'short.json'), 'short.json')
    const ran = await runCaptured({ model })
    expect(ran.result.reason).toBe('error')
    expect(ran.result.error?.kind).toBe('script')
    expect(ran.result.error?.message).toBe(
      'short.json has 1 turn, and the run asked the model for turn 2 (the last turn called tools, so the model is asked again); add a final turn without toolCalls',
    )
  })

  it('refuses a file that is not a script, saying where and what is wrong', () => {
    const problem = (text: string): string => {
      try {
        parseScript(text, 'run.json')
      } catch (err) {
        expect(err).toBeInstanceOf(AgentError)
        return (err as Error).message
      }
      return 'accepted'
    }
    expect(problem('{"version": 1, "turns": [')).toMatch(/^run\.json is not valid JSON \(.*\); a script looks like \{"version": 1, "turns": \[\{"text": "\.\.\."\}\]\}$/)
    expect(problem('{"version": 2, "turns": [{}]}')).toBe('run.json is not a hookd agent script: version: version must be 1 (the format is in docs/agent.md, "Scripted runs")')
    expect(problem('{"version": 1, "turns": []}')).toContain('script: turns: a script needs at least one turn')
    expect(problem('{"version": 1, "turns": [{"toolCalls": [{"arguments": {}}]}]}')).toContain('script: turns[0].toolCalls[0].name:')
    expect(problem('{"version": 1, "turns": [{"tool_calls": []}]}')).toContain('script: turns[0]:')
  })
})

describe('--record FILE', () => {
  it('writes the live run as a script that replays to the same conversation', async () => {
    const api = await startFakeApi([
      { text: 'Card 4111111111111111. Looking.', tools: [{ id: 'toolu_a', name: 'list_files', input: {} }, { id: 'toolu_b', name: 'read_file', input: { path: 'a.txt' } }] },
      { text: 'All read.' },
    ])
    try {
      const dir = await workdir({ 'a.txt': 'alpha' })
      const file = join(await workdir(), 'run.json')
      const live = await runCaptured({ model: apiModel(api), hooks: ['redact', 'shout'], address: sidecar.address, workdir: dir, record: file, task: 'read a.txt' })
      expect(live.result.recording).toEqual({ file, turns: 2 })
      expect(live.stderr).toContain(`recorded 2 turns to ${file}; replay with --model scripted:${file}`)

      // What the model said, before any hook rewrote it.
      expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({
        version: 1,
        model: 'claude-test',
        task: 'read a.txt',
        turns: [
          {
            text: 'Card 4111111111111111. Looking.',
            toolCalls: [
              { id: 'toolu_a', name: 'list_files', arguments: {} },
              { id: 'toolu_b', name: 'read_file', arguments: { path: 'a.txt' } },
            ],
            stopReason: 'tool_use',
          },
          { text: 'All read.', toolCalls: [], stopReason: 'end_turn' },
        ],
      })

      const replay = await runCaptured({ model: await ScriptedModel.load(file), hooks: ['redact', 'shout'], address: sidecar.address, workdir: dir, task: 'read a.txt' })
      expect(replay.result.messages).toEqual(live.result.messages)
      expect(replay.stdout).toBe(live.stdout)
    } finally {
      await api.stop()
    }
  })

  it('writes nothing when the model never answered', async () => {
    const file = join(await workdir(), 'none.json')
    await writeFile(file, 'untouched')
    const api = await startFakeApi([{ status: 500, type: 'api_error', message: 'down' }])
    try {
      const ran = await runCaptured({ model: apiModel(api), record: file })
      expect(ran.result.recording).toEqual({ file, turns: 0 })
      expect(await readFile(file, 'utf8')).toBe('untouched')
    } finally {
      await api.stop()
    }
  })
})

/** Runs `fn` with the process umask at `mask` (the usual 022 here), and puts the old one back. */
async function withUmask<T>(mask: number, fn: () => Promise<T>): Promise<T> {
  const old = process.umask(mask)
  try {
    return await fn()
  } finally {
    process.umask(old)
  }
}

describe('--record FILE holds what the model said, so only its owner reads it', () => {
  /** One live run that answers once and records to `file`. */
  async function record(file: string): Promise<Awaited<ReturnType<typeof runCaptured>>> {
    const api = await startFakeApi([{ text: 'The key is sk-live-123. Done.' }])
    try {
      return await withUmask(0o022, () => runCaptured({ model: apiModel(api), record: file }))
    } finally {
      await api.stop()
    }
  }

  it('is written 0600 under umask 022, and a link planted at the temp name it once used is not followed', async () => {
    const folder = await workdir({ 'victim.txt': 'keep me\n' })
    const file = join(folder, 'run.json')
    // The old save wrote `${file}.${pid}.tmp` through whatever was there, then renamed it over FILE.
    await symlink(join(folder, 'victim.txt'), `${file}.${process.pid}.tmp`)
    const ran = await record(file)
    expect(ran.result.recording).toEqual({ file, turns: 1 })
    expect(await readFile(join(folder, 'victim.txt'), 'utf8')).toBe('keep me\n')
    const info = await lstat(file)
    expect(info.isFile()).toBe(true)
    expect(info.mode & 0o777).toBe(0o600)
    expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({ version: 1, turns: [{ text: 'The key is sk-live-123. Done.' }] })
    // Nothing of the write is left beside it but the planted link.
    expect((await readdir(folder)).sort()).toEqual(['run.json', 'run.json.' + process.pid + '.tmp', 'victim.txt'])
  })

  it('an existing recording is replaced no more open than it was: 0644 becomes 0600, 0400 stays 0400', async () => {
    const folder = await workdir({ 'open.json': '{}', 'closed.json': '{}' })
    await chmod(join(folder, 'open.json'), 0o644)
    await chmod(join(folder, 'closed.json'), 0o400)
    await record(join(folder, 'open.json'))
    await record(join(folder, 'closed.json'))
    expect((await stat(join(folder, 'open.json'))).mode & 0o777).toBe(0o600)
    expect((await stat(join(folder, 'closed.json'))).mode & 0o777).toBe(0o400)
    expect(JSON.parse(await readFile(join(folder, 'closed.json'), 'utf8'))).toMatchObject({ version: 1 })
  })

  it('a link at FILE itself is refused, and what it points at is left alone', async () => {
    const folder = await workdir({ 'victim.txt': 'keep me\n' })
    const file = join(folder, 'run.json')
    await symlink(join(folder, 'victim.txt'), file)
    const ran = await record(file)
    expect(ran.result.recording).toEqual({
      file,
      turns: 1,
      error: `cannot write the recording to ${file}: it is a symbolic link, and hookd writes a recording only to a file of its own; remove the link or record to another file`,
    })
    expect(ran.stderr).toContain(`cannot write the recording to ${file}: it is a symbolic link`)
    expect(await readFile(join(folder, 'victim.txt'), 'utf8')).toBe('keep me\n')
    expect((await lstat(file)).isSymbolicLink()).toBe(true)
  })
})
