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
import { Registry } from './registry.js'
import type { WatchOptions } from './watch.js'
import { DEFAULT_WAITS, Session, type SessionDeps } from './session.js'
import { DEFAULT_LIMITS, type Limits } from './worker/protocol.js'
import { WorkerPool } from './worker/supervisor.js'

export interface SidecarOptions {
  /** The hooks folder. */
  hooks: string
  limits?: Partial<Limits>
  waits?: Partial<SessionDeps['waits']>
  /** Sandbox worker processes; default: one per core. */
  workers?: number
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
    private readonly deps: SessionDeps,
    loadDiagnostics: Diagnostic[],
    graceMs: number,
  ) {
    this.loadDiagnostics = loadDiagnostics
    this.graceMs = graceMs
    this.server.addService(hookExecutorService(), {
      Session: (call: Stream) => this.onSession(call),
      Invoke: (call: grpc.ServerUnaryCall<unknown, unknown>, done: grpc.sendUnaryData<unknown>) =>
        void this.onInvoke(call.request, done),
      ListHooks: (_call: grpc.ServerUnaryCall<unknown, unknown>, done: grpc.sendUnaryData<unknown>) =>
        done(null, { hooks: this.deps.registry.list().map(hookInfoToWire) }),
    })
    this.health.addToServer(this.server)
  }

  /** Starts the workers and loads every hook; does not listen yet. */
  static async create(options: SidecarOptions): Promise<Sidecar> {
    const limits: Limits = { ...DEFAULT_LIMITS, ...options.limits }
    const pool = new WorkerPool(options.workers !== undefined ? { size: options.workers } : {})
    await pool.start()
    const registry = new Registry(options.hooks, pool, limits)
    let diagnostics: Diagnostic[]
    try {
      diagnostics = await registry.loadAll()
      if (options.watch !== false) await registry.watch(options.watch === true ? {} : options.watch)
    } catch (err) {
      await pool.close()
      throw err
    }
    const deps: SessionDeps = { registry, pool, limits, waits: { ...DEFAULT_WAITS, ...options.waits } }
    return new Sidecar(deps, diagnostics, options.graceMs ?? 5000)
  }

  get registry(): Registry {
    return this.deps.registry
  }

  get pool(): WorkerPool {
    return this.deps.pool
  }

  /** Binds the address; returns it in canonical form (with the real port for `HOST:0`). */
  async listen(text: string): Promise<string> {
    const address = parseAddress(text)
    if (address.kind === 'unix') await prepareSocket(address.path)
    const port = await new Promise<number>((resolve, reject) => {
      this.server.bindAsync(formatAddress(address), grpc.ServerCredentials.createInsecure(), (err, p) =>
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
      await this.deps.registry.unwatch()
      await this.deps.pool.close()
      if (this.socketPath) await unlink(this.socketPath).catch(() => {})
    })()
    return this.stopping
  }

  private onSession(call: Stream): void {
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
      call.end()
    }
    const cleanup = (): void => {
      if (session) {
        session.abort()
        this.sessions.delete(session)
      }
    }
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
      const parsed = hostMessageWire.safeParse(raw)
      if (!parsed.success) {
        fail(new HookdError('invalid-argument', 'a HostMessage must set exactly one of open, call, capability_result, cancel, close'))
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
            const opened = Session.open(this.deps, message.open, {
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

  private async onInvoke(raw: unknown, done: grpc.sendUnaryData<unknown>): Promise<void> {
    const reply = (err: HookdError): void => done({ code: err.grpcStatus, details: err.message })
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
      const { session } = Session.open(this.deps, open, {
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
      })
      const result = await session.call(0, point, payload)
      result.diagnostics.unshift(...diagnostics)
      done(null, { result: pointResultToWire(result), logs, notifications })
    } catch (err) {
      reply(err instanceof HookdError ? err : new HookdError('internal', `hookd failed: ${String(err)}`))
    }
  }
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
