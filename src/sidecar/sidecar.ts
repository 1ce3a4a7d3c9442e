/**
 * The sidecar: a gRPC server for hookd.v1.HookExecutor (Session, Invoke, ListHooks) and the standard
 * grpc.health.v1.Health service, in front of a registry of hook folders and a pool of sandbox workers.
 */
import { chmod, mkdir, unlink } from 'node:fs/promises'
import { connect } from 'node:net'
import { dirname } from 'node:path'
import * as grpc from '@grpc/grpc-js'
import { HealthImplementation } from 'grpc-health-check'
import { type Address, formatAddress, parseAddress } from '../protocol/address.js'
import type { Diagnostic } from '../protocol/diagnostic.js'
import { HookdError } from '../protocol/status.js'
import { HOOKD_VERSION, PROTOCOL_VERSION } from '../protocol/version.js'
import {
  type LogLineData,
  SERVICE_NAME,
  diagnosticToWire,
  hookExecutorService,
  hookInfoToWire,
  hostMessageWire,
  invokeRequestWire,
  parseJsonBytes,
  pointResultToWire,
} from '../protocol/wire.js'
import { addReflection } from './grpc/reflection.js'
import { Registry } from './hooks/registry.js'
import { AuditLog, type AuditOptions } from './session/audit.js'
import { SingleTenant, type Tenancy, type Tenant, Tenants, type TenantsOptions } from './tenancy/tenants.js'
import type { WatchOptions } from './hooks/hook-watcher.js'
import { DEFAULT_WAITS, Session, type SessionDeps } from './session/session.js'
import { DEFAULT_LIMITS, type Limits } from './worker/protocol.js'
import { type PoolOptions, WorkerPool } from './worker/pool/worker-pool.js'

export interface SidecarOptions {
  /** The hooks folder. Required without `tenants`; with them, each tenant names its own. */
  hooks?: string
  /**
   * Serve several tenants (docs/tenants.md): the tenants file, or its options. Every call must then
   * carry a tenant's bearer token.
   */
  tenants?: string | TenantsOptions
  /** Record every point result as a JSON line (docs/tenants.md#audit-log). */
  audit?: AuditOptions
  limits?: Partial<Limits>
  waits?: Partial<SessionDeps['waits']>
  /** Sandbox worker processes; default: one per core. */
  workers?: number
  /** The rest of the worker pool's settings (start-failure cap, timeouts, ...). */
  pool?: PoolOptions
  /** How long a shutdown waits for in-flight calls before closing them. */
  graceMs?: number
  /** Hot reload of edited hook folders (docs/hot-reload.md): on by default; false turns it off. */
  watch?: boolean | WatchOptions
}

type Stream = grpc.ServerDuplexStream<unknown, unknown>

export class Sidecar {
  readonly loadDiagnostics: readonly Diagnostic[]
  private readonly server = new grpc.Server({ 'grpc.max_receive_message_length': 8 * 1024 * 1024 })
  private readonly health = new HealthImplementation({ '': 'SERVING', [SERVICE_NAME]: 'SERVING' })
  private readonly sessions = new Set<Session>()
  private readonly graceMs: number
  private socketPath: string | undefined
  private stopping: Promise<void> | undefined

  private constructor(
    private readonly tenancy: Tenancy,
    private readonly workerPool: WorkerPool,
    loadDiagnostics: Diagnostic[],
    graceMs: number,
  ) {
    this.loadDiagnostics = loadDiagnostics
    this.graceMs = graceMs
    this.server.addService(withTolerantDecoding(hookExecutorService()), {
      Session: (call: Stream) => this.onSession(call),
      Invoke: (call: grpc.ServerUnaryCall<unknown, unknown>, done: grpc.sendUnaryData<unknown>) =>
        void this.onInvoke(call.request, done, call.metadata),
      ListHooks: (call: grpc.ServerUnaryCall<unknown, unknown>, done: grpc.sendUnaryData<unknown>) => {
        const tenant = this.identify(call.metadata)
        if (tenant instanceof HookdError) done({ code: tenant.grpcStatus, details: tenant.message })
        else done(null, { hooks: tenant.deps.registry.list().map(hookInfoToWire) })
      },
    })
    this.health.addToServer(this.server)
    addReflection(this.server)
    // A pool that gave up restarting workers answers every hook with worker-crash: say so to load
    // balancers and supervisors instead of looking healthy.
    workerPool.onBroken(() => {
      this.health.setStatus('', 'NOT_SERVING')
      this.health.setStatus(SERVICE_NAME, 'NOT_SERVING')
    })
  }

  /** Starts the workers and loads every hook; does not listen yet. */
  static async create(options: SidecarOptions): Promise<Sidecar> {
    const limits: Limits = { ...DEFAULT_LIMITS, ...options.limits }
    const pool = new WorkerPool({ ...options.pool, ...(options.workers !== undefined ? { size: options.workers } : {}) })
    await pool.start()
    const waits = { ...DEFAULT_WAITS, ...options.waits }
    const audit = options.audit
      ? await AuditLog.open(options.audit).catch(async (err: unknown) => {
          await pool.close()
          throw err
        })
      : undefined
    if (options.tenants !== undefined) {
      const tenantsOptions = typeof options.tenants === 'string' ? { file: options.tenants } : options.tenants
      const watch = options.watch === false ? false : options.watch === true || options.watch === undefined ? {} : options.watch
      const tenants = await Tenants.start(tenantsOptions, { pool, limits, waits, watch, ...(audit ? { audit } : {}) }).catch(async (err: unknown) => {
        await pool.close()
        await audit?.close()
        throw err
      })
      return new Sidecar(tenants, pool, [], options.graceMs ?? 5000)
    }
    if (options.hooks === undefined) {
      await pool.close()
      throw new HookdError('invalid-argument', 'a sidecar without tenants needs a hooks folder (SidecarOptions.hooks)')
    }
    const registry = new Registry(options.hooks, pool, limits)
    let diagnostics: Diagnostic[]
    try {
      diagnostics = await registry.loadAll()
      if (options.watch !== false) await registry.watch(options.watch === true ? {} : options.watch)
    } catch (err) {
      await pool.close()
      await audit?.close()
      throw err
    }
    const deps: SessionDeps = { registry, pool, limits, waits, ...(audit ? { audit } : {}) }
    return new Sidecar(new SingleTenant(deps), pool, diagnostics, options.graceMs ?? 5000)
  }

  /** The hooks registry of a sidecar without tenants (a tenant's: `tenants.registryOf(id)`). */
  get registry(): Registry {
    if (this.tenancy instanceof SingleTenant) return this.tenancy.deps.registry
    throw new HookdError('failed-precondition', 'this sidecar serves tenants, each with its own registry; use sidecar.tenants.registryOf(id)')
  }

  /** The tenants, when the sidecar was started with a tenants file. */
  get tenants(): Tenants | undefined {
    return this.tenancy instanceof Tenants ? this.tenancy : undefined
  }

  get pool(): WorkerPool {
    return this.workerPool
  }

  /**
   * Binds the address; returns it in canonical form (with the real port for `HOST:0`). With `tls`
   * (PEM certificate chain and private key), a TCP address is served over TLS.
   */
  async listen(text: string, options: { tls?: { cert: Buffer | string; key: Buffer | string } } = {}): Promise<string> {
    const address = parseAddress(text)
    if (options.tls && address.kind === 'unix') {
      throw new HookdError('invalid-argument', `TLS is for TCP addresses; ${text} is a Unix socket (protected by its file permissions)`)
    }
    const credentials = options.tls
      ? grpc.ServerCredentials.createSsl(null, [{ cert_chain: Buffer.from(options.tls.cert), private_key: Buffer.from(options.tls.key) }], false)
      : grpc.ServerCredentials.createInsecure()
    if (address.kind === 'unix') await prepareSocket(address.path)
    const port = await new Promise<number>((resolve, reject) => {
      this.server.bindAsync(formatAddress(address), credentials, (err, p) =>
        err ? reject(new HookdError('unavailable', `cannot listen on ${text}: ${err.message}`)) : resolve(p),
      )
    })
    if (address.kind === 'unix') {
      this.socketPath = address.path
      await chmod(address.path, 0o600)
      return formatAddress(address)
    }
    return formatAddress({ ...address, port })
  }

  /**
   * Stops accepting, marks health NOT_SERVING, lets in-flight calls finish for up to the grace period,
   * then closes what is left and stops the workers.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.health.setStatus('', 'NOT_SERVING')
      this.health.setStatus(SERVICE_NAME, 'NOT_SERVING')
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          for (const s of this.sessions) s.abort()
          this.server.forceShutdown()
          resolve()
        }, this.graceMs)
        this.server.tryShutdown(() => {
          clearTimeout(timer)
          resolve()
        })
      })
      await this.tenancy.close()
      await this.workerPool.close()
      if (this.socketPath) await unlink(this.socketPath).catch(() => {})
    })()
    return this.stopping
  }

  private onSession(call: Stream): void {
    const tenant = this.identify(call.metadata)
    if (tenant instanceof HookdError) {
      call.emit('error', { code: tenant.grpcStatus, details: tenant.message })
      return
    }
    let session: Session | undefined
    let ended = false
    let closing = false
    const write = (message: Record<string, unknown>): void => {
      if (!ended) call.write(message)
    }
    const fail = (err: unknown): void => {
      if (ended) return
      ended = true
      session?.abort()
      const e = err instanceof HookdError ? err : new HookdError('internal', `hookd failed: ${String(err)}`)
      call.emit('error', { code: e.grpcStatus, details: e.message })
    }
    const finish = (): void => {
      if (ended) return
      ended = true
      untrack()
      call.end()
    }
    const cleanup = (): void => {
      untrack()
      if (session) {
        session.abort()
        this.sessions.delete(session)
      }
    }
    // A revoked credential ends the stream (tenants.ts).
    const untrack = tenant.track(fail)
    call.on('cancelled', () => {
      ended = true
      cleanup()
    })
    call.on('error', () => cleanup())
    call.on('end', () => {
      // The host half-closed without `close`: nothing more can arrive, so end the run.
      if (!closing) {
        cleanup()
        finish()
      }
    })
    call.on('data', (raw: unknown) => {
      if (ended) return
      if (raw instanceof UndecodableFrame) {
        fail(new HookdError('invalid-argument', raw.describe()))
        return
      }
      const parsed = hostMessageWire.safeParse(raw)
      if (!parsed.success) {
        fail(new HookdError('invalid-argument', hostMessageProblem(raw, parsed.error.issues)))
        return
      }
      const message = parsed.data
      try {
        if (message.kind !== 'open' && !session) {
          throw new HookdError('failed-precondition', `'${message.kind}' arrived before the session was opened; send 'open' first`)
        }
        switch (message.kind) {
          case 'open': {
            if (session) throw new HookdError('failed-precondition', 'the session is already open; send open only once')
            const opened = Session.open(tenant.deps, message.open, {
              capability: (c) => {
                write({ capabilityCall: { ...c, args: Buffer.from(JSON.stringify(c.args)) } })
                return undefined
              },
              log: (line) => write({ log: line }),
              diagnostic: (d) => write({ diagnostic: diagnosticToWire(d) }),
            })
            session = opened.session
            session.followRegistry()
            this.sessions.add(session)
            write({
              opened: {
                sessionId: session.id,
                hooks: opened.hooks.map(hookInfoToWire),
                sidecarVersion: HOOKD_VERSION,
                protocolVersion: PROTOCOL_VERSION,
              },
            })
            return
          }
          case 'call': {
            const { seq, point, payload } = message.call
            ;(session as Session).call(seq, point, payload).then((result) => write({ result: pointResultToWire(result) }), fail)
            return
          }
          case 'capabilityResult': {
            const r = message.capabilityResult
            if (r.error) {
              ;(session as Session).answer(r.id, { ok: false, code: r.error.code || 'failed', message: r.error.message })
            } else {
              const json = r.value && r.value.length ? parseJsonBytes('capability_result.value', r.value) : { ok: true as const, value: null }
              if (!json.ok) throw new HookdError('invalid-argument', json.message)
              ;(session as Session).answer(r.id, { ok: true, value: json.value })
            }
            return
          }
          case 'cancel':
            ;(session as Session).cancel(message.cancel.seq)
            return
          case 'close': {
            closing = true
            const s = session as Session
            s.close(message.close.reason).then((result) => {
              write({ closed: { result: pointResultToWire(result) } })
              this.sessions.delete(s)
              finish()
            }, fail)
            return
          }
        }
      } catch (err) {
        fail(err)
      }
    })
  }

  private async onInvoke(raw: unknown, done: grpc.sendUnaryData<unknown>, metadata: grpc.Metadata): Promise<void> {
    const reply = (err: HookdError): void => done({ code: err.grpcStatus, details: err.message })
    const tenant = this.identify(metadata)
    if (tenant instanceof HookdError) return reply(tenant)
    if (raw instanceof UndecodableFrame) return reply(new HookdError('invalid-argument', raw.describe()))
    const parsed = invokeRequestWire.safeParse(raw)
    if (!parsed.success || !parsed.data.session) {
      return reply(new HookdError('invalid-argument', 'InvokeRequest.session is required'))
    }
    const { session: open, point, payload } = parsed.data
    if (open.interactive) {
      return reply(
        new HookdError('invalid-argument', 'Invoke cannot serve an interactive session (no one can answer confirm); use the Session stream'),
      )
    }
    const logs: LogLineData[] = []
    const notifications: Buffer[] = []
    const diagnostics: Diagnostic[] = []
    try {
      const { session } = Session.open(tenant.deps, open, {
        capability: (c) => {
          if (c.capability === 'notify') {
            notifications.push(Buffer.from(JSON.stringify((c.args as unknown[])[0])))
            return Promise.resolve({ ok: true, value: null })
          }
          return Promise.resolve({
            ok: false,
            code: 'unavailable',
            message: `ctx.${c.capability} needs a host to serve it, and a unary Invoke has none; open a Session stream`,
          })
        },
        log: (line) => logs.push(line),
        diagnostic: (d) => diagnostics.push(d),
        quotaFails: true,
      })
      const result = await session.call(0, point, payload)
      result.diagnostics.unshift(...diagnostics)
      done(null, { result: pointResultToWire(result), logs, notifications })
    } catch (err) {
      reply(err instanceof HookdError ? err : new HookdError('internal', `hookd failed: ${String(err)}`))
    }
  }

  /** The tenant a call's metadata names (the implicit one without tenants), or why none. */
  private identify(metadata: grpc.Metadata): Tenant | HookdError {
    try {
      return this.tenancy.identify(metadata)
    } catch (err) {
      return err instanceof HookdError ? err : new HookdError('internal', `hookd failed: ${String(err)}`)
    }
  }
}

/**
 * A request frame that protobuf could not decode. grpc-js would end the call with INTERNAL ("Error
 * deserializing request"); hookd answers INVALID_ARGUMENT saying what was wrong, since the fault is the
 * client's.
 */
class UndecodableFrame {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {}
  describe(): string {
    return `a frame sent to ${this.path} is not a valid protobuf message of the request type (${this.reason}); send frames encoded from proto/hookd/v1/hookd.proto`
  }
}

function withTolerantDecoding(service: grpc.ServiceDefinition): grpc.ServiceDefinition {
  const out: Record<string, grpc.MethodDefinition<unknown, unknown>> = {}
  for (const [name, method] of Object.entries(service)) {
    out[name] = {
      ...method,
      requestDeserialize: (bytes: Buffer): unknown => {
        try {
          return method.requestDeserialize(bytes)
        } catch (err) {
          return new UndecodableFrame(method.path, err instanceof Error ? err.message : String(err))
        }
      },
    }
  }
  return out
}

const HOST_MESSAGE_KINDS = ['open', 'call', 'capabilityResult', 'cancel', 'close']

/** What was wrong with a decoded HostMessage, naming the field. */
function hostMessageProblem(raw: unknown, issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): string {
  const kind = raw !== null && typeof raw === 'object' ? (raw as { kind?: unknown }).kind : undefined
  if (typeof kind !== 'string' || !HOST_MESSAGE_KINDS.includes(kind)) {
    return 'a HostMessage must set exactly one of open, call, capability_result, cancel, close'
  }
  const issue = issues[0]
  const path = issue?.path.map(String).join('.') ?? kind
  return `HostMessage.${path || kind}: ${issue?.message ?? 'invalid'}`
}

/** Creates the socket's folder (0700) and removes a stale socket; refuses when a live one answers. */
async function prepareSocket(path: string): Promise<void> {
  // Only a folder hookd creates is narrowed to 0700; an existing one (say /tmp) is left as it is.
  if (await mkdir(dirname(path), { recursive: true, mode: 0o700 })) await chmod(dirname(path), 0o700)
  const live = await new Promise<boolean>((resolve) => {
    const socket = connect(path)
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
  if (live) throw new HookdError('unavailable', `another process is already listening on unix:${path}; stop it or pass --listen`)
  await unlink(path).catch(() => {})
}

export type { Address }
