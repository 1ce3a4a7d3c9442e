/**
 * Every capability record (src/protocol/capabilities.ts) through the real sandbox: the prelude's ctx
 * tree (src/sidecar/worker/isolate/prelude.js) walked against the records, and one hook making every
 * host capability's calls through each of the three dispatches, which must answer alike: the host
 * library on a real gRPC socket, the agents' HTTP front door (Claude Code's PreToolUse, a read-write
 * profile), and `hookd test` (a case file, run in-process as users run it). A record without its ctx
 * function, or a dispatch that serves a capability differently (or not at all), fails here.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { type Server, createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ReceivedCall } from '../../../src/host/capabilities.js'
import { CAPABILITY_NAMES, HOST_CAPABILITY_NAMES, type HostCapabilityName } from '../../../src/protocol/capabilities.js'
import { Sidecar } from '../../../src/sidecar/sidecar.js'
import { runInProcess } from '../../support/processes.js'
import { hook, type Running, sessionOptions, startSidecar } from '../../support/sidecar.js'

const TOKEN = 'hkd_capability-dispatch-token-0123456789abcdefghijkl'

/** Lists the dotted path of every function in ctx. */
const WALK = hook({
  beforeToolExecute: `(ctx) => {
    const paths = []
    const visit = (o, prefix) => {
      for (const k of Object.keys(o)) {
        const v = o[k]
        if (typeof v === 'function') paths.push(prefix + k)
        else if (v !== null && typeof v === 'object') visit(v, prefix + k + '.')
      }
    }
    visit(ctx, '')
    return { allow: false, reason: JSON.stringify(paths.sort()) }
  }`,
})

/** Makes the calls named in the command ([path, args] pairs) and refuses with what each answered. */
const PROBE = hook({
  beforeToolExecute: `(ctx, call) => {
    const answers = []
    for (const [path, args] of JSON.parse(call.arguments.command)) {
      const fn = path.split('.').reduce((o, k) => o[k], ctx)
      try {
        const v = fn(...args)
        // A response's headers depend on the server (and a test case's are its own): its status, type and body.
        answers.push(v !== null && typeof v === 'object' && 'status' in v ? { status: v.status, type: v.headers['content-type'], body: v.body } : v === undefined ? null : v)
      } catch (e) {
        answers.push({ code: e.code, message: e.message })
      }
    }
    return { allow: false, reason: JSON.stringify(answers) }
  }`,
})

let origin = ''
/** Each host capability's calls, in order, and what each must answer, the same through every dispatch. */
function calls(): Array<[HostCapabilityName, unknown[], unknown]> {
  return [
    ['confirm', [{ title: 'Go on?', body: 'the body' }], true],
    ['notify', [{ title: 'hello', body: 'there' }], null],
    ['file.write', ['out/log.txt', 'one\n'], null],
    ['file.append', ['out/log.txt', 'two\n'], null],
    ['file.append', ['new/dir/made.txt', 'made'], null],
    ['file.read', ['out/log.txt'], 'one\ntwo\n'],
    ['file.read', ['missing.txt'], { code: 'ENOENT', message: "ctx.file.read('missing.txt') failed: no such file or directory" }],
    ['file.read', ['../outside.txt'], { code: 'denied', message: "ctx.file.read('../outside.txt') refused: the path leads outside the workdir" }],
    ['file.exists', ['notes.txt'], true],
    ['file.exists', ['nope.txt'], false],
    ['file.list', [], ['new', 'notes.txt', 'out']],
    ['file.list', ['new/dir'], ['made.txt']],
    ['http.fetch', [`${origin}/weather`], { status: 200, type: 'application/json', body: '{"sky":"clear"}' }],
    // Options the hook gave, even none, reach the host as given (and hookd test records them so, as capture does).
    ['http.fetch', [`${origin}/weather`, {}], { status: 200, type: 'application/json', body: '{"sky":"clear"}' }],
    ['http.fetch', ['http://127.0.0.1:1/x'], { code: 'denied', message: `ctx.http.fetch('http://127.0.0.1:1/x') refused: origin http://127.0.0.1:1 is not allowed (allowed origins: ${origin})` }],
  ]
}
const command = (): string => JSON.stringify(calls().map(([name, args]) => [name, args]))
const expected = (): unknown[] => calls().map(([, , answer]) => answer)
/** The calls that reach the host: all but the two the sidecar's policy refuses. */
const reaching = (): Array<{ capability: string; args: unknown[] }> =>
  calls()
    .filter(([, , answer]) => (answer as { code?: string } | null)?.code !== 'denied')
    .map(([capability, args]) => ({ capability, args: capability === 'file.list' && args.length === 0 ? ['.'] : args }))

let running: Running
let server: Server
let hooks = ''
let scratch = ''
const temps: string[] = []

beforeAll(async () => {
  server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end('{"sky":"clear"}')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  origin = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  scratch = await mkdtemp(join(tmpdir(), 'hookd-capability-dispatch-'))
  hooks = join(scratch, 'hooks')
  for (const [name, source] of [['walk', WALK], ['probe', PROBE]] as const) {
    await mkdir(join(hooks, name), { recursive: true })
    await writeFile(join(hooks, name, 'index.js'), source)
  }
  await writeFile(join(hooks, 'all.profile.json'), JSON.stringify({ hooks: ['probe'], policy: { file: 'read-write', httpOrigins: [origin] } }))
  running = await startSidecar({ hooks, watch: false })
})

afterAll(async () => {
  await running?.stop()
  await new Promise((resolve) => server?.close(resolve))
  await Promise.all([scratch, ...temps].filter(Boolean).map((dir) => rm(dir, { recursive: true, force: true })))
})

/** A fresh workdir holding notes.txt, as each dispatch starts from. */
async function workdir(): Promise<string> {
  const dir = await mkdtemp(join(scratch, 'work-'))
  await writeFile(join(dir, 'notes.txt'), 'the notes\n')
  return dir
}

const shell = (text: string): { id: string; name: string; arguments: { command: string } } => ({ id: 'c1', name: 'shell', arguments: { command: text } })

/** Runs `hookName` once through the host library with these handlers; the refusal's reason, parsed. */
async function throughHost(hookName: string, dir: string, seen: ReceivedCall[] = []): Promise<unknown> {
  const session = await running.client.openSession(
    sessionOptions([hookName], {
      workdir: dir,
      interactive: true,
      policy: { file: 'read-write', httpOrigins: [origin] },
      capabilities: { confirm: () => true, onCall: (call) => void seen.push(call) },
    }),
  )
  try {
    const { result } = await session.call('beforeToolExecute', shell(command()))
    return JSON.parse(String((result as { reason?: unknown }).reason))
  } finally {
    await session.close()
  }
}

describe('the prelude builds ctx from the records', () => {
  it('has a function at every record\'s path and no other but ctx.log', async () => {
    expect(await throughHost('walk', await workdir())).toEqual(['log', ...CAPABILITY_NAMES].sort())
  })

  it('each ctx function sends the call its record names, and every host capability is exercised here', async () => {
    const seen: ReceivedCall[] = []
    await throughHost('probe', await workdir(), seen)
    expect(seen.map((c) => ({ capability: c.capability, args: c.args }))).toEqual(reaching())
    expect(new Set(calls().map(([name]) => name))).toEqual(new Set(HOST_CAPABILITY_NAMES))
  })
})

describe('every host capability answers alike through each dispatch', () => {
  it('the host library (gRPC, its default handlers)', async () => {
    const dir = await workdir()
    expect(await throughHost('probe', dir)).toEqual(expected())
    expect(await readFile(join(dir, 'out', 'log.txt'), 'utf8')).toBe('one\ntwo\n')
  })

  it("the front door (Claude Code's PreToolUse, a read-write profile): ctx.file.append included", async () => {
    const sidecar = await Sidecar.create({ hooks, workers: 1, watch: false })
    const reports: string[] = []
    try {
      const url = await sidecar.listenHttp('127.0.0.1', 0, { token: TOKEN, report: (line) => reports.push(line) })
      const post = async (cmd: string): Promise<Record<string, unknown>> => {
        const response = await fetch(`${url}/claude-code/profile/all`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
          body: JSON.stringify({
            session_id: `dispatch-${process.pid}-${Math.random()}`,
            cwd: dir,
            hook_event_name: 'PreToolUse',
            permission_mode: 'default',
            tool_name: 'Bash',
            tool_input: { command: cmd, description: 'probe' },
            tool_use_id: 'toolu_1',
          }),
        })
        expect(response.status).toBe(200)
        return ((await response.json()) as { hookSpecificOutput?: Record<string, unknown> }).hookSpecificOutput ?? {}
      }
      const dir = await workdir()
      const out = await post(command())
      expect(out.permissionDecision).toBe('deny')
      expect(JSON.parse(String(out.permissionDecisionReason))).toEqual(expected())
      expect(await readFile(join(dir, 'out', 'log.txt'), 'utf8')).toBe('one\ntwo\n')
      expect(await readFile(join(dir, 'new', 'dir', 'made.txt'), 'utf8')).toBe('made')
      expect(reports.some((line) => line.endsWith('[probe] notify: hello: there'))).toBe(true)
      // The same front door answers an ordinary call afterwards.
      expect((await post(JSON.stringify([['file.read', ['notes.txt']]]))).permissionDecisionReason).toBe(JSON.stringify(['the notes\n']))
    } finally {
      await sidecar.stop()
    }
  })

  it("hookd test (a case file): the same answers, and every call recorded as the host got it", async () => {
    const root = await mkdtemp(join(tmpdir(), 'hookd-capability-case-'))
    temps.push(root)
    await mkdir(join(root, 'hooks', 'probe', 'tests'), { recursive: true })
    await writeFile(join(root, 'hooks', 'probe', 'index.js'), PROBE)
    const testCase = {
      name: 'every capability',
      point: 'beforeToolExecute',
      payload: shell(command()),
      ctx: {
        files: { 'notes.txt': 'the notes\n' },
        confirm: [true],
        http: { [`GET ${origin}/weather`]: { status: 200, headers: { 'Content-Type': 'application/json' }, body: '{"sky":"clear"}' } },
      },
      expect: {
        result: { allow: false, reason: JSON.stringify(expected()) },
        match: 'partial',
        calls: reaching(),
        files: { 'out/log.txt': 'one\ntwo\n', 'new/dir/made.txt': 'made' },
      },
    }
    await writeFile(join(root, 'hooks', 'probe', 'tests', 'every.json'), JSON.stringify(testCase, null, 2))
    const ran = await runInProcess(['test', 'hooks'], { cwd: root })
    expect(ran.stdout.replace(/ \(\d+ ms\)/g, '')).toBe('PASS hooks/probe/tests/every.json: every capability\n1 case: 1 passed, 0 failed\n')
    expect(ran.code).toBe(0)
  })
})
