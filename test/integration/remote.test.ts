/**
 * Remote hooks (proto/hookd/v1/hook.proto): hooks served by their own gRPC server take their place in
 * the chain with the same chaining, deadline and non-fatal rules as sandboxed hooks. Real sidecar, real
 * sockets; the remote hooks are grpc-js servers in this process (test/support/remote-hook.ts).
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Diagnostic, LogLineData } from '../../src/host/index.js'
import { RAW_ANSWER, RemoteCapabilityError, type RemoteHookServer, serveRemoteHook } from '../support/remote-hook.js'
import { addFiles, hook, type Running, sessionOptions, startSidecar, writeTree } from '../support/sidecar.js'

// Long enough that a remote hook doing real work (200 log lines) finishes on a loaded machine; the
// timeout tests wait past it.
const WALL_MS = 2000
const call = { id: 'c1', name: 'shell', arguments: { command: 'ls' } }
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms).unref())

let running: Running
let root: string
let sockets: string
const servers: RemoteHookServer[] = []

async function remote(name: string, ...args: Parameters<typeof serveRemoteHook> extends [string, ...infer R] ? R : never): Promise<RemoteHookServer> {
  const server = await serveRemoteHook(`unix:${join(sockets, `${name}.sock`)}`, ...args)
  servers.push(server)
  return server
}

let tagger: RemoteHookServer

beforeAll(async () => {
  sockets = await mkdtemp(join(tmpdir(), 'hookd-remote-'))
  tagger = await remote('tagger', {
    beforeToolExecute: (inv, io) => {
      io.log(`remote saw ${(inv.args[0] as typeof call).name}`)
      return { arguments: { ...(inv.args[0] as typeof call).arguments, remote: true, n: ((inv.args[0] as { arguments: { n?: number } }).arguments.n ?? 0) + 10 } }
    },
    'tool:transform': (inv) => {
      const event = inv.args[inv.mutateArg] as Record<string, unknown>
      event.result = `[remote] ${String(event.result)}`
      event.name = 'renamed'
      return event
    },
  })
  await remote('asker', {
    beforeToolExecute: async (_inv, io) => {
      const answer = await io.capability('confirm', [{ title: 'remote asks', body: 'ok?' }])
      return { arguments: { answer } }
    },
    afterToolExecute: async (_inv, io) => {
      try {
        await io.capability('file.read', ['../outside'])
      } catch (err) {
        return { text: `${(err as RemoteCapabilityError).code}: ${(err as Error).message}` }
      }
      return { text: 'read it' }
    },
  })
  await remote('denied', { beforeToolExecute: async (_inv, io) => io.capability('file.read', ['/etc/passwd']) })
  await remote('thrower', {
    beforeToolExecute: () => {
      throw new Error('remote boom')
    },
  })
  await remote('slow', { beforeToolExecute: () => sleep(WALL_MS * 10).then(() => ({ allow: false })) })
  await remote('patient', {
    beforeToolExecute: async (_inv, io) => {
      await io.capability('confirm', [{ title: 'slow human' }])
      return { arguments: { waited: true } }
    },
  })
  await remote('hostile', {
    beforeToolExecute: (inv, io) => {
      const mode = (inv.args[0] as typeof call).arguments.command
      if (mode === 'not-json') io.stream.write({ answer: { value: Buffer.from('{nope') } })
      else if (mode === 'empty-message') io.stream.write({})
      else if (mode === 'no-answer') io.stream.end()
      else if (mode === 'status') io.stream.emit('error', { code: 13, details: 'server exploded' })
      else if (mode === 'huge') io.stream.write({ answer: { value: Buffer.from(JSON.stringify({ arguments: { x: 'y'.repeat(300_000) } })) } })
      else if (mode === 'wrong-type') return 'allow'
      else if (mode === 'flood-log') for (let i = 0; i < 200; i++) io.log(`line ${i} ${'x'.repeat(100)}`)
      else if (mode === 'dup-capability') {
        io.stream.write({ capabilityCall: { id: 5, capability: 'confirm', args: Buffer.from('[{"title":"a"}]') } })
        io.stream.write({ capabilityCall: { id: 5, capability: 'confirm', args: Buffer.from('[{"title":"b"}]') } })
        return RAW_ANSWER
      }
      if (mode === 'flood-log') return { arguments: { flooded: true } }
      return RAW_ANSWER
    },
  })
  await remote('misnamed', { beforeToolExecute: () => undefined }, { points: ['beforeToolExecut'] })
  const tcp = await serveRemoteHook('127.0.0.1:0', { beforeModelRequest: (inv) => ({ system: `${(inv.args[0] as { system: string }).system} +tcp` }) })
  servers.push(tcp)

  root = await writeTree({
    'args-first/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ arguments: { ...c.arguments, n: 1 } })` }),
    'args-second/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ arguments: { ...c.arguments, n: c.arguments.n + 1 } })` }),
    'refuse/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ allow: false, reason: 'no' })` }),
    'gate-zidane/index.js': hook({ 'tool:transform': `(ctx, e) => { e.result = e.result + ' (sandboxed)' }` }),
    'tagger/hook.json': JSON.stringify({ remote: `unix:${join(sockets, 'tagger.sock')}`, config: { level: 2 } }),
    'asker/hook.json': JSON.stringify({ remote: `unix:${join(sockets, 'asker.sock')}` }),
    'denied/hook.json': JSON.stringify({ remote: `unix:${join(sockets, 'denied.sock')}` }),
    'thrower/hook.json': JSON.stringify({ remote: `unix:${join(sockets, 'thrower.sock')}` }),
    'slow/hook.json': JSON.stringify({ remote: `unix:${join(sockets, 'slow.sock')}` }),
    'patient/hook.json': JSON.stringify({ remote: `unix:${join(sockets, 'patient.sock')}` }),
    'hostile/hook.json': JSON.stringify({ remote: `unix:${join(sockets, 'hostile.sock')}` }),
    'misnamed/hook.json': JSON.stringify({ remote: `unix:${join(sockets, 'misnamed.sock')}` }),
    'over-tcp/hook.json': JSON.stringify({ remote: tcp.address }),
    'nobody/hook.json': JSON.stringify({ remote: 'unix:nobody.sock' }),
    'both/index.js': hook({ beforeToolExecute: `(ctx, c) => {}` }),
    'both/hook.json': JSON.stringify({ remote: 'unix:x.sock' }),
    'bad-address/hook.json': '{\n  "remote": "nowhere"\n}\n',
  })
  running = await startSidecar({ hooks: root, limits: { wallMs: WALL_MS, resultBytes: 100_000, logBytes: 16_000 } })
})

afterAll(async () => {
  await running?.stop()
  await Promise.all(servers.map((s) => s.stop()))
  await rm(sockets, { recursive: true, force: true })
})

describe('a remote hook in the chain', () => {
  it('takes its place in declared order, chains, logs live and is traced', async () => {
    const logs: LogLineData[] = []
    const session = await running.client.openSession(
      sessionOptions(['args-first', 'tagger', 'args-second'], { capabilities: { log: (l) => logs.push(l) } }),
    )
    expect(session.hooks.find((h) => h.name === 'tagger')).toMatchObject({ status: 'ready', points: ['beforeToolExecute', 'tool:transform'] })
    const out = await session.call('beforeToolExecute', call)
    expect(out.result).toEqual({ allow: true, arguments: { command: 'ls', n: 12, remote: true } })
    expect(out.trace.map((t) => [t.hook, t.outcome])).toEqual([
      ['args-first', 'changed'],
      ['tagger', 'changed'],
      ['args-second', 'changed'],
    ])
    expect(out.diagnostics).toEqual([])
    expect(logs.map((l) => [l.hook, l.point, l.message])).toEqual([['tagger', 'beforeToolExecute', 'remote saw shell']])
    const inv = tagger.invocations.at(-1)
    expect(inv).toMatchObject({ hook: 'tagger', handler: 'beforeToolExecute', point: 'beforeToolExecute', mutate: false, wallMs: WALL_MS })
    expect(inv?.ctx).toMatchObject({ config: { level: 2 }, hook: { name: 'tagger', point: 'beforeToolExecute' }, session: { interactive: false } })
    session.abandon()
  })

  it('is not consulted after a refusal', async () => {
    const before = tagger.invocations.length
    const session = await running.client.openSession(sessionOptions(['refuse', 'tagger']))
    const out = await session.call('beforeToolExecute', call)
    expect(out.trace.map((t) => t.outcome)).toEqual(['refused', 'not-run'])
    expect(tagger.invocations.length).toBe(before)
    session.abandon()
  })

  it('serves a zidane point through its rienda alias', async () => {
    const out = await running.client.invoke(sessionOptions(['tagger']), 'tool:gate', { name: 'shell', callId: 'c9', input: { command: 'ls' } })
    expect(tagger.invocations.at(-1)).toMatchObject({ handler: 'beforeToolExecute', point: 'tool:gate', args: [{ id: 'c9', name: 'shell', arguments: { command: 'ls' } }] })
    // A zidane gate cannot rewrite arguments: the same rule as for a sandboxed hook.
    expect(out.result).toEqual({})
    expect(out.diagnostics.map((d) => [d.hook, d.kind])).toEqual([['tagger', 'ignored-field']])
  })

  it('answers a mutating point with its mutated event; fields the point does not allow are dropped', async () => {
    const session = await running.client.openSession(sessionOptions(['gate-zidane', 'tagger']))
    const out = await session.call('tool:transform', { name: 'shell', result: 'out', isError: false })
    expect(out.result).toEqual({ result: '[remote] out (sandboxed)' })
    expect(tagger.invocations.at(-1)).toMatchObject({ mutate: true, mutateArg: 0, point: 'tool:transform' })
    expect(out.diagnostics.map((d) => [d.hook, d.kind])).toEqual([['tagger', 'ignored-field']])
    session.abandon()
  })

  it('works over HOST:PORT too', async () => {
    const out = await running.client.invoke(sessionOptions(['over-tcp']), 'beforeModelRequest', { system: 'S', model: 'm', messages: [] })
    expect(out.result).toEqual({ system: 'S +tcp' })
  })
})

describe('capabilities of a remote hook go through the session', () => {
  it('forwards confirm to an interactive host', async () => {
    const asked: string[] = []
    const session = await running.client.openSession(
      sessionOptions(['asker'], { interactive: true, capabilities: { confirm: (m, o) => (asked.push(`${o.hook}: ${m.title}`), false) } }),
    )
    const out = await session.call('beforeToolExecute', call)
    expect(out.result.arguments).toEqual({ answer: false })
    expect(asked).toEqual(['asker: remote asks'])
    session.abandon()
  })

  it('answers confirm with auto-approve when not interactive', async () => {
    const out = await running.client.invoke(sessionOptions(['asker'], { autoApprove: true }), 'beforeToolExecute', call)
    expect(out.result.arguments).toEqual({ answer: true })
  })

  it('refuses what the policy refuses, before the host sees it', async () => {
    const session = await running.client.openSession(sessionOptions(['asker']))
    const out = await session.call('afterToolExecute', { call, result: { text: 'x', isError: false } })
    expect(out.result.text).toBe("denied: ctx.file.read('../outside') refused: the path leads outside the workdir")
    session.abandon()
  })

  it('reports an unhandled denial as capability-denied', async () => {
    const out = await running.client.invoke(sessionOptions(['denied', 'args-first']), 'beforeToolExecute', call)
    expect(out.result.arguments).toEqual({ command: 'ls', n: 1 })
    expect(out.diagnostics).toEqual([
      expect.objectContaining({ hook: 'denied', kind: 'capability-denied', message: expect.stringContaining('absolute paths are refused') }),
    ])
  })

  it('does not count time waiting on the human against the wall-time limit', async () => {
    const session = await running.client.openSession(
      sessionOptions(['patient'], { interactive: true, capabilities: { confirm: () => sleep(WALL_MS * 2).then(() => true) } }),
    )
    const out = await session.call('beforeToolExecute', call)
    expect(out.diagnostics).toEqual([])
    expect(out.result.arguments).toEqual({ waited: true })
    session.abandon()
  })
})

describe('failures are diagnostics; a hook that could not decide refuses the gate', () => {
  it('reports a remote handler that fails as throw, with its message and line', async () => {
    const out = await running.client.invoke(sessionOptions(['args-first', 'thrower', 'args-second']), 'beforeToolExecute', call)
    expect(out.result.arguments).toEqual({ command: 'ls', n: 2 })
    expect(out.diagnostics).toEqual([
      expect.objectContaining({ hook: 'thrower', kind: 'throw', message: "hook 'thrower' beforeToolExecute: Error: remote boom", line: 7, file: 'thrower/hook.json' }),
    ])
    expect(out.trace.map((t) => t.outcome)).toEqual(['changed', 'failed', 'changed'])
  })

  it('cancels a remote hook past its wall-time limit with a timeout: the gate is refused, or skipped when the session asks', async () => {
    const started = Date.now()
    const out = await running.client.invoke(sessionOptions(['slow', 'args-first']), 'beforeToolExecute', call)
    expect(Date.now() - started).toBeLessThan(WALL_MS * 5)
    expect(out.result).toEqual({
      allow: false,
      arguments: { command: 'ls' },
      reason: "hookd refused the call: hook 'slow' could not decide (it ran past its wall-time limit)",
      refusedBy: 'hookd',
    })
    expect(out.diagnostics).toEqual([
      expect.objectContaining({ hook: 'slow', kind: 'timeout', message: expect.stringContaining(`wall-time limit of ${WALL_MS} ms`) }),
    ])
    const skipped = await running.client.invoke(sessionOptions(['slow', 'args-first'], { onError: 'skip' }), 'beforeToolExecute', call)
    expect(skipped.result).toEqual({ allow: true, arguments: { command: 'ls', n: 1 } })
    expect(skipped.diagnostics).toEqual([expect.objectContaining({ hook: 'slow', kind: 'timeout' })])
  })

  it.each([
    ['not-json', 'invalid-result', 'the answer is not valid JSON'],
    ['empty-message', 'invalid-result', 'none of answer, capability_call, log set'],
    ['no-answer', 'invalid-result', 'ended its Run stream without an answer'],
    ['status', 'throw', 'the remote hook failed: server exploded'],
    ['huge', 'result-too-large', 'over the limit'],
    ['wrong-type', 'invalid-result', 'it returned a string'],
  ])('reports a remote hook that %s as %s', async (mode, kind, text) => {
    const out = await running.client.invoke(
      sessionOptions(['hostile', 'args-first'], { interactive: false }),
      'beforeToolExecute',
      { ...call, arguments: { command: mode } },
    )
    if (kind === 'result-too-large') {
      // A hook that could not answer (not its own mistake) refuses the gate.
      expect(out.result).toEqual({
        allow: false,
        arguments: { command: mode },
        reason: "hookd refused the call: hook 'hostile' could not decide (its answer was over the size limit)",
        refusedBy: 'hookd',
      })
    } else {
      // The hook's own mistakes skip it, as in the seed.
      expect(out.result).toEqual({ allow: true, arguments: { command: mode, n: 1 } })
    }
    expect(out.diagnostics).toEqual([expect.objectContaining({ hook: 'hostile', kind, message: expect.stringContaining(text) })])
  })

  it('reports a remote hook that reuses a waiting capability id as invalid-result', async () => {
    const session = await running.client.openSession(
      sessionOptions(['hostile', 'args-first'], { interactive: true, capabilities: { confirm: () => sleep(WALL_MS).then(() => true) } }),
    )
    const out = await session.call('beforeToolExecute', { ...call, arguments: { command: 'dup-capability' } })
    expect(out.result.arguments).toEqual({ command: 'dup-capability', n: 1 })
    expect(out.diagnostics).toEqual([
      expect.objectContaining({ hook: 'hostile', kind: 'invalid-result', message: expect.stringContaining('capability_call id 5 is already waiting') }),
    ])
    session.abandon()
  })

  it('caps a remote hook’s log volume', async () => {
    const logs: LogLineData[] = []
    const session = await running.client.openSession(sessionOptions(['hostile'], { capabilities: { log: (l) => logs.push(l) } }))
    const out = await session.call('beforeToolExecute', { ...call, arguments: { command: 'flood-log' } })
    expect(out.result.arguments).toEqual({ flooded: true })
    expect(logs.length).toBeLessThan(200)
    expect(logs.at(-1)?.message).toContain('passed the limit of')
    session.abandon()
  })

  it('reports a host cancel as cancelled', async () => {
    const session = await running.client.openSession(sessionOptions(['slow']))
    const abort = new AbortController()
    const pending = session.call('beforeToolExecute', call, { signal: abort.signal })
    await sleep(100)
    abort.abort()
    const out = await pending
    expect(out.trace.map((t) => t.outcome)).toEqual(['cancelled'])
    session.abandon()
  })
})

describe('loading remote hooks', () => {
  it('reports an unreachable remote hook as a load diagnostic at open, and skips it', async () => {
    const pushed: Diagnostic[] = []
    const session = await running.client.openSession(
      sessionOptions(['nobody', 'args-first'], { capabilities: { diagnostic: (d) => pushed.push(d) } }),
    )
    const out = await session.call('beforeToolExecute', call)
    // Pushed right after `opened`, so before any result.
    expect(pushed).toEqual([
      expect.objectContaining({ hook: 'nobody', kind: 'load', file: 'nobody/hook.json', message: expect.stringContaining(`the remote hook at unix:nobody.sock cannot be reached`) }),
    ])
    expect(out.trace.map((t) => t.hook)).toEqual(['args-first'])
    session.abandon()
  })

  it('says what is wrong with a remote hook.json', async () => {
    const hooks = await running.client.listHooks()
    const error = (name: string) => hooks.find((h) => h.name === name)?.lastError
    expect(error('both')?.message).toContain('a hook is either sandboxed (index.js) or remote')
    expect(error('bad-address')).toMatchObject({ file: 'bad-address/hook.json', line: 2, message: expect.stringContaining("address 'nowhere' is not understood") })
    expect(error('misnamed')?.message).toContain("unknown point 'beforeToolExecut' (did you mean 'beforeToolExecute'?)")
  })

  it('picks up a remote hook that starts after hookd, without touching its folder', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hookd-late-'))
    await addFiles(root, { 'late/hook.json': JSON.stringify({ remote: `unix:${join(dir, 'late.sock')}` }) })
    await running.sidecar.registry.loadOne('late')
    expect((await running.client.listHooks()).find((h) => h.name === 'late')?.status).toBe('broken')
    const late = await serveRemoteHook(`unix:${join(dir, 'late.sock')}`, { beforeModelRequest: () => ({ system: 'late' }) })
    servers.push(late)
    let status: string | undefined
    for (let i = 0; i < 40 && status !== 'ready'; i++) {
      await sleep(100)
      status = (await running.client.listHooks()).find((h) => h.name === 'late')?.status
    }
    expect(status).toBe('ready')
    const out = await running.client.invoke(sessionOptions(['late']), 'beforeModelRequest', { system: 'S', model: 'm', messages: [] })
    expect(out.result).toEqual({ system: 'late' })

    await late.stop()
    const gone = await running.client.invoke(sessionOptions(['late', 'args-first']), 'beforeToolExecute', call)
    // The late hook handles no tool point; ask it for its own point instead.
    expect(gone.trace.map((t) => t.hook)).toEqual(['args-first'])
    const down = await running.client.invoke(sessionOptions(['late']), 'beforeModelRequest', { system: 'S', model: 'm', messages: [] })
    expect(down.result).toEqual({ system: 'S' })
    expect(down.diagnostics).toEqual([expect.objectContaining({ hook: 'late', kind: 'unavailable', message: expect.stringContaining('could not be reached') })])
    await rm(dir, { recursive: true, force: true })
  })
})
