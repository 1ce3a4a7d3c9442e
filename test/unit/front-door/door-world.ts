/**
 * The front door (src/sidecar/http/front-door.ts) on a real loopback listener, with fake runs in place
 * of the sidecar's (FrontDoorOptions.openRun): no Session, no worker. What the door does itself shows:
 * routing from the registry, auth, bounds, quotas, the byte budget, cancels, its tenant doors.
 *
 * - `DoorRuns` opens `DoorRun`s and records each open (its RunStart and tenant), each point call (with
 *   its signal) and each end; `hold()` keeps point calls waiting until released.
 * - `singleTenancy` and `tokenTenancy` stand in for a sidecar without tenants and one with a tenants
 *   file: tenants over real registries of fake hooks (test/unit/fakes.ts), picked by their tokens.
 * - `send` posts one request on a connection of its own and reads the answer.
 */
import { type IncomingHttpHeaders, request } from 'node:http'
import type { AgentRun, ChainAnswer, RunEndReason, RunEndedBy, RunPoint, RunStart } from '../../../src/agents/agent-run.js'
import { HookdError } from '../../../src/protocol/status.js'
import type { Registry } from '../../../src/sidecar/hooks/registry.js'
import { proofKey } from '../../../src/sidecar/http/request-proof.js'
import { bearerToken } from '../../../src/sidecar/tenancy/tenant-token.js'
import type { Tenancy, Tenant } from '../../../src/sidecar/tenant.js'
import { type Deferred, FakeLoader, FakeRunner, aborted, deferred, exporting, fakeTenant, hooksFolder, loadedRegistry } from '../fakes.js'

/** One point call a run was asked for. */
export interface DoorCall {
  point: RunPoint
  payload: unknown
  signal: AbortSignal | undefined
  /** The session it belongs to, and the tenant whose run it is. */
  sessionId: string
  tenant: string | undefined
}

/** Fake runs for the door: each call is recorded and answers as no hook changes anything, unless held. */
export class DoorRuns {
  readonly opened: Array<{ start: RunStart; tenant: Tenant }> = []
  readonly calls: DoorCall[] = []
  readonly ends: Array<{ sessionId: string; reason: RunEndReason; by: RunEndedBy }> = []
  private held: Deferred<void> | undefined
  /** Why opening fails, when it does (an unknown hook...). */
  failOpen: HookdError | undefined
  /** What a point call throws, when it does. */
  failCall: HookdError | undefined

  /** The door's option: opens a run for the tenant. */
  readonly open = async (start: RunStart, tenant: Tenant): Promise<AgentRun> => {
    this.opened.push({ start, tenant })
    if (this.failOpen) throw this.failOpen
    return this.run(start, tenant)
  }

  /** Point calls wait (until their signal aborts, or `release`). */
  hold(): void {
    this.held = deferred()
  }

  release(): void {
    this.held?.resolve()
    this.held = undefined
  }

  /** The calls whose signal aborted (their agent went away). */
  get cancelled(): DoorCall[] {
    return this.calls.filter((c) => c.signal?.aborted)
  }

  private run(start: RunStart, tenant: Tenant): AgentRun {
    return {
      // Not beforeRun: its turn under the concurrency quota would be one more to count in each test.
      serves: (point) => point !== 'beforeRun',
      call: async (point, payload, signal) => {
        if (this.failCall) throw this.failCall
        this.calls.push({ point, payload, signal, sessionId: start.key.sessionId, tenant: tenant.id })
        const held = this.held
        if (held) await Promise.race([held.promise, aborted(signal)])
        if (signal?.aborted) throw new HookdError('cancelled', 'the agent went away')
        return unchanged(point, payload)
      },
      close: async (reason, by = 'agent') => {
        this.ends.push({ sessionId: start.key.sessionId, reason, by })
        return { result: {}, diagnostics: [], asks: [] }
      },
      abort: () => {},
    }
  }
}

/** The chain's answer when no hook changes anything. */
function unchanged(point: RunPoint, payload: unknown): ChainAnswer {
  const p = payload as Record<string, unknown>
  const result = point === 'beforeToolExecute' ? { allow: true, arguments: p.arguments } : point === 'afterToolExecute' ? p.result : {}
  return { result, diagnostics: [], asks: [] }
}

/** A tenant over a registry of fake hooks: `guard` (beforeToolExecute) and `shout` (afterToolExecute). */
async function tenantOf(id: string | undefined): Promise<{ tenant: Tenant; registry: Registry; dispose(): Promise<void> }> {
  const root = await hooksFolder({ guard: { index: exporting('beforeToolExecute') }, shout: { index: exporting('afterToolExecute') } })
  const runner = new FakeRunner()
  const registry = await loadedRegistry(root.root, new FakeLoader(), runner)
  const tenant = fakeTenant(registry, runner, id === undefined ? {} : { id })
  return {
    tenant,
    registry,
    dispose: async () => {
      await registry.close()
      await root.dispose()
    },
  }
}

/** A sidecar without tenants: its one tenant (the front door checks the sidecar's own token itself). */
export async function singleTenancy(): Promise<{ tenancy: Tenancy; tenant: Tenant; dispose(): Promise<void> }> {
  const one = await tenantOf(undefined)
  const tenancy: Tenancy = { identify: () => one.tenant, close: one.dispose }
  return { tenancy, tenant: one.tenant, dispose: one.dispose }
}

/** A sidecar with a tenants file: each tenant by its token, bearer or hookd-hmac (by its token's SHA-256). */
export async function tokenTenancy(tokens: Record<string, string>): Promise<{ tenancy: Tenancy; tenants: Record<string, Tenant>; dispose(): Promise<void> }> {
  const made = await Promise.all(Object.keys(tokens).map(async (id) => ({ id, ...(await tenantOf(id)) })))
  const byToken = new Map(made.map((m) => [tokens[m.id] as string, m.tenant]))
  const dispose = async (): Promise<void> => void (await Promise.all(made.map((m) => m.dispose())))
  const tenancy: Tenancy = {
    identify: (values) => {
      const bearer = bearerToken(values)
      if (!bearer.ok) throw new HookdError('unauthenticated', `${bearer.why}; send your tenant's token`)
      const tenant = byToken.get(bearer.token)
      if (!tenant) throw new HookdError('unauthenticated', 'the bearer token matches no tenant of this sidecar')
      return tenant
    },
    identifyByDigest: (matches) => {
      for (const [token, tenant] of byToken) {
        const digest = proofKey(token)
        if (matches(digest)) return { tenant, digest }
      }
      return undefined
    },
    close: dispose,
  }
  return { tenancy, tenants: Object.fromEntries(made.map((m) => [m.id, m.tenant])), dispose }
}

/** An answer as the agent reads it. */
export interface Answer {
  status: number
  headers: IncomingHttpHeaders
  /** The body's text ('' for none). */
  text: string
  /** The body as JSON, undefined when empty. */
  json: Record<string, unknown> | undefined
}

export interface Sent {
  method?: string
  headers?: Record<string, string>
  /** A string or buffer is sent as it is; anything else as JSON. Undefined: no body. */
  body?: unknown
  /** Called once the request is written, with a function that breaks the connection off. */
  sent?: (abort: () => void) => void
}

/** One request to `url` + `path` on a connection of its own; rejects when the connection breaks off. */
export function send(url: string, path: string, options: Sent = {}): Promise<Answer> {
  const body = options.body === undefined ? undefined : typeof options.body === 'string' || Buffer.isBuffer(options.body) ? options.body : JSON.stringify(options.body)
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method: options.method ?? 'POST', agent: false, headers: { 'content-type': 'application/json', ...options.headers } }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (text += chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>) }))
    })
    req.on('error', reject)
    req.end(body, () => options.sent?.(() => req.destroy()))
  })
}

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` })
