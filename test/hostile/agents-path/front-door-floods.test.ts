/**
 * The front door under floods, against a real sidecar on real sockets: one tenant (or a stranger)
 * must not be able to grow the shared sidecar until the kernel kills it, take the connections the
 * agent needs, fill the operator's log, or forge lines in it; a web page must not read it through a
 * rebound DNS name. Each test ends with the same door answering an ordinary call.
 *
 * The hook `held` waits on a local origin (ctx.http.fetch) until the test lets it go, so "a call
 * waiting on a slow hook" costs no CPU here.
 */
import { spawn } from 'node:child_process'
import { rm } from 'node:fs/promises'
import { type IncomingMessage, type Server, type ServerResponse, createServer, request } from 'node:http'
import { type AddressInfo, type Socket, connect } from 'node:net'
import { networkInterfaces, tmpdir } from 'node:os'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MetricsListener } from '../../../src/sidecar/observability/metrics-listener.js'
import { Readiness } from '../../../src/sidecar/observability/readiness.js'
import { Sidecar } from '../../../src/sidecar/sidecar.js'
import { hook, writeTree } from '../../support/sidecar.js'

const TOKEN = 'hkd_front-door-floods-token-0123456789abcdefghijkl'
const MiB = 1024 * 1024

/** The origin `held` fetches: each request waits until `release()`. */
let origin: Server
let originUrl = ''
const waiting: Array<{ path: string; res: ServerResponse }> = []
function release(): void {
  for (const { res } of waiting.splice(0)) res.end('released')
}

let hooks = ''
let sidecar: Sidecar
let url = ''
let port = 0
const reports: string[] = []

beforeAll(async () => {
  origin = createServer((req: IncomingMessage, res: ServerResponse) => void waiting.push({ path: req.url ?? '', res }))
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve))
  originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`
  hooks = await writeTree({
    'held/index.js': hook({
      beforeToolExecute: `function (ctx, call) { if (String(call.arguments.command).startsWith('hold')) ctx.http.fetch(ctx.config.url + '/' + call.id) }`,
      afterToolExecute: `function (ctx, event) { if (event.result.text.startsWith('hold')) ctx.http.fetch(ctx.config.url + '/' + event.call.id) }`,
    }),
    'held/hook.json': JSON.stringify({ config: { url: originUrl } }),
    'held.profile.json': JSON.stringify({ hooks: ['held'], policy: { httpOrigins: [originUrl] } }),
    'talk/index.js': hook({ beforeToolExecute: `function (ctx) { ctx.log('said') }` }),
    'guard/index.js': hook({ beforeToolExecute: `function (ctx, call) { if (String(call.arguments.command).includes('rm -rf')) return { allow: false, reason: 'no rm -rf' } }` }),
  })
  sidecar = await Sidecar.create({ hooks, workers: 1, watch: false })
  url = await sidecar.listenHttp('127.0.0.1', 0, {
    token: TOKEN,
    report: (line) => reports.push(line),
    budget: { tenantBytes: 4 * MiB, totalBytes: 64 * MiB },
    runs: { maxCalls: 2, maxQueued: 1 },
    // Long enough that the idle-connection attack below is met by eviction, not by this timeout.
    connections: { preAuthMs: 30_000 },
    errorLines: { burst: 5, intervalMs: 1000 },
  })
  port = Number(new URL(url).port)
}, 60_000)

afterAll(async () => {
  release()
  await sidecar?.stop()
  await new Promise<void>((resolve) => origin?.close(() => resolve()))
  if (hooks) await rm(hooks, { recursive: true, force: true })
})

let sessions = 0
function session(): string {
  sessions += 1
  return `floods-${process.pid}-${sessions}`
}

function pre(sessionId: string, command: string, id = `toolu_${sessions}`): Record<string, unknown> {
  return { session_id: sessionId, cwd: tmpdir(), hook_event_name: 'PreToolUse', permission_mode: 'default', tool_name: 'Bash', tool_input: { command, description: 'd' }, tool_use_id: id }
}

interface Answer {
  status: number
  headers: IncomingMessage['headers']
  json: Record<string, unknown>
}

/** One request on a connection of its own. */
function post(path: string, body: unknown, options: { token?: string | null; headers?: Record<string, string>; method?: string } = {}): Promise<Answer> {
  const token = options.token === undefined ? TOKEN : options.token
  const text = typeof body === 'string' ? body : JSON.stringify(body)
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      {
        method: options.method ?? 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...options.headers },
      },
      (res) => {
        let data = ''
        res.setEncoding('utf8')
        res.on('data', (c: string) => (data += c))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, json: data ? (JSON.parse(data) as Record<string, unknown>) : {} }))
      },
    )
    req.on('error', reject)
    req.end(options.method === 'GET' ? undefined : text)
  })
}

/** An ordinary call the same door must answer after each attack. */
async function ordinary(): Promise<void> {
  const refused = await post('/claude-code/guard', pre(session(), 'rm -rf victim'))
  expect(refused.json).toEqual({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'no rm -rf' } })
  expect((await post('/claude-code/guard', pre(session(), 'ls'))).json).toEqual({})
}

async function until(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** A raw connection to the door, and what it has received so far. */
function raw(to = port, host = '127.0.0.1'): Promise<{ socket: Socket; received: () => string; closed: () => boolean }> {
  return new Promise((resolve, reject) => {
    let data = ''
    let closed = false
    const socket = connect(to, host, () => resolve({ socket, received: () => data, closed: () => closed }))
    socket.setEncoding('utf8')
    socket.on('data', (c: string) => (data += c))
    socket.on('close', () => (closed = true))
    socket.on('error', (err) => (closed ? undefined : reject(err)))
  })
}

describe('bytes a tenant can make the sidecar hold', () => {
  it('events waiting on a slow hook count against the tenant’s byte budget; past it the next is refused with 429, saying which budget', async () => {
    const id = session()
    const padding = 'x'.repeat(1.5 * MiB)
    const first = post('/claude-code/profile/held', pre(id, `hold ${padding}`, 'toolu_b1'))
    const second = post('/claude-code/profile/held', pre(id, `hold ${padding}`, 'toolu_b2'))
    await until('both calls to reach the slow hook', () => waiting.length === 2)
    const third = await post('/claude-code/profile/held', pre(id, `hold ${padding}`, 'toolu_b3'))
    expect(third.status).toBe(429)
    expect(third.headers['retry-after']).toBe('1')
    expect(third.json.error).toMatch(
      /^over the byte budget per tenant: the events of this sidecar's agents waiting on their hooks hold 3\.0 MiB, and this one's 1\.5 MiB would pass the budget of 4\.0 MiB; retry when calls have finished/,
    )
    expect(waiting.length).toBe(2)
    release()
    expect((await first).json).toEqual({})
    expect((await second).json).toEqual({})
    // The budget is free again once the answers are sent.
    expect((await post('/claude-code/profile/held', pre(id, `ls ${padding}`))).status).toBe(200)
    await ordinary()
  })

  it('a request whose declared length would pass the budget is refused before its body is read', async () => {
    const id = session()
    const held = post('/claude-code/profile/held', pre(id, `hold ${'x'.repeat(3 * MiB)}`, 'toolu_e1'))
    await until('the call to reach the slow hook', () => waiting.length === 1)
    const conn = await raw()
    // 2 MiB declared, not one byte of it sent: the answer comes all the same, and the door closes.
    conn.socket.write(`POST /claude-code/profile/held HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${2 * MiB}\r\n\r\n`)
    await until('the answer without the body', () => conn.received().includes('\r\n\r\n{'), 10_000)
    expect(conn.received()).toMatch(/^HTTP\/1\.1 429 /)
    expect(conn.received()).toMatch(/\r\nconnection: close\r\n/i)
    expect(conn.received()).toContain('over the byte budget per tenant')
    conn.socket.destroy()
    release()
    expect((await held).json).toEqual({})
    await ordinary()
  })
})

describe('calls whose client went away', () => {
  it('a disconnect cancels the point call: the hook is cancelled, and its bytes are free at once', async () => {
    const id = session()
    const conn = await raw()
    const event = JSON.stringify(pre(id, `hold ${'x'.repeat(3 * MiB)}`, 'toolu_gone'))
    conn.socket.write(`POST /claude-code/profile/held HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(event)}\r\n\r\n${event}`)
    await until('the call to reach the slow hook', () => waiting.some((w) => w.path === '/toolu_gone'))
    conn.socket.destroy()
    // The chain stops: the hook's invocation ends as cancelled, not at a limit, while the origin still holds its fetch.
    await until('the hook to be cancelled', () => reports.some((l) => l.includes(`session ${id}: cancelled diagnostic from hook 'held'`)))
    expect(waiting.length).toBe(1)
    // Its 3 MiB no longer count: another 3 MiB event is taken while the first fetch is still held.
    const next = await post('/claude-code/profile/held', pre(id, `ls ${'x'.repeat(3 * MiB)}`))
    expect(next.status).toBe(200)
    release()
    await ordinary()
  })
})

describe("a tenant's calls at once", () => {
  it('past the concurrency quota calls wait in a bounded queue; past the queue a gate is refused, never allowed', async () => {
    const id = session()
    const calls = [1, 2, 3].map((n) => post('/claude-code/profile/held', pre(id, 'hold', `toolu_q${n}`)))
    await until('two calls to reach the slow hook', () => waiting.length >= 2)
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(waiting.length).toBe(2)
    const fourth = await post('/claude-code/profile/held', pre(id, 'hold', 'toolu_q4'))
    expect(fourth.status).toBe(200)
    expect(fourth.json).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason:
          "hookd could not check this call, so it is refused: too many calls at once for this sidecar's agents: 2 running and 1 waiting for one of them to finish (the front door's concurrency quota); retry when calls have finished",
      },
    })
    // Not a gate: the same refusal is a 429.
    const after = await post('/claude-code/profile/held', { ...pre(id, 'hold'), hook_event_name: 'PostToolUse', tool_response: { stdout: 'hold', stderr: '', interrupted: false, isImage: false, noOutputExpected: false } })
    expect(after.status).toBe(429)
    expect(after.json.error).toContain('(the front door\'s concurrency quota)')
    expect(waiting.length).toBe(2)
    release()
    // The queued third call runs once a slot is free.
    await until('the queued call to reach the slow hook', () => waiting.length === 1)
    release()
    for (const call of await Promise.all(calls)) expect(call.json).toEqual({})
    await ordinary()
  })
})

/**
 * `count` idle connections to the door held by a process running as `uid`. `ready` resolves once all
 * are connected; `open()` asks how many the door has left open; `end()` ends the process.
 */
function connectionsOf(uid: number, count: number): { ready: Promise<void>; open(): Promise<number>; end(): void } {
  const script = `
    const net = require('node:net')
    let connected = 0
    const socks = Array.from({ length: ${count} }, () => {
      const s = net.connect(${port}, '127.0.0.1', () => { if (++connected === ${count}) console.log('ready') })
      s.resume()
      s.on('error', () => {})
      s.on('close', () => (s.gone = true))
      return s
    })
    require('node:readline').createInterface({ input: process.stdin }).on('line', (l) => (l === 'end' ? process.exit(0) : console.log(socks.filter((s) => !s.gone).length)))`
  const child = spawn('setpriv', [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', process.execPath, '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] })
  const lines: string[] = []
  let partial = ''
  let wake = (): void => {}
  child.stdout.on('data', (c: Buffer) => {
    const parts = (partial + c.toString()).split('\n')
    partial = parts.pop() ?? ''
    lines.push(...parts)
    wake()
  })
  const next = (): Promise<string> =>
    new Promise((resolve, reject) => {
      const onExit = (code: number | null): void => reject(new Error(`the process as uid ${uid} exited (${code})`))
      child.once('exit', onExit)
      wake = () => {
        const line = lines.shift()
        if (line === undefined) return
        child.removeListener('exit', onExit)
        resolve(line)
      }
      wake()
    })
  return {
    ready: next().then((l) => expect(l).toBe('ready')),
    open: async () => {
      child.stdin.write('count\n')
      return Number(await next())
    },
    end: () => void child.stdin.write('end\n'),
  }
}

describe('connections', () => {
  it('512 idle connections without a token do not take the door: the agent’s authorized call gets its answer', async () => {
    const idle = await Promise.all(Array.from({ length: 512 }, () => raw()))
    const res = await post('/claude-code/guard', pre(session(), 'rm -rf victim'))
    expect(res.json.hookSpecificOutput).toMatchObject({ permissionDecision: 'deny', permissionDecisionReason: 'no rm -rf' })
    // One user holds at most 128 connections: the oldest of the rest were closed to make room (the
    // agent's own, the newest, counts in that user's 128 while it is open).
    await until('the connections past the cap to close', () => idle.filter((c) => c.closed()).length >= 384)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(idle.filter((c) => c.closed()).length).toBeLessThanOrEqual(385)
    expect(idle.slice(-127).every((c) => !c.closed())).toBe(true)
    for (const c of idle) c.socket.destroy()
    await ordinary()
  }, 60_000)

  it("when four users hold the door's 512 connections, the agent's call closes the oldest one that never authenticated, and only that one", async () => {
    const users = [65531, 65532, 65533, 65534].map((uid) => connectionsOf(uid, 128))
    await Promise.all(users.map((u) => u.ready))
    // The door has taken them all in before the agent comes.
    await new Promise((resolve) => setTimeout(resolve, 300))
    const res = await post('/claude-code/guard', pre(session(), 'rm -rf victim'))
    expect(res.json.hookSpecificOutput).toMatchObject({ permissionDecision: 'deny', permissionDecisionReason: 'no rm -rf' })
    // Counted once the door's closes have reached them.
    await new Promise((resolve) => setTimeout(resolve, 300))
    const open = await Promise.all(users.map((u) => u.open()))
    for (const u of users) u.end()
    expect(open.reduce((a, b) => a + b, 0)).toBe(511)
    await ordinary()
  }, 60_000)

  it("another user's connections past the per-user cap are closed; the agent's user still gets answers", async () => {
    const nobody = connectionsOf(65534, 200)
    await nobody.ready
    let open = 200
    const end = Date.now() + 20_000
    while (open > 128 && Date.now() < end) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      open = await nobody.open()
    }
    await ordinary()
    // Still exactly the cap: the door closed what was past it, and nothing more.
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect([open, await nobody.open()]).toEqual([128, 128])
    nobody.end()
  }, 30_000)
})

describe('connections that do not authenticate', () => {
  let strict: Sidecar
  let strictPort = 0

  beforeAll(async () => {
    strict = await Sidecar.create({ hooks, workers: 1, watch: false })
    strictPort = Number(new URL(await strict.listenHttp('127.0.0.1', 0, { token: TOKEN, report: () => {}, connections: { preAuthMs: 500 } })).port)
  }, 60_000)

  afterAll(async () => {
    await strict?.stop()
  })

  it('are closed soon: an idle one, and one that sent only requests without the token; one that authenticated stays', async () => {
    const idle = await raw(strictPort)
    const refused = await raw(strictPort)
    refused.socket.write(`GET /claude-code/guard HTTP/1.1\r\nHost: 127.0.0.1:${strictPort}\r\n\r\n`)
    const agent = await raw(strictPort)
    agent.socket.write(`GET /claude-code/guard HTTP/1.1\r\nHost: 127.0.0.1:${strictPort}\r\nAuthorization: Bearer ${TOKEN}\r\n\r\n`)
    await until('the unauthenticated connections to close', () => idle.closed() && refused.closed(), 10_000)
    expect(refused.received()).toMatch(/^HTTP\/1\.1 401 /)
    expect(agent.received()).toMatch(/^HTTP\/1\.1 200 /)
    // Three times the pre-authentication time, and well inside the keep-alive time (5 s).
    await new Promise((resolve) => setTimeout(resolve, 1500))
    expect(agent.closed()).toBe(false)
    agent.socket.destroy()
  })
})

describe("the operator's log under a flood", () => {
  it('5,000 requests without a token write a burst of lines and then a count, not 5,000 lines; another kind is still shown', async () => {
    const before = reports.length
    // The door closes a connection that sent only requests without the token once it has been open
    // for its pre-authentication time (3 s): on a busy machine a client's 100 requests can outlast it,
    // and the request in flight then meets a reset. It is sent again on a new connection, as an agent
    // would; each of the 5,000 is answered 401 once.
    const unauthorized = async (): Promise<number> => {
      for (let attempt = 0; ; attempt++) {
        try {
          const res = await fetch(`${url}/claude-code/guard`, { method: 'POST', body: '{}' })
          await res.arrayBuffer()
          return res.status
        } catch (err) {
          const code = ((err as Error).cause as NodeJS.ErrnoException | undefined)?.code
          if (code !== 'ECONNRESET' || attempt >= 5) throw err
        }
      }
    }
    const flood = async (): Promise<void> => {
      for (let i = 0; i < 100; i++) expect(await unauthorized()).toBe(401)
    }
    await Promise.all(Array.from({ length: 50 }, flood))
    const unauthenticated = (): string[] => reports.slice(before).filter((l) => l.startsWith('http: POST /claude-code/guard: no authorization header was sent'))
    expect(unauthenticated().length).toBeGreaterThanOrEqual(5)
    expect(unauthenticated().length).toBeLessThan(40)
    // What was not shown is counted, once per interval: every one of the 5,000 is in a line or a count.
    const counted = (): number =>
      reports
        .slice(before)
        .map((l) => /^http: (\d+) more like this \(401\) were not shown in the last 1 s$/.exec(l)?.[1])
        .filter((n): n is string => n !== undefined)
        .reduce((sum, n) => sum + Number(n), 0)
    await until('the count of lines not shown', () => unauthenticated().length + counted() === 5000, 5000)
    expect(counted()).toBeGreaterThan(4000)
    // The first of another kind is not lost in the flood.
    const notFound = await post('/nowhere', {})
    expect(notFound.status).toBe(404)
    expect(reports).toContain(`http: POST /nowhere: ${String(notFound.json.error)}`)
    await ordinary()
  }, 60_000)
})

describe('event text in log lines', () => {
  it('newlines and escapes in an event’s session_id and cwd stay inside one escaped line', async () => {
    const before = reports.length
    const forged = 'x\nhookd: listening on 127.0.0.1:1\u001b[2J\u009b31m'
    expect((await post('/claude-code/talk', pre(forged, 'ls'))).json).toEqual({})
    const res = await post('/claude-code/guard', { ...pre(session(), 'ls'), cwd: `/nowhere\nhookd: http on http://evil/\u001b]0;t\u0007` })
    expect(res.json.hookSpecificOutput).toMatchObject({ permissionDecision: 'deny' })
    const mine = reports.slice(before)
    for (const line of mine) expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/)
    expect(mine).toContain('claude-code session x\\nhookd: listening on 127.0.0.1:1\\u001b[2J\\u009b31m: [talk] said')
    expect(mine.some((l) => l.includes("the event's cwd '/nowhere\\nhookd: http on http://evil/\\u001b]0;t\\u0007' cannot be the hooks' workdir"))).toBe(true)
    await ordinary()
  })
})

describe('the Host a browser sends', () => {
  it('a request to a name that is not loopback is refused with 421 before anything else, even /healthz', async () => {
    for (const path of ['/healthz', '/claude-code/guard']) {
      const res = await post(path, pre(session(), 'ls'), { headers: { host: `evil.example:${port}` }, method: path === '/healthz' ? 'GET' : 'POST' })
      expect(res.status).toBe(421)
      expect(res.json.error).toBe(
        `the request's Host 'evil.example:${port}' names neither a loopback address nor this listener's own (127.0.0.1:${port}); hookd answers only requests addressed to it, so that a web page cannot reach it through a DNS name of its own: address it as http://127.0.0.1:${port}/`,
      )
    }
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, `hookd.localhost:${port}`]) {
      expect((await post('/healthz', undefined, { headers: { host }, method: 'GET' })).status).toBe(200)
    }
    // The right name on another port is not this listener.
    expect((await post('/healthz', undefined, { headers: { host: 'localhost:1' }, method: 'GET' })).status).toBe(421)
    await ordinary()
  })

  it('the metrics listener checks Host too; bound to every address, it answers its own address (a pod IP) and loopback', async () => {
    const readiness = new Readiness()
    const metrics = { scrape: async () => ({ text: 'hookd_up 1\n', contentType: 'text/plain' }) }
    const local = await MetricsListener.listen('127.0.0.1:0', metrics, readiness)
    const get = (at: string, host: string, path = '/metrics'): Promise<{ status: number; body: string }> =>
      new Promise((resolve, reject) => {
        const u = new URL(`${at}${path}`)
        const req = request({ host: u.hostname, port: u.port, path, headers: { host } }, (res) => {
          let body = ''
          res.on('data', (c: Buffer) => (body += c.toString()))
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
        })
        req.on('error', reject)
        req.end()
      })
    const localPort = new URL(local.url).port
    const evil = await get(local.url, `rebound.example:${localPort}`)
    expect(evil.status).toBe(421)
    expect(JSON.parse(evil.body)).toEqual({
      error: `the request's Host 'rebound.example:${localPort}' names neither a loopback address nor this listener's own (127.0.0.1:${localPort}); hookd answers only requests addressed to it, so that a web page cannot reach it through a DNS name of its own: address it as http://127.0.0.1:${localPort}/`,
    })
    expect((await get(local.url, `localhost:${localPort}`)).body).toBe('hookd_up 1\n')
    await local.close()

    const external = Object.values(networkInterfaces())
      .flat()
      .find((i) => i?.family === 'IPv4' && !i.internal)?.address
    const all = await MetricsListener.listen('0.0.0.0:0', metrics, readiness)
    const allPort = new URL(all.url).port
    try {
      expect((await get(`http://127.0.0.1:${allPort}`, `127.0.0.1:${allPort}`, '/healthz')).status).toBe(200)
      if (external) {
        // What Prometheus and the kubelet send: the pod's own address.
        expect((await get(`http://${external}:${allPort}`, `${external}:${allPort}`)).status).toBe(200)
        expect((await get(`http://${external}:${allPort}`, `203.0.113.9:${allPort}`)).status).toBe(421)
      }
    } finally {
      await all.close()
    }
  })
})
