/**
 * hookd's OpenCode plugin (src/agents/opencode/plugin.ts) in this process, against servers on
 * 127.0.0.1:0: one that checks the plugin's proof as the front door does (src/sidecar/http/request-proof.ts)
 * and proves its answers, and strangers on the port. At tool.execute.before the plugin takes only a
 * proved answer and refuses the call otherwise (a stranger's 204 or `{}` cannot let it through); a
 * refusal throws its reason, rewritten arguments replace the call's own in place; the observed events
 * never throw; an entry whose options are wrong refuses every call, saying why.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { chmod, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HookdPlugin } from '../../../src/agents/opencode/plugin.js'
import { answerProof, bodyHash, macMatches, parseHmacAuth, proofKey } from '../../../src/sidecar/http/request-proof.js'

const TOKEN = 'plugin-test-token-0123456789abcdef'
let dir = ''
let tokenFile = ''
const servers: Server[] = []

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hookd-opencode-plugin-'))
  tokenFile = join(dir, 'token')
  await writeFile(tokenFile, `${TOKEN}\n`, { mode: 0o600 })
})

afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((done) => s.close(done))))
  await rm(dir, { recursive: true, force: true })
})

type Handler = (req: IncomingMessage, body: Buffer, res: ServerResponse) => void

async function serve(handler: Handler): Promise<string> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => handler(req, Buffer.concat(chunks), res))
  })
  servers.push(server)
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/opencode/guard`
}

const bodies: unknown[] = []

/** As the front door: checks the proof of the request and its body, proves its answer. */
const hookd =
  (answer: (body: Record<string, unknown>) => { status: number; json?: unknown }): Handler =>
  (req, body, res) => {
    const key = proofKey(TOKEN)
    const auth = parseHmacAuth(String(req.headers.authorization ?? ''))
    if (!auth || typeof auth === 'string' || !macMatches(key, auth, req.method ?? '', req.url ?? '') || auth.body !== bodyHash(body)) {
      res.writeHead(401).end()
      return
    }
    const event = JSON.parse(body.toString('utf8')) as Record<string, unknown>
    bodies.push(event)
    const { status, json } = answer(event)
    const text = json === undefined ? '' : JSON.stringify(json)
    res.writeHead(status, { 'x-hookd-proof': answerProof(key, auth.nonce, status, text), ...(text ? { 'content-type': 'application/json' } : {}) }).end(text)
  }

type Hook = (input: Record<string, unknown>, output: Record<string, unknown>) => Promise<void>

async function gate(url: string, options: Record<string, unknown> = {}): Promise<Hook> {
  const hooks = await HookdPlugin({ directory: '/home/me/project' }, { url, tokenFile, timeoutS: 5, ...options })
  return hooks['tool.execute.before'] as Hook
}

const call = (command: string) => ({ input: { tool: 'bash', sessionID: 'ses_1', callID: 'toolu_1' }, output: { args: { command, description: 'Run it' } } })

describe("hookd's OpenCode plugin: the gate", () => {
  it('posts the call, proved; a refusal throws its reason; a rewrite replaces the arguments in place', async () => {
    const url = await serve(hookd((b) => (String((b.args as Record<string, unknown>).command).includes('rm') ? { status: 200, json: { block: true, reason: 'no rm -rf' } } : { status: 200, json: { args: { command: 'ls -a' } } })))
    const before = await gate(url)
    const refused = call('rm -rf victim')
    await expect(before(refused.input, refused.output)).rejects.toThrow(/^no rm -rf$/)
    const rewritten = call('ls')
    const args = rewritten.output.args
    await before(rewritten.input, rewritten.output)
    expect(rewritten.output.args).toBe(args)
    expect(args).toEqual({ command: 'ls -a' })
    expect(bodies.at(-1)).toEqual({ event: 'tool.execute.before', sessionID: 'ses_1', directory: '/home/me/project', tool: 'bash', callID: 'toolu_1', args: { command: 'ls', description: 'Run it' } })
  })

  it("hookd's 204 is no opinion: the call runs as it was", async () => {
    const before = await gate(await serve(hookd(() => ({ status: 204 }))))
    const c = call('ls')
    await before(c.input, c.output)
    expect(c.output.args).toEqual({ command: 'ls', description: 'Run it' })
  })

  it.each([
    ['a 204 without a proof', (_req: IncomingMessage, _b: Buffer, res: ServerResponse) => void res.writeHead(204).end()],
    ["an allow with another token's proof", (_req: IncomingMessage, _b: Buffer, res: ServerResponse) => void res.writeHead(200, { 'x-hookd-proof': answerProof(proofKey('another'), '00'.repeat(16), 200, '{}') }).end('{}')],
  ])('a stranger on the port cannot let the call through: %s refuses it', async (_what, handler) => {
    const before = await gate(await serve(handler))
    const c = call('rm -rf victim')
    await expect(before(c.input, c.output)).rejects.toThrow(/^hookd: the answer from http:\/\/127\.0\.0\.1:\d+ does not prove it came from hookd \(HTTP (204|200)\)/)
  })

  it('hookd refusing the token is said so', async () => {
    const before = await gate(await serve((_req, _b, res) => void res.writeHead(401).end()))
    const c = call('ls')
    await expect(before(c.input, c.output)).rejects.toThrow(/refused the token \(HTTP 401\): check the tokenFile of the plugin entry/)
  })

  it('nothing listening, or no answer in time, refuses the call', async () => {
    const closed = await serve(() => undefined)
    const server = servers.pop() as Server
    await new Promise((done) => server.close(done))
    const down = await gate(closed)
    const c = call('ls')
    await expect(down(c.input, c.output)).rejects.toThrow(/^hookd: cannot reach hookd at http:\/\/127\.0\.0\.1:\d+ .*is 'hookd serve --http' running\?/)
    const silent = await gate(await serve(() => undefined), { timeoutS: 1 })
    await expect(silent(c.input, c.output)).rejects.toThrow(/^hookd: cannot reach hookd/)
  })

  it('a token file that cannot be read, is open to others or is a link refuses the call', async () => {
    const url = await serve(hookd(() => ({ status: 204 })))
    const c = call('ls')
    await expect((await gate(url, { tokenFile: join(dir, 'missing') }))(c.input, c.output)).rejects.toThrow(`hookd: cannot read hookd's token from ${join(dir, 'missing')}`)
    const open = join(dir, 'open-token')
    await writeFile(open, `${TOKEN}\n`, { mode: 0o644 })
    await chmod(open, 0o644)
    await expect((await gate(url, { tokenFile: open }))(c.input, c.output)).rejects.toThrow(`hookd: the token file ${open} can be read by other users; run 'chmod 600 ${open}'`)
    const link = join(dir, 'link-token')
    await symlink(tokenFile, link)
    await expect((await gate(url, { tokenFile: link }))(c.input, c.output)).rejects.toThrow(`hookd: the token file ${link} is a symbolic link`)
  })

  it.each([
    [undefined, 'the plugin entry has no options: run hookd setup opencode again'],
    [{ url: 'http://127.0.0.1:1/codex/guard', tokenFile: '/t', timeoutS: 5 }, "the plugin's url is not a route of hookd's front door (http://HOST:PORT/opencode/HOOKS)"],
    [{ url: 'http://127.0.0.1:1/opencode/guard', tokenFile: 'relative', timeoutS: 5 }, "the plugin's tokenFile is not an absolute path"],
  ])('options %j: every call is refused, saying why', async (options, why) => {
    const hooks = await HookdPlugin({ directory: '/p' }, options)
    expect(Object.keys(hooks)).toEqual(['tool.execute.before'])
    const c = call('ls')
    await expect((hooks['tool.execute.before'] as Hook)(c.input, c.output)).rejects.toThrow(`hookd: ${why}`)
  })
})

describe("hookd's OpenCode plugin: the other events", () => {
  it('a rewritten result replaces the output; a stranger after the tool leaves it as it was', async () => {
    const hooks = await HookdPlugin({ directory: '/p' }, { url: await serve(hookd(() => ({ status: 200, json: { output: 'HI' } }))), tokenFile, timeoutS: 5 })
    const output = { title: 'echo hi', output: 'hi', metadata: {} }
    await (hooks['tool.execute.after'] as Hook)({ tool: 'bash', sessionID: 'ses_1', callID: 'toolu_1', args: { command: 'echo hi' } }, output)
    expect(output.output).toBe('HI')
    const stranger = await HookdPlugin({ directory: '/p' }, { url: await serve((_q, _b, res) => void res.writeHead(200).end('{"output":"pwned"}')), tokenFile, timeoutS: 5 })
    const kept = { title: 'echo hi', output: 'hi', metadata: {} }
    await (stranger['tool.execute.after'] as Hook)({ tool: 'bash', sessionID: 'ses_1', callID: 'toolu_1', args: {} }, kept)
    expect(kept.output).toBe('hi')
  })

  it("a child session's calls name it and its root; only the events setup listed are registered", async () => {
    const url = await serve(hookd(() => ({ status: 204 })))
    const hooks = await HookdPlugin({ directory: '/p' }, { url, tokenFile, timeoutS: 5, events: ['tool.execute.before'] })
    expect(Object.keys(hooks).sort()).toEqual(['chat.message', 'dispose', 'event', 'tool.execute.before'])
    const bus = hooks.event as (arg: { event: { type: string; properties?: Record<string, unknown> } }) => Promise<void>
    await bus({ event: { type: 'session.created', properties: { info: { id: 'ses_child', parentID: 'ses_root' } } } })
    await (hooks['chat.message'] as Hook)({ sessionID: 'ses_child', agent: 'general' }, { parts: [] })
    const c = { input: { tool: 'bash', sessionID: 'ses_child', callID: 'toolu_2' }, output: { args: { command: 'ls' } } }
    await (hooks['tool.execute.before'] as Hook)(c.input, c.output)
    expect(bodies.at(-1)).toMatchObject({ sessionID: 'ses_child', rootSessionID: 'ses_root', subagent: { id: 'ses_child', type: 'general' } })
  })

  it('dispose, which OpenCode awaits as it exits, waits for the observed posts still under way (the last session.idle)', async () => {
    let answered = false
    const slow = hookd(() => ({ status: 204 }))
    const url = await serve((req, body, res) => {
      setTimeout(() => {
        answered = true
        slow(req, body, res)
      }, 300)
    })
    const hooks = await HookdPlugin({ directory: '/p' }, { url, tokenFile, timeoutS: 5 })
    const bus = hooks.event as (arg: { event: { type: string; properties?: Record<string, unknown> } }) => Promise<void>
    await bus({ event: { type: 'session.idle', properties: { sessionID: 'ses_root' } } })
    expect(answered).toBe(false)
    await (hooks.dispose as () => Promise<void>)()
    expect(answered).toBe(true)
    expect(bodies.at(-1)).toEqual({ event: 'session.idle', sessionID: 'ses_root', directory: '/p' })
  })
})
