/**
 * The front door's connections, so that strangers cannot take the capacity the agents need:
 *
 * - at most `max` connections in all, and `perPeer` of one peer. A peer is the user that owns the
 *   client's socket for a loopback connection (every loopback peer is 127.0.0.1: peer-user.ts asks the
 *   kernel; a uid the tables do not give is one bucket of its own), and the client's address otherwise;
 * - a connection that has not sent an authenticated request within `preAuthMs` is closed;
 * - a new connection past either cap makes room by closing the oldest one that never authenticated,
 *   else the oldest idle one (authenticated, no request in progress), of the same peer for the
 *   peer's cap, of anyone for the door's; only when every one is busy is the new one closed itself.
 *   So 512 idle strangers cost the agent's next call nothing: one of them goes.
 *
 * Users are looked up only when the door holds more connections than one peer may (below that, no
 * peer can be over its cap), in batches, one table read at a time.
 */
import type { Server } from 'node:http'
import { isIPv4 } from 'node:net'
import type { Socket } from 'node:net'
import { type Connection, peerUids } from './peer-user.js'

export interface ConnectionLimits {
  /** Connections at once. Default 512. */
  max: number
  /** Connections of one peer at once. Default 128. */
  perPeer: number
  /** Closes a connection that has sent no authenticated request this long after it opened. Default 3 s. */
  preAuthMs: number
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = { max: 512, perPeer: 128, preAuthMs: 3000 }

/** The least time between two reads of the kernel's tables. */
const LOOKUP_GAP_MS = 50

interface Tracked {
  socket: Socket
  ends: Connection
  authenticated: boolean
  /** Requests in progress. */
  active: number
  /** `uid N`, `uid unknown` or `address A`; undefined until looked up. */
  peer: string | undefined
  queued: boolean
  timer: NodeJS.Timeout | undefined
}

export interface ConnectionGuardOptions {
  /** A line for the operator (kind `connections`, rate-limited by the caller). */
  report(line: string): void
  /** The users of loopback connections (tests give their own). Default: the kernel's tables. */
  lookup?(connections: readonly Connection[]): Promise<Array<number | undefined>>
}

export class ConnectionGuard {
  private readonly tracked = new Map<Socket, Tracked>()
  private readonly peers = new Map<string, Set<Tracked>>()
  private readonly queue: Tracked[] = []
  private looking = false
  private readonly limits: ConnectionLimits
  private readonly lookup: NonNullable<ConnectionGuardOptions['lookup']>

  constructor(
    server: Server,
    limits: Partial<ConnectionLimits>,
    private readonly options: ConnectionGuardOptions,
  ) {
    this.limits = { ...DEFAULT_CONNECTION_LIMITS, ...limits }
    for (const [name, value] of Object.entries(this.limits)) {
      if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`the front door's connections: ${name} must be a positive integer; got ${value}`)
    }
    this.lookup = options.lookup ?? ((connections) => peerUids(connections))
    server.on('connection', (socket: Socket) => this.admit(socket))
  }

  /** Connections open now. */
  get size(): number {
    return this.tracked.size
  }

  /** The connection sent a request that authenticated: the pre-authentication timer stops. */
  authenticated(socket: Socket): void {
    const t = this.tracked.get(socket)
    if (!t || t.authenticated) return
    t.authenticated = true
    clearTimeout(t.timer)
    t.timer = undefined
  }

  /** A request began on the connection; `done` (idempotent) when its answer is sent or it broke off. */
  request(socket: Socket): () => void {
    const t = this.tracked.get(socket)
    if (!t) return () => {}
    t.active += 1
    let done = false
    return () => {
      if (done) return
      done = true
      t.active -= 1
    }
  }

  /** Stops the timers (the server closes the connections). */
  close(): void {
    for (const t of this.tracked.values()) clearTimeout(t.timer)
  }

  private admit(socket: Socket): void {
    const ends: Connection = {
      local: { address: socket.localAddress ?? '', port: socket.localPort ?? 0 },
      remote: { address: socket.remoteAddress ?? '', port: socket.remotePort ?? 0 },
    }
    const t: Tracked = { socket, ends, authenticated: false, active: 0, peer: undefined, queued: false, timer: undefined }
    this.tracked.set(socket, t)
    socket.once('close', () => this.forget(t))
    t.timer = setTimeout(() => {
      if (!t.authenticated) socket.destroy()
    }, this.limits.preAuthMs)
    t.timer.unref()
    if (this.tracked.size > this.limits.max) {
      const victim = pick(this.tracked.values(), t)
      this.options.report(`closed a connection ${state(victim)} to make room: the front door holds ${this.limits.max} connections, its most`)
      this.drop(victim)
      if (victim === t) return
    }
    // A Unix socket's connections have no address: the user's socket (projects.ts) is only the user's.
    if (ends.remote.address === '') this.assign(t, 'the unix socket')
    else if (!isLoopback(ends.remote.address)) this.assign(t, `address ${ends.remote.address}`)
    else if (this.tracked.size > this.limits.perPeer) this.lookUpAll()
  }

  private forget(t: Tracked): void {
    clearTimeout(t.timer)
    this.tracked.delete(t.socket)
    if (t.peer === undefined) return
    const bucket = this.peers.get(t.peer)
    bucket?.delete(t)
    if (bucket?.size === 0) this.peers.delete(t.peer)
  }

  /** Puts `t` in its peer's bucket, and makes room there if the peer is over its cap. */
  private assign(t: Tracked, peer: string): void {
    if (!this.tracked.has(t.socket)) return
    t.peer = peer
    let bucket = this.peers.get(peer)
    if (!bucket) this.peers.set(peer, (bucket = new Set()))
    bucket.add(t)
    if (bucket.size <= this.limits.perPeer) return
    const victim = pick(bucket.values(), t)
    this.options.report(`closed a connection ${state(victim)} from ${peer} to make room: one user may hold ${this.limits.perPeer} connections`)
    this.drop(victim)
  }

  /** Closes a connection, and stops counting it now (its 'close' comes later). */
  private drop(t: Tracked): void {
    this.forget(t)
    t.socket.destroy()
  }

  /** Looks up the user of every loopback connection not yet known, in batches. */
  private lookUpAll(): void {
    for (const t of this.tracked.values()) {
      if (t.peer === undefined && !t.queued) {
        t.queued = true
        this.queue.push(t)
      }
    }
    if (this.looking) return
    this.looking = true
    void this.drain().finally(() => (this.looking = false))
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0).filter((t) => this.tracked.has(t.socket))
      if (batch.length > 0) {
        const uids = await this.lookup(batch.map((t) => t.ends)).catch(() => batch.map(() => undefined))
        batch.forEach((t, i) => this.assign(t, `uid ${uids[i] ?? 'unknown'}`))
      }
      await new Promise((resolve) => setTimeout(resolve, LOOKUP_GAP_MS))
    }
  }
}

/**
 * The connection to close for room: of those older than `newest`, the oldest that never authenticated,
 * else the oldest idle; else `newest` itself (every other one is busy with an authorized request).
 */
function pick(connections: Iterable<Tracked>, newest: Tracked): Tracked {
  let idle: Tracked | undefined
  for (const t of connections) {
    if (t === newest) continue
    if (!t.authenticated) return t
    if (!idle && t.active === 0) idle = t
  }
  return idle ?? newest
}

function state(t: Tracked): string {
  return t.authenticated ? (t.active === 0 ? '(idle)' : '(busy)') : '(not authenticated)'
}

function isLoopback(address: string): boolean {
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1] ?? address
  return (isIPv4(v4) && v4.startsWith('127.')) || address === '::1'
}
