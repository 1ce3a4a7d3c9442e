/**
 * The reference agent driven as a library: the real Anthropic SDK talking to a fake Messages API on
 * loopback, the example hooks running in a real sidecar, and what the person at the terminal sees.
 */
import { existsSync } from 'node:fs'
import { cp } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool, BUILTIN_TOOLS } from '../../src/host/reference-agent/index.js'
import { EXAMPLE_HOOKS, type Running, startSidecar, writeTree } from '../support/sidecar.js'
import { type FakeApi, deadUrl, startFakeApi } from './fake-api.js'
import { apiModel, runCaptured, todayUtc, workdir } from './support.js'

let sidecar: Running
let api: FakeApi | undefined

beforeAll(async () => {
  const root = await writeTree({})
  for (const name of ['guard', 'https-only', 'shout', 'today', 'redact', 'audit']) await cp(join(EXAMPLE_HOOKS, name), join(root, name), { recursive: true })
  sidecar = await startSidecar({ hooks: root, watch: false })
})

afterAll(() => sidecar?.stop())

afterEach(async () => {
  await api?.stop()
  api = undefined
})

const list = { id: 'toolu_list', name: 'list_files', input: {} }

function lastToolResult(n: number): unknown {
  const messages = api?.requests[n]?.body.messages ?? []
  return messages.at(-1)
}

describe('hooks on tool calls', () => {
  it('sends a call refused by guard back to the model as an error result carrying the reason; the tool does not run', async () => {
    api = await startFakeApi([
      { text: 'Cleaning up.', tools: [{ id: 'toolu_rm', name: 'shell', input: { command: 'rm -rf build' } }] },
      { text: 'The build folder stays.' },
    ])
    const dir = await workdir({ 'build/out.txt': 'artifact' })
    const ran = await runCaptured({ model: apiModel(api), hooks: ['guard'], address: sidecar.address, workdir: dir })

    expect(ran.result.reason).toBe('end_turn')
    expect(api.requests).toHaveLength(2)
    expect(lastToolResult(1)).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_rm', content: 'refused by the user', is_error: true }],
    })
    expect(existsSync(join(dir, 'build', 'out.txt'))).toBe(true)
    expect(ran.stderr).toContain('→ shell {"command":"rm -rf build"}')
    expect(ran.stderr).toContain('[guard] refused shell: refused by the user')
    // The model was told about the four tools, with their input schemas.
    expect(api.requests[0]?.body.tools?.map((t) => t.name)).toEqual(['shell', 'read_file', 'write_file', 'list_files'])
    expect(api.requests[0]?.body.tools?.[0]?.input_schema).toMatchObject({ type: 'object', properties: { command: { type: 'string' } }, required: ['command'] })
    expect(api.requests[0]?.body.stream).toBe(true)
  })

  it('runs the tool with the arguments https-only rewrote', async () => {
    const fetched: string[] = []
    const fetchUrl = defineTool({
      name: 'fetch_url',
      description: 'Fetches a URL (here: records it).',
      input: z.object({ url: z.string() }),
      run: ({ url }) => {
        fetched.push(url)
        return Promise.resolve(`fetched ${url}`)
      },
    })
    api = await startFakeApi([{ tools: [{ id: 'toolu_get', name: 'fetch_url', input: { url: 'http://example.com/a' } }] }, { text: 'Fetched.' }])
    const ran = await runCaptured({ model: apiModel(api), hooks: ['https-only'], address: sidecar.address, tools: [...BUILTIN_TOOLS, fetchUrl] })

    expect(fetched).toEqual(['https://example.com/a'])
    expect(lastToolResult(1)).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_get', content: 'fetched https://example.com/a' }] })
    expect(ran.stderr).toContain('[https-only] rewrote the arguments of fetch_url: url: "http://example.com/a" -> "https://example.com/a"')
  })

  it('gives the model the result shout rewrote', async () => {
    api = await startFakeApi([{ tools: [{ id: 'toolu_read', name: 'read_file', input: { path: 'notes.txt' } }] }, { text: 'Read it.' }])
    const ran = await runCaptured({ model: apiModel(api), hooks: ['shout'], address: sidecar.address, workdir: await workdir({ 'notes.txt': 'quiet words' }) })

    expect(lastToolResult(1)).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_read', content: 'QUIET WORDS' }] })
    expect(ran.stderr).toContain('[shout] rewrote the result of read_file: "QUIET WORDS"')
  })

  it('shows hook logs as they happen, once per call', async () => {
    api = await startFakeApi([{ tools: [list, { ...list, id: 'toolu_list2' }] }, { text: 'Listed.' }])
    const ran = await runCaptured({ model: apiModel(api), hooks: ['audit'], address: sidecar.address })

    expect(ran.stderr.match(/\[audit\] tool call toolu_list list_files\n/g)).toHaveLength(1)
    expect(ran.stderr.match(/\[audit\] tool call toolu_list2 list_files\n/g)).toHaveLength(1)
    expect(ran.stderr.indexOf('[audit] tool call toolu_list ')).toBeLessThan(ran.stderr.indexOf('← list_files'))
  })
})

describe('ctx.confirm', () => {
  it('asks the person at the terminal, and a yes lets the call run', async () => {
    api = await startFakeApi([{ tools: [{ id: 'toolu_rm', name: 'shell', input: { command: 'rm -rf build' } }] }, { text: 'Removed.' }])
    const dir = await workdir({ 'build/out.txt': 'artifact' })
    const asked: string[] = []
    const ran = await runCaptured({
      model: apiModel(api),
      hooks: ['guard'],
      address: sidecar.address,
      workdir: dir,
      interactive: true,
      confirm: (message, origin) => {
        asked.push(`${origin.hook} at ${origin.point}: ${message.title}: ${message.body ?? ''}`)
        return Promise.resolve(true)
      },
    })
    expect(asked).toEqual(['guard at beforeToolExecute: Dangerous command: rm -rf build'])
    expect(existsSync(join(dir, 'build'))).toBe(false)
    expect(lastToolResult(1)).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_rm', content: '(no output)' }] })
    expect(ran.stderr).not.toContain('[guard] refused')
  })

  it('is answered yes without asking with --yes', async () => {
    api = await startFakeApi([{ tools: [{ id: 'toolu_rm', name: 'shell', input: { command: 'rm -rf build' } }] }, { text: 'Removed.' }])
    const dir = await workdir({ 'build/out.txt': 'artifact' })
    let asked = 0
    await runCaptured({
      model: apiModel(api),
      hooks: ['guard'],
      address: sidecar.address,
      workdir: dir,
      yes: true,
      confirm: () => {
        asked += 1
        return Promise.resolve(false)
      },
    })
    expect(asked).toBe(0)
    expect(existsSync(join(dir, 'build'))).toBe(false)
  })
})

describe('a sidecar that cannot be reached', () => {
  it('refuses tool calls (gates fail closed) and says why', async () => {
    api = await startFakeApi([{ tools: [list] }, { text: 'Could not list.' }])
    const ran = await runCaptured({
      model: apiModel(api),
      hooks: ['guard'],
      address: `unix:${join(await workdir(), 'nobody.sock')}`,
      failure: { deadlineMs: 2000 },
    })
    expect(ran.result.reason).toBe('end_turn')
    const result = lastToolResult(1) as { content: Array<{ content: string; is_error: boolean }> }
    expect(result.content[0]?.is_error).toBe(true)
    expect(result.content[0]?.content).toMatch(/^hookd could not answer beforeToolExecute: it is unreachable/)
    expect(ran.stderr).toContain('cannot be reached yet; until it answers, tool calls are refused')
    expect(ran.stderr).toContain('[hookd] refused list_files: hookd could not answer beforeToolExecute')
  })
})

describe('hooks on the model turns', () => {
  it("adds today's date to every turn's system prompt without saving it", async () => {
    const day = todayUtc()
    api = await startFakeApi([{ tools: [list] }, { tools: [{ ...list, id: 'toolu_list2' }] }, { text: 'Done.' }])
    const ran = await runCaptured({ model: apiModel(api), hooks: ['today'], address: sidecar.address })
    const days = new Set([day, todayUtc()])

    expect(api.requests).toHaveLength(3)
    for (const { body } of api.requests) {
      const [base, added, rest] = (body.system ?? '').split('\n\nToday is ')
      expect(base).toBe(ran.result.system)
      expect(days.has(added?.slice(0, 10) ?? '')).toBe(true)
      expect(added?.slice(10)).toBe('.')
      expect(rest).toBeUndefined()
    }
    expect(ran.result.system).not.toContain('Today is')
    expect(JSON.stringify(ran.result.messages)).not.toContain('Today is')
    expect(ran.stderr.match(/\[today\] added to this turn's system prompt: "Today is /g)).toHaveLength(3)
  })

  it('saves the answer as redact rewrote it', async () => {
    api = await startFakeApi([{ text: 'Card 4111111111111111 is on file.', tools: [list] }, { text: 'Stored 4111111111111111 safely.' }])
    const ran = await runCaptured({ model: apiModel(api), hooks: ['redact'], address: sidecar.address })

    const sentBack = api.requests[1]?.body.messages[1]
    expect(sentBack).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Card [redacted] is on file.' }, { type: 'tool_use', ...list }] })
    expect(ran.result.messages.at(-1)).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Stored [redacted] safely.' }] })
    expect(ran.result.answer).toBe('Stored [redacted] safely.')
    expect(ran.stderr).toContain('[redact] rewrote the answer before it was saved; saved: "Stored [redacted] safely."')
    // The text streamed to the terminal as the model wrote it; the hook runs once the answer is complete.
    expect(ran.stdout).toBe('Card 4111111111111111 is on file.\nStored 4111111111111111 safely.\n')
  })
})

describe('afterRun reasons', () => {
  const ended = (stderr: string): string | undefined => /\[audit\] notify: audit: session agent-[\w-]+ ended: (\w+)/.exec(stderr)?.[1]

  it('end_turn when the model finishes', async () => {
    api = await startFakeApi([{ text: 'Nothing to do.' }])
    const ran = await runCaptured({ model: apiModel(api), hooks: ['audit'], address: sidecar.address })
    expect(ran.result).toMatchObject({ reason: 'end_turn', turns: 1, answer: 'Nothing to do.' })
    expect(ended(ran.stderr)).toBe('end_turn')
  })

  it('interrupted when the run is aborted while the model streams', async () => {
    api = await startFakeApi([{ hang: 'Working on' }])
    const controller = new AbortController()
    const ran = await runCaptured({ model: apiModel(api), hooks: ['audit'], address: sidecar.address, signal: controller.signal, onText: () => controller.abort() })
    expect(ran.result.reason).toBe('interrupted')
    expect(ran.result.error).toBeUndefined()
    expect(ran.stdout).toBe('Working on\n')
    expect(ended(ran.stderr)).toBe('interrupted')
    expect(ran.stderr).toContain('hookd agent: interrupted')
  })

  it('error when the API fails, with what the API said', async () => {
    api = await startFakeApi([{ status: 500, type: 'api_error', message: 'Internal server error' }])
    const ran = await runCaptured({ model: apiModel(api), hooks: ['audit'], address: sidecar.address })
    expect(ran.result.reason).toBe('error')
    expect(ran.result.error?.kind).toBe('server')
    expect(ran.result.error?.message).toContain('the Anthropic API failed (500 api_error: Internal server error)')
    expect(ended(ran.stderr)).toBe('error')
    expect(ran.stderr).toContain('hookd agent: stopped by an error: the Anthropic API failed (500 api_error: Internal server error)')
  })
})

describe('API errors', () => {
  it('says the key was refused on 401', async () => {
    api = await startFakeApi([{ status: 401, type: 'authentication_error', message: 'invalid x-api-key' }])
    const ran = await runCaptured({ model: apiModel(api) })
    expect(ran.result.error?.kind).toBe('auth')
    expect(ran.result.error?.message).toBe(
      'the Anthropic API refused the key (401 authentication_error: invalid x-api-key); check that ANTHROPIC_API_KEY holds a valid, active API key',
    )
  })

  it('says to wait on 429, with the wait the API asks for', async () => {
    api = await startFakeApi([{ status: 429, type: 'rate_limit_error', message: 'Number of requests has exceeded your rate limit', headers: { 'retry-after': '30' } }])
    const ran = await runCaptured({ model: apiModel(api) })
    expect(ran.result.error?.kind).toBe('rate-limit')
    expect(ran.result.error?.message).toMatch(/rate-limiting this key \(429 rate_limit_error: .*\); it asks to wait 30 s; wait a little and run again/)
  })

  it('names the address it could not reach', async () => {
    const url = await deadUrl()
    const ran = await runCaptured({ model: apiModel(url) })
    expect(ran.result.error?.kind).toBe('network')
    expect(ran.result.error?.message).toContain(`cannot reach the Anthropic API at ${url}`)
    expect(ran.result.error?.message).toContain('ANTHROPIC_BASE_URL')
  })
})
