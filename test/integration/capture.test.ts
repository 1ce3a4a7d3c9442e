/**
 * Captured traffic as test cases (src/testing/capture.ts): a point call made on a real session, written
 * with `writeCapturedCase`, is a valid case that `hookd test` replays and passes; what the call read
 * (files, confirm answers, HTTP responses) is set up again; env values are never written.
 */
import { chmod, lstat, mkdir, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type CallOrigin, workdirFiles } from '../../src/host/index.js'
import { parseCase } from '../../src/testing/case-file.js'
import { type CapturedCapability, MAX_CASE_CHARS, capturedCase, casesFromRecording, writeCapturedCase } from '../../src/testing/capture.js'
import { runHookd } from '../support/processes.js'
import { type Running, hook, sessionOptions, startSidecar, writeTree } from '../support/sidecar.js'

let running: Running
let dir: string

beforeAll(async () => {
  dir = await writeTree({
    'hooks/reader/index.js': hook({
      beforeToolExecute: `(ctx, call) => {
        const limit = Number(ctx.file.read('limit.txt'))
        const status = ctx.http.fetch('https://policy.example.com/ok?tool=' + call.name).body
        ctx.log('limit', limit, 'status', status)
        if (String(call.arguments.command || '').length > limit && !ctx.confirm({ title: 'Long command', body: call.arguments.command })) {
          return { allow: false, reason: 'too long (' + status + ')' }
        }
      }`,
    }),
    'work/limit.txt': '5',
  })
  running = await startSidecar({ hooks: join(dir, 'hooks'), watch: false })
})

afterAll(async () => {
  await running?.stop()
  await rm(dir, { recursive: true, force: true })
})

describe('writeCapturedCase', () => {
  it('writes what only the operator may read, on one line when indenting would multiply it, and refuses a case over its cap', async () => {
    const out = join(dir, 'bounded')
    const small = await writeCapturedCase(out, { hooks: ['a'], point: 'beforeToolExecute', payload: { id: 'c1', name: 'shell', arguments: {} } })
    expect((await stat(small)).mode & 0o777).toBe(0o600)
    expect(await readFile(small, 'utf8')).toContain('\n  "point": "beforeToolExecute"')
    // 30,000 numbers nested 50 deep: about 60 KB on one line; indented it would be some 100 times that.
    let nested: unknown = Array.from({ length: 30_000 }, () => 0)
    for (let i = 0; i < 50; i++) nested = [nested]
    const deep = await writeCapturedCase(out, { hooks: ['a'], point: 'beforeToolExecute', payload: { id: 'c1', name: 'shell', arguments: { nested } } })
    const text = await readFile(deep, 'utf8')
    expect(text.length).toBeLessThan(100_000)
    expect(text.split('\n')).toHaveLength(2)
    await expect(
      writeCapturedCase(out, { hooks: ['a'], point: 'beforeToolExecute', payload: { id: 'c1', name: 'shell', arguments: { text: 'x'.repeat(MAX_CASE_CHARS) } } }),
    ).rejects.toThrow(/^a beforeToolExecute call is \d+ characters as a test case, over the 4194304 written; it was not captured$/)
  })

  it('writes a case that hookd test replays and passes', async () => {
    const capabilities: CapturedCapability[] = []
    const files = workdirFiles(join(dir, 'work'))
    const seen = <T>(capability: string, args: unknown[], origin: CallOrigin, value: T): T => {
      capabilities.push({ capability, args, hook: origin.hook, value })
      return value
    }
    const logs: string[] = []
    const options = sessionOptions(['reader'], {
      workdir: join(dir, 'work'),
      interactive: true,
      policy: { httpOrigins: ['https://policy.example.com'], env: ['CI'] },
      env: { CI: 'secret-token-value' },
      capabilities: {
        file: { read: async (path, origin) => seen('file.read', [path], origin, await files.read(path, origin)) },
        fetch: async (url, _init, origin) => seen('http.fetch', [url], origin, { status: 200, headers: { 'content-type': 'text/plain' }, body: 'strict' }),
        confirm: (message, origin) => seen('confirm', [message], origin, false),
        log: (line) => void logs.push(line.message),
      },
    })
    const session = await running.client.openSession(options)
    const payload = { id: 'c1', name: 'shell', arguments: { command: 'rm -rf build' } }
    const out = await session.call('beforeToolExecute', payload)
    session.abandon()
    expect(out.result).toEqual({ allow: false, reason: 'too long (strict)', refusedBy: 'reader', arguments: payload.arguments })

    const file = await writeCapturedCase(join(dir, 'hooks', 'reader', 'tests'), {
      hooks: ['reader'],
      point: 'beforeToolExecute',
      payload,
      session: { id: options.sessionId, interactive: true, env: { CI: 'secret-token-value' }, policy: { httpOrigins: ['https://policy.example.com'] } },
      result: out.result,
      diagnostics: out.diagnostics,
      logs,
      capabilities,
      at: new Date('2026-01-02T03:04:05.678Z'),
    })
    expect(file).toBe(join(dir, 'hooks', 'reader', 'tests', 'beforeToolExecute-20260102T030405Z.json'))
    const text = await readFile(file, 'utf8')
    expect(text).not.toContain('secret-token-value')
    expect(JSON.parse(text)).toMatchObject({
      ctx: {
        interactive: true,
        confirm: [false],
        files: { 'limit.txt': '5' },
        http: { 'GET https://policy.example.com/ok?tool=shell': { status: 200, body: 'strict' } },
      },
      expect: { logs: ['limit 5 status strict'], diagnostics: [] },
    })

    const ran = await runHookd(['test', 'reader'], { cwd: dir, timeoutMs: 120_000 })
    expect(ran.stdout.replace(/ \(\d+ ms\)/g, '')).toBe(
      `PASS hooks/reader/tests/beforeToolExecute-20260102T030405Z.json: captured beforeToolExecute (${options.sessionId})\n1 case: 1 passed, 0 failed\n`,
    )
    expect(ran.code).toBe(0)
  })

  it('makes the folders it creates 0700 and its files 0600 under umask 022, follows no link planted at a case name, and opens no existing folder', async () => {
    const old = process.umask(0o022)
    try {
      const root = join(dir, 'private')
      const out = join(root, 'a', 'b')
      const at = new Date('2026-01-02T03:04:05Z')
      await mkdir(join(root, 'a'), { recursive: true })
      await chmod(root, 0o750)
      await chmod(join(root, 'a'), 0o711)
      await writeFile(join(root, 'victim.txt'), 'keep me\n')
      const first = await writeCapturedCase(join(root, 'a', 'fresh', 'deeper'), { hooks: ['a'], point: 'beforeRun', payload: {}, at })
      expect((await stat(join(root, 'a', 'fresh'))).mode & 0o777).toBe(0o700)
      expect((await stat(join(root, 'a', 'fresh', 'deeper'))).mode & 0o777).toBe(0o700)
      expect((await stat(first)).mode & 0o777).toBe(0o600)
      // The folders that were there keep their modes: capture never opens (or closes) what it did not make.
      expect((await stat(root)).mode & 0o777).toBe(0o750)
      expect((await stat(join(root, 'a'))).mode & 0o777).toBe(0o711)

      await mkdir(out)
      await symlink(join(root, 'victim.txt'), join(out, 'beforeRun-20260102T030405Z.json'))
      const written = await writeCapturedCase(out, { hooks: ['a'], point: 'beforeRun', payload: {}, at })
      expect(written).toBe(join(out, 'beforeRun-20260102T030405Z-2.json'))
      expect(await readFile(join(root, 'victim.txt'), 'utf8')).toBe('keep me\n')
      expect((await lstat(written)).mode & 0o777).toBe(0o600)
    } finally {
      process.umask(old)
    }
  })

  it('never replaces a file: a second capture at the same time gets its own name', async () => {
    const out = join(dir, 'captured')
    const call = { hooks: ['reader'], point: 'tool:gate', payload: {}, at: new Date('2026-01-02T03:04:05Z') }
    expect(await writeCapturedCase(out, call)).toBe(join(out, 'tool-gate-20260102T030405Z.json'))
    expect(await writeCapturedCase(out, call)).toBe(join(out, 'tool-gate-20260102T030405Z-2.json'))
    expect((await readdir(out)).sort()).toEqual(['tool-gate-20260102T030405Z-2.json', 'tool-gate-20260102T030405Z.json'])
  })
})

describe('capturedCase', () => {
  it('expects diagnostics by kind and hook, leaves out confirms the sidecar answered itself, and notes env names only', () => {
    const value = capturedCase({
      hooks: ['a', 'b'],
      point: 'beforeRun',
      payload: { sessionId: 's', agentId: 'x', modelId: 'm' },
      session: { id: 's', interactive: false, autoApprove: true, env: ['HOME'] },
      result: {},
      diagnostics: [{ hook: 'b', point: 'beforeRun', kind: 'throw', message: "hook 'b' beforeRun: Error: x", file: 'b/index.js', line: 3 }],
      capabilities: [{ capability: 'confirm', args: [{ title: 'ok?' }], value: true }],
      at: new Date('2026-01-02T03:04:05Z'),
    })
    expect(value).toEqual({
      name: 'captured beforeRun (s)',
      description:
        'Captured 2026-01-02T03:04:05.000Z in session s. The session allowed the environment variables HOME; their values are not recorded: add them to ctx.env. Workdir files the hook only listed or checked are not recorded; add them to ctx.files.',
      hooks: ['a', 'b'],
      point: 'beforeRun',
      payload: { sessionId: 's', agentId: 'x', modelId: 'm' },
      ctx: { interactive: false, autoApprove: true, session: { id: 's' } },
      expect: { result: {}, diagnostics: [{ kind: 'throw', hook: 'b' }], calls: [] },
    })
    const parsed = parseCase(JSON.stringify(value), 'x.json', 'a')
    expect(parsed.ok).toBe(true)
  })
})

describe('capturedCase, given the env values', () => {
  const base = { hooks: ['a'], point: 'beforeToolExecute', at: new Date('2026-01-02T03:04:05Z') }

  it('replaces the longer of two values that overlap, in keys and the session id too; a short value only where it is a whole string, never in a number', () => {
    const value = capturedCase({
      ...base,
      payload: { id: '1', name: 'shell', arguments: { command: 'curl -H token-abc-long', ['token-abc']: 'x', count: 1, n: 12345678, flag: true } },
      session: { id: 'run-token-abc', env: { LONG: 'token-abc-long', SHORT: 'token-abc', ONE: '1', NUM: '345' + '6' } },
    })
    expect(value.name).toBe('captured beforeToolExecute (run-<env SHORT>)')
    expect(value.description).toBe(
      'Captured 2026-01-02T03:04:05.000Z in session run-<env SHORT>. The session allowed the environment variables LONG, SHORT, ONE, NUM; their values are not recorded: add them to ctx.env. Where a value appeared in the call it is written as <env NAME>. Workdir files the hook only listed or checked are not recorded; add them to ctx.files.',
    )
    expect(value.payload).toEqual({ id: '<env ONE>', name: 'shell', arguments: { command: 'curl -H <env LONG>', '<env SHORT>': 'x', count: 1, n: '12<env NUM>78', flag: true } })
  })

  it('keeps a key "__proto__" a key, and says nothing of values when none appeared', () => {
    const payload = JSON.parse('{"id":"c1","name":"shell","arguments":{"__proto__":{"polluted":"secret-value"}}}') as unknown
    const value = capturedCase({ ...base, payload, session: { env: { T: 'secret-value' } } })
    expect(JSON.stringify(value.payload)).toBe('{"id":"c1","name":"shell","arguments":{"__proto__":{"polluted":"<env T>"}}}')
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    const quiet = capturedCase({ ...base, payload: { id: 'c1', name: 'shell', arguments: {} }, session: { env: { T: 'secret-value' } } })
    expect(quiet.description).not.toContain('<env NAME>')
  })

  it('refuses a session with more values than it keeps out, rather than write one of them', async () => {
    const env = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`V${i}`, `value-${i}`]))
    await expect(writeCapturedCase(join(dir, 'too-many'), { ...base, payload: { id: 'c1', name: 'shell', arguments: { command: 'echo value-64' } }, session: { env } })).rejects.toThrow(
      'the session sent 65 environment values (510 characters), over the 64 values of 65536 characters in all that capture keeps out of its cases; its calls were not captured (send fewer to capture them)',
    )
    expect(await readdir(join(dir, 'too-many')).catch(() => [])).toEqual([])
  })
})

describe('casesFromRecording', () => {
  it("turns a recorded run's answers and tool calls into valid cases", () => {
    const cases = casesFromRecording(
      { version: 1, model: 'claude-x', task: 't', turns: [{ text: 'Let me look.', toolCalls: [{ name: 'shell', arguments: { command: 'ls' } }] }, { text: 'Done.', toolCalls: [] }] },
      ['guard'],
    )
    expect(cases.map((c) => [c.point, c.payload])).toEqual([
      ['afterModelResponse', { text: 'Let me look.', thinking: '', toolCalls: [{ id: 'call_1_1', name: 'shell', arguments: { command: 'ls' } }] }],
      ['beforeToolExecute', { id: 'call_1_1', name: 'shell', arguments: { command: 'ls' } }],
      ['afterModelResponse', { text: 'Done.', thinking: '', toolCalls: [] }],
    ])
    for (const c of cases) {
      const parsed = parseCase(JSON.stringify(capturedCase(c)), 'x.json', 'guard')
      expect(parsed.ok && parsed.testCase.expect).toEqual({ match: 'exact', diagnostics: [] })
    }
  })
})
