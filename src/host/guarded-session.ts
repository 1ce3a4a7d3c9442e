/**
 * A session that protects the host from a slow or absent sidecar. Every point call has a deadline
 * (paused while a human answers ctx.confirm); when hookd does not answer in time, is not running, or
 * dies mid-call, the point's failure policy decides the outcome and a diagnostic of kind `unavailable`
 * says what happened. The session reconnects with backoff and reopens itself (same session id) when
 * the sidecar comes back.
 */
import { backoffDelay } from '../protocol/backoff.js'
import { GATE_POINTS, type PointName, type PointPayload } from '../protocol/points/points.js'
import { HookdError } from '../protocol/status.js'
import { type ConnectOptions, HookdClient, type PointCallResult, type SessionOptions } from './client.js'
import { type FailurePolicy, deadlineFor, failureResult, modeFor, requirePoint } from './failure-policy.js'
import type { HostSession, OutcomeReport } from './session.js'
import type { Diagnostic } from '../protocol/diagnostic.js'

export interface GuardOptions extends ConnectOptions {
  failure?: FailurePolicy
  /** Reconnect backoff: first wait and ceiling. Defaults 100 ms and 5000 ms. */
  reconnect?: { initialMs?: number; maxMs?: number }
  /** Every `unavailable` diagnostic the guard produces, as it happens. */
  onDiagnostic?(d: Diagnostic): void
}

/** Errors that mean the host asked for something wrong: these are not hidden behind the policy. */
const HOST_MISTAKES = new Set(['not-found', 'invalid-argument', 'failed-precondition', 'unauthenticated'])

export class GuardedSession {
  private session: HostSession | undefined
  private client: HookdClient | undefined
  private reconnecting = false
  private closed = false
  private points: ReadonlySet<string> | undefined
  private readonly listeners = new Set<() => void>()
  private lastError = 'hookd was never reached'

  private constructor(
    readonly address: string,
    private readonly options: SessionOptions,
    private readonly guard: GuardOptions,
  ) {}

  /**
   * Opens the session. An unreachable sidecar does not fail the open: calls follow the failure
   * policy until it is reached. A refusal (unknown hook, bad options) does fail it.
   */
  static async open(address: string, options: SessionOptions, guard: GuardOptions = {}): Promise<GuardedSession> {
    const guarded = new GuardedSession(address, options, guard)
    try {
      await guarded.connect()
    } catch (err) {
      if (err instanceof HookdError && HOST_MISTAKES.has(err.code)) throw err
      guarded.lastError = err instanceof Error ? err.message : String(err)
      guarded.scheduleReconnect()
    }
    return guarded
  }

  get connected(): boolean {
    return this.session !== undefined && !this.session.isEnded
  }

  /**
   * The points some declared hook handles. Until hookd has been reached they are unknown, and only the
   * gates are reported, so that they fail closed rather than go unguarded.
   */
  subscribedPoints(): ReadonlySet<string> {
    return this.points ?? new Set<string>(GATE_POINTS)
  }

  /** Calls `listener` whenever the subscribed points may have changed (after a (re)connect). */
  onResubscribe(listener: () => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Runs a point. Never fails because hookd is slow or gone: the failure policy answers instead. */
  async call<N extends PointName>(point: N, payload: PointPayload<N>): Promise<PointCallResult<N>> {
    requirePoint(point)
    const session = this.session
    if (!session || session.isEnded) return this.fallback(point, payload, `it is unreachable (${this.lastError})`)
    const deadline = deadlineFor(point, this.guard.failure)
    const abort = new AbortController()
    let timer: NodeJS.Timeout | undefined
    const timedOut = new Promise<'timeout'>((resolve) => {
      let spent = 0
      let last = Date.now()
      const tick = (): void => {
        const now = Date.now()
        // Time a human spends answering ctx.confirm does not count against the deadline.
        if (!session.waitingOnHuman) spent += now - last
        last = now
        if (spent >= deadline) resolve('timeout')
        else timer = setTimeout(tick, Math.min(100, deadline - spent))
      }
      timer = setTimeout(tick, Math.min(100, deadline))
    })
    try {
      const answer = await Promise.race([session.call(point, payload, { signal: abort.signal }), timedOut])
      if (answer === 'timeout') {
        abort.abort()
        return this.fallback(point, payload, `it did not answer within ${deadline} ms`)
      }
      return answer
    } catch (err) {
      if (err instanceof HookdError && HOST_MISTAKES.has(err.code) && err.code !== 'failed-precondition') throw err
      this.lastError = err instanceof Error ? err.message : String(err)
      this.scheduleReconnect()
      return this.fallback(point, payload, `the connection failed (${this.lastError})`)
    } finally {
      clearTimeout(timer)
    }
  }

  /**
   * Reports what became of a call whose confirm was answered `'deferred'` (HostSession.reportOutcome),
   * on the session the decision came from. Rejects with `unavailable` while hookd is not reached; a
   * session reopened after a reconnect holds none of the earlier one's asks (hookd recorded those
   * `unknown`, via `run ended`, when the stream was lost), so their reports are refused.
   */
  reportOutcome(report: OutcomeReport): Promise<void> {
    const session = this.session
    if (!session || session.isEnded) return Promise.reject(new HookdError('unavailable', `hookd is unreachable (${this.lastError}); the outcome was not recorded`))
    return session.reportOutcome(report)
  }

  /** Ends the run (afterRun) if hookd is there; stops reconnecting either way. */
  async close(reason: 'end_turn' | 'interrupted' | 'error' = 'end_turn'): Promise<PointCallResult<'afterRun'>> {
    this.closed = true
    const session = this.session
    try {
      if (session && !session.isEnded) return await session.close(reason)
      return this.fallback('afterRun', { reason }, `it is unreachable (${this.lastError})`)
    } catch (err) {
      return this.fallback('afterRun', { reason }, `the connection failed (${err instanceof Error ? err.message : String(err)})`)
    } finally {
      this.client?.close()
    }
  }

  private fallback<N extends PointName>(point: N, payload: PointPayload<N>, why: string): PointCallResult<N> {
    const mode = modeFor(point, this.guard.failure)
    const { result, diagnostic } = failureResult(requirePoint(point), payload, mode, why)
    this.guard.onDiagnostic?.(diagnostic)
    return { result: result as PointCallResult<N>['result'], diagnostics: [diagnostic], trace: [], durationUs: 0 }
  }

  private async connect(): Promise<void> {
    const client = await HookdClient.connect(this.address, { connectTimeoutMs: 1000, ...this.guard })
    let session: HostSession
    try {
      session = await client.openSession(this.options)
    } catch (err) {
      client.close()
      throw err
    }
    this.client?.close()
    this.client = client
    this.session = session
    this.points = session.subscribedPoints()
    session.onEnd((err) => {
      if (this.closed || this.session !== session) return
      this.lastError = err.message
      this.scheduleReconnect()
    })
    for (const listener of this.listeners) listener()
  }

  private scheduleReconnect(): void {
    if (this.reconnecting || this.closed) return
    this.reconnecting = true
    const schedule = { firstMs: this.guard.reconnect?.initialMs ?? 100, maxMs: this.guard.reconnect?.maxMs ?? 5000 }
    let failures = 0
    const attempt = (): void => {
      if (this.closed) {
        this.reconnecting = false
        return
      }
      this.connect().then(
        () => {
          this.reconnecting = false
        },
        (err: unknown) => {
          this.lastError = err instanceof Error ? err.message : String(err)
          failures += 1
          setTimeout(attempt, backoffDelay(schedule, failures)).unref()
        },
      )
    }
    setTimeout(attempt, backoffDelay(schedule, 0)).unref()
  }
}
