/**
 * Real traffic as test cases through the CLI (issue 19 item 3): `hookd serve --capture DIR` writes each
 * point call a host makes as a case file, and `hookd agent --capture DIR` does the same for an agent's
 * run (a recorded one replayed with --model scripted:FILE, so no API key is needed). Moved into a
 * hook's tests/ folder, the captured cases run green under `hookd test`. The commands run in-process
 * (main(argv, io); `hookd serve` until stopped as SIGTERM would).
 */
import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HookdClient, workdirFiles } from '../../src/host/index.js'
import { runInProcess, type ServingInProcess, serveInProcess } from '../support/processes.js'
import { hook, sessionOptions, writeTree } from '../support/sidecar.js'

const READER = hook({
  beforeToolExecute: `(ctx, call) => {
    const limit = Number(ctx.file.read('limit.txt'))
    const status = ctx.http.fetch('https://policy.example.com/ok?tool=' + call.name).body
    ctx.log('limit', limit, 'status', status)
    if (String(call.arguments.command || '').length > limit && !ctx.confirm({ title: 'Long command', body: call.arguments.command })) {
      return { allow: false, reason: 'too long (' + status + ')' }
    }
  }`,
})

const GUARD = hook({
  beforeToolExecute: `(ctx, call) => {
    if (call.name === 'shell' && /rm -rf/.test(String(call.arguments.command))) return { allow: false, reason: 'no rm -rf' }
  }`,
})

/** Hands the session's env values to every path into a case: logs, notify, fetch, file names, the result. */
const LEAKY = hook({
  beforeToolExecute: `(ctx, call) => {
    const t = ctx.env.CI
    const k = ctx.env.API_KEY
    ctx.log('token', t, JSON.stringify({ key: k }))
    ctx.notify({ title: 'token ' + t, body: k })
    const echoed = ctx.http.fetch('https://policy.example.com/ok?t=' + encodeURIComponent(k), { headers: { authorization: 'Bearer ' + t } }).body
    const stored = ctx.file.read('token.txt')
    return { reason: 'saw ' + t + ', ' + echoed + ', ' + stored, arguments: { command: String(call.arguments.command), token: t, key: k, pin: Number(ctx.env.PIN) } }
  }`,
  afterToolExecute: `(ctx, call, result) => ({ text: result.text + ' / ' + ctx.env.API_KEY })`,
})

/** The session's env values: one plain, one with characters JSON and URLs escape, one a number. */
const SECRETS = { CI: 'secret-token-value', API_KEY: 'sk-live/42 "q"\\x', PIN: '48213' }

/** Every form a value takes in a case file's text: as itself, escaped inside a JSON string, URL-encoded. */
function forms(value: string): string[] {
  return [...new Set([value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value)])]
}

let dir: string

beforeAll(async () => {
  dir = await writeTree({
    'hooks/reader/index.js': READER,
    'hooks/guard/index.js': GUARD,
    'hooks/leaky/index.js': LEAKY,
    'work/limit.txt': '5',
    'work/token.txt': `stored ${SECRETS.CI}`,
  })
})

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
})

/** Moves every case in `from` into the hook's tests/ folder; returns their names, sorted. */
async function adopt(from: string, hookName: string): Promise<string[]> {
  const tests = join(dir, 'hooks', hookName, 'tests')
  await mkdir(tests, { recursive: true })
  const names = (await readdir(from)).sort()
  for (const name of names) await rename(join(from, name), join(tests, name))
  return names
}

describe('hookd serve --capture DIR', () => {
  let serving: ServingInProcess | undefined
  afterAll(async () => {
    await serving?.stop()
  })

  it('writes each point call as a case that hookd test runs green', async () => {
    const captured = join(dir, 'captured-serve')
    serving = await serveInProcess(['--hooks', 'hooks', '--listen', `unix:${join(dir, 'hookd.sock')}`, '--workers', '1', '--capture', 'captured-serve'], { cwd: dir, timeoutMs: 60_000 })
    const client = await HookdClient.connect(serving.address)
    const files = workdirFiles(join(dir, 'work'))
    const session = await client.openSession(
      sessionOptions(['reader'], {
        workdir: join(dir, 'work'),
        interactive: true,
        policy: { httpOrigins: ['https://policy.example.com'], env: ['CI'] },
        env: { CI: 'secret-token-value' },
        capabilities: {
          file: { read: (path, origin) => files.read(path, origin) },
          fetch: async () => ({ status: 200, headers: { 'content-type': 'text/plain' }, body: 'strict' }),
          confirm: () => false,
        },
      }),
    )
    const refused = await session.call('beforeToolExecute', { id: 'c1', name: 'shell', arguments: { command: 'rm -rf build' } })
    expect(refused.result).toMatchObject({ allow: false, reason: 'too long (strict)' })
    const allowed = await session.call('beforeToolExecute', { id: 'c2', name: 'shell', arguments: { command: 'ls' } })
    expect(allowed.result).toMatchObject({ allow: true })
    session.abandon()
    client.close()

    let names: string[] = []
    for (let i = 0; i < 100 && names.length < 2; i++) {
      names = await readdir(captured).catch(() => [])
      if (names.length < 2) await new Promise((r) => setTimeout(r, 100))
    }
    expect(names).toHaveLength(2)
    const texts = await Promise.all(names.map((n) => readFile(join(captured, n), 'utf8')))
    for (const text of texts) expect(text).not.toContain('secret-token-value')
    const cases = texts.map((t) => JSON.parse(t) as { payload: { id: string }; ctx: unknown; expect: unknown })
    const first = cases.find((c) => c.payload.id === 'c1')
    expect(first?.ctx).toMatchObject({
      interactive: true,
      confirm: [false],
      files: { 'limit.txt': '5' },
      http: { 'GET https://policy.example.com/ok?tool=shell': { status: 200, body: 'strict' } },
    })
    expect(first?.expect).toMatchObject({ result: { allow: false, reason: 'too long (strict)', refusedBy: 'reader' }, logs: ['limit 5 status strict'], diagnostics: [] })

    await adopt(captured, 'reader')
    const ran = await runInProcess(['test', 'reader'], { cwd: dir })
    expect(ran.stdout).toMatch(/^PASS hooks\/reader\/tests\/beforeToolExecute-\S+\.json: captured beforeToolExecute \(\S+\) \(\d+ ms\)\nPASS .*\n2 cases: 2 passed, 0 failed\n$/)
    expect(ran.code).toBe(0)
  })

  it('never writes an env value into a case, whichever way it came (a log, a notify, a fetch and its answer, a file, the result, the payload): the case names the variables instead', async () => {
    const captured = join(dir, 'captured-env')
    const leaking = await serveInProcess(['--hooks', 'hooks', '--listen', `unix:${join(dir, 'hookd-env.sock')}`, '--workers', '1', '--capture', 'captured-env'], { cwd: dir, timeoutMs: 60_000 })
    try {
      const client = await HookdClient.connect(leaking.address)
      const files = workdirFiles(join(dir, 'work'))
      const session = await client.openSession(
        sessionOptions(['leaky'], {
          workdir: join(dir, 'work'),
          policy: { httpOrigins: ['https://policy.example.com'], env: ['CI', 'API_KEY', 'PIN'] },
          env: SECRETS,
          capabilities: {
            file: { read: (path, origin) => files.read(path, origin) },
            fetch: async (_url, init) => ({ status: 200, headers: { 'x-echo': init.headers?.authorization ?? '' }, body: `echo ${init.headers?.authorization ?? ''}` }),
            notify: () => {},
          },
        }),
      )
      const gated = await session.call('beforeToolExecute', { id: 'c1', name: 'shell', arguments: { command: `echo ${SECRETS.CI}` } })
      expect(gated.result).toMatchObject({ allow: true, reason: `saw ${SECRETS.CI}, echo Bearer ${SECRETS.CI}, stored ${SECRETS.CI}` })
      // The host's own payload carries a value too: the tool printed it.
      const after = await session.call('afterToolExecute', { call: { id: 'c1', name: 'shell', arguments: { command: 'env' } }, result: { text: `CI=${SECRETS.CI}\nPIN=${SECRETS.PIN}`, isError: false } })
      expect(after.result).toEqual({ text: `CI=${SECRETS.CI}\nPIN=${SECRETS.PIN} / ${SECRETS.API_KEY}`, isError: false })

      let names: string[] = []
      for (let i = 0; i < 100 && names.length < 2; i++) {
        names = await readdir(captured).catch(() => [])
        if (names.length < 2) await new Promise((r) => setTimeout(r, 100))
      }
      expect(names).toHaveLength(2)
      for (const name of names) {
        const text = await readFile(join(captured, name), 'utf8')
        for (const value of Object.values(SECRETS)) for (const form of forms(value)) expect(text, `${name} holds ${JSON.stringify(form)}`).not.toContain(form)
        const written = JSON.parse(text) as { description: string }
        expect(written.description).toContain('The session allowed the environment variables CI, API_KEY, PIN; their values are not recorded')
      }
      const gate = JSON.parse(await readFile(join(captured, names.find((n) => n.startsWith('beforeToolExecute-')) ?? ''), 'utf8')) as Record<string, unknown>
      expect(gate).toMatchObject({
        payload: { arguments: { command: 'echo <env CI>' } },
        ctx: { files: { 'token.txt': 'stored <env CI>' }, http: { 'GET https://policy.example.com/ok?t=<env API_KEY>': { body: 'echo Bearer <env CI>', headers: { 'x-echo': 'Bearer <env CI>' } } } },
        expect: {
          result: { allow: true, reason: 'saw <env CI>, echo Bearer <env CI>, stored <env CI>', arguments: { token: '<env CI>', key: '<env API_KEY>', pin: '<env PIN>' } },
          logs: ['token <env CI> {"key":"<env API_KEY>"}'],
          calls: [
            { capability: 'notify', args: [{ title: 'token <env CI>', body: '<env API_KEY>' }], hook: 'leaky' },
            { capability: 'http.fetch', args: ['https://policy.example.com/ok?t=<env API_KEY>', { headers: { authorization: 'Bearer <env CI>' } }], hook: 'leaky' },
            { capability: 'file.read', args: ['token.txt'], hook: 'leaky' },
          ],
        },
      })
      expect(String(gate.description)).toContain('Where a value appeared in the call it is written as <env NAME>')

      // The same sidecar and session answer an ordinary call afterwards, and capture it too.
      const plain = await session.call('afterToolExecute', { call: { id: 'c2', name: 'shell', arguments: { command: 'ls' } }, result: { text: 'a.txt', isError: false } })
      expect(plain.result).toEqual({ text: `a.txt / ${SECRETS.API_KEY}`, isError: false })
      session.abandon()
      client.close()
    } finally {
      await leaking.stop()
    }
  })

  it('is refused with tenants, saying why', async () => {
    const ran = await runInProcess(['serve', '--tenants', 'tenants.json', '--capture', 'x'], { cwd: dir })
    expect(ran.code).toBe(2)
    expect(ran.stderr).toContain("--capture is for a sidecar without tenants: one folder would hold every tenant's payloads")
  })
})

describe('hookd agent --capture DIR', () => {
  it("turns a recorded run's hook calls into cases that hookd test runs green", async () => {
    const script = {
      version: 1,
      turns: [
        { text: 'Looking.', toolCalls: [{ name: 'list_files', arguments: {} }] },
        { text: 'Cleaning.', toolCalls: [{ name: 'shell', arguments: { command: 'rm -rf build' } }] },
        { text: 'Done.' },
      ],
    }
    await writeFile(join(dir, 'run.json'), JSON.stringify(script))
    const ran = await runInProcess(['agent', '--hook', 'guard', '--workdir', 'work', '--model', 'scripted:run.json', '--capture', 'captured-agent', 'tidy up'], { cwd: dir })
    expect(ran.stderr).toContain('[guard] refused shell: no rm -rf')
    expect(ran.code).toBe(0)
    const names = await adopt(join(dir, 'captured-agent'), 'guard')
    // beforeRun, three answers, two tool calls (and afterToolExecute for the one that ran), afterRun.
    expect(names.some((n) => n.startsWith('beforeToolExecute-'))).toBe(true)
    const tested = await runInProcess(['test', 'guard'], { cwd: dir })
    expect(tested.stdout).toContain(`${names.length} cases: ${names.length} passed, 0 failed`)
    expect(tested.code).toBe(0)
  })
})
