/**
 * The HTTP front door: the agents people already use post their hook events here, and get their own
 * JSON back (docs/agents.md). It sits beside the gRPC listener and runs the same chains through the
 * same sessions and tenants; each agent has an adapter (src/agents/) that maps its events and tools
 * onto hookd's points and canonical tool vocabulary.
 *
 *   GET  /healthz                     200 {"status":"serving"} (no token needed)
 *   POST /claude-code/HOOK[,HOOK...]  a Claude Code hook event; answers Claude Code's hook JSON
 *   POST /claude-code/profile/NAME    the same, with the hooks and policy of a profile (agent-route.ts)
 *   POST /codex/..., /gemini/..., /copilot/...?event=NAME, /cursor/...
 *                                     an event of an agent with command hooks, posted by bin/hookd-hook;
 *                                     answers the agent's JSON (200), or 204 for no opinion
 *   GET  /AGENT/...                   which hooks the route runs and which events they need (for setup)
 *
 * Every other request needs `authorization: Bearer <token>`: the sidecar's HTTP token without
 * tenants (http-token.ts), a tenant's token with them. Bodies are bounded in size and depth before
 * anything reads them. The runs of each tenant are bounded and reaped when idle (agents/agent-runs.ts).
 *
 * Bounded per tenant and per peer, so that one tenant or a stranger cannot take what the others need:
 * a request whose Host is not this listener is refused first (observability/host-check.ts); connections
 * are capped in all and per user, and closed when they do not authenticate soon (connection-guard.ts);
 * event bodies count against a byte budget per tenant and in all while they are held (byte-budget.ts);
 * a tenant's calls at once are capped (AgentRuns); a call whose agent went away is cancelled; the lines
 * about refused requests are rate-limited (line-limiter.ts). Every line for the operator is inert: event
 * text in it cannot start a line of its own or reach the terminal as an escape sequence.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { AgentRuns, type AgentRunsOptions } from '../../agents/agent-runs.js'
import { ClaudeCodeAdapter } from '../../agents/claude-code/claude-code-adapter.js'
import { eventsForPoints } from '../../agents/claude-code/events.js'
import { CommandAdapter } from '../../agents/command-adapter.js'
import { type CommandAgent, DIALECTS, isCommandAgent } from '../../agents/dialects.js'
import { DEFAULT_JSON_LIMITS, parseJson } from '../../protocol/bounded-json.js'
import { HookdError } from '../../protocol/status.js'
import { inert } from '../../protocol/text.js'
import { hostRefusal } from '../observability/host-check.js'
import { NO_OBSERVER, type Observer } from '../observability/observer.js'
import type { Tenancy, Tenant } from '../tenant.js'
import { bearerToken } from '../tenancy/tenant-token.js'
import { AGENT_PREFIXES, type AgentRoute, parseAgentRoute, resolveProfile } from './agent-route.js'
import { ByteBudget, type ByteBudgetOptions, DEFAULT_BYTE_BUDGET } from './byte-budget.js'
import { ConnectionGuard, type ConnectionLimits } from './connection-guard.js'
import { type BodyCounter, BodyRefused, httpStatus, readBody, sendError, sendJson } from './http-exchange.js'
import { sameToken } from './http-token.js'
import { LineLimiter, type LineLimits } from './line-limiter.js'
import { SidecarRun } from './sidecar-run.js'

export interface FrontDoorOptions {
  tenancy: Tenancy
  /** Without tenants: the token every request must carry. With tenants: absent (tenants' tokens). */
  token?: string
  /** Run limits per tenant (idle time, runs, calls in flight per run, the concurrency quota). */
  runs?: Omit<AgentRunsOptions, 'report' | 'who' | 'checkWorkdir'>
  /** The largest event body, in bytes. Default: hookd's JSON limit (8 MiB). */
  maxBodyBytes?: number
  /** Bytes of event bodies held at once, per tenant and in all. Default: 64 MiB and 256 MiB. */
  budget?: Partial<ByteBudgetOptions>
  /** Connections in all and per user, and how soon each must authenticate. Default: 512, 128, 3 s. */
  connections?: Partial<ConnectionLimits>
  /** Lines about refused requests: a burst per kind, then one per interval. Default: 10, then one per 10 s. */
  errorLines?: Partial<LineLimits>
  /** Host names (or addresses) a request's Host may give besides loopback and the listener's own. */
  hosts?: readonly string[]
  /** False while the sidecar cannot serve (its workers gave up): /healthz says so. */
  serving?(): boolean
  /** Lines for the operator. Default: stderr. */
  report?(line: string): void
  /** Metrics, traces and logs of the runs' sessions; a request's traceparent header is their calls' parent. */
  observer?: Observer
}

/** What one tenant's requests share: its runs and the adapters over them. */
interface TenantDoor {
  tenant: Tenant
  runs: AgentRuns
  claudeCode: ClaudeCodeAdapter
  commands: Record<CommandAgent, CommandAdapter<unknown>>
}

export class FrontDoor {
  private readonly doors = new Map<string, TenantDoor>()
  private readonly report: (line: string) => void
  private readonly maxBodyBytes: number
  private readonly budget: ByteBudget
  private readonly refusals: LineLimiter
  private readonly guard: ConnectionGuard
  /**
   * True without tenants: the agents run where the sidecar does (loopback, the sidecar's own token), so
   * an event's cwd names a folder here. With tenants the agents may run anywhere: their cwd is a name
   * only (no file-system checks, no ctx.file).
   */
  private readonly local: boolean
  private closing = false

  private constructor(
    private readonly server: Server,
    /** The host the listener was told to bind (a request's Host may name it). */
    private readonly host: string,
    private readonly options: FrontDoorOptions,
  ) {
    const sink = options.report ?? ((line) => void process.stderr.write(`hookd: ${line}\n`))
    // One choke point: whatever a line quotes (session ids, cwds, tool names, hook text), it stays one inert line.
    this.report = (line) => sink(inert(line))
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULT_JSON_LIMITS.maxBytes
    this.local = options.token !== undefined
    this.budget = new ByteBudget({ ...DEFAULT_BYTE_BUDGET, ...options.budget })
    this.refusals = new LineLimiter((line) => this.report(`http: ${line}`), options.errorLines)
    this.guard = new ConnectionGuard(server, options.connections ?? {}, { report: (line) => this.refusals.line('connections', line) })
  }

  /** Listens on host:port (port 0 picks one). */
  static async listen(host: string, port: number, options: FrontDoorOptions): Promise<FrontDoor> {
    // The connection guard caps connections itself: Node's own cap (maxConnections) would reset the
    // agent's new connection instead of making room for it.
    const server = createServer({ requestTimeout: 60_000, headersTimeout: 15_000, maxHeaderSize: 16 * 1024 })
    server.maxHeadersCount = 64
    const door = new FrontDoor(server, host, options)
    const observer = options.observer ?? NO_OBSERVER
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      res.once('close', door.guard.request(req.socket))
      const carrier = { get: (key: string) => [req.headers[key]].flat()[0] }
      observer.withRequest(carrier, () => door.serve(req, res)).catch((err: unknown) => door.fail(req, res, HookdError.from(err)))
    })
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err) => reject(new HookdError('unavailable', `cannot serve HTTP on ${host}:${port}: ${err.message}`)))
      server.listen(port, host, () => resolve())
    })
    return door
  }

  /** `http://HOST:PORT` as bound. */
  get url(): string {
    const { address, port } = this.server.address() as AddressInfo
    return `http://${address.includes(':') ? `[${address}]` : address}:${port}`
  }

  /** Stops taking requests, ends every open run (afterRun: interrupted) within `graceMs`, and closes. */
  async close(graceMs = 5000): Promise<void> {
    if (this.closing) return
    this.closing = true
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()))
    this.server.closeIdleConnections()
    await Promise.all([...this.doors.values()].map((d) => d.runs.closeAll('interrupted', graceMs)))
    this.server.closeAllConnections()
    this.guard.close()
    this.refusals.close()
    await closed
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const misdirected = hostRefusal(req, this.host, this.options.hosts)
    if (misdirected) return this.fail(req, res, new HookdError('failed-precondition', misdirected), { status: 421 })
    const [path = '/', query = ''] = (req.url ?? '/').split('?', 2)
    if (path === '/healthz') {
      const up = !this.closing && (this.options.serving?.() ?? true)
      sendJson(res, up ? 200 : 503, { status: up ? 'serving' : 'not serving' })
      return
    }
    if (this.closing) throw new HookdError('unavailable', 'hookd is shutting down')
    const tenant = this.authenticate(req.headers.authorization)
    this.guard.authenticated(req.socket)
    const route = parseAgentRoute(path)
    if (!route) throw new HookdError('not-found', `no such endpoint: ${path}; agents post to /AGENT/HOOK[,HOOK...] with AGENT one of ${AGENT_PREFIXES.join(', ')} (see docs/agents.md)`)
    if (req.method === 'GET') return sendJson(res, 200, await this.describe(tenant, route))
    if (req.method !== 'POST') {
      sendJson(res, 405, { error: `${req.method ?? '?'} is not served here; agents POST their hook events` }, { allow: 'GET, POST' })
      return
    }
    // The body's bytes count from the first one read until the answer is sent or the agent goes away;
    // an agent that goes away first cancels its call.
    const hold = this.budget.hold(tenant.id)
    const gone = new AbortController()
    res.once('close', () => {
      hold.release()
      if (!res.writableFinished) gone.abort()
    })
    let event: unknown
    try {
      event = await this.readEvent(req, hold)
    } catch (err) {
      if (!(err instanceof BodyRefused)) throw err
      // The rest of the body is not read: the answer closes the connection.
      return this.fail(req, res, err.error, { ...(err.tooLarge ? { status: 413 } : {}), close: true })
    }
    const door = this.door(tenant)
    // Runs are keyed by agent and route: the same session id under two agents is two runs.
    const channel = `${route.agent}/${route.channel}`
    const signal = gone.signal
    if (!isCommandAgent(route.agent)) return sendJson(res, 200, await door.claudeCode.handle(event, channel, { signal }))
    const name = new URLSearchParams(query).get('event') ?? undefined
    const answer = await door.commands[route.agent].handle(event, channel, name, { signal })
    if (answer === undefined) {
      res.writeHead(204)
      res.end()
      return
    }
    sendJson(res, 200, answer)
  }

  /**
   * Answers an error, and says it on stderr: the agent shows only a status (Claude Code: `HTTP 401
   * from URL`), so the operator's line is where a wrong token or URL is explained. Those lines are
   * limited per status (line-limiter.ts): a flood of them is counted, not written out.
   */
  fail(req: IncomingMessage, res: ServerResponse, err: HookdError, options: { status?: number; close?: boolean } = {}): void {
    const status = options.status ?? httpStatus(err)
    this.refusals.line(String(status), `${req.method ?? '?'} ${(req.url ?? '/').split('?', 1)[0]}: ${err.message}`)
    sendError(res, err, { ...options, status })
  }

  /**
   * The event in the request's body, parsed within the size and depth limits. Only this frame holds
   * the body's bytes, so they are garbage once it returns: a call waiting on its hooks keeps the parsed
   * event, not the bytes it came in.
   */
  private async readEvent(req: IncomingMessage, counter: BodyCounter): Promise<unknown> {
    const body = await readBody(req, this.maxBodyBytes, counter)
    const json = parseJson(body, 'the hook event', { ...DEFAULT_JSON_LIMITS, maxBytes: this.maxBodyBytes })
    if (!json.ok) throw new HookdError(json.problem === 'too-large' ? 'resource-exhausted' : 'invalid-argument', json.message)
    return json.value
  }

  /** The tenant the request's token names; a HookdError (401) saying what to send otherwise. */
  private authenticate(header: string | undefined): Tenant {
    const values = header === undefined ? [] : [header]
    if (this.options.token === undefined) return this.options.tenancy.identify(values)
    const bearer = bearerToken(values)
    const how = "send 'authorization: Bearer <token>' with the token in the sidecar's HTTP token file (.hookd/http-token by default; 'hookd setup' puts it in the agent's settings)"
    if (!bearer.ok) throw new HookdError('unauthenticated', `${bearer.why.replace('metadata', 'header')}; ${how}`)
    if (!sameToken(bearer.token, this.options.token)) throw new HookdError('unauthenticated', `the bearer token is not this sidecar's HTTP token; ${how}`)
    return this.options.tenancy.identify([])
  }

  /** The runs and adapter of a tenant, made on its first request. */
  private door(tenant: Tenant): TenantDoor {
    const id = tenant.id ?? ''
    const existing = this.doors.get(id)
    if (existing) {
      // A tenants-file edit may hand the same tenant a new object: runs opened from now on use it.
      existing.tenant = tenant
      return existing
    }
    const report = (line: string): void => this.report(`http: ${line}`)
    let door: TenantDoor | undefined
    const runs = new AgentRuns(
      async (start) => {
        const current = (door as TenantDoor).tenant
        const route = parseAgentRoute(`/${start.key.channel ?? ''}`) as AgentRoute
        const profile = await resolveProfile(route, current.registry.root)
        const observe = (this.options.observer ?? NO_OBSERVER).session({ tenant: current.id, transport: 'http' })
        return SidecarRun.open({ tenant: current, start, profile, localFiles: this.local, report: this.report, observe })
      },
      { ...this.options.runs, report, checkWorkdir: this.local, ...(tenant.id !== undefined ? { who: `tenant '${tenant.id}'` } : {}) },
    )
    const command = (agent: CommandAgent): CommandAdapter<unknown> => new CommandAdapter(DIALECTS[agent], runs, { report })
    door = {
      tenant,
      runs,
      claudeCode: new ClaudeCodeAdapter(runs, { report }),
      commands: { codex: command('codex'), gemini: command('gemini'), copilot: command('copilot'), cursor: command('cursor') },
    }
    this.doors.set(id, door)
    return door
  }

  /** What a route runs: its hooks, their status and points, and the agent events they need. */
  private async describe(tenant: Tenant, route: AgentRoute): Promise<unknown> {
    const profile = await resolveProfile(route, tenant.registry.root)
    const infos = tenant.registry.list()
    const missing = profile.hooks.filter((name) => !tenant.registry.has(name))
    if (missing.length) {
      throw new HookdError('not-found', `unknown hook${missing.length > 1 ? 's' : ''} ${missing.map((n) => `'${n}'`).join(', ')} (available: ${infos.map((h) => h.name).join(', ') || 'none'})`)
    }
    const hooks = profile.hooks.map((name) => {
      const info = infos.find((h) => h.name === name)
      return { name, status: info?.status ?? 'broken', points: info?.points ?? [], ...(info?.lastError ? { error: info.lastError.message } : {}) }
    })
    const points = new Set(hooks.flatMap((h) => h.points))
    const events = isCommandAgent(route.agent) ? DIALECTS[route.agent].eventsForPoints(points) : eventsForPoints(points)
    return { agent: route.agent, route: route.channel, hooks, events }
  }
}
