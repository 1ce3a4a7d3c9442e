/**
 * `ctx.file.append(path, text)` through real gRPC on a real socket: a logging hook adds a line per call
 * without reading its log back, under exactly the confinement, policy and caps of `ctx.file.write`.
 */
import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CallOrigin, type HostSession, type SessionOptions, workdirFiles } from '../../../src/host/index.js'
import { MAX_TEXT_CHARS } from '../../../src/protocol/capabilities.js'
import { hook, type Running, sessionOptions, startSidecar, writeTree } from '../../support/sidecar.js'

/** Runs the capability named in the call's arguments and answers with what it returned or threw. */
const PROBE = hook({
  beforeToolExecute: `(ctx, call) => {
    const { cap, args } = call.arguments
    const fn = cap.split('.').reduce((o, k) => o[k], ctx)
    try {
      const value = fn(...args)
      return { arguments: { ok: true, value: value === undefined ? null : value } }
    } catch (e) {
      return { arguments: { ok: false, code: e.code, message: e.message } }
    }
  }`,
})

let running: Running
let outside: string
const temps: string[] = []

beforeAll(async () => {
  const root = await writeTree({
    'probe/index.js': PROBE,
    'logger/index.js': hook({ beforeToolExecute: `(ctx, call) => { ctx.file.append('logs/calls.log', call.id + ' ' + call.name + '\\n') }` }),
  })
  outside = await mkdtemp(join(tmpdir(), 'hookd-outside-'))
  temps.push(root, outside)
  running = await startSidecar({ hooks: root, watch: false })
})

afterAll(async () => {
  await running?.stop()
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })))
})

async function workdir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'hookd-workdir-'))
  temps.push(dir)
  await writeFile(join(dir, 'notes.txt'), 'the notes\n')
  await mkdir(join(dir, 'sub'))
  await symlink(outside, join(dir, 'escape-dir'))
  await symlink(join(outside, 'created-through-link.txt'), join(dir, 'dangling'))
  return dir
}

function open(hooks: string[], extra: Partial<SessionOptions>): Promise<HostSession> {
  return running.client.openSession(sessionOptions(hooks, extra))
}

async function probe(session: HostSession, cap: string, ...args: unknown[]): Promise<unknown> {
  const out = await session.call('beforeToolExecute', { id: 'p', name: 'probe', arguments: { cap, args } })
  expect(out.diagnostics).toEqual([])
  return out.result.arguments
}

describe('ctx.file.append', () => {
  it('adds to a log across invocations, each in a fresh isolate, creating the file and its folder', async () => {
    const dir = await workdir()
    const session = await open(['logger'], { workdir: dir })
    for (const [id, name] of [['c1', 'shell'], ['c2', 'read_file'], ['c3', 'shell']]) {
      const out = await session.call('beforeToolExecute', { id: id as string, name: name as string, arguments: {} })
      expect(out.diagnostics).toEqual([])
    }
    expect(await readFile(join(dir, 'logs', 'calls.log'), 'utf8')).toBe('c1 shell\nc2 read_file\nc3 shell\n')
    session.abandon()
  })

  it('appends to an existing file without touching what is there', async () => {
    const dir = await workdir()
    const session = await open(['probe'], { workdir: dir })
    expect(await probe(session, 'file.append', 'notes.txt', 'more notes\n')).toEqual({ ok: true, value: null })
    expect(await readFile(join(dir, 'notes.txt'), 'utf8')).toBe('the notes\nmore notes\n')
    session.abandon()
  })

  /** [args, the refusal's reason, who refuses] */
  const refusals: Array<[unknown[], string, 'sidecar' | 'host']> = [
    [['../escape.txt', 'x'], 'the path leads outside the workdir', 'sidecar'],
    [['sub/../../escape.txt', 'x'], 'the path leads outside the workdir', 'sidecar'],
    [['/tmp/hookd-appended.txt', 'x'], 'absolute paths are refused; use a path relative to the workdir', 'sidecar'],
    [['escape-dir/planted.txt', 'x'], 'the path leads outside the workdir through a symbolic link', 'host'],
    [['dangling', 'x'], 'the path leads outside the workdir through a symbolic link', 'host'],
  ]

  it.each(refusals)('refuses file.append(%j) like write: a catchable denied error saying why', async (args, why, by) => {
    const dir = await workdir()
    const files = workdirFiles(dir)
    const reached: string[] = []
    const session = await open(['probe'], { workdir: dir, capabilities: { file: { append: (p, t, o) => (reached.push(p), files.append(p, t, o)) } } })
    expect(await probe(session, 'file.append', ...args)).toEqual({ ok: false, code: 'denied', message: `ctx.file.append('${String(args[0])}') refused: ${why}` })
    expect(reached).toEqual(by === 'sidecar' ? [] : [args[0]])
    await expect(stat(join(outside, 'planted.txt'))).rejects.toMatchObject({ code: 'ENOENT' })
    await expect(stat(join(outside, 'created-through-link.txt'))).rejects.toMatchObject({ code: 'ENOENT' })
    await expect(stat(join(dir, '..', 'escape.txt'))).rejects.toMatchObject({ code: 'ENOENT' })
    session.abandon()
  })

  it("needs write access: refused in the sidecar under policy 'read' and 'none'", async () => {
    const dir = await workdir()
    const reader = await open(['probe'], { workdir: dir, policy: { file: 'read' } })
    expect(await probe(reader, 'file.append', 'notes.txt', 'x')).toEqual({
      ok: false,
      code: 'denied',
      message: "ctx.file.append('notes.txt') refused: this session allows reading files only",
    })
    const closed = await open(['probe'], { workdir: dir, policy: { file: 'none' } })
    expect(await probe(closed, 'file.append', 'notes.txt', 'x')).toEqual({
      ok: false,
      code: 'denied',
      message: "ctx.file.append('notes.txt') refused: this session allows no file access",
    })
    expect(await readFile(join(dir, 'notes.txt'), 'utf8')).toBe('the notes\n')
    reader.abandon()
    closed.abandon()
  })

  it('has the text cap of write, and refuses text that is not a string', async () => {
    const dir = await workdir()
    const session = await open(['probe'], { workdir: dir })
    expect(await probe(session, 'file.append', 'long.txt', 'x'.repeat(MAX_TEXT_CHARS + 1))).toMatchObject({
      ok: false,
      code: 'limit',
      message: expect.stringMatching(/^ctx\.file\.append: /),
    })
    expect(await probe(session, 'file.append', 'n.txt', 42)).toMatchObject({ ok: false, code: 'invalid' })
    await expect(stat(join(dir, 'long.txt'))).rejects.toMatchObject({ code: 'ENOENT' })
    await expect(stat(join(dir, 'n.txt'))).rejects.toMatchObject({ code: 'ENOENT' })
    session.abandon()
  })

  it("reaches a host's own append handler with the path, the text and who asked", async () => {
    const seen: Array<[string, string, CallOrigin]> = []
    const session = await open(['logger'], { workdir: await workdir(), capabilities: { file: { append: async (p, t, o) => void seen.push([p, t, o]) } } })
    await session.call('beforeToolExecute', { id: 'c9', name: 'shell', arguments: {} })
    expect(seen).toEqual([['logs/calls.log', 'c9 shell\n', { hook: 'logger', point: 'beforeToolExecute', seq: 1 }]])
    session.abandon()
  })
})
