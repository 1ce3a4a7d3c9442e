/**
 * The agent's link to hookd: one GuardedSession per run (deadlines, fail-closed gates, reconnects), the
 * step points called on it directly, and the hookable instance bridged to it for the event points,
 * as families.ts plans. A run that declares no hooks needs no sidecar: NoHooks answers every point
 * with the payload unchanged.
 */
import type { Hookable } from 'hookable'
import { type AnyPoint, type PointName, type PointPayload, getPoint } from '../../protocol/points/points.js'
import { type BridgeTarget, type HookableLike, bridgeHookable } from '../bridge.js'
import { HookdClient, type PointCallResult, type SessionOptions } from '../client.js'
import type { FailurePolicy } from '../failure-policy.js'
import { GuardedSession } from '../guarded-session.js'
import { autoConfirmDecisions, eventPointDecisions } from './decisions.js'
import { type HookExports, planBridge } from './families.js'
import type { AgentHookMap, RunReason } from './hook-map.js'
import type { AgentUI } from './ui.js'

/** What the loop calls points on: a GuardedSession, or NoHooks. */
export interface HookPort {
  call<N extends PointName>(point: N, payload: PointPayload<N>): Promise<PointCallResult<N>>
  /** Ends the run; hookd runs afterRun with the reason. */
  close(reason: RunReason): Promise<PointCallResult<'afterRun'>>
  subscribedPoints(): ReadonlySet<string>
  onResubscribe?(listener: () => void): () => void
}

/** No hooks declared: every point answers with what was sent. */
export class NoHooks implements HookPort {
  call<N extends PointName>(point: N, payload: PointPayload<N>): Promise<PointCallResult<N>> {
    const spec = getPoint(point) as AnyPoint
    const result = spec.result(spec.payload.parse(payload)) as PointCallResult<N>['result']
    return Promise.resolve({ result, diagnostics: [], trace: [], durationUs: 0 })
  }

  close(reason: RunReason): Promise<PointCallResult<'afterRun'>> {
    return this.call('afterRun', { reason })
  }

  subscribedPoints(): ReadonlySet<string> {
    return new Set()
  }
}

export interface ConnectOptions {
  /** The sidecar; required when `session.hooks` is not empty. */
  address: string | undefined
  session: SessionOptions
  hookable: Hookable<AgentHookMap>
  ui: AgentUI
  failure?: FailurePolicy
  token?: string
}

export interface HookConnection {
  port: HookPort
  /** Removes the bridge's handlers from the hookable instance. */
  unbridge(): void
}

/** The declared hooks' exports, as the sidecar lists them; undefined when it cannot be asked. */
async function declaredExports(address: string, declared: readonly string[], token: string | undefined): Promise<HookExports[] | undefined> {
  let client: HookdClient | undefined
  try {
    client = await HookdClient.connect(address, { connectTimeoutMs: 1000, ...(token ? { token } : {}) })
    const listed = await client.listHooks()
    return declared.map((name) => ({ name, points: listed.find((h) => h.name === name)?.points ?? [] }))
  } catch {
    return undefined
  } finally {
    client?.close()
  }
}

/** Every answer of the session, step points and event ones alike, says which confirms nobody saw. */
class ShownPort implements HookPort {
  constructor(
    private readonly port: GuardedSession,
    private readonly ui: AgentUI,
  ) {}

  async call<N extends PointName>(point: N, payload: PointPayload<N>): Promise<PointCallResult<N>> {
    return this.shown(point, await this.port.call(point, payload))
  }

  async close(reason: RunReason): Promise<PointCallResult<'afterRun'>> {
    return this.shown('afterRun', await this.port.close(reason))
  }

  subscribedPoints(): ReadonlySet<string> {
    return this.port.subscribedPoints()
  }

  onResubscribe(listener: () => void): () => void {
    return this.port.onResubscribe(listener)
  }

  private shown<R extends PointCallResult<PointName>>(point: string, answer: R): R {
    for (const d of autoConfirmDecisions(point, answer)) this.ui.decision(d)
    return answer
  }
}

/** The bridge's view of the session: covered points withheld, and every answer shown as it comes. */
class PlannedTarget implements BridgeTarget {
  constructor(
    private readonly port: HookPort,
    private readonly withheld: ReadonlySet<string>,
    private readonly ui: AgentUI,
  ) {}

  async call<N extends PointName>(point: N, payload: never): Promise<PointCallResult<N>> {
    const answer = await this.port.call(point, payload)
    for (const d of eventPointDecisions(point, payload as Record<string, unknown>, answer)) this.ui.decision(d)
    return answer
  }

  subscribedPoints(): ReadonlySet<string> {
    return new Set([...this.port.subscribedPoints()].filter((p) => !this.withheld.has(p)))
  }

  onResubscribe(listener: () => void): () => void {
    return this.port.onResubscribe?.(listener) ?? (() => {})
  }
}

/** Opens the run's session and bridges the hookable instance to it. */
export async function connectHooks(options: ConnectOptions): Promise<HookConnection> {
  const { session, ui } = options
  if (!session.hooks.length) return { port: new NoHooks(), unbridge: () => {} }
  if (!options.address) throw new TypeError('connectHooks: hooks are declared, so a sidecar address is required')
  const guarded = await GuardedSession.open(options.address, session, {
    ...(options.failure ? { failure: options.failure } : {}),
    ...(options.token ? { token: options.token } : {}),
  })
  const port: HookPort = new ShownPort(guarded, ui)
  if (!guarded.connected) {
    ui.notice(`hookd at ${options.address} cannot be reached yet; until it answers, tool calls are refused (gates fail closed) and other hooks are skipped`)
  }
  const plan = planBridge(await declaredExports(options.address, session.hooks, options.token))
  for (const warning of plan.warnings) ui.notice(warning)
  const target = new PlannedTarget(port, plan.withheld, ui)
  // hookable types its names; the bridge registers by name from the catalog, so it sees the plain shape.
  const unbridge = bridgeHookable(options.hookable as unknown as HookableLike, target, { onDiagnostic: (d) => ui.diagnostic(d) })
  return { port, unbridge }
}
