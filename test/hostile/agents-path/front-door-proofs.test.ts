/**
 * The shim's proofs at the front door (src/sidecar/http/request-proof.ts, door-auth.ts), attacked by
 * whoever can reach the port: a request captured while hookd was down (a program that held the port
 * took it) and played later, the same proof on another path or with another body, an old one.
 *
 * And the bytes of such requests: `authorization: hookd-hmac ...` is proved by a mac over the body, so
 * the door counts a body's bytes before it can check them (byte-budget.ts, front-door.ts). A stranger
 * on the machine, another user who holds no token, sends such requests with made-up macs and large
 * declared lengths, and no body: the agent's shim, whose requests take the same form, must still get
 * hookd's answer. Against a real sidecar on a real port, the stranger a real process of another uid.
 */
import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { rm } from 'node:fs/promises'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { answerProof, bodyHash, proofKey, requestMac } from '../../../src/sidecar/http/request-proof.js'
import { Sidecar } from '../../../src/sidecar/sidecar.js'
import { hook, writeTree } from '../../support/sidecar.js'
import { startTenants } from '../../tenants/support.js'

const TOKEN = 'hkd_front-door-unverified-token-0123456789abcdefghi'
const MiB = 1024 * 1024
const STRANGER = 65534

let hooks = ''
let sidecar: Sidecar
let port = 0

beforeAll(async () => {
  hooks = await writeTree({
    'guard/index.js': hook({ beforeToolExecute: `function (ctx, call) { if (String(call.arguments.command).includes('rm -rf')) return { allow: false, reason: 'no rm -rf' } }` }),
  })
  sidecar = await Sidecar.create({ hooks, workers: 1, watch: false })
  // The defaults but the budget, which is smaller so that the stranger's process stays small too.
  const url = await sidecar.listenHttp('127.0.0.1', 0, { token: TOKEN, report: () => {}, budget: { tenantBytes: 8 * MiB, totalBytes: 32 * MiB } })
  port = Number(new URL(url).port)
}, 60_000)

afterAll(async () => {
  await sidecar?.stop()
  if (hooks) await rm(hooks, { recursive: true, force: true })
})

let sessions = 0

/** A request as the shim makes it: its path, body and proof. */
interface Proved {
  path: string
  body: Buffer
  ts: number
  nonce: string
  mac: string
}

/** The shim's request for `command`, proved with the token (request-proof.ts) as of `ts`. */
function shimRequest(command: string, ts = Math.floor(Date.now() / 1000), token = TOKEN): Proved {
  sessions += 1
  const body = Buffer.from(
    JSON.stringify({ session_id: `proofs-${process.pid}-${sessions}`, cwd: tmpdir(), hook_event_name: 'PreToolUse', permission_mode: 'default', tool_name: 'Bash', tool_input: { command }, tool_use_id: 'toolu_1' }),
  )
  const nonce = randomBytes(16).toString('hex')
  const path = '/claude-code/guard'
  return { path, body, ts, nonce, mac: requestMac(proofKey(token), ts, nonce, 'POST', path, bodyHash(body)).toString('hex') }
}

/** The shim's request for `command`, and hookd's answer, checked. */
function proved(command: string): Promise<{ status: number; json: unknown; provedByHookd: boolean }> {
  return send(shimRequest(command))
}

/** Sends `r` (to `to`, default the door), with its path and body replaced by `as` when given; the answer and whether hookd proved it. */
function send(r: Proved, as: { path?: string; body?: Buffer } = {}, to = port, token = TOKEN): Promise<{ status: number; json: unknown; provedByHookd: boolean }> {
  const key = proofKey(token)
  const { nonce, ts, mac } = r
  const path = as.path ?? r.path
  const body = as.body ?? r.body
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: to, path, method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': String(body.length), authorization: `hookd-hmac ts=${ts},nonce=${nonce},body=${bodyHash(r.body)},mac=${mac}` } },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (c: string) => (text += c))
        res.on('end', () => {
          const status = res.statusCode ?? 0
          resolve({ status, json: text ? JSON.parse(text) : undefined, provedByHookd: res.headers['x-hookd-proof'] === answerProof(key, nonce, status, text) })
        })
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

/**
 * A process of another user that opens `count` connections, each a hookd-hmac request with a made-up
 * mac declaring `bytes` of body, and sends none of it; it keeps opening new ones as the door closes
 * them. `ready` once all are sent; `end()` stops it.
 */
function stranger(count: number, bytes: number, to = port): { ready: Promise<void>; end(): void } {
  const script = `
    const net = require('node:net')
    const crypto = require('node:crypto')
    let sent = 0
    function one() {
      const s = net.connect(${to}, '127.0.0.1', () => {
        const ts = Math.floor(Date.now() / 1000)
        s.write('POST /claude-code/guard HTTP/1.1\\r\\nHost: 127.0.0.1:${to}\\r\\nContent-Type: application/json\\r\\n' +
          'Authorization: hookd-hmac ts=' + ts + ',nonce=' + crypto.randomBytes(16).toString('hex') + ',body=' + '0'.repeat(64) + ',mac=' + '0'.repeat(64) + '\\r\\n' +
          'Content-Length: ${bytes}\\r\\n\\r\\n')
        if (++sent === ${count}) console.log('ready')
      })
      s.resume()
      s.on('error', () => {})
      s.on('close', () => setTimeout(one, 10))
    }
    for (let i = 0; i < ${count}; i++) one()
    process.stdin.on('data', () => process.exit(0))`
  const child = spawn('setpriv', [`--reuid=${STRANGER}`, `--regid=${STRANGER}`, '--clear-groups', process.execPath, '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] })
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => (c.toString().includes('ready') ? resolve() : undefined))
    child.once('exit', (code) => reject(new Error(`the stranger's process exited (${code})`)))
  })
  return { ready, end: () => void child.stdin.write('end\n') }
}

describe('hookd-hmac requests nobody has verified yet', () => {
  it("a stranger's requests with made-up macs and large declared bodies do not take the byte budget the agent's proved calls need", async () => {
    const flood = stranger(8, 2 * MiB)
    try {
      await flood.ready
      // The door has taken the stranger's requests in before the agent's comes.
      await new Promise((resolve) => setTimeout(resolve, 300))
      const refused = await proved('rm -rf victim')
      expect(refused).toEqual({
        status: 200,
        json: { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'no rm -rf' } },
        provedByHookd: true,
      })
      expect(await proved('ls')).toEqual({ status: 200, json: {}, provedByHookd: true })
    } finally {
      flood.end()
    }
  }, 60_000)

  it("with tenants, the same stranger does not take the budget every tenant's proved calls share until they are checked", async () => {
    const tenants = await startTenants([{ id: 'acme', hooks: { 'guard/index.js': hook({ beforeToolExecute: `function (ctx, call) { if (String(call.arguments.command).includes('rm -rf')) return { allow: false, reason: 'no rm -rf' } }` }) } }])
    try {
      const tenantPort = Number(new URL(await tenants.sidecar.listenHttp('127.0.0.1', 0, { report: () => {}, budget: { tenantBytes: 8 * MiB, totalBytes: 32 * MiB } })).port)
      const token = tenants.tokens.get('acme') as string
      const flood = stranger(8, 2 * MiB, tenantPort)
      try {
        await flood.ready
        await new Promise((resolve) => setTimeout(resolve, 300))
        expect(await send(shimRequest('ls', undefined, token), {}, tenantPort, token)).toEqual({ status: 200, json: {}, provedByHookd: true })
      } finally {
        flood.end()
      }
    } finally {
      await tenants.stop()
    }
  }, 60_000)
})

describe('a proved request played again, elsewhere, changed or late', () => {
  it('is refused (401) when played a second time, on another path, with another body, or outside the time window', async () => {
    const first = shimRequest('ls')
    expect(await send(first)).toEqual({ status: 200, json: {}, provedByHookd: true })
    const again = await send(first)
    expect([again.status, again.json]).toEqual([401, { error: 'this request was sent before (its nonce was used): each request needs a new one' }])
    const elsewhere = await send(shimRequest('ls'), { path: '/claude-code/other' })
    const swapped = await send(shimRequest('ls'), { body: shimRequest('rm -rf victim').body })
    const macError = { error: "the request's hookd-hmac does not match this sidecar's HTTP token; check the --token-file the agent's entry names" }
    const bodyError = { error: "the request's body is not the one its hookd-hmac covers (its SHA-256 differs from the header's body=)" }
    expect([elsewhere.status, elsewhere.json, swapped.status, swapped.json]).toEqual([401, macError, 401, bodyError])
    const old = await send(shimRequest('ls', Math.floor(Date.now() / 1000) - 200))
    expect(old.status).toBe(401)
    expect(old.json).toEqual({ error: expect.stringMatching(/^the request's time is -20\d s from hookd's; the two clocks must agree within 120 s$/) })
    // The refusals are proved too (the shim then says what hookd refused), and the door still answers.
    expect(again.provedByHookd).toBe(true)
    expect(await proved('rm -rf victim')).toMatchObject({ status: 200, provedByHookd: true })
  })

  it('made before this hookd started (captured by whatever held the port while hookd was down) is refused when played to it', async () => {
    // The shim posted this while hookd was down; what held the port kept it.
    const captured = shimRequest('ls')
    await new Promise((resolve) => setTimeout(resolve, 1100))
    const later = await Sidecar.create({ hooks, workers: 1, watch: false })
    try {
      const laterPort = Number(new URL(await later.listenHttp('127.0.0.1', 0, { token: TOKEN, report: () => {} })).port)
      const replayed = await send(captured, {}, laterPort)
      expect(replayed.status).toBe(401)
      expect(replayed.json).toEqual({ error: expect.stringMatching(/^the request was made \d+ s before this hookd started, so it may be one captured earlier and played now; send it again/) })
      // Its own shim's requests, made after it started, it answers.
      expect(await send(shimRequest('ls'), {}, laterPort)).toEqual({ status: 200, json: {}, provedByHookd: true })
    } finally {
      await later.stop()
    }
  }, 60_000)
})
