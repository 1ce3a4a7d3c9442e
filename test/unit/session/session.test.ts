/**
 * A session (src/sidecar/session/session.ts) through its seams: a real registry over temporary folders
 * with a fake loader, a fake runner, a fake tenant and a link that records what the host would receive.
 */
import { arch, platform } from 'node:os'
import { afterEach, describe, expect, it } from 'vitest'
import type { CapabilityReply } from '../../../src/sidecar/runners/hook-runner.js'
import { HookdError } from '../../../src/protocol/status.js'
import { HOOKD_VERSION } from '../../../src/protocol/version.js'
import type { OpenSessionWire } from '../../../src/protocol/wire.js'
import type { Registry } from '../../../src/sidecar/hooks/registry.js'
import { DEFAULT_LIMITS, DEFAULT_WAITS } from '../../../src/sidecar/limits.js'
import { Session } from '../../../src/sidecar/session/session.js'
import { SingleTenant, type Tenant } from '../../../src/sidecar/tenant.js'
import {
  FakeLink,
  FakeLoader,
  FakeRunner,
  type FakeRunnerOptions,
  type FakeTenant,
  type FakeTenantOptions,
  type HookFolder,
  type HooksRoot,
  type LinkAnswer,
  type Script,
  aborted,
  exporting,
  fails,
  hooksFolder,
  loadedRegistry,
  nothing,
  fakeTenant,
  openRequest,
  payload,
  returns,
  until,
} from '../fakes.js'

interface World {
  folder: HooksRoot
  registry: Registry
  loader: FakeLoader
  runner: FakeRunner
  tenant: FakeTenant
  link: FakeLink
  /** Opens a session declaring `hooks` (and the rest of `overrides`) on the world's tenant and link. */
  open(hooks: string[], overrides?: Partial<OpenSessionWire>): Session
}

const worlds: World[] = []

afterEach(async () => {
  for (const w of worlds.splice(0)) {
    await w.registry.close()
    await w.folder.dispose()
  }
})

interface WorldOptions {
  runner?: FakeRunnerOptions
  tenant?: FakeTenantOptions
  link?: LinkAnswer
  quotaFails?: boolean
  /** Set up the loader before the folders load. */
  loader?: (loader: FakeLoader) => void
}

async function world(hooks: Record<string, HookFolder>, options: WorldOptions = {}): Promise<World> {
  const folder = await hooksFolder(hooks)
  const loader = new FakeLoader()
  options.loader?.(loader)
  const runner = new FakeRunner(options.runner)
  const registry = await loadedRegistry(folder.root, loader, runner)
  const tenant = fakeTenant(registry, runner, options.tenant)
  const link = new FakeLink(options.link, options.quotaFails === undefined ? {} : { quotaFails: options.quotaFails })
  const w: World = {
    folder,
    registry,
    loader,
    runner,
    tenant,
    link,
    open: (declared, overrides = {}) => Session.open(tenant, openRequest({ hooks: declared, ...overrides }), link).session,
  }
  worlds.push(w)
  return w
}

/** The HookdError `run` throws (or its promise rejects with), as code, gRPC status and message. */
async function hookdError(run: () => unknown): Promise<{ code: string; grpcStatus: number; message: string }> {
  try {
    await run()
  } catch (err) {
    if (!(err instanceof HookdError)) throw err
    return { code: err.code, grpcStatus: err.grpcStatus, message: err.message }
  }
  throw new Error('expected a HookdError, but nothing was thrown')
}

const call = { id: 'c1', name: 'shell', arguments: { command: 'rm -rf build' } }
const modelRequest = { system: 'S', model: 'm', messages: [] }

/** A hook that makes one capability call and answers nothing: its reply is in `runner.calls[i].capabilities`. */
function asks(capability: string, args: unknown): Script {
  return async (r) => {
    await r.onCapability(capability, args)
    return nothing()
  }
}

/** The reply the first invocation of `hook` got to its first capability call. */
function replyOf(w: World, hook: string): CapabilityReply | undefined {
  return w.runner.callsOf(hook)[0]?.capabilities[0]?.reply
}

describe('open', () => {
  it('refuses a protocol version it does not speak with FAILED_PRECONDITION', async () => {
    const w = await world({})
    expect(await hookdError(() => w.open([], { protocolVersion: 2 }))).toEqual({
      code: 'failed-precondition',
      grpcStatus: 9,
      message: `protocol_version 2 is not supported; this sidecar (hookd ${HOOKD_VERSION}) speaks version 1`,
    })
  })

  it('refuses an empty session id', async () => {
    const w = await world({})
    expect(await hookdError(() => w.open([], { sessionId: '' }))).toEqual({
      code: 'invalid-argument',
      grpcStatus: 3,
      message: 'open.session_id is empty; give the run an id',
    })
  })

  it('refuses a hook declared twice', async () => {
    const w = await world({ guard: { index: exporting('beforeToolExecute') } })
    expect((await hookdError(() => w.open(['guard', 'guard']))).message).toBe("hook 'guard' is declared twice; declare each hook once")
  })

  it('refuses unknown hooks with NOT_FOUND, naming them, the hooks folder and the hooks available', async () => {
    const w = await world({ guard: { index: exporting('beforeToolExecute') }, audit: { index: exporting('afterRun') } })
    expect(await hookdError(() => w.open(['guard', 'gaurd']))).toEqual({
      code: 'not-found',
      grpcStatus: 5,
      message: `unknown hook 'gaurd' in ${w.folder.root} (available: audit, guard)`,
    })
    expect((await hookdError(() => w.open(['x', 'guard', 'y']))).message).toBe(`unknown hooks 'x', 'y' in ${w.folder.root} (available: audit, guard)`)
  })

  it('says none are available in an empty folder, and names a tenant\'s hooks rather than its folder', async () => {
    const w = await world({})
    expect((await hookdError(() => w.open(['guard']))).message).toBe(`unknown hook 'guard' in ${w.folder.root} (available: none)`)
    const acme = fakeTenant(w.registry, w.runner, { id: 'acme' })
    const message = (await hookdError(() => Session.open(acme, openRequest({ hooks: ['guard'] }), w.link))).message
    expect(message).toMatch(/^unknown hook 'guard' in tenant 'acme'/)
    expect(message).not.toContain(w.folder.root)
  })

  it('opens with a declared hook that failed to load: pushes its load diagnostic and skips it on every point', async () => {
    const w = await world(
      // Line 4 is inside the file: a line past its end would be reported on its last one.
      { guard: { index: exporting('beforeToolExecute') }, broken: { index: `${exporting('beforeToolExecute')}\n\n\nx = ((1)\n` } },
      { loader: (l) => l.script('broken', { ok: false, message: 'SyntaxError: missing )', line: 4 }) },
    )
    w.runner.script('guard', () => nothing())
    const { session, hooks } = Session.open(w.tenant, openRequest({ hooks: ['broken', 'guard'] }), w.link)
    expect(hooks.map((h) => [h.name, h.status])).toEqual([['broken', 'broken'], ['guard', 'ready']])
    expect(w.link.diagnostics).toEqual([
      {
        hook: 'broken',
        point: '',
        kind: 'load',
        message: 'SyntaxError: missing ). The hook is skipped until it loads; fix broken/index.js and save it',
        file: 'broken/index.js',
        line: 4,
      },
    ])
    const result = await session.call(1, 'beforeToolExecute', payload(call))
    expect(result.trace.map((t) => t.hook)).toEqual(['guard'])
    expect(w.runner.calls.map((c) => c.hook)).toEqual(['guard'])
  })

  it('pushes a stale hook\'s failed reload at open, and runs the version it still serves', async () => {
    const w = await world({ guard: { index: exporting('beforeToolExecute') } })
    const v1 = w.registry.get('guard')?.version
    await w.folder.write({ guard: { index: '' } })
    await w.registry.loadOne('guard')
    w.runner.script('guard', () => nothing())
    const session = w.open(['guard'])
    expect(w.link.diagnostics.map((d) => [d.kind, d.version])).toEqual([['load', v1]])
    expect(w.link.diagnostics[0]?.message).toMatch(/^hook 'guard' failed to reload: /)
    await session.call(1, 'beforeToolExecute', payload(call))
    expect(w.runner.calls.map((c) => c.version)).toEqual([v1])
  })

  it('answers the declared hooks in declared order, and pushes nothing when all loaded', async () => {
    const w = await world({ a: { index: exporting('afterRun') }, b: { index: exporting('beforeRun', 'afterRun') } })
    const { session, hooks } = Session.open(w.tenant, openRequest({ sessionId: 'run-9', hooks: ['b', 'a'] }), w.link)
    expect(session.id).toBe('run-9')
    expect(hooks.map((h) => [h.name, h.status, h.points, h.version])).toEqual([
      ['b', 'ready', ['beforeRun', 'afterRun'], w.registry.get('b')?.version],
      ['a', 'ready', ['afterRun'], w.registry.get('a')?.version],
    ])
    expect(w.link.diagnostics).toEqual([])
  })
})

describe('call', () => {
  it('runs the point through the declared hooks and gives the result a decision id', async () => {
    const w = await world({ a: { index: exporting('beforeModelRequest') }, b: { index: exporting('beforeModelRequest') } })
    w.runner.script('a', (r) => returns({ system: `${(r.args[0] as { system: string }).system}A` })).script('b', () => returns({ system: 'B' }))
    const result = await w.open(['b', 'a']).call(3, 'beforeModelRequest', payload(modelRequest))
    expect(result).toMatchObject({ seq: 3, point: 'beforeModelRequest', result: { system: 'BA' }, diagnostics: [] })
    expect(result.trace.map((t) => [t.hook, t.outcome])).toEqual([['b', 'changed'], ['a', 'changed']])
    expect(result.decisionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
  })

  it('refuses a seq used before in the session with INVALID_ARGUMENT', async () => {
    const w = await world({})
    const session = w.open([])
    await session.call(1, 'beforeRun', payload({ sessionId: 's', agentId: 'a', modelId: 'm' }))
    expect(await hookdError(() => session.call(1, 'afterRun', payload({ reason: 'end_turn' })))).toEqual({
      code: 'invalid-argument',
      grpcStatus: 3,
      message: 'point call seq 1 was already used in this session; use a new seq for every call',
    })
  })

  it('does not use up the seq of a call it refused', async () => {
    const w = await world({})
    const session = w.open([])
    await expect(session.call(1, 'afterRun', payload({ reason: 'nope' }))).rejects.toBeInstanceOf(HookdError)
    await expect(session.call(1, 'afterRun', payload({ reason: 'end_turn' }))).resolves.toMatchObject({ seq: 1, result: {} })
  })

  it('refuses an unknown point, naming the closest one or the step points', async () => {
    const w = await world({})
    const error = await hookdError(() => w.open([]).call(1, 'beforeTool', payload({})))
    expect(error.code).toBe('invalid-argument')
    expect(error.message).toBe(
      "unknown point 'beforeTool'; the step points are beforeRun, afterRun, beforeModelRequest, afterModelResponse, beforeToolExecute, afterToolExecute; docs/points.md lists the event points",
    )
    const near = await hookdError(() => w.open([]).call(1, 'tool:gat', payload({})))
    expect(near.message).toBe("unknown point 'tool:gat'; did you mean 'tool:gate'?")
  })

  it('refuses a payload that does not fit the point, naming the path of what is wrong', async () => {
    const w = await world({})
    const session = w.open([])
    expect(await hookdError(() => session.call(1, 'beforeToolExecute', payload({ id: 'c1', name: 'shell', arguments: 'rm' })))).toEqual({
      code: 'invalid-argument',
      grpcStatus: 3,
      message: 'beforeToolExecute payload.arguments: Invalid input: expected record, received string',
    })
    expect((await hookdError(() => session.call(2, 'afterToolExecute', payload({ call, result: { text: 1, isError: false } })))).message).toBe(
      'afterToolExecute payload.result.text: Invalid input: expected string, received number',
    )
  })

  it('refuses a payload that is not JSON, or not an object where the point needs one', async () => {
    const w = await world({})
    const session = w.open([])
    expect((await hookdError(() => session.call(1, 'beforeRun', Buffer.from('{"sessionId":')))).message).toMatch(/^beforeRun payload is not valid JSON \(/)
    expect((await hookdError(() => session.call(2, 'tool:gate', payload([1])))).message).toBe('tool:gate payload: Invalid input: expected record, received array')
  })

  it('sends a hook\'s log lines to the host as they come, tagged with seq, hook and point', async () => {
    const w = await world({ audit: { index: exporting('beforeToolExecute') } })
    w.runner.script('audit', (r) => {
      r.onLog('tool call c1 shell')
      return nothing()
    })
    const before = Date.now()
    await w.open(['audit']).call(4, 'beforeToolExecute', payload(call))
    expect(w.link.logs).toEqual([{ seq: 4, hook: 'audit', point: 'beforeToolExecute', message: 'tool call c1 shell', timeMs: expect.any(Number) }])
    expect(w.link.logs[0]?.timeMs).toBeGreaterThanOrEqual(before)
  })

  it('counts each call against the tenant and releases it when the call ends', async () => {
    const w = await world({ a: { index: exporting('beforeRun', 'afterRun') } })
    w.runner.script('a', () => fails('throw', 'boom'))
    const session = w.open(['a'])
    await session.call(1, 'beforeRun', payload({ sessionId: 's', agentId: 'a', modelId: 'm' }))
    await session.call(2, 'afterRun', payload({ reason: 'error' }))
    expect([w.tenant.admitted, w.tenant.released]).toEqual([2, 2])
  })
})

describe('ctx data', () => {
  it('gives each hook the run\'s workdir, session, agent, its config, the system, its name, version and point', async () => {
    const w = await world({ guard: { index: exporting('beforeToolExecute', 'tool:gate'), json: { config: { level: 2 } } }, plain: { index: exporting('beforeToolExecute') } })
    w.runner.script('guard', () => nothing()).script('plain', () => nothing())
    const session = w.open(['guard', 'plain'], { sessionId: 'run-7', agentId: 'careful', modelId: 'claude-x', workdir: '/home/me/proj', interactive: false, autoApprove: true })
    await session.call(1, 'beforeToolExecute', payload(call))
    const version = w.registry.get('guard')?.version as string
    expect(w.runner.calls[0]?.ctx).toEqual({
      workdir: '/home/me/proj',
      session: { id: 'run-7', interactive: false, autoApprove: true },
      agent: { id: 'careful', modelId: 'claude-x' },
      config: { level: 2 },
      system: { platform: platform(), arch: arch(), hookdVersion: HOOKD_VERSION },
      env: {},
      hook: { name: 'guard', version, point: 'beforeToolExecute' },
    })
    expect(w.runner.calls[1]?.ctx).toMatchObject({ config: {}, hook: { name: 'plain', point: 'beforeToolExecute' } })
    expect(w.runner.calls[0]?.limits).toBe(w.tenant.limits)
  })

  it('names the event point in ctx.hook.point when a step-point handler serves it', async () => {
    const w = await world({ guard: { index: exporting('beforeToolExecute') } })
    w.runner.script('guard', () => returns({ allow: false, reason: 'no' }))
    const result = await w.open(['guard']).call(1, 'tool:gate', payload({ callId: 'c1', name: 'shell', input: {} }))
    expect(w.runner.calls[0]).toMatchObject({ point: 'beforeToolExecute', ctx: { hook: { name: 'guard', point: 'tool:gate' } } })
    expect(result.result).toEqual({ block: true, reason: 'no' })
  })

  it('narrows the env to the names the session\'s policy lists, then to those the tenant allows', async () => {
    const w = await world({ a: { index: exporting('afterRun') } }, { tenant: { envAllow: ['CI', 'HOME'] } })
    w.runner.script('a', () => nothing())
    const env = { CI: '1', HOME: '/home/me', TOKEN: 'secret', PATH: '/bin' }
    const policy = { file: 'read-write' as const, httpOrigins: [], env: ['CI', 'TOKEN'], denyConfirm: false }
    await w.open(['a'], { env, policy }).call(1, 'afterRun', payload({ reason: 'end_turn' }))
    expect(w.runner.calls[0]?.ctx.env).toEqual({ CI: '1' })
  })

  it('gives hooks the env the policy lists under a tenant that narrows nothing, and none without a policy', async () => {
    const w = await world({ a: { index: exporting('afterRun') } })
    w.runner.script('a', () => nothing())
    const single = new SingleTenant(w.registry, w.runner, DEFAULT_LIMITS, DEFAULT_WAITS, undefined)
    const env = { CI: '1', TOKEN: 'secret', PATH: '/bin' }
    const policy = { file: 'read-write' as const, httpOrigins: [], env: ['CI', 'TOKEN', 'MISSING'], denyConfirm: false }
    await Session.open(single, openRequest({ hooks: ['a'], env, policy }), w.link).session.call(1, 'afterRun', payload({ reason: 'end_turn' }))
    await Session.open(single, openRequest({ hooks: ['a'], env }), w.link).session.call(1, 'afterRun', payload({ reason: 'end_turn' }))
    expect(w.runner.calls.map((c) => c.ctx.env)).toEqual([{ CI: '1', TOKEN: 'secret' }, {}])
  })
})

describe('capability calls', () => {
  const readWrite = { file: 'read-write' as const, httpOrigins: [], env: [], denyConfirm: false }

  /** Runs one beforeToolExecute call in which hook 'h' makes one capability call; returns its reply. */
  async function ask(capability: string, args: unknown, options: WorldOptions & { open?: Partial<OpenSessionWire> } = {}): Promise<{ w: World; reply: CapabilityReply | undefined }> {
    const w = await world({ h: { index: exporting('beforeToolExecute') } }, options)
    w.runner.script('h', asks(capability, args))
    await w.open(['h'], options.open).call(1, 'beforeToolExecute', payload(call))
    return { w, reply: replyOf(w, 'h') }
  }

  const answered: LinkAnswer = (c) => ({ ok: true, value: `host answered ${c.capability}` })

  it('forwards an allowed call to the host with its id, seq, hook and point, and hands the hook the host\'s reply', async () => {
    const { w, reply } = await ask('file.read', ['notes.txt'], { link: answered })
    expect(w.link.capabilities).toEqual([{ id: 1, seq: 1, hook: 'h', point: 'beforeToolExecute', capability: 'file.read', args: ['notes.txt'] }])
    expect(reply).toEqual({ ok: true, value: 'host answered file.read' })
  })

  it('refuses file calls as the session\'s file policy says, without reaching the host', async () => {
    const none = await ask('file.read', ['notes.txt'], { link: answered, open: { policy: { ...readWrite, file: 'none' } } })
    expect(none.reply).toEqual({ ok: false, code: 'denied', message: "ctx.file.read('notes.txt') refused: this session allows no file access" })
    const read = await ask('file.write', ['out.txt', 'x'], { link: answered, open: { policy: { ...readWrite, file: 'read' } } })
    expect(read.reply).toEqual({ ok: false, code: 'denied', message: "ctx.file.write('out.txt') refused: this session allows reading files only" })
    expect([...none.w.link.capabilities, ...read.w.link.capabilities]).toEqual([])
  })

  it('lets reads through under a read-only policy', async () => {
    const { reply } = await ask('file.list', ['src'], { link: answered, open: { policy: { ...readWrite, file: 'read' } } })
    expect(reply).toEqual({ ok: true, value: 'host answered file.list' })
  })

  it('refuses paths outside the workdir and absolute paths', async () => {
    expect((await ask('file.read', ['../../etc/passwd'], { link: answered })).reply).toEqual({
      ok: false,
      code: 'denied',
      message: "ctx.file.read('../../etc/passwd') refused: the path leads outside the workdir",
    })
    expect((await ask('file.exists', ['/etc/passwd'], { link: answered })).reply).toEqual({
      ok: false,
      code: 'denied',
      message: "ctx.file.exists('/etc/passwd') refused: absolute paths are refused; use a path relative to the workdir",
    })
  })

  it('refuses http origins the policy does not list, and forwards those it does (origins compared normalised)', async () => {
    const policy = { ...readWrite, httpOrigins: ['HTTPS://API.example.com:443/v1'] }
    expect((await ask('http.fetch', ['https://evil.example/steal'], { link: answered, open: { policy } })).reply).toEqual({
      ok: false,
      code: 'denied',
      message: "ctx.http.fetch('https://evil.example/steal') refused: origin https://evil.example is not allowed (allowed origins: https://api.example.com)",
    })
    const allowed = await ask('http.fetch', ['https://api.example.com/items', { method: 'GET' }], { link: answered, open: { policy } })
    expect(allowed.reply).toEqual({ ok: true, value: 'host answered http.fetch' })
    expect(allowed.w.link.capabilities[0]?.args).toEqual(['https://api.example.com/items', { method: 'GET' }])
  })

  it('refuses every http origin and allows files read-write when the session sends no policy', async () => {
    expect((await ask('http.fetch', ['https://a.example/'], { link: answered })).reply).toMatchObject({ ok: false, code: 'denied' })
    expect((await ask('file.write', ['a.txt', 'x'], { link: answered })).reply).toEqual({ ok: true, value: 'host answered file.write' })
  })

  it('refuses confirm when the session denies it, even when it is not interactive', async () => {
    const { w, reply } = await ask('confirm', [{ title: 'Go?' }], { link: answered, open: { interactive: false, autoApprove: true, policy: { ...readWrite, denyConfirm: true } } })
    expect(reply).toEqual({ ok: false, code: 'denied', message: "ctx.confirm({ title: 'Go?' }) refused: this session does not allow ctx.confirm" })
    expect(w.link.capabilities).toEqual([])
  })

  it('refuses what the tenant\'s policy refuses although the session allows it', async () => {
    const policy = { ...readWrite, httpOrigins: ['https://api.example.com'] }
    const refusal = (capability: string): string | undefined => (capability === 'http.fetch' ? "ctx.http.fetch('https://api.example.com/x') refused: tenant 'acme' allows no HTTP" : undefined)
    const { w, reply } = await ask('http.fetch', ['https://api.example.com/x'], { link: answered, open: { policy }, tenant: { refusal } })
    expect(reply).toEqual({ ok: false, code: 'denied', message: "ctx.http.fetch('https://api.example.com/x') refused: tenant 'acme' allows no HTTP" })
    expect(w.link.capabilities).toEqual([])
  })

  it('answers confirm in a non-interactive session with auto-approve, without reaching the host', async () => {
    const yes = await ask('confirm', [{ title: 'Go?' }], { link: answered, open: { interactive: false, autoApprove: true } })
    const no = await ask('confirm', [{ title: 'Go?' }], { link: answered, open: { interactive: false, autoApprove: false } })
    expect([yes.reply, no.reply]).toEqual([{ ok: true, value: true }, { ok: true, value: false }])
    expect([...yes.w.link.capabilities, ...no.w.link.capabilities]).toEqual([])
  })

  it('refuses an unknown capability and invalid arguments before the policy, as invalid', async () => {
    expect((await ask('exec', ['ls'], { link: answered })).reply).toEqual({ ok: false, code: 'invalid', message: "ctx has no capability 'exec'" })
    expect((await ask('file.read', [''], { link: answered })).reply).toEqual({ ok: false, code: 'invalid', message: 'ctx.file.read: invalid arguments[0]: a path is required' })
  })

  it('forwards only the fields a capability takes', async () => {
    const { w } = await ask('notify', [{ title: 'done', body: 'ok', html: '<b>x</b>' }], { link: answered })
    expect(w.link.capabilities[0]?.args).toEqual([{ title: 'done', body: 'ok' }])
  })

  it('hands the hook a failed reply when the host\'s handler rejects', async () => {
    const { reply } = await ask('file.read', ['a.txt'], { link: () => Promise.reject(new Error('disk on fire')) })
    expect(reply).toEqual({ ok: false, code: 'failed', message: 'Error: disk on fire' })
  })
})

describe('capability answers over a stream', () => {
  it('waits for Session.answer: the hook gets the human\'s answer, ids count up per session', async () => {
    const w = await world({ guard: { index: exporting('beforeToolExecute') } })
    w.runner.script('guard', async (r) => {
      await r.onCapability('notify', [{ title: 'checking' }])
      const reply = await r.onCapability('confirm', [{ title: 'Dangerous command', body: 'rm -rf build' }])
      return reply.ok && reply.value === true ? nothing() : returns({ allow: false, reason: 'refused by the user' })
    })
    const session = w.open(['guard'])
    const pending = session.call(5, 'beforeToolExecute', payload(call))
    await until(() => w.link.capabilities.length === 1)
    session.answer(1, { ok: true, value: null })
    await until(() => w.link.capabilities.length === 2)
    expect(w.link.capabilities[1]).toEqual({ id: 2, seq: 5, hook: 'guard', point: 'beforeToolExecute', capability: 'confirm', args: [{ title: 'Dangerous command', body: 'rm -rf build' }] })
    session.answer(2, { ok: true, value: false })
    expect((await pending).result).toEqual({ allow: false, reason: 'refused by the user', refusedBy: 'guard', arguments: call.arguments })
  })

  it('times a capability out at the tenant\'s ceiling, drops the late answer, and refuses an id never sent', async () => {
    const w = await world({ h: { index: exporting('beforeToolExecute') } }, { tenant: { waits: { capabilityMs: 20, confirmMs: 40 } } })
    w.runner.script('h', async (r) => {
      await r.onCapability('file.read', ['a.txt'])
      await r.onCapability('confirm', [{ title: 'Go?' }])
      return nothing()
    })
    const session = w.open(['h'])
    await session.call(1, 'beforeToolExecute', payload(call))
    expect(w.runner.calls[0]?.capabilities.map((c) => c.reply)).toEqual([
      { ok: false, code: 'timeout', message: 'ctx.file.read: the host did not answer within 20 ms' },
      { ok: false, code: 'timeout', message: 'ctx.confirm: the host did not answer within 40 ms' },
    ])
    expect(() => session.answer(1, { ok: true, value: 'late' })).not.toThrow()
    expect(() => session.answer(2, { ok: true, value: true })).not.toThrow()
    expect(await hookdError(() => session.answer(3, { ok: true, value: 1 }))).toEqual({
      code: 'failed-precondition',
      grpcStatus: 9,
      message: 'capability_result 3 answers no capability call of this session (the last call made has id 2)',
    })
    expect((await hookdError(() => session.answer(0, { ok: true, value: 1 }))).message).toMatch(/^capability_result 0 answers no capability call/)
  })

  it('drops a second answer to the same call', async () => {
    const w = await world({ h: { index: exporting('beforeToolExecute') } })
    w.runner.script('h', asks('file.read', ['a.txt']))
    const session = w.open(['h'])
    const pending = session.call(1, 'beforeToolExecute', payload(call))
    await until(() => w.link.capabilities.length === 1)
    session.answer(1, { ok: true, value: 'first' })
    session.answer(1, { ok: true, value: 'second' })
    await pending
    expect(replyOf(w, 'h')).toEqual({ ok: true, value: 'first' })
  })
})

describe('cancel', () => {
  it('answers the call\'s waiting capabilities as cancelled, and the gate is refused', async () => {
    const w = await world({ a: { index: exporting('beforeToolExecute') }, b: { index: exporting('beforeToolExecute') } })
    w.runner
      .script('a', async (r) => {
        await r.onCapability('confirm', [{ title: 'Go?' }])
        return r.signal?.aborted ? fails('cancelled', 'the point call was cancelled') : nothing()
      })
      .script('b', () => nothing())
    const session = w.open(['a', 'b'])
    const pending = session.call(2, 'beforeToolExecute', payload(call))
    await until(() => w.link.capabilities.length === 1)
    session.cancel(2)
    const result = await pending
    expect(replyOf(w, 'a')).toEqual({ ok: false, code: 'cancelled', message: 'the host cancelled this point call' })
    // A cancelled gate is refused by hookd: the hook that could not decide stops the chain.
    expect(result.trace.map((t) => [t.hook, t.outcome])).toEqual([['a', 'cancelled'], ['b', 'not-run']])
    expect(result.result).toMatchObject({ allow: false, refusedBy: 'hookd', reason: "hookd refused the call: hook 'a' could not decide (the call was cancelled)" })
    expect(w.runner.callsOf('b')).toEqual([])
    expect(() => session.answer(1, { ok: true, value: true })).not.toThrow()
  })

  it('leaves other calls of the session alone', async () => {
    const w = await world({ a: { index: exporting('beforeToolExecute') } })
    w.runner.script('a', asks('file.read', ['x']))
    const session = w.open(['a'])
    const first = session.call(1, 'beforeToolExecute', payload(call))
    const second = session.call(2, 'beforeToolExecute', payload(call))
    await until(() => w.link.capabilities.length === 2)
    session.cancel(1)
    session.answer(2, { ok: true, value: 'kept' })
    await Promise.all([first, second])
    expect(w.runner.calls.map((c) => c.capabilities[0]?.reply)).toEqual([
      { ok: false, code: 'cancelled', message: 'the host cancelled this point call' },
      { ok: true, value: 'kept' },
    ])
  })
})

describe('close and abort', () => {
  it('close runs afterRun with the reason as seq 0, then refuses further calls and a second close', async () => {
    const w = await world({ a: { index: exporting('afterRun') }, b: { index: exporting('beforeToolExecute') } })
    w.runner.script('a', () => nothing())
    const session = w.open(['a', 'b'])
    const closed = await session.close('interrupted')
    expect(closed).toMatchObject({ seq: 0, point: 'afterRun', result: {}, diagnostics: [] })
    expect(closed.trace.map((t) => [t.hook, t.outcome])).toEqual([['a', 'no-opinion']])
    expect(w.runner.calls.map((c) => [c.hook, c.point, c.args])).toEqual([['a', 'afterRun', [{ reason: 'interrupted' }]]])
    expect(await hookdError(() => session.call(3, 'beforeToolExecute', payload(call)))).toEqual({
      code: 'failed-precondition',
      grpcStatus: 9,
      message: 'point call 3 arrived after the session was closed',
    })
    expect((await hookdError(() => session.close('end_turn'))).message).toBe('the session is already closed or closing; send close once')
  })

  it('close with a reason afterRun does not take fails like a bad payload, and the session is closed all the same', async () => {
    const w = await world({})
    const session = w.open([])
    expect((await hookdError(() => session.close('done'))).message).toMatch(/^afterRun payload\.reason: /)
    expect((await hookdError(() => session.call(1, 'afterRun', payload({ reason: 'end_turn' })))).code).toBe('failed-precondition')
  })

  it('abort answers waiting capabilities as unavailable, cancels what runs, and refuses later calls', async () => {
    const w = await world({ a: { index: exporting('beforeToolExecute') }, b: { index: exporting('beforeToolExecute') } })
    w.runner.script('a', asks('confirm', [{ title: 'Go?' }])).script('b', () => nothing())
    const session = w.open(['a', 'b'])
    const pending = session.call(1, 'beforeToolExecute', payload(call))
    await until(() => w.link.capabilities.length === 1)
    session.abort()
    const result = await pending
    expect(replyOf(w, 'a')).toEqual({ ok: false, code: 'unavailable', message: 'the host disconnected' })
    expect(result.trace.map((t) => [t.hook, t.outcome])).toEqual([['a', 'no-opinion'], ['b', 'cancelled']])
    expect((await hookdError(() => session.call(2, 'beforeToolExecute', payload(call)))).message).toBe('point call 2 arrived after the session was closed')
  })

  it('aborts a hook that waits on the signal', async () => {
    const w = await world({ slow: { index: exporting('afterToolExecute') } })
    w.runner.script('slow', async (r) => {
      await aborted(r.signal)
      return fails('cancelled', 'the point call was cancelled')
    })
    const session = w.open(['slow'])
    const pending = session.call(1, 'afterToolExecute', payload({ call, result: { text: 'x', isError: false } }))
    await until(() => w.runner.calls.length === 1)
    session.abort()
    const result = await pending
    expect(result.trace.map((t) => t.outcome)).toEqual(['cancelled'])
    expect(result.result).toEqual({ text: 'x', isError: false })
  })
})

describe('tenant quotas', () => {
  const overQuota = "tenant 'acme' is over its quota of 10 point calls per second"

  it('refuses a gate without running a hook: refusedBy hookd, the hooks traced not-run, a quota diagnostic', async () => {
    const w = await world({ guard: { index: exporting('beforeToolExecute') }, audit: { index: exporting('afterRun') } }, { tenant: { overQuota } })
    const result = await w.open(['guard', 'audit']).call(1, 'beforeToolExecute', payload(call))
    expect(result.result).toEqual({ allow: false, reason: overQuota, refusedBy: 'hookd', arguments: call.arguments })
    expect(result.diagnostics).toEqual([{ hook: '', point: 'beforeToolExecute', kind: 'quota', message: `${overQuota}; no hook ran and the call was refused` }])
    expect(result.trace).toEqual([{ hook: 'guard', version: w.registry.get('guard')?.version, outcome: 'not-run', durationUs: 0, cpuUs: 0 }])
    expect(w.runner.calls).toEqual([])
    expect(result.decisionId).toEqual(expect.any(String))
  })

  it('blocks a zidane gate, and leaves other points unchanged', async () => {
    const w = await world({ guard: { index: exporting('beforeToolExecute', 'beforeModelRequest') } }, { tenant: { overQuota } })
    const session = w.open(['guard'])
    expect((await session.call(1, 'tool:gate', payload({ callId: 'c1', name: 'shell', input: {} }))).result).toEqual({ block: true, reason: overQuota })
    const other = await session.call(2, 'beforeModelRequest', payload(modelRequest))
    expect(other.result).toEqual({ system: 'S' })
    expect(other.diagnostics.map((d) => [d.kind, d.message])).toEqual([['quota', `${overQuota}; no hook ran and nothing was changed`]])
    expect(w.runner.calls).toEqual([])
  })

  it('fails the call with RESOURCE_EXHAUSTED on a link that asks for it (the unary Invoke)', async () => {
    const w = await world({}, { tenant: { overQuota }, quotaFails: true })
    expect(await hookdError(() => w.open([]).call(1, 'beforeToolExecute', payload(call)))).toEqual({ code: 'resource-exhausted', grpcStatus: 8, message: overQuota })
  })
})

describe('following the registry', () => {
  it('pushes reloads, failed reloads and removals of declared hooks only, until the session closes', async () => {
    const w = await world({ guard: { index: exporting('beforeToolExecute') }, other: { index: exporting('afterRun') } })
    const session = w.open(['guard'])
    session.followRegistry()

    await w.folder.write({ guard: { index: exporting('beforeToolExecute', 'afterRun') }, other: { index: exporting('beforeRun') } })
    await w.registry.loadOne('guard')
    await w.registry.loadOne('other')
    await w.folder.write({ guard: { index: '' } })
    await w.registry.loadOne('guard')
    await w.folder.remove('guard')
    await w.registry.loadOne('guard')
    expect(w.link.diagnostics.map((d) => [d.hook, d.kind])).toEqual([
      ['guard', 'reload'],
      ['guard', 'load'],
      ['guard', 'hook-removed'],
    ])
    expect(w.link.diagnostics[0]?.message).toMatch(/^hook 'guard' reloaded: now serving version /)

    await session.close('end_turn')
    await w.folder.write({ guard: { index: exporting('beforeToolExecute') } })
    await w.registry.loadOne('guard')
    expect(w.link.diagnostics).toHaveLength(3)
  })

  it('stops following when the session is aborted', async () => {
    const w = await world({ guard: { index: exporting('beforeToolExecute') } })
    const session = w.open(['guard'])
    session.followRegistry()
    session.abort()
    await w.folder.write({ guard: { index: exporting('afterRun') } })
    await w.registry.loadOne('guard')
    expect(w.link.diagnostics).toEqual([])
  })

  it('reports a declared hook removed mid-session as hook-removed on each point it served, and runs the others', async () => {
    const w = await world({ guard: { index: exporting('beforeToolExecute') }, audit: { index: exporting('beforeToolExecute') } })
    w.runner.script('audit', () => nothing())
    const session = w.open(['guard', 'audit'])
    const version = w.registry.get('guard')?.version
    await w.folder.remove('guard')
    await w.registry.loadOne('guard')
    const result = await session.call(1, 'beforeToolExecute', payload(call))
    expect(result.diagnostics).toEqual([
      {
        hook: 'guard',
        point: 'beforeToolExecute',
        kind: 'hook-removed',
        message: `hook 'guard' beforeToolExecute: the hook's folder ${w.folder.root}/guard was removed while this session used it; skipped. Restore the folder, or drop 'guard' from the agent's hooks`,
        file: 'guard/index.js',
        version,
      },
    ])
    expect(result.trace.map((t) => [t.hook, t.outcome])).toEqual([['guard', 'failed'], ['audit', 'no-opinion']])
    expect((await session.call(2, 'afterRun', payload({ reason: 'end_turn' }))).diagnostics).toEqual([])
  })

  it('runs the version current when the call started', async () => {
    const w = await world({ guard: { index: exporting('beforeToolExecute') } })
    const v1 = w.registry.get('guard')?.version
    const session = w.open(['guard'])
    let v2: string | undefined
    w.runner.script('guard', async () => {
      await w.folder.write({ guard: { index: exporting('beforeToolExecute', 'afterRun') } })
      await w.registry.loadOne('guard')
      v2 = w.registry.get('guard')?.version
      return nothing()
    })
    const first = await session.call(1, 'beforeToolExecute', payload(call))
    await session.call(2, 'beforeToolExecute', payload(call))
    expect(first.trace[0]?.version).toBe(v1)
    expect(v2).not.toBe(v1)
    expect(w.runner.calls.map((c) => c.version)).toEqual([v1, v2])
  })
})

describe('the one-trip chain path', () => {
  const three = { a: { index: exporting('beforeModelRequest') }, b: { index: exporting('beforeModelRequest') }, c: { index: exporting('beforeModelRequest') } }
  const appends = (tag: string): Script => (r) => returns({ system: `${(r.args[0] as { system: string }).system}${tag}` })

  it('sends every hook of the call to the runner as one chain when they share a runner that can run chains', async () => {
    const w = await world(three, { runner: { chains: true } })
    w.runner.script('a', appends('A')).script('b', appends('B')).script('c', appends('C'))
    const result = await w.open(['c', 'a', 'b'], { workdir: '/w' }).call(1, 'beforeModelRequest', payload(modelRequest))
    expect(result.result).toEqual({ system: 'SCAB' })
    expect(result.trace.map((t) => [t.hook, t.outcome])).toEqual([['c', 'changed'], ['a', 'changed'], ['b', 'changed']])
    expect(w.runner.chainRequests).toHaveLength(1)
    const request = w.runner.chainRequests[0]
    expect(request?.point).toBe('beforeModelRequest')
    expect(request?.initial).toEqual(modelRequest)
    expect(request?.steps.map((s) => [s.hook.name, s.points, s.ctx.workdir, s.ctx.hook.name])).toEqual([
      ['c', ['beforeModelRequest'], '/w', 'c'],
      ['a', ['beforeModelRequest'], '/w', 'a'],
      ['b', ['beforeModelRequest'], '/w', 'b'],
    ])
    expect(w.runner.calls.map((c) => [c.hook, c.via])).toEqual([['c', 'chain'], ['a', 'chain'], ['b', 'chain']])
  })

  it('checks capability calls made inside a chain against the session\'s policy and tags them with their hook', async () => {
    const w = await world(three, { runner: { chains: true }, link: () => ({ ok: true, value: 'yes' }) })
    w.runner.script('a', () => nothing()).script('b', asks('file.read', ['../x'])).script('c', asks('file.read', ['ok.txt']))
    await w.open(['a', 'b', 'c']).call(4, 'beforeModelRequest', payload(modelRequest))
    expect(replyOf(w, 'b')).toMatchObject({ ok: false, code: 'denied' })
    expect(w.link.capabilities).toEqual([{ id: 1, seq: 4, hook: 'c', point: 'beforeModelRequest', capability: 'file.read', args: ['ok.txt'] }])
  })

  it('invokes on their own the steps the chain run did not report', async () => {
    const w = await world(three, { runner: { chains: true, chainEndsBefore: 1 } })
    w.runner.script('a', appends('A')).script('b', appends('B')).script('c', appends('C'))
    const result = await w.open(['a', 'b', 'c']).call(1, 'beforeModelRequest', payload(modelRequest))
    expect(result.result).toEqual({ system: 'SABC' })
    expect(w.runner.calls.map((c) => [c.hook, c.via])).toEqual([['a', 'chain'], ['b', 'invoke'], ['c', 'invoke']])
    expect(w.runner.calls[1]?.args).toEqual([{ ...modelRequest, system: 'SA' }])
  })

  it('invokes step by step when only one declared hook serves the point', async () => {
    const w = await world({ a: { index: exporting('beforeModelRequest') }, b: { index: exporting('afterRun') } }, { runner: { chains: true } })
    w.runner.script('a', appends('A'))
    await w.open(['a', 'b']).call(1, 'beforeModelRequest', payload(modelRequest))
    expect(w.runner.chainRequests).toEqual([])
    expect(w.runner.calls.map((c) => c.via)).toEqual(['invoke'])
  })

  it('invokes step by step when a declared hook was removed', async () => {
    const w = await world(three, { runner: { chains: true } })
    w.runner.script('a', appends('A')).script('c', appends('C'))
    const session = w.open(['a', 'b', 'c'])
    await w.folder.remove('b')
    await w.registry.loadOne('b')
    const result = await session.call(1, 'beforeModelRequest', payload(modelRequest))
    expect(result.result).toEqual({ system: 'SAC' })
    expect(w.runner.chainRequests).toEqual([])
    expect(result.trace.map((t) => t.outcome)).toEqual(['changed', 'failed', 'changed'])
  })

  it('cancels the chain run: the running step ends cancelled and the rest are not invoked on their own', async () => {
    const w = await world(three, { runner: { chains: true } })
    const session = w.open(['a', 'b', 'c'])
    w.runner
      .script('a', async (r) => {
        await aborted(r.signal)
        return fails('cancelled', 'the point call was cancelled')
      })
      .script('b', appends('B'))
      .script('c', appends('C'))
    const pending = session.call(1, 'beforeModelRequest', payload(modelRequest))
    await until(() => w.runner.calls.length === 1)
    session.cancel(1)
    const result = await pending
    expect(result.trace.map((t) => t.outcome)).toEqual(['cancelled', 'cancelled', 'cancelled'])
    expect(result.result).toEqual({ system: 'S' })
    expect(w.runner.chainRequests).toHaveLength(1)
    expect(w.runner.calls.map((c) => [c.hook, c.via])).toEqual([['a', 'chain']])
  })
})

describe('SingleTenant', () => {
  it('serves a session with no quota, no ceiling and no tracking', async () => {
    const w = await world({ a: { index: exporting('beforeToolExecute') } }, { link: () => ({ ok: true, value: 'ok' }) })
    const single: Tenant = new SingleTenant(w.registry, w.runner, DEFAULT_LIMITS, DEFAULT_WAITS, undefined)
    w.runner.script('a', asks('http.fetch', ['https://api.example.com/']))
    const policy = { file: 'read-write' as const, httpOrigins: ['https://api.example.com'], env: [], denyConfirm: false }
    const { session } = Session.open(single, openRequest({ hooks: ['a'], policy }), w.link)
    const result = await session.call(1, 'beforeToolExecute', payload(call))
    expect(result.result).toEqual({ allow: true, arguments: call.arguments })
    expect(replyOf(w, 'a')).toEqual({ ok: true, value: 'ok' })
    expect(single.id).toBeUndefined()
  })
})
