/**
 * Fakes of the two seams (docs/architecture.md), for tests that run in memory: no worker process, no
 * gRPC, no socket.
 *
 * - `FakeRunner` is a `HookRunner` whose invocations are scripted per hook name and recorded.
 * - `FakeLoader` is the `HookLoader` a `Registry` takes: it "loads" a hook by reading the names its
 *   source assigns with `exports.NAME = ...`, unless a hook's load is scripted.
 * - `fakeTenant` is a `Tenant` around a real `Registry`; `FakeLink` is a `SessionLink` that records.
 * - `hooksFolder` writes hook folders to a temporary root, `chainStep` turns a hook into a `ChainStep`.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { CapabilityArgs, CapabilityName } from '../../src/protocol/capabilities.js'
import type { Diagnostic, DiagnosticKind } from '../../src/protocol/diagnostic.js'
import { type AnyPoint, type PointName, getPoint } from '../../src/protocol/points/points.js'
import type { CapabilityCallData, LogLineData, OpenSessionWire } from '../../src/protocol/wire.js'
import type { ChainHook, ChainStep } from '../../src/sidecar/chain/chain.js'
import { runChain } from '../../src/sidecar/chain/chain.js'
import type { HookLoader, RegistryOptions } from '../../src/sidecar/hooks/registry.js'
import { Registry } from '../../src/sidecar/hooks/registry.js'
import { DEFAULT_LIMITS, DEFAULT_WAITS, type HostWaits, type Limits } from '../../src/sidecar/limits.js'
import type {
  CapabilityReply,
  ChainRequest,
  ChainRun,
  CtxData,
  HookRunner,
  InvocationReport,
  InvocationRequest,
  RunnableHook,
} from '../../src/sidecar/runners/hook-runner.js'
import type { SessionLink } from '../../src/sidecar/session/session.js'
import type { Admission, Tenant } from '../../src/sidecar/tenant.js'
import type { LoadOutcome } from '../../src/sidecar/worker/protocol.js'

// ------------------------------------------------------------------------------------------------
// Small tools
// ------------------------------------------------------------------------------------------------

/** A promise with its resolve function, to hold a fake until a test lets it go. */
export interface Deferred<T> {
  promise: Promise<T>
  resolve(value: T): void
}

export function deferred<T = void>(): Deferred<T> {
  let resolve: (value: T) => void = () => {}
  const promise = new Promise<T>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

/** Resolves once `signal` aborts (at once when it already has). */
export function aborted(signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return new Promise(() => {})
  if (signal.aborted) return Promise.resolve()
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }))
}

/** Waits until `check` holds, polling; fails after `ms` (generous: the machine may be busy). */
export async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const started = Date.now()
  while (!check()) {
    if (Date.now() - started > ms) throw new Error(`condition not met within ${ms} ms`)
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
}

// ------------------------------------------------------------------------------------------------
// FakeRunner
// ------------------------------------------------------------------------------------------------

/** What a scripted invocation answers. */
export type Answer =
  /** The hook returned `value` (sent on as JSON text, as a sandbox does). */
  | { value: unknown; wallUs?: number; cpuUs?: number }
  /** The hook returned undefined. */
  | { nothing: true; wallUs?: number; cpuUs?: number }
  /** The invocation failed (a throw, a limit, a crash...). */
  | { fail: DiagnosticKind; message: string; line?: number; wallUs?: number; cpuUs?: number }
  /** The sandbox sent text that is not JSON (a broken runner). */
  | { rawValue: string; wallUs?: number; cpuUs?: number }

export const returns = (value: unknown): Answer => ({ value })
export const nothing = (): Answer => ({ nothing: true })
export const fails = (kind: DiagnosticKind, message: string, line?: number): Answer =>
  line === undefined ? { fail: kind, message } : { fail: kind, message, line }

/** The request a script receives: the real request, its arguments copied (scripts may change them). */
export type Script = (request: InvocationRequest) => Answer | Promise<Answer>

/** A handler of an event point: changes the event it is given (`args[resultArg]`), which is its answer. */
export function mutates(change: (event: Record<string, unknown>) => void): Script {
  return (request) => {
    const event = request.args[request.resultArg ?? 0] as Record<string, unknown>
    change(event)
    return returns(event)
  }
}

/** One capability call a hook made during an invocation, with the reply it got. */
export interface CapabilityUse {
  capability: string
  args: unknown
  reply: CapabilityReply
}

/** One invocation as the runner received it. */
export interface RecordedCall {
  hook: string
  version: string
  /** The export called (the point, or the step point serving it). */
  point: string
  args: unknown[]
  resultArg: number | undefined
  ctx: CtxData
  limits: Limits
  /** 'invoke': one invocation; 'chain': a step of a chain run in one trip (invokeChain). */
  via: 'invoke' | 'chain'
  capabilities: CapabilityUse[]
}

export interface FakeRunnerOptions {
  /** Also implement `invokeChain` (the one-trip chain path of a session). */
  chains?: boolean
  /** With `chains`: the chain run ends before this step (as when its worker dies); later steps report undefined. */
  chainEndsBefore?: number
  /** Timing of every report unless an answer says otherwise. */
  wallUs?: number
  cpuUs?: number
}

/** A HookRunner whose invocations are scripted per hook name. Every request it gets is recorded. */
export class FakeRunner implements HookRunner {
  readonly calls: RecordedCall[] = []
  readonly chainRequests: ChainRequest[] = []
  private readonly scripts = new Map<string, Script>()
  invokeChain?: (request: ChainRequest) => ChainRun
  closed = false

  constructor(private readonly options: FakeRunnerOptions = {}) {
    if (options.chains) this.invokeChain = (request) => this.chain(request)
  }

  /** Scripts every invocation of hook `name`. Unscripted hooks fail with an `internal` diagnostic. */
  script(name: string, script: Script): this {
    this.scripts.set(name, script)
    return this
  }

  /** The recorded calls of one hook. */
  callsOf(name: string): RecordedCall[] {
    return this.calls.filter((c) => c.hook === name)
  }

  invoke(request: InvocationRequest): Promise<InvocationReport> {
    return this.run(request, 'invoke')
  }

  async close(): Promise<void> {
    this.closed = true
  }

  private async run(request: InvocationRequest, via: RecordedCall['via']): Promise<InvocationReport> {
    const capabilities: CapabilityUse[] = []
    const args = structuredClone([...request.args])
    this.calls.push({
      hook: request.hook.name,
      version: request.hook.version,
      point: request.point,
      args: structuredClone(args),
      resultArg: request.resultArg,
      ctx: request.ctx,
      limits: request.limits,
      via,
      capabilities,
    })
    const recording: InvocationRequest = {
      ...request,
      args,
      onCapability: async (capability, capabilityArgs) => {
        const reply = await request.onCapability(capability, capabilityArgs)
        capabilities.push({ capability, args: capabilityArgs, reply })
        return reply
      },
    }
    const script = this.scripts.get(request.hook.name)
    const answer: Answer = script ? await script(recording) : fails('internal', `the fake runner has no script for '${request.hook.name}'`)
    return report(answer, this.options)
  }

  /** Like the worker pool: runs the chain's own rules over the steps and reports each step as it ends. */
  private chain(request: ChainRequest): ChainRun {
    this.chainRequests.push(request)
    const reports = request.steps.map(() => deferred<InvocationReport | undefined>())
    const point = getPoint(request.point) as AnyPoint
    const endsBefore = this.options.chainEndsBefore ?? Infinity
    const stop = new Error('the fake chain ended')
    const steps: ChainStep[] = request.steps.map((step, i) => ({
      hook: { name: step.hook.name, version: step.hook.version, filename: step.hook.filename, points: new Set(step.points as PointName[]) },
      invoke: async (handler, args, resultArg) => {
        if (i >= endsBefore) throw stop
        const invocation: InvocationRequest = {
          hook: step.hook,
          point: handler,
          args,
          ctx: step.ctx,
          limits: request.limits,
          onCapability: step.onCapability,
          onLog: step.onLog,
          ...(resultArg !== undefined ? { resultArg } : {}),
          ...(request.signal ? { signal: request.signal } : {}),
        }
        const stepReport = await this.run(invocation, 'chain')
        reports[i]?.resolve(stepReport)
        return stepReport
      },
    }))
    const done = runChain(point, 0, structuredClone(request.initial), steps, { signal: request.signal, jsonDepth: request.limits.jsonDepth })
      .catch((err: unknown) => {
        if (err !== stop) throw err
      })
      .finally(() => {
        for (const r of reports) r.resolve(undefined)
      })
      .then(() => {})
    return { report: (i) => reports[i]?.promise ?? Promise.resolve(undefined), lost: () => false, done }
  }
}

function report(answer: Answer, defaults: FakeRunnerOptions): InvocationReport {
  const timing = { wallUs: answer.wallUs ?? defaults.wallUs ?? 1000, cpuUs: answer.cpuUs ?? defaults.cpuUs ?? 500 }
  if ('fail' in answer) {
    const outcome = answer.line === undefined
      ? { ok: false as const, kind: answer.fail, message: answer.message }
      : { ok: false as const, kind: answer.fail, message: answer.message, line: answer.line }
    return { outcome, ...timing }
  }
  if ('nothing' in answer) return { outcome: { ok: true }, ...timing }
  if ('rawValue' in answer) return { outcome: { ok: true, value: answer.rawValue }, ...timing }
  const text = JSON.stringify(answer.value)
  return { outcome: text === undefined ? { ok: true } : { ok: true, value: text }, ...timing }
}

/** A hook as the chain sees it, run by `runner` with a plain ctx (and `signal`): for tests of runChain alone. */
export function chainStep(
  runner: HookRunner,
  hook: { name: string; points: readonly PointName[]; version?: string; filename?: string },
  signal?: AbortSignal,
): ChainStep {
  const chainHook: ChainHook = {
    name: hook.name,
    version: hook.version ?? `${hook.name}-v1`,
    filename: hook.filename ?? `${hook.name}/index.js`,
    points: new Set(hook.points),
  }
  const runnable: RunnableHook = { name: chainHook.name, version: chainHook.version, filename: chainHook.filename, source: '' }
  return {
    hook: chainHook,
    invoke: (handler, args, resultArg) =>
      runner.invoke({
        hook: runnable,
        point: handler,
        args,
        ...(resultArg !== undefined ? { resultArg } : {}),
        ctx: plainCtx(chainHook.name, chainHook.version, handler),
        limits: DEFAULT_LIMITS,
        onCapability: () => Promise.resolve({ ok: false, code: 'unavailable', message: 'no host in this test' }),
        onLog: () => {},
        ...(signal ? { signal } : {}),
      }),
  }
}

function plainCtx(name: string, version: string, point: string): CtxData {
  return {
    workdir: '/work',
    session: { id: 's', interactive: false, autoApprove: false },
    agent: { id: 'a', modelId: 'm' },
    config: {},
    system: { platform: 'linux', arch: 'x64', hookdVersion: '0' },
    env: {},
    hook: { name, version, point },
  }
}

// ------------------------------------------------------------------------------------------------
// FakeLoader
// ------------------------------------------------------------------------------------------------

/** What `FakeLoader` answers for one hook: its export names, a failure, or a function of the hook. */
export type LoadScript = LoadOutcome | ((hook: RunnableHook) => LoadOutcome)

/**
 * The registry's HookLoader. By default a hook's exports are the names its source assigns with
 * `exports.NAME =` (so `exports.beforeRun = () => {}` exports `beforeRun`). Counts loads in flight.
 */
export class FakeLoader implements HookLoader {
  readonly loads: RunnableHook[] = []
  active = 0
  maxActive = 0
  private readonly scripts = new Map<string, LoadScript>()
  private held: Deferred<void> | undefined

  script(name: string, outcome: LoadScript): this {
    this.scripts.set(name, outcome)
    return this
  }

  /** Holds every load (started or not) until the returned function is called. */
  hold(): () => void {
    const gate = deferred()
    this.held = gate
    return () => {
      this.held = undefined
      gate.resolve()
    }
  }

  async load(hook: RunnableHook): Promise<LoadOutcome> {
    this.loads.push(hook)
    this.active += 1
    this.maxActive = Math.max(this.maxActive, this.active)
    try {
      if (this.held) await this.held.promise
      else await Promise.resolve()
      const script = this.scripts.get(hook.name)
      if (script) return typeof script === 'function' ? script(hook) : script
      return { ok: true, exports: [...hook.source.matchAll(/\bexports\.(\w+)\s*=/g)].map((m) => m[1] as string) }
    } finally {
      this.active -= 1
    }
  }
}

// ------------------------------------------------------------------------------------------------
// Hook folders and registries
// ------------------------------------------------------------------------------------------------

/** A hook folder's files: index.js as given (or absent), hook.json as given (a string is written as is). */
export interface HookFolder {
  index?: string
  json?: string | Record<string, unknown>
}

/** A temporary hooks root. `write` (re)writes hook folders, `remove` deletes one, `dispose` everything. */
export interface HooksRoot {
  root: string
  write(hooks: Record<string, HookFolder>): Promise<void>
  remove(name: string): Promise<void>
  dispose(): Promise<void>
}

export async function hooksFolder(hooks: Record<string, HookFolder> = {}): Promise<HooksRoot> {
  const root = await mkdtemp(join(tmpdir(), 'hookd-unit-'))
  const write = async (folders: Record<string, HookFolder>): Promise<void> => {
    for (const [name, files] of Object.entries(folders)) {
      const dir = join(root, name)
      await mkdir(dir, { recursive: true })
      if (files.index !== undefined) await writeFile(join(dir, 'index.js'), files.index)
      else await rm(join(dir, 'index.js'), { force: true })
      if (files.json !== undefined) {
        await writeFile(join(dir, 'hook.json'), typeof files.json === 'string' ? files.json : JSON.stringify(files.json, null, 2))
      } else await rm(join(dir, 'hook.json'), { force: true })
    }
  }
  await write(hooks)
  return {
    root,
    write,
    remove: (name) => rm(join(root, name), { recursive: true, force: true }),
    dispose: () => rm(root, { recursive: true, force: true }),
  }
}

/** index.js text exporting these points (as FakeLoader reads it). */
export function exporting(...points: string[]): string {
  return points.map((p) => `exports.${p} = function () {}\n`).join('')
}

/** A registry over `root` with the fake loader and runner, every folder loaded. */
export async function loadedRegistry(
  root: string,
  loader: FakeLoader,
  runner: HookRunner,
  options: Partial<RegistryOptions> = {},
): Promise<Registry> {
  const registry = new Registry(root, { loader, runner, limits: DEFAULT_LIMITS, retryRemotes: false, ...options })
  await registry.loadAll()
  return registry
}

// ------------------------------------------------------------------------------------------------
// Tenant and link
// ------------------------------------------------------------------------------------------------

export interface FakeTenantOptions {
  id?: string
  limits?: Limits
  waits?: Partial<HostWaits>
  /** The tenant's policy ceiling: why it refuses a call the session's policy allowed. */
  refusal?: (capability: CapabilityName, args: unknown) => string | undefined
  /** The env names the tenant lets its hooks see (default: all offered). */
  envAllow?: readonly string[]
  /** Admission: a message refuses every point call as over a quota. */
  overQuota?: string
  /** The operator's floor for gates. */
  onError?: 'default' | 'refuse'
}

/** A Tenant around a real registry, with a few knobs, counting admissions and releases. */
export interface FakeTenant extends Tenant {
  admitted: number
  released: number
  tracked: number
}

export function fakeTenant(registry: Registry, runner: HookRunner, options: FakeTenantOptions = {}): FakeTenant {
  const tenant: FakeTenant = {
    id: options.id,
    registry,
    limits: options.limits ?? DEFAULT_LIMITS,
    waits: { ...DEFAULT_WAITS, ...options.waits },
    runner,
    audit: undefined,
    onError: options.onError ?? 'default',
    admitted: 0,
    released: 0,
    tracked: 0,
    refusal<N extends CapabilityName>(capability: N, args: CapabilityArgs<N>): string | undefined {
      return options.refusal?.(capability, args)
    },
    env(offered) {
      const allow = options.envAllow
      return Object.fromEntries(Object.entries(offered).filter(([name]) => !allow || allow.includes(name)))
    },
    admit(): Admission {
      if (options.overQuota !== undefined) return { ok: false, message: options.overQuota }
      tenant.admitted += 1
      return { ok: true, release: () => void (tenant.released += 1) }
    },
    track() {
      tenant.tracked += 1
      return () => {}
    },
  }
  return tenant
}

/** How a FakeLink answers a capability call: a reply now, or undefined to wait for `Session.answer`. */
export type LinkAnswer = (call: CapabilityCallData) => Promise<CapabilityReply> | CapabilityReply | undefined

/** A SessionLink that records what the session sends its host. */
export class FakeLink implements SessionLink {
  readonly capabilities: CapabilityCallData[] = []
  readonly logs: LogLineData[] = []
  readonly diagnostics: Diagnostic[] = []
  quotaFails?: boolean

  constructor(private readonly answer: LinkAnswer = () => undefined, options: { quotaFails?: boolean } = {}) {
    if (options.quotaFails !== undefined) this.quotaFails = options.quotaFails
  }

  capability(call: CapabilityCallData): Promise<CapabilityReply> | undefined {
    this.capabilities.push(call)
    const reply = this.answer(call)
    return reply === undefined ? undefined : Promise.resolve(reply)
  }

  log(line: LogLineData): void {
    this.logs.push(line)
  }

  diagnostic(d: Diagnostic): void {
    this.diagnostics.push(d)
  }
}

/** An OpenSession request as the wire decodes it, with overrides. */
export function openRequest(overrides: Partial<OpenSessionWire> = {}): OpenSessionWire {
  return {
    protocolVersion: 1,
    onError: 'default',
    sessionId: 'run-1',
    agentId: 'careful',
    modelId: 'claude',
    hooks: [],
    workdir: '/home/me/proj',
    interactive: true,
    autoApprove: false,
    policy: null,
    env: {},
    ...overrides,
  }
}

/** A payload as the host sends it: UTF-8 JSON bytes. */
export function payload(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value))
}
