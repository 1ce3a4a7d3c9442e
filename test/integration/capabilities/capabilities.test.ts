/**
 * The whole `ctx`, each capability through the real sandbox and real gRPC on a real socket: the hook
 * calls it synchronously (or awaits it), the sidecar checks the session's policy, the host serves it,
 * and a refusal is a catchable error inside the hook or, uncaught, a `capability-denied` diagnostic.
 * The round trips themselves (what reaches the host, what the hook is answered, the host's answers
 * too big or too late, env filtered whatever a host sends) are tested in memory too:
 * test/unit/session/session-stream-capabilities.test.ts.
 */
import { writeFileSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type CallOrigin,
  type CapabilityHandlers,
  type HostSession,
  type LogLineData,
  type Message,
  type SessionOptions,
  workdirFiles,
} from '../../../src/host/index.js'
import { MAX_TEXT_CHARS } from '../../../src/protocol/capabilities.js'
import { EXAMPLE_HOOKS, hook, type Running, sessionOptions, startSidecar, writeTree } from '../../support/sidecar.js'
import { FILE_REFUSALS } from '../../support/file-refusals.js'

// ------------------------------------------------------------------------------------------------
// Hooks
// ------------------------------------------------------------------------------------------------

/**
 * `probe` runs the capability named in the call's arguments (`{cap: 'file.read', args: ['x']}`) and
 * answers with what it returned or threw; `probe-uncaught` lets the error escape.
 */
const PROBE = `module.exports = {
  beforeToolExecute(ctx, call) {
    const { cap, args } = call.arguments
    const fn = cap.split('.').reduce((o, k) => o[k], ctx)
    let value
    try {
      value = fn(...args)
    } catch (e) {
      return { arguments: { ok: false, isError: e instanceof Error, code: e.code, message: e.message } }
    }
    return { arguments: { ok: true, value: value === undefined ? null : value } }
  },
}
`
const PROBE_UNCAUGHT = hook({
  beforeToolExecute: `(ctx, call) => { const { cap, args } = call.arguments; cap.split('.').reduce((o, k) => o[k], ctx)(...args); return { arguments: { reached: true } } }`,
})

/** The seed's own example (rienda hooks docs), verbatim. */
const SEED_GUARD = `// ~/.rienda/hooks/guard/index.js
module.exports = {
  beforeToolExecute: function(ctx, call) {
    if (
      call.name === "shell" && /\\brm\\s+-rf\\b/.test(call.arguments.command || "")
    ) {
      if (
        !ctx.confirm({
          title: "Dangerous command",
          body: call.arguments.command,
        })
      ) {
        return { allow: false, reason: "refused by the user" };
      }
    }
  },

  afterRun: function(ctx, event) {
    ctx.notify({ title: "rienda", body: "run finished: " + event.reason });
  },
};
`

let running: Running
let root: string
let outside: string
const temps: string[] = []

beforeAll(async () => {
  root = await writeTree({
    'probe/index.js': PROBE,
    'probe-uncaught/index.js': PROBE_UNCAUGHT,
    'asker/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ arguments: { answer: ctx.confirm({ title: 'Run it?', body: c.name }) } })` }),
    'log-then-confirm/index.js': hook({
      beforeToolExecute: `(ctx, c) => { ctx.log('about to ask about', c.id); const ok = ctx.confirm({ title: 'go?' }); ctx.log('answered', ok); return { arguments: { ok } } }`,
    }),
    'log-then-work/index.js': hook({
      beforeToolExecute: `(ctx, c) => {
        ctx.log('working on', c.id)
        let polls = 0, spins = 0
        while (!ctx.file.exists('host-saw-the-log')) {
          polls++
          if (polls > 100) return { arguments: { saw: false, polls } }
          for (let i = 0; i < 100000; i++) spins++
        }
        return { arguments: { saw: true, polls } }
      }`,
    }),
    'files/index.js': hook({
      beforeToolExecute: `(ctx, c) => {
        ctx.file.write('out/new.txt', 'written by ' + c.id)
        return { arguments: {
          read: ctx.file.read('notes.txt'),
          readBack: ctx.file.read('out/new.txt'),
          throughInnerLink: ctx.file.read('inner/a.txt'),
          exists: ctx.file.exists('notes.txt'),
          existsDir: ctx.file.exists('sub'),
          missing: ctx.file.exists('missing.txt'),
          listRoot: ctx.file.list(),
          listSub: ctx.file.list('sub'),
          dotted: ctx.file.read('sub/../notes.txt'),
        } }
      }`,
    }),
    'fetcher/index.js': hook({
      beforeToolExecute: `(ctx, c) => {
        try {
          const r = ctx.http.fetch(c.arguments.url, c.arguments.init)
          return { arguments: { ok: true, status: r.status, body: r.body, servedBy: r.headers['x-served-by'], location: r.headers.location } }
        } catch (e) {
          return { arguments: { ok: false, code: e.code, message: e.message } }
        }
      }`,
    }),
    'env-dump/index.js': hook({
      beforeToolExecute: `(ctx, c) => ({ arguments: { env: ctx.env, names: Object.keys(ctx.env), frozen: Object.isFrozen(ctx.env) } })`,
    }),
    'async-caps/index.js': hook({
      beforeToolExecute: `async (ctx, c) => {
        const notes = await ctx.file.read('notes.txt')
        await null
        const ok = ctx.confirm({ title: 'after an await' })
        const exists = await Promise.resolve().then(() => ctx.file.exists('notes.txt'))
        ctx.log('async done')
        return { arguments: { notes, ok, exists } }
      }`,
    }),
    'promise-caps/index.js': hook({
      beforeToolExecute: `(ctx, c) => Promise.resolve(c.id).then((id) => ({ arguments: { id, ok: ctx.confirm({ title: 'in a then' }) } }))`,
    }),
    'async-denied/index.js': hook({
      beforeToolExecute: `async (ctx, c) => { await null; ctx.file.read('../escape.txt') }`,
    }),
    'guard/index.js': await readFile(join(EXAMPLE_HOOKS, 'guard', 'index.js'), 'utf8'),
    'seed-guard/index.js': SEED_GUARD,
  })
  outside = await mkdtemp(join(tmpdir(), 'hookd-outside-'))
  temps.push(root, outside)
  await writeFile(join(outside, 'secret.txt'), 'outside secret')
  running = await startSidecar({ hooks: root })
})

afterAll(async () => {
  await running?.stop()
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })))
})

/** A fresh workdir: notes.txt, sub/{a,b}.txt, an inner link and links that lead outside. */
async function workdir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'hookd-workdir-'))
  temps.push(dir)
  await writeFile(join(dir, 'notes.txt'), 'the notes')
  await mkdir(join(dir, 'sub'))
  await writeFile(join(dir, 'sub', 'a.txt'), 'A')
  await writeFile(join(dir, 'sub', 'b.txt'), 'B')
  await symlink('sub', join(dir, 'inner'))
  await symlink(outside, join(dir, 'escape-dir'))
  await symlink(join(outside, 'secret.txt'), join(dir, 'escape-file'))
  await symlink(join(outside, 'created-through-link.txt'), join(dir, 'dangling'))
  return dir
}

const call = { id: 'c1', name: 'shell', arguments: { command: 'ls' } }

async function open(hooks: string[], extra: Partial<SessionOptions> = {}): Promise<HostSession> {
  return running.client.openSession(sessionOptions(hooks, extra))
}

interface Probe {
  ok: boolean
  value?: unknown
  isError?: boolean
  code?: string
  message?: string
}

/** Runs one capability through the `probe` hook. */
async function probe(session: HostSession, cap: string, ...args: unknown[]): Promise<Probe> {
  const out = await session.call('beforeToolExecute', { id: 'p', name: 'probe', arguments: { cap, args } })
  expect(out.diagnostics).toEqual([])
  return out.result.arguments as unknown as Probe
}

// ------------------------------------------------------------------------------------------------
// confirm
// ------------------------------------------------------------------------------------------------

describe('ctx.confirm', () => {
  it("blocks until the host answers and returns the human's yes", async () => {
    const asked: Array<{ message: Message; origin: CallOrigin }> = []
    const session = await open(['asker'], {
      interactive: true,
      capabilities: { confirm: (message, origin) => (asked.push({ message, origin }), true) },
    })
    expect((await session.call('beforeToolExecute', call)).result.arguments).toEqual({ answer: true })
    expect(asked).toEqual([
      { message: { title: 'Run it?', body: 'shell' }, origin: { hook: 'asker', point: 'beforeToolExecute', seq: expect.any(Number) } },
    ])
    session.abandon()
  })

  it("returns the human's no, including from an async handler", async () => {
    const session = await open(['asker'], { interactive: true, capabilities: { confirm: async () => false } })
    expect((await session.call('beforeToolExecute', call)).result.arguments).toEqual({ answer: false })
    session.abandon()
  })

  it('is answered by auto-approve when the session is not interactive, without asking the host', async () => {
    let asked = 0
    const confirm = (): boolean => (asked++, false)
    const yes = await open(['asker'], { interactive: false, autoApprove: true, capabilities: { confirm } })
    expect((await yes.call('beforeToolExecute', call)).result.arguments).toEqual({ answer: true })
    const no = await open(['asker'], { interactive: false, autoApprove: false, capabilities: { confirm } })
    expect((await no.call('beforeToolExecute', call)).result.arguments).toEqual({ answer: false })
    expect(asked).toBe(0)
    yes.abandon()
    no.abandon()
  })

  it('is refused in the sidecar when the policy denies it: catchable, capability-denied when uncaught', async () => {
    let asked = 0
    const options: Partial<SessionOptions> = {
      interactive: true,
      autoApprove: true,
      policy: { confirm: false },
      capabilities: { confirm: () => (asked++, true) },
    }
    const caught = await open(['probe'], options)
    expect(await probe(caught, 'confirm', { title: 'Deploy?' })).toEqual({
      ok: false,
      isError: true,
      code: 'denied',
      message: "ctx.confirm({ title: 'Deploy?' }) refused: this session does not allow ctx.confirm",
    })
    const uncaught = await open(['asker'], options)
    const out = await uncaught.call('beforeToolExecute', call)
    expect(out.result).toEqual({ allow: true, arguments: call.arguments })
    expect(out.diagnostics).toEqual([
      expect.objectContaining({
        hook: 'asker',
        kind: 'capability-denied',
        message: "hook 'asker' beforeToolExecute: Error: ctx.confirm({ title: 'Run it?' }) refused: this session does not allow ctx.confirm",
      }),
    ])
    expect(asked).toBe(0)
    caught.abandon()
    uncaught.abandon()
  })
})

// ------------------------------------------------------------------------------------------------
// log
// ------------------------------------------------------------------------------------------------

describe('ctx.log', () => {
  it('reaches the host before the hook finishes: the log is there when confirm asks', async () => {
    const logs: LogLineData[] = []
    const seenWhenAsked: string[] = []
    const session = await open(['log-then-confirm'], {
      interactive: true,
      capabilities: {
        log: (line) => logs.push(line),
        confirm: () => {
          seenWhenAsked.push(...logs.map((l) => l.message))
          return true
        },
      },
    })
    const out = await session.call('beforeToolExecute', call)
    expect(out.result.arguments).toEqual({ ok: true })
    expect(seenWhenAsked).toEqual(['about to ask about c1'])
    expect(logs.map((l) => [l.hook, l.point, l.message])).toEqual([
      ['log-then-confirm', 'beforeToolExecute', 'about to ask about c1'],
      ['log-then-confirm', 'beforeToolExecute', 'answered true'],
    ])
    session.abandon()
  })

  it('reaches the host while the hook keeps working: the hook only finishes once the host has seen it', async () => {
    // The hook logs, then works until a file appears that only the host's log handler writes.
    const dir = await workdir()
    let finished = false
    const finishedWhenLogged: boolean[] = []
    const session = await open(['log-then-work'], {
      workdir: dir,
      capabilities: {
        log: (line) => {
          finishedWhenLogged.push(finished)
          if (line.message === 'working on c1') writeFileSync(join(dir, 'host-saw-the-log'), '')
        },
      },
    })
    const out = await session.call('beforeToolExecute', call).finally(() => {
      finished = true
    })
    expect(out.result.arguments).toEqual({ saw: true, polls: expect.any(Number) })
    expect(finishedWhenLogged).toEqual([false])
    session.abandon()
  })
})

// ------------------------------------------------------------------------------------------------
// file
// ------------------------------------------------------------------------------------------------

describe('ctx.file', () => {
  it('reads, writes, checks and lists inside the workdir', async () => {
    const dir = await workdir()
    const session = await open(['files'], { workdir: dir })
    const out = await session.call('beforeToolExecute', call)
    expect(out.diagnostics).toEqual([])
    expect(out.result.arguments).toEqual({
      read: 'the notes',
      readBack: 'written by c1',
      throughInnerLink: 'A',
      exists: true,
      existsDir: true,
      missing: false,
      listRoot: ['dangling', 'escape-dir', 'escape-file', 'inner', 'notes.txt', 'out', 'sub'],
      listSub: ['a.txt', 'b.txt'],
      dotted: 'the notes',
    })
    expect(await readFile(join(dir, 'out', 'new.txt'), 'utf8')).toBe('written by c1')
    session.abandon()
  })

  it('reports a missing file with its system code, the capability and the path', async () => {
    const session = await open(['probe'], { workdir: await workdir() })
    expect(await probe(session, 'file.read', 'missing.txt')).toEqual({
      ok: false,
      isError: true,
      code: 'ENOENT',
      message: "ctx.file.read('missing.txt') failed: no such file or directory",
    })
    expect(await probe(session, 'file.list', 'notes.txt')).toMatchObject({ ok: false, code: 'ENOTDIR' })
    session.abandon()
  })

  const refusals = FILE_REFUSALS

  it.each(refusals)('refuses %s(%j): a catchable error saying what and why', async (cap, args, why, by) => {
    const dir = await workdir()
    const files = workdirFiles(dir)
    const reached: string[] = []
    // The host's own handlers, counted: a sidecar refusal never reaches them.
    const counted: CapabilityHandlers['file'] = {
      read: (p, o) => (reached.push(p), files.read(p, o)),
      write: (p, t, o) => (reached.push(p), files.write(p, t, o)),
      exists: (p, o) => (reached.push(p), files.exists(p, o)),
      list: (p, o) => (reached.push(p), files.list(p, o)),
    }
    const session = await open(['probe'], { workdir: dir, capabilities: { file: counted } })
    expect(await probe(session, cap, ...args)).toEqual({
      ok: false,
      isError: true,
      code: 'denied',
      message: `ctx.${cap}('${String(args[0])}') refused: ${why}`,
    })
    expect(reached).toEqual(by === 'sidecar' ? [] : [args[0]])
    session.abandon()
  })

  it.each(refusals)('ends an uncaught %s(%j) refusal with a capability-denied diagnostic', async (cap, args, why) => {
    const dir = await workdir()
    const session = await open(['probe-uncaught'], { workdir: dir })
    const out = await session.call('beforeToolExecute', { ...call, arguments: { cap, args } })
    expect(out.result).toEqual({ allow: true, arguments: { cap, args } })
    expect(out.trace).toEqual([expect.objectContaining({ hook: 'probe-uncaught', outcome: 'failed' })])
    expect(out.diagnostics).toEqual([
      expect.objectContaining({
        hook: 'probe-uncaught',
        point: 'beforeToolExecute',
        kind: 'capability-denied',
        message: `hook 'probe-uncaught' beforeToolExecute: Error: ctx.${cap}('${String(args[0])}') refused: ${why}`,
      }),
    ])
    session.abandon()
  })

  it('writes nothing outside the workdir through any refused path', async () => {
    const dir = await workdir()
    const session = await open(['probe'], { workdir: dir })
    await probe(session, 'file.write', 'dangling', 'planted')
    await probe(session, 'file.write', 'escape-dir/planted.txt', 'planted')
    await probe(session, 'file.write', '../planted.txt', 'planted')
    await expect(stat(join(outside, 'created-through-link.txt'))).rejects.toMatchObject({ code: 'ENOENT' })
    await expect(stat(join(outside, 'planted.txt'))).rejects.toMatchObject({ code: 'ENOENT' })
    await expect(stat(join(dir, '..', 'planted.txt'))).rejects.toMatchObject({ code: 'ENOENT' })
    session.abandon()
  })

  it("with policy 'none', refuses every file capability in the sidecar", async () => {
    const session = await open(['probe'], { workdir: await workdir(), policy: { file: 'none' } })
    for (const [cap, args] of [
      ['file.read', ['notes.txt']],
      ['file.exists', ['notes.txt']],
      ['file.list', ['.']],
      ['file.write', ['new.txt', 'x']],
    ] as const) {
      expect(await probe(session, cap, ...args)).toEqual({
        ok: false,
        isError: true,
        code: 'denied',
        message: `ctx.${cap}('${args[0]}') refused: this session allows no file access`,
      })
    }
    session.abandon()
  })

  it("with policy 'read', reads and refuses to write", async () => {
    const dir = await workdir()
    const session = await open(['probe'], { workdir: dir, policy: { file: 'read' } })
    expect(await probe(session, 'file.read', 'notes.txt')).toEqual({ ok: true, value: 'the notes' })
    expect(await probe(session, 'file.exists', 'sub/a.txt')).toEqual({ ok: true, value: true })
    expect(await probe(session, 'file.list', 'sub')).toEqual({ ok: true, value: ['a.txt', 'b.txt'] })
    expect(await probe(session, 'file.write', 'notes.txt', 'overwritten')).toEqual({
      ok: false,
      isError: true,
      code: 'denied',
      message: "ctx.file.write('notes.txt') refused: this session allows reading files only",
    })
    expect(await readFile(join(dir, 'notes.txt'), 'utf8')).toBe('the notes')
    session.abandon()
  })

  it('refuses arguments too big to cross, and a file too big to send back, as limit', async () => {
    const dir = await workdir()
    await writeFile(join(dir, 'big.bin'), Buffer.alloc(5 * 1024 * 1024, 'a'))
    const session = await open(['probe'], { workdir: dir })
    const tooLong = await probe(session, 'file.write', 'long.txt', 'x'.repeat(MAX_TEXT_CHARS + 1))
    expect(tooLong).toMatchObject({ ok: false, code: 'limit', message: expect.stringMatching(/^ctx\.file\.write: /) })
    await expect(stat(join(dir, 'long.txt'))).rejects.toMatchObject({ code: 'ENOENT' })
    const tooBig = await probe(session, 'file.read', 'big.bin')
    expect(tooBig).toMatchObject({ ok: false, code: 'limit', message: expect.stringMatching(/^ctx\.file\.read\('big\.bin'\) failed: the file is 5242880 bytes/) })
    session.abandon()
  })

  it('refuses arguments of the wrong shape as invalid, naming the argument', async () => {
    const session = await open(['probe'], { workdir: await workdir() })
    expect(await probe(session, 'file.read', 42)).toMatchObject({
      ok: false,
      code: 'invalid',
      message: expect.stringMatching(/^ctx\.file\.read: invalid arguments\[0\]: /),
    })
    expect(await probe(session, 'http.fetch', 'http://127.0.0.1:1/', { method: 'GET /evil' })).toMatchObject({
      ok: false,
      code: 'invalid',
      message: expect.stringContaining('method must be an HTTP method name'),
    })
    session.abandon()
  })
})

// ------------------------------------------------------------------------------------------------
// http
// ------------------------------------------------------------------------------------------------

interface Seen {
  method: string
  url: string
  header: string | undefined
  body: string
}

interface Served {
  origin: string
  seen: Seen[]
  close(): Promise<void>
}

/** A local HTTP server on 127.0.0.1, port 0, that records what it is asked. */
async function serveHttp(name: string, respond?: (req: IncomingMessage, res: ServerResponse) => boolean): Promise<Served> {
  const seen: Seen[] = []
  const server = createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => (body += chunk))
    req.on('end', () => {
      const header = req.headers['x-hook']
      seen.push({ method: req.method ?? '', url: req.url ?? '', header: Array.isArray(header) ? header.join() : header, body })
      if (respond?.(req, res)) return
      res.writeHead(201, { 'content-type': 'text/plain', 'x-served-by': name })
      res.end(`${name} got ${req.method} ${req.url} ${body}`)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

describe('ctx.http.fetch', () => {
  let allowed: Served
  let other: Served
  beforeAll(async () => {
    other = await serveHttp('other')
    allowed = await serveHttp('allowed', (req, res) => {
      if (req.url !== '/redirect') return false
      res.writeHead(302, { location: `${other.origin}/after-redirect` })
      res.end()
      return true
    })
  })
  afterAll(async () => {
    await allowed?.close()
    await other?.close()
  })

  async function fetchThrough(session: HostSession, url: string, init?: unknown): Promise<Record<string, unknown>> {
    const out = await session.call('beforeToolExecute', { id: 'f', name: 'fetch', arguments: init === undefined ? { url } : { url, init } })
    expect(out.diagnostics).toEqual([])
    return out.result.arguments
  }

  it('reaches an allowed origin with the default host handler', async () => {
    // A trailing slash in the allowlist is normalised on both sides.
    const session = await open(['fetcher'], { policy: { httpOrigins: [`${allowed.origin}/`] } })
    const before = allowed.seen.length
    const got = await fetchThrough(session, `${allowed.origin}/echo?q=1`, { method: 'POST', headers: { 'x-hook': 'fetcher' }, body: 'hello' })
    expect(got).toEqual({ ok: true, status: 201, body: 'allowed got POST /echo?q=1 hello', servedBy: 'allowed' })
    expect(allowed.seen.slice(before)).toEqual([{ method: 'POST', url: '/echo?q=1', header: 'fetcher', body: 'hello' }])
    session.abandon()
  })

  it('refuses an origin that is not allowed in the sidecar: the host handler is never called', async () => {
    const handled: string[] = []
    const session = await open(['fetcher'], {
      policy: { httpOrigins: [allowed.origin] },
      capabilities: {
        fetch: async (url) => {
          handled.push(url)
          return { status: 200, headers: {}, body: 'should not happen' }
        },
      },
    })
    const before = other.seen.length
    expect(await fetchThrough(session, `${other.origin}/secret`)).toEqual({
      ok: false,
      code: 'denied',
      message: `ctx.http.fetch('${other.origin}/secret') refused: origin ${other.origin} is not allowed (allowed origins: ${allowed.origin})`,
    })
    expect(await fetchThrough(session, 'file:///etc/passwd')).toEqual({
      ok: false,
      code: 'denied',
      message: "ctx.http.fetch('file:///etc/passwd') refused: only absolute http:// and https:// URLs can be fetched",
    })
    expect(handled).toEqual([])
    expect(other.seen.length).toBe(before)
    session.abandon()
  })

  it('refuses every origin by default', async () => {
    const session = await open(['fetcher'])
    expect(await fetchThrough(session, `${allowed.origin}/`)).toMatchObject({
      ok: false,
      code: 'denied',
      message: expect.stringContaining('(allowed origins: none)'),
    })
    session.abandon()
  })

  it('does not follow a redirect to another origin', async () => {
    const session = await open(['fetcher'], { policy: { httpOrigins: [allowed.origin] } })
    const before = other.seen.length
    expect(await fetchThrough(session, `${allowed.origin}/redirect`)).toEqual({
      ok: true,
      status: 302,
      body: '',
      location: `${other.origin}/after-redirect`,
    })
    expect(other.seen.length).toBe(before)
    session.abandon()
  })
})

// ------------------------------------------------------------------------------------------------
// env
// ------------------------------------------------------------------------------------------------

describe('ctx.env', () => {
  it('holds only the names the policy allows, of those the host offers', async () => {
    const session = await open(['env-dump'], {
      env: { HOOKD_T_VISIBLE: 'shown', HOOKD_T_SECRET: 'hidden', HOOKD_T_OTHER: 'hidden too' },
      policy: { env: ['HOOKD_T_VISIBLE', 'HOOKD_T_ABSENT'] },
    })
    expect((await session.call('beforeToolExecute', call)).result.arguments).toEqual({
      env: { HOOKD_T_VISIBLE: 'shown' },
      names: ['HOOKD_T_VISIBLE'],
      frozen: true,
    })
    session.abandon()
  })

  it("takes the values from the host's process.env by default", async () => {
    process.env.HOOKD_T_FROM_PROCESS = 'from process'
    process.env.HOOKD_T_NOT_ALLOWED = 'nope'
    try {
      const session = await open(['env-dump'], { policy: { env: ['HOOKD_T_FROM_PROCESS'] } })
      expect((await session.call('beforeToolExecute', call)).result.arguments).toMatchObject({ env: { HOOKD_T_FROM_PROCESS: 'from process' } })
      session.abandon()
    } finally {
      delete process.env.HOOKD_T_FROM_PROCESS
      delete process.env.HOOKD_T_NOT_ALLOWED
    }
  })
})

// ------------------------------------------------------------------------------------------------
// The seed's guard, and async hooks
// ------------------------------------------------------------------------------------------------

describe("the seed's guard example, unchanged, with an interactive confirm", () => {
  const rm = { id: 'c9', name: 'shell', arguments: { command: 'rm -rf /tmp/x' } }

  it.each(['guard', 'seed-guard'])('%s: the human says yes and the call is allowed', async (name) => {
    const asked: string[] = []
    const session = await open([name], {
      interactive: true,
      capabilities: { confirm: (m, o) => (asked.push(`${o.hook}: ${m.title}: ${m.body}`), true) },
    })
    expect((await session.call('beforeToolExecute', rm)).result).toEqual({ allow: true, arguments: rm.arguments })
    expect(asked).toEqual([`${name}: Dangerous command: rm -rf /tmp/x`])
    session.abandon()
  })

  it.each(['guard', 'seed-guard'])('%s: the human says no and the call is refused by the user', async (name) => {
    const session = await open([name], { interactive: true, capabilities: { confirm: () => false } })
    const out = await session.call('beforeToolExecute', rm)
    expect(out.result).toEqual({ allow: false, reason: 'refused by the user', refusedBy: name, arguments: rm.arguments })
    expect(out.diagnostics).toEqual([])
    session.abandon()
  })
})

describe('async hooks', () => {
  it('await capability calls, including after an await', async () => {
    const logs: string[] = []
    const session = await open(['async-caps'], {
      workdir: await workdir(),
      interactive: true,
      capabilities: { confirm: (m) => m.title === 'after an await', log: (l) => logs.push(l.message) },
    })
    const out = await session.call('beforeToolExecute', call)
    expect(out.diagnostics).toEqual([])
    expect(out.result.arguments).toEqual({ notes: 'the notes', ok: true, exists: true })
    expect(logs).toEqual(['async done'])
    session.abandon()
  })

  it('call capabilities from a returned promise', async () => {
    const session = await open(['promise-caps'], { interactive: true, capabilities: { confirm: () => true } })
    expect((await session.call('beforeToolExecute', call)).result.arguments).toEqual({ id: 'c1', ok: true })
    session.abandon()
  })

  it('end with capability-denied when a refusal rejects their promise', async () => {
    const session = await open(['async-denied'], { workdir: await workdir() })
    const out = await session.call('beforeToolExecute', call)
    expect(out.diagnostics).toEqual([
      expect.objectContaining({
        kind: 'capability-denied',
        message: "hook 'async-denied' beforeToolExecute: Error: ctx.file.read('../escape.txt') refused: the path leads outside the workdir",
      }),
    ])
    session.abandon()
  })
})
