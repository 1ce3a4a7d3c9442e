/**
 * The HTTP front door: the agents people already use post their hook events here, and get their own
 * JSON back (docs/agents.md). It sits beside the gRPC listener and runs the same chains through the
 * same sessions and tenants; each agent's dialect (src/agents/) maps its events and tools onto
 * hookd's points and canonical tool vocabulary, through the one adapter (agents/agent-adapter.ts).
 *
 *   GET  /healthz                     200 {"status":"serving"} (no token needed)
 *   POST /AGENT/HOOK[,HOOK...]        an event of AGENT, one of src/agents/registry.ts (Claude Code's
 *                                     `http` hooks post it, the shim bin/hookd-hook the others'; Copilot's
 *                                     routes add ?event=NAME); answers the agent's JSON (200), or 204 for
 *                                     no opinion where the agent takes no answer as one
 *   POST /AGENT/profile/NAME          the same, with the hooks and policy of a profile (agent-route.ts)
 *   GET  /AGENT/...                   which hooks the route runs and which events they need (for setup)
 *
 * Every other request needs `authorization: Bearer <token>`: the sidecar's HTTP token without
 * tenants (http-token.ts), a tenant's token with them. Bodies are bounded in size and depth before
 * anything reads them. The runs of each tenant are bounded and reaped when idle (agents/agent-runs.ts).
 * Without tenants, each request's user (the uid owning its connection, peer-user.ts) keys its runs and
 * is whose folder the event's cwd must be and whose privileges its hooks' file calls have.
 *
 * Bounded per tenant and per peer, so that one tenant or a stranger cannot take what the others need:
 * a request whose Host is not this listener is refused first (observability/host-check.ts); connections
 * are capped in all and per user, and closed when they do not authenticate soon (connection-guard.ts);
 * event bodies count against a byte budget per tenant and in all while they are held (byte-budget.ts);
 * a tenant's calls at once are capped (AgentRuns); a call whose agent went away is cancelled; the lines
 * about refused requests are rate-limited (line-limiter.ts). Every line for the operator is inert: event
 * text in it cannot start a line of its own or reach the terminal as an escape sequence.
 */
import { chmod } from 'node:fs/promises'
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import type { AgentRun, Peer, RunStart } from '../../agents/agent-run.js'
import { AgentAdapter } from '../../agents/agent-adapter.js'
import { AgentRuns, type AgentRunsOptions } from '../../agents/agent-runs.js'
import { AGENTS, AGENT_IDS, agentById } from '../../agents/registry.js'
import { DEFAULT_JSON_LIMITS, parseJson } from '../../protocol/bounded-json.js'
import { type AnyPoint, getPoint, handlerFor } from '../../protocol/points/points.js'
import { HookdError } from '../../protocol/status.js'
import { inert } from '../../protocol/text.js'
import { HOOKD_VERSION } from '../../protocol/version.js'
import { mayAsk } from '../hooks/may-ask.js'
import { hostRefusal } from '../observability/host-check.js'
import { NO_OBSERVER, type Observer } from '../observability/observer.js'
import type { Tenancy, Tenant } from '../tenant.js'
import { type AgentRoute, parseAgentRoute, resolveProfile } from './agent-route.js'
import { ByteBudget, type ByteBudgetOptions, DEFAULT_BYTE_BUDGET } from './byte-budget.js'
import { ConnectionGuard, type ConnectionLimits } from './connection-guard.js'
import { type Credentials, DoorAuth } from './door-auth.js'
import type { DoorCapture } from './door-capture.js'
import { type BodyCounter, BodyRefused, type Prove, httpStatus, readBody, sendEmpty, sendError, sendJson } from './http-exchange.js'
import { LineLimiter, type LineLimits } from './line-limiter.js'
import { peerUid } from './peer-user.js'
import { SidecarRun } from './sidecar-run.js'
import { UserFiles } from './user-files.js'
import type { Projects } from '../projects/projects.js'
import { checkProject } from './project-ref.js'

export interface FrontDoorOptions {
  tenancy: Tenancy
  /** Without tenants: the token every request must carry. With tenants: absent (tenants' tokens). */
  token?: string
  /** The token's file, which hooks may neither read nor write (`.hookd/` is protected by name already). */
  tokenFile?: string
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
  /**
   * The user's own sidecar (projects.ts): each request names its project and hooks folder
   * (`x-hookd-project`, `x-hookd-hooks`, sent by the shim), which it runs as.
   */
  projects?: Projects
  /**
   * Opens the run of an agent session as `tenant` (`start.key.channel` names its route). Default: a
   * SidecarRun, the tenant's Session with the route's hooks and profile (sidecar-run.ts). Tests give a
   * fake run, so that the door's own behaviour is shown without a worker (test/unit/front-door/).
   */
  openRun?(start: RunStart, tenant: Tenant): Promise<AgentRun>
  /** Sees each event, its answer and its runs' point calls (`hookd serve --capture DIR`: door-capture.ts). */
  capture?: DoorCapture
}

/** A path sent in a header, percent-encoded (the shim encodes every byte outside a plain set). */
function headerPath(name: string, value: string): string {
  try {
    return decodeURIComponent(value)
  } catch {
    throw new HookdError('invalid-argument', `the ${name} header is not a percent-encoded path`)
  }
}

/** The headers a request to the user's own sidecar names its project with (the shim sends them). */
export const PROJECT_HEADER = 'x-hookd-project'
export const HOOKS_HEADER = 'x-hookd-hooks'

/** What one tenant's requests share: its runs and each agent's adapter over them. */
interface TenantDoor {
  tenant: Tenant
  runs: AgentRuns
  adapters: ReadonlyMap<string, AgentAdapter<unknown>>
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
  private readonly auth: DoorAuth
  /** Each request's verified credentials, for the proof its answer carries (errors included). */
  private readonly credentials = new WeakMap<IncomingMessage, Credentials>()
  /** Serves the file calls of agents whose user is not the sidecar's (local only). */
  private readonly userFiles: UserFiles | undefined
  private readonly peers = new WeakMap<Socket, Promise<number | undefined>>()
  /**
   * Listening on the user's socket (the user's hookd): its folder is the user's state folder, which
   * only the user (and root) can enter, so whoever connects there is the sidecar's own user.
   */
  private onUserSocket = false
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
    this.auth = new DoorAuth(options.tenancy, options.token)
    this.userFiles = this.local ? new UserFiles({ report: (line) => this.report(`http: ${line}`) }) : undefined
    this.budget = new ByteBudget({ ...DEFAULT_BYTE_BUDGET, ...options.budget })
    this.refusals = new LineLimiter((line) => this.report(`http: ${line}`), options.errorLines)
    this.guard = new ConnectionGuard(server, options.connections ?? {}, { report: (line) => this.refusals.line('connections', line) })
  }

  /**
   * Listens on host:port (port 0 picks one), or on the Unix socket `socket` (made 0600; its folder must
   * be the user's own state folder, which only the user can enter).
   */
  static async listen(host: string, port: number, options: FrontDoorOptions & { socket?: string }): Promise<FrontDoor> {
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
    const socket = options.socket
    if (options.projects) {
      options.projects.onRetire((id) => {
        const gone = door.doors.get(id)
        door.doors.delete(id)
        void gone?.runs.closeAll('interrupted', 5000)
      })
    }
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err) => reject(new HookdError('unavailable', `cannot serve HTTP on ${socket ? `unix:${socket}` : `${host}:${port}`}: ${err.message}`)))
      if (socket) server.listen(socket, () => resolve())
      else server.listen(port, host, () => resolve())
    })
    if (socket) {
      await chmod(socket, 0o600)
      door.onUserSocket = true
    }
    return door
  }

  /** `http://HOST:PORT` as bound, or `unix:PATH`. */
  get url(): string {
    const bound = this.server.address()
    if (typeof bound === 'string') return `unix:${bound}`
    const { address, port } = bound as AddressInfo
    return `http://${address.includes(':') ? `[${address}]` : address}:${port}`
  }

  /** Stops taking requests, ends every open run (afterRun: interrupted) within `graceMs`, and closes. */
  async close(graceMs = 5000): Promise<void> {
    if (this.closing) return
    this.closing = true
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()))
    this.server.closeIdleConnections()
    await Promise.all([...this.doors.values()].map((d) => d.runs.closeAll('interrupted', graceMs)))
    await this.userFiles?.close()
    this.server.closeAllConnections()
    this.guard.close()
    this.refusals.close()
    await closed
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // A browser cannot reach a Unix socket, so the user's socket needs no Host check.
    const misdirected = this.onUserSocket ? undefined : hostRefusal(req, this.host, this.options.hosts)
    if (misdirected) return this.fail(req, res, new HookdError('failed-precondition', misdirected), { status: 421 })
    const [path = '/', query = ''] = (req.url ?? '/').split('?', 2)
    if (path === '/healthz') {
      const up = !this.closing && (this.options.serving?.() ?? true)
      sendJson(res, up ? 200 : 503, { status: up ? 'serving' : 'not serving', version: HOOKD_VERSION })
      return
    }
    if (this.closing) throw new HookdError('unavailable', 'hookd is shutting down')
    // Authenticated before the body is read (a hookd-hmac proof covers the body's hash its header gives).
    const credentials = this.auth.authenticate(req.headers.authorization, req.method ?? '', req.url ?? '/', (matched) => this.credentials.set(req, matched))
    this.credentials.set(req, credentials)
    this.guard.authenticated(req.socket)
    const route = parseAgentRoute(path)
    if (!route) {
      throw new HookdError('not-found', `no such endpoint: ${path}; agents post to /AGENT/HOOK[,HOOK...] with AGENT one of ${AGENT_IDS.join(', ')} (see docs/agents.md)`)
    }
    if (req.method === 'GET') {
      this.auth.checkBody(credentials, Buffer.alloc(0))
      return sendJson(res, 200, await this.describe(await this.tenantOf(req, res, credentials), route), {}, this.prover(req))
    }
    if (req.method !== 'POST') {
      sendJson(res, 405, { error: `${req.method ?? '?'} is not served here; agents POST their hook events` }, { allow: 'GET, POST' })
      return
    }
    // The body's bytes count from the first one read until the answer is sent or the agent goes away;
    // an agent that goes away first cancels its call.
    const hold = this.budget.hold(credentials.tenant?.id)
    const gone = new AbortController()
    res.once('close', () => {
      hold.release()
      if (!res.writableFinished) gone.abort()
    })
    let event: unknown
    try {
      event = await this.readEvent(req, hold, credentials)
    } catch (err) {
      if (!(err instanceof BodyRefused)) throw err
      // The rest of the body is not read: the answer closes the connection.
      return this.fail(req, res, err.error, { ...(err.tooLarge ? { status: 413 } : {}), close: true })
    }
    const prove = this.prover(req)
    const door = this.door(await this.tenantOf(req, res, credentials))
    // Runs are keyed by agent and route: the same session id under two agents is two runs.
    const channel = `${route.agent}/${route.channel}`
    const peer = this.local ? await this.peerOf(req.socket) : undefined
    const signal = gone.signal
    const name = new URLSearchParams(query).get('event') ?? undefined
    const handle = () => (door.adapters.get(route.agent) as AgentAdapter<unknown>).handle(event, channel, name, { peer, signal })
    const capture = this.options.capture
    const answer = await (capture ? capture.event({ agent: route.agent, route: route.channel, ...(name !== undefined ? { name } : {}), event }, handle) : handle())
    if (answer === undefined) return sendEmpty(res, 204, prove)
    sendJson(res, 200, answer, {}, prove)
  }

  /**
   * The tenant a verified request runs as: its tenant's, or for the sidecar's own token, the one tenant,
   * or the project it names (held as in use until its answer is sent, so no other project retires it).
   */
  private async tenantOf(req: IncomingMessage, res: ServerResponse, credentials: Credentials): Promise<Tenant> {
    if (credentials.tenant) return credentials.tenant
    const projects = this.options.projects
    if (!projects) return this.options.tenancy.identify([])
    const project = req.headers[PROJECT_HEADER]
    const hooks = req.headers[HOOKS_HEADER]
    if (typeof project !== 'string' || typeof hooks !== 'string') {
      throw new HookdError('invalid-argument', `this hookd serves the user's projects: a request names its project and hooks folder in the ${PROJECT_HEADER} and ${HOOKS_HEADER} headers (hookd-hook sends them: use the entries 'hookd init' writes)`)
    }
    const lease = await projects.project(await checkProject(headerPath(PROJECT_HEADER, project), headerPath(HOOKS_HEADER, hooks)))
    if (res.writableFinished || res.destroyed) lease.release()
    else res.once('close', lease.release)
    return lease.tenant
  }

  /** The proof of answers to `req`, once its credentials are checked (hookd-hmac requests only). */
  private prover(req: IncomingMessage): Prove {
    return (status, body) => this.auth.prove(this.credentials.get(req), status, body)
  }

  /**
   * Answers an error, and says it on stderr: the agent shows only a status (Claude Code: `HTTP 401
   * from URL`), so the operator's line is where a wrong token or URL is explained. Those lines are
   * limited per status (line-limiter.ts): a flood of them is counted, not written out.
   */
  fail(req: IncomingMessage, res: ServerResponse, err: HookdError, options: { status?: number; close?: boolean } = {}): void {
    const status = options.status ?? httpStatus(err)
    this.refusals.line(String(status), `${req.method ?? '?'} ${(req.url ?? '/').split('?', 1)[0]}: ${err.message}`)
    sendError(res, err, { ...options, status, prove: this.prover(req) })
  }

  /**
   * The event in the request's body (the one its hookd-hmac covers, checked before anything parses
   * it), parsed within the size and depth limits. Only this frame holds the body's bytes, so they are
   * garbage once it returns: a call waiting on its hooks keeps the parsed event, not the bytes it came in.
   */
  private async readEvent(req: IncomingMessage, counter: BodyCounter, credentials: Credentials): Promise<unknown> {
    const body = await readBody(req, this.maxBodyBytes, counter)
    this.auth.checkBody(credentials, body)
    const json = parseJson(body, 'the hook event', { ...DEFAULT_JSON_LIMITS, maxBytes: this.maxBodyBytes })
    if (!json.ok) throw new HookdError(json.problem === 'too-large' ? 'resource-exhausted' : 'invalid-argument', json.message)
    return json.value
  }

  /** Who posted on this connection: its uid, read once per connection from the kernel's tables. */
  private async peerOf(socket: Socket): Promise<Peer> {
    if (this.onUserSocket) return { uid: process.geteuid?.() }
    let uid = this.peers.get(socket)
    if (!uid) {
      const { localAddress, localPort, remoteAddress, remotePort } = socket
      uid =
        localAddress && localPort !== undefined && remoteAddress && remotePort !== undefined
          ? peerUid({ local: { address: localAddress, port: localPort }, remote: { address: remoteAddress, port: remotePort } })
          : Promise.resolve(undefined)
      this.peers.set(socket, uid)
    }
    return { uid: await uid }
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
    const open = this.options.openRun ?? ((start: RunStart, current: Tenant) => this.sidecarRun(start, current))
    const runs = new AgentRuns(
      (start) => open(start, (door as TenantDoor).tenant),
      { ...this.options.runs, report, checkWorkdir: this.local, ...(tenant.id !== undefined ? { who: tenant.who ?? `tenant '${tenant.id}'` } : {}) },
    )
    door = { tenant, runs, adapters: new Map(AGENTS.map((a) => [a.id, new AgentAdapter(a.dialect, runs, { report })])) }
    this.doors.set(id, door)
    return door
  }

  /** A run of the tenant's sessions, with the hooks and policy of the run's route (its channel). */
  private async sidecarRun(start: RunStart, tenant: Tenant): Promise<AgentRun> {
    const route = parseAgentRoute(`/${start.key.channel ?? ''}`) as AgentRoute
    const profile = await resolveProfile(route, tenant.registry.root)
    const observe = (this.options.observer ?? NO_OBSERVER).session({ tenant: tenant.id, transport: 'http' })
    const { tokenFile, capture } = this.options
    return SidecarRun.open({ tenant, start, profile, localFiles: this.local, tokenFile, userFiles: this.userFiles, report: this.report, observe, capture })
  }

  /**
   * What a route runs: its hooks, their status, points and hook.json "tools", and the agent events they need (with those
   * that say what became of an ask when a hook at the gate may call ctx.confirm: may-ask.ts).
   */
  private async describe(tenant: Tenant, route: AgentRoute): Promise<unknown> {
    const profile = await resolveProfile(route, tenant.registry.root)
    const infos = tenant.registry.list()
    const missing = profile.hooks.filter((name) => !tenant.registry.has(name))
    if (missing.length) {
      throw new HookdError('not-found', `unknown hook${missing.length > 1 ? 's' : ''} ${missing.map((n) => `'${n}'`).join(', ')} (available: ${infos.map((h) => h.name).join(', ') || 'none'})`)
    }
    const hooks = profile.hooks.map((name) => {
      const info = infos.find((h) => h.name === name)
      const tools = tenant.registry.get(name)?.tools
      return { name, status: info?.status ?? 'broken', points: info?.points ?? [], ...(info?.lastError ? { error: info.lastError.message } : {}), ...(tools ? { tools: [...tools] } : {}) }
    })
    const points = new Set(hooks.flatMap((h) => h.points))
    const asks = profile.hooks.some((name) => {
      const hook = tenant.registry.get(name)
      return hook !== undefined && handlerFor(getPoint('beforeToolExecute') as AnyPoint, hook.points) !== undefined && mayAsk(hook)
    })
    const options = { mayAsk: asks }
    const events = (agentById(route.agent)?.dialect.eventsForPoints(points, options)) ?? []
    return { agent: route.agent, route: route.channel, hooks, events }
  }
}
