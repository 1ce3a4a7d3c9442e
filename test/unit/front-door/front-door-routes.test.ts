/**
 * The front door's own behaviour over a fake run (door-world.ts): a real loopback listener, the
 * sidecar's runs replaced by fake ones (FrontDoorOptions.openRun), so no worker starts. Each agent
 * route of the registry reaches that agent's dialect and opens its run as the poster's user in a
 * checked folder; an unknown route, a bad hook list, a wrong method and a misdirected Host are refused;
 * a request without the token, with another, or with a hookd-hmac proof that does not hold is refused,
 * and a proved one gets its answer proved; bodies are bounded; the run's errors become statuses. The
 * same door with tenants: each tenant's token, its own runs, no file-system checks of its folders.
 * What needs the sidecar (hooks in isolates, ctx capabilities, profiles read from the hooks folder)
 * stays in test/agents/front-door.test.ts.
 */
import { randomBytes } from 'node:crypto'
import { mkdtemp, realpath, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AGENTS, AGENT_IDS } from '../../../src/agents/registry.js'
import { type ErrorCode, HookdError } from '../../../src/protocol/status.js'
import { HOOKD_VERSION } from '../../../src/protocol/version.js'
import { FrontDoor } from '../../../src/sidecar/http/front-door.js'
import { answerProof, bodyHash, proofKey, requestMac } from '../../../src/sidecar/http/request-proof.js'
import { claudePre, clinePre, codexPre, copilotPre, cursorShell, geminiBefore, opencodeBefore } from '../../agents/support/agent-events.js'
import { DoorRuns, bearer, send, singleTenancy, tokenTenancy } from './door-world.js'

const TOKEN = 'hkd_front-door-routes-token-0123456789abcdefghijk'
const ACME = 'hkd_front-door-routes-acme-0123456789abcdefghijklm'
const GLOBEX = 'hkd_front-door-routes-globex-0123456789abcdefghijk'
const MAX_BODY = 64 * 1024

let project = ''
let url = ''
let door: FrontDoor
let up = true
const runs = new DoorRuns()
const reports: string[] = []
let single: Awaited<ReturnType<typeof singleTenancy>>

let tenantsUrl = ''
let tenantsDoor: FrontDoor
const tenantRuns = new DoorRuns()
let tenants: Awaited<ReturnType<typeof tokenTenancy>>

beforeAll(async () => {
  project = await realpath(await mkdtemp(join(tmpdir(), 'hookd-door-routes-')))
  single = await singleTenancy()
  door = await FrontDoor.listen('127.0.0.1', 0, { tenancy: single.tenancy, token: TOKEN, openRun: runs.open, report: (l) => reports.push(l), maxBodyBytes: MAX_BODY, serving: () => up })
  url = door.url
  tenants = await tokenTenancy({ acme: ACME, globex: GLOBEX })
  tenantsDoor = await FrontDoor.listen('127.0.0.1', 0, { tenancy: tenants.tenancy, openRun: tenantRuns.open, report: () => {} })
  tenantsUrl = tenantsDoor.url
})

afterAll(async () => {
  await door?.close()
  await tenantsDoor?.close()
  await single?.dispose()
  await tenants?.dispose()
  await rm(project, { recursive: true, force: true })
})

let sessions = 0
const session = (): string => `door-routes-${++sessions}`
const openedFor = (r: DoorRuns, id: string) => r.opened.filter((o) => o.start.key.sessionId === id)
const callsOf = (r: DoorRuns, id: string) => r.calls.filter((c) => c.sessionId === id).map((c) => ({ point: c.point, payload: c.payload }))

/** Each agent's gate event with no opinion, and what its agent gets back for it. */
const GATES: Record<string, { event: (cwd: string, id: string) => unknown; query?: string; status: number; json?: unknown; call: unknown }> = {
  'claude-code': { event: (cwd, id) => claudePre(cwd, id, 'Bash', { command: 'ls' }), status: 200, json: {}, call: { id: 'toolu_Bash', name: 'shell', arguments: { command: 'ls' } } },
  codex: { event: (cwd, id) => codexPre(cwd, id, 'ls'), status: 204, call: { id: 'call_1', name: 'shell', arguments: { command: 'ls' } } },
  gemini: { event: (cwd, id) => geminiBefore(cwd, id, 'run_shell_command', { command: 'ls' }), status: 204, call: { id: '', name: 'shell', arguments: { command: 'ls' } } },
  copilot: { event: (cwd, id) => copilotPre(cwd, id, 'bash', { command: 'ls' }), query: '?event=preToolUse', status: 204, call: { id: '', name: 'shell', arguments: { command: 'ls' } } },
  cursor: { event: (cwd, id) => cursorShell(cwd, id, 'ls'), status: 200, json: {}, call: { id: '', name: 'shell', arguments: { command: 'ls', cwd: '.' } } },
  opencode: { event: (cwd, id) => opencodeBefore(cwd, id, 'bash', { command: 'ls' }), status: 204, call: { id: 'toolu_1', name: 'shell', arguments: { command: 'ls' } } },
  cline: { event: (cwd, id) => clinePre(cwd, id, 'run_commands', { commands: ['ls'] }), status: 204, call: { id: 'call_1_0', name: 'shell', arguments: { command: 'ls' } } },
}

const claude = (id: string, cwd = project): Record<string, unknown> => claudePre(cwd, id, 'Bash', { command: 'ls' })
const post = (path: string, body: unknown, headers: Record<string, string> = bearer(TOKEN)) => send(url, path, { headers, body })

describe('routes: one per agent of the registry', () => {
  it('the table below has a row for each agent the registry lists', () => {
    expect(Object.keys(GATES).sort()).toEqual([...AGENT_IDS].sort())
  })

  it.each(AGENTS)("POST /$id/guard reaches $title's dialect and opens its run as the poster's user, in the checked folder", async (agent) => {
    const row = GATES[agent.id] as (typeof GATES)[string]
    const id = session()
    const res = await post(`/${agent.id}/guard${row.query ?? ''}`, row.event(project, id))
    expect({ status: res.status, json: res.json }).toEqual({ status: row.status, json: row.json })
    const opened = openedFor(runs, id)
    expect(opened).toHaveLength(1)
    expect(opened[0]?.start).toMatchObject({
      agentId: agent.id,
      canAsk: agent.dialect.canAsk,
      key: { sessionId: id, workdir: project, channel: `${agent.id}/guard`, peer: { uid: process.geteuid?.() } },
      checked: { real: project, uid: process.geteuid?.() },
    })
    expect(opened[0]?.tenant).toBe(single.tenant)
    expect(callsOf(runs, id)).toEqual([{ point: 'beforeToolExecute', payload: expect.objectContaining(row.call) }])
  })

  it('the same session id under two agents, or two routes, is two runs; a profile route is its own channel', async () => {
    const id = session()
    await post('/claude-code/guard', claude(id))
    await post('/codex/guard', codexPre(project, id, 'ls'))
    await post('/claude-code/guard,shout', claude(id))
    await post('/claude-code/profile/strict', claude(id))
    await post('/claude-code/guard', claude(id))
    expect(openedFor(runs, id).map((o) => o.start.key.channel)).toEqual(['claude-code/guard', 'codex/guard', 'claude-code/guard,shout', 'claude-code/profile/strict'])
  })

  it('a folder that cannot be a workdir refuses the gate before any run opens', async () => {
    const id = session()
    const res = await post('/claude-code/guard', claude(id, join(project, 'gone')))
    expect(res.json).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: `hookd could not check this call, so it is refused: the event's cwd '${join(project, 'gone')}' cannot be the hooks' workdir (no such folder); run the agent in an existing folder`,
      },
    })
    expect(openedFor(runs, id)).toEqual([])
  })

  it.each([
    ['/codex-someday/guard', 404, 'no such endpoint: /codex-someday/guard; agents post to /AGENT/HOOK[,HOOK...] with AGENT one of claude-code, codex, gemini, copilot, cursor, opencode, cline (see docs/agents.md)'],
    ['/', 404, 'no such endpoint: /; agents post to /AGENT/HOOK[,HOOK...] with AGENT one of claude-code, codex, gemini, copilot, cursor, opencode, cline (see docs/agents.md)'],
    ['/codex', 400, 'the path /codex names no hooks; post to /codex/HOOK[,HOOK...] or /codex/profile/NAME'],
    ['/codex/guard;rm', 400, "'guard;rm' in /codex/guard;rm is not a hook name (letters, digits, \".\", \"_\", \"-\"); list hooks separated by commas"],
    ['/codex/profile/x!y', 400, "'x!y' is not a profile name (letters, digits, \".\", \"_\", \"-\")"],
    [`/codex/${Array.from({ length: 33 }, (_, i) => `h${i}`).join(',')}`, 400, `/codex/${Array.from({ length: 33 }, (_, i) => `h${i}`).join(',')} lists 33 hooks; at most 32`],
  ])('POST %s is %i, saying where agents post', async (path, status, message) => {
    const before = runs.opened.length
    const res = await post(path, claude(session()))
    expect({ status: res.status, json: res.json }).toEqual({ status, json: { error: message } })
    expect(runs.opened.length).toBe(before)
  })

  it('another method than GET or POST is 405, naming both', async () => {
    const res = await send(url, '/claude-code/guard', { method: 'PUT', headers: bearer(TOKEN), body: claude(session()) })
    expect({ status: res.status, json: res.json, allow: res.headers.allow }).toEqual({ status: 405, json: { error: 'PUT is not served here; agents POST their hook events' }, allow: 'GET, POST' })
  })

  it("GET names a route's hooks and the agent's events they need (for hookd setup), and refuses an unknown hook", async () => {
    const res = await send(url, '/codex/guard,shout', { method: 'GET', headers: bearer(TOKEN) })
    expect(res.json).toEqual({
      agent: 'codex',
      route: 'guard,shout',
      hooks: [
        { name: 'guard', status: 'ready', points: ['beforeToolExecute'] },
        { name: 'shout', status: 'ready', points: ['afterToolExecute'] },
      ],
      events: ['PreToolUse', 'PostToolUse'],
    })
    const unknown = await send(url, '/codex/guard,nope', { method: 'GET', headers: bearer(TOKEN) })
    expect({ status: unknown.status, json: unknown.json }).toEqual({ status: 404, json: { error: "unknown hook 'nope' (available: guard, shout)" } })
  })

  it('/healthz answers without a token, 503 while the sidecar cannot serve', async () => {
    const res = await send(url, '/healthz', { method: 'GET' })
    expect({ status: res.status, json: res.json }).toEqual({ status: 200, json: { status: 'serving', version: HOOKD_VERSION } })
    up = false
    try {
      const down = await send(url, '/healthz', { method: 'GET' })
      expect({ status: down.status, json: down.json }).toEqual({ status: 503, json: { status: 'not serving', version: HOOKD_VERSION } })
    } finally {
      up = true
    }
  })

  it("a request addressed to a name that is not loopback is 421 before anything else (a rebound DNS name)", async () => {
    const port = new URL(url).port
    const res = await send(url, '/healthz', { method: 'GET', headers: { host: `evil.example:${port}` } })
    expect(res.status).toBe(421)
    expect(res.json?.error).toBe(
      `the request's Host 'evil.example:${port}' names neither a loopback address nor this listener's own (127.0.0.1:${port}); hookd answers only requests addressed to it, so that a web page cannot reach it through a DNS name of its own: address it as http://127.0.0.1:${port}/`,
    )
  })
})

describe('who may post', () => {
  const HOW = "send 'authorization: Bearer <token>' with the token in the sidecar's HTTP token file (.hookd/http-token by default; 'hookd setup' points the agent at it)"

  it.each([
    ['no authorization header', {}, `no authorization header was sent; ${HOW}`],
    ['another token', bearer('hkd_not-the-token-at-all-0123456789abcdef'), `the bearer token is not this sidecar's HTTP token; ${HOW}`],
    ['another scheme', { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }, `the authorization header is not of the form 'Bearer <token>'; ${HOW}`],
  ])('%s is 401, saying what to send, on the operator\'s line too; no run opens', async (_what, headers, message) => {
    const before = runs.opened.length
    const res = await post('/claude-code/guard', claude(session()), headers)
    expect({ status: res.status, json: res.json, challenge: res.headers['www-authenticate'] }).toEqual({ status: 401, json: { error: message }, challenge: 'Bearer' })
    expect(reports).toContain(`http: POST /claude-code/guard: ${message}`)
    expect(runs.opened.length).toBe(before)
  })
})

describe("the shim's hookd-hmac proofs", () => {
  const key = proofKey(TOKEN)
  /** The shim's request: its mac over the method, path and body's hash, as of `ts`. */
  function proved(path: string, body: string, options: { ts?: number; nonce?: string; token?: string; method?: string } = {}): Record<string, string> {
    const ts = options.ts ?? Math.floor(Date.now() / 1000)
    const nonce = options.nonce ?? randomBytes(16).toString('hex')
    const hash = bodyHash(body)
    const mac = requestMac(proofKey(options.token ?? TOKEN), ts, nonce, options.method ?? 'POST', path, hash).toString('hex')
    return { authorization: `hookd-hmac ts=${ts},nonce=${nonce},body=${hash},mac=${mac}` }
  }
  const nonceOf = (headers: Record<string, string>): string => /nonce=([0-9a-f]+)/.exec(headers.authorization as string)?.[1] as string

  it('a proved request is answered, and its answer carries the proof of its status and body', async () => {
    const body = JSON.stringify(claude(session()))
    const headers = proved('/claude-code/guard', body)
    const res = await post('/claude-code/guard', body, headers)
    expect({ status: res.status, json: res.json }).toEqual({ status: 200, json: {} })
    expect(res.headers['x-hookd-proof']).toBe(answerProof(key, nonceOf(headers), 200, res.text))
  })

  it('played again, it is refused, and the refusal is proved (a proved refusal only ever refuses)', async () => {
    const body = JSON.stringify(claude(session()))
    const headers = proved('/claude-code/guard', body)
    expect((await post('/claude-code/guard', body, headers)).status).toBe(200)
    const again = await post('/claude-code/guard', body, headers)
    expect({ status: again.status, json: again.json }).toEqual({ status: 401, json: { error: 'this request was sent before (its nonce was used): each request needs a new one' } })
    expect(again.headers['x-hookd-proof']).toBe(answerProof(key, nonceOf(headers), 401, again.text))
  })

  it('with another body than its mac covers, it is refused before anything reads the body, proved', async () => {
    const headers = proved('/claude-code/guard', JSON.stringify(claude(session())))
    const res = await post('/claude-code/guard', JSON.stringify(claude('someone-else')), headers)
    expect({ status: res.status, json: res.json }).toEqual({ status: 401, json: { error: "the request's body is not the one its hookd-hmac covers (its SHA-256 differs from the header's body=)" } })
    expect(res.headers['x-hookd-proof']).toBe(answerProof(key, nonceOf(headers), 401, res.text))
  })

  it.each([
    ['on another path', (body: string) => ({ path: '/claude-code/other', headers: proved('/claude-code/guard', body) })],
    ['with another token', (body: string) => ({ path: '/claude-code/guard', headers: proved('/claude-code/guard', body, { token: 'hkd_a-stranger-token-0123456789abcdefghijklmn' }) })],
    ['as another method', (body: string) => ({ path: '/claude-code/guard', headers: proved('/claude-code/guard', body, { method: 'GET' }) })],
  ])("%s, its mac does not match: 401, and no proof (it is not the token's)", async (_what, make) => {
    const body = JSON.stringify(claude(session()))
    const { path, headers } = make(body)
    const res = await post(path, body, headers)
    expect({ status: res.status, json: res.json }).toEqual({ status: 401, json: { error: "the request's hookd-hmac does not match this sidecar's HTTP token; check the --token-file the agent's entry names" } })
    expect(res.headers['x-hookd-proof']).toBeUndefined()
  })

  it('outside the time window, or made before this door started, it is refused', async () => {
    const body = JSON.stringify(claude(session()))
    const old = await post('/claude-code/guard', body, proved('/claude-code/guard', body, { ts: Math.floor(Date.now() / 1000) - 600 }))
    expect(old.status).toBe(401)
    expect(old.json?.error).toMatch(/^the request's time is -60\d s from hookd's; the two clocks must agree within 120 s$/)
    // A door that starts after the request was made: it may be one captured earlier and played now.
    const early = proved('/claude-code/guard', body, { ts: Math.floor(Date.now() / 1000) - 5 })
    const later = await FrontDoor.listen('127.0.0.1', 0, { tenancy: single.tenancy, token: TOKEN, openRun: runs.open, report: () => {} })
    try {
      const res = await send(later.url, '/claude-code/guard', { headers: early, body })
      expect(res.status).toBe(401)
      expect(res.json?.error).toMatch(/^the request was made \d+ s before this hookd started, so it may be one captured earlier and played now; send it again \(a new request is taken\)$/)
    } finally {
      await later.close()
    }
  })

  it('a malformed hookd-hmac is 401, saying its form', async () => {
    const res = await post('/claude-code/guard', claude(session()), { authorization: 'hookd-hmac ts=1,nonce=00' })
    expect({ status: res.status, json: res.json }).toEqual({
      status: 401,
      json: { error: "the authorization is not of the form 'hookd-hmac ts=<seconds>,nonce=<hex>,body=<hex>,mac=<hex>' (an older hookd-hook sends no body=: run 'hookd up' or 'hookd setup' again to install this version's)" },
    })
  })
})

describe('bodies are bounded before anything reads them', () => {
  it.each([
    ['over the size limit: 413, and the connection closes', `{"x":"${'a'.repeat(MAX_BODY)}"}`, 413, `the request body is over the limit of ${MAX_BODY} bytes`],
    ['nested too deep: 400', `${'['.repeat(100)}${']'.repeat(100)}`, 400, 'the hook event is nested too deep (more than 64 levels of arrays and objects); flatten it'],
    ['not JSON: 400', 'hello', 400, 'the hook event is not valid JSON'],
  ])('%s', async (_what, body, status, message) => {
    const before = runs.opened.length
    const res = await post('/claude-code/guard', body)
    expect(res.status).toBe(status)
    expect(String(res.json?.error)).toContain(message)
    if (status === 413) expect(res.headers.connection).toBe('close')
    expect(runs.opened.length).toBe(before)
  })
})

describe("the run's errors, as the agent reads them", () => {
  const STATUS: Array<[ErrorCode, number, Record<string, string>]> = [
    ['invalid-argument', 400, {}],
    ['unauthenticated', 401, { 'www-authenticate': 'Bearer' }],
    ['not-found', 404, {}],
    ['failed-precondition', 409, {}],
    ['resource-exhausted', 429, { 'retry-after': '1' }],
    ['cancelled', 499, {}],
    ['internal', 500, {}],
    ['unavailable', 503, { 'retry-after': '1' }],
    ['deadline-exceeded', 504, {}],
  ]

  it.each(STATUS)("a run's %s after a tool is %i with its message; at a gate it is a refusal", async (code, status, headers) => {
    runs.failCall = new HookdError(code, `the run says ${code}`)
    try {
      const after = await post('/claude-code/guard', { ...claude(session()), hook_event_name: 'PostToolUse', tool_response: 'x' })
      expect({ status: after.status, json: after.json }).toEqual({ status, json: { error: `the run says ${code}` } })
      for (const [name, value] of Object.entries(headers)) expect(after.headers[name]).toBe(value)
      const gate = await post('/codex/guard', codexPre(project, session(), 'ls'))
      expect(gate.json).toEqual({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: `hookd could not check this call, so it is refused: the run says ${code}` } })
    } finally {
      runs.failCall = undefined
    }
  })

  it('a run that cannot open is the same: a refusal at a gate, its status elsewhere', async () => {
    runs.failOpen = new HookdError('not-found', "unknown hook 'gaurd' in /hooks (available: guard)")
    try {
      const gate = await post('/gemini/gaurd', geminiBefore(project, session(), 'run_shell_command', { command: 'ls' }))
      expect(gate.json).toEqual({ decision: 'deny', reason: "hookd could not check this call, so it is refused: unknown hook 'gaurd' in /hooks (available: guard)" })
      const prompt = await post('/gemini/gaurd', { session_id: session(), cwd: project, hook_event_name: 'BeforeAgent', prompt: 'hi' })
      expect({ status: prompt.status, json: prompt.json }).toEqual({ status: 404, json: { error: "unknown hook 'gaurd' in /hooks (available: guard)" } })
    } finally {
      runs.failOpen = undefined
    }
  })
})

describe('a door with tenants', () => {
  it("runs each tenant's events as that tenant, keyed apart, without a user or a file-system check (its agents may run elsewhere)", async () => {
    const id = session()
    const elsewhere = '/home/someone/on/another/machine'
    const a = await send(tenantsUrl, '/claude-code/guard', { headers: bearer(ACME), body: claude(id, elsewhere) })
    const b = await send(tenantsUrl, '/claude-code/guard', { headers: bearer(GLOBEX), body: claude(id, elsewhere) })
    expect([a.json, b.json]).toEqual([{}, {}])
    const opened = openedFor(tenantRuns, id)
    expect(opened.map((o) => o.tenant.id)).toEqual(['acme', 'globex'])
    for (const o of opened) {
      expect(o.start.key).toEqual({ sessionId: id, workdir: elsewhere, channel: 'claude-code/guard' })
      expect(o.start.checked).toBeUndefined()
    }
  })

  it("refuses a token of no tenant, and takes a tenant's hookd-hmac proof, proving the answer with its key", async () => {
    const none = await send(tenantsUrl, '/claude-code/guard', { headers: bearer(TOKEN), body: claude(session()) })
    expect({ status: none.status, json: none.json }).toEqual({ status: 401, json: { error: 'the bearer token matches no tenant of this sidecar' } })
    const id = session()
    const body = JSON.stringify(claude(id, '/elsewhere'))
    const ts = Math.floor(Date.now() / 1000)
    const nonce = randomBytes(16).toString('hex')
    const mac = requestMac(proofKey(GLOBEX), ts, nonce, 'POST', '/claude-code/guard', bodyHash(body)).toString('hex')
    const res = await send(tenantsUrl, '/claude-code/guard', { headers: { authorization: `hookd-hmac ts=${ts},nonce=${nonce},body=${bodyHash(body)},mac=${mac}` }, body })
    expect({ status: res.status, json: res.json }).toEqual({ status: 200, json: {} })
    expect(res.headers['x-hookd-proof']).toBe(answerProof(proofKey(GLOBEX), nonce, 200, res.text))
    expect(openedFor(tenantRuns, id).map((o) => o.tenant.id)).toEqual(['globex'])
  })
})
