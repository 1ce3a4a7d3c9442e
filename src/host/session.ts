/**
 * One agent run on a Session stream: typed point calls, capability calls served by the host's
 * handlers, live log lines and pushed diagnostics; and, for a confirm the host left to its agent's own
 * prompt (a confirm handler's `'deferred'`), the report of what became of the call.
 */
import type { AskOutcome } from '../protocol/ask-outcomes.js'
import { parseJson } from '../protocol/bounded-json.js'
import { isHostCapabilityName } from '../protocol/capabilities.js'
import { type AnyPoint, GATE_POINTS, type PointName, type PointPayload, getPoint, isGate, servedPoints } from '../protocol/points/points.js'
import { HookdError } from '../protocol/status.js'
import {
  type HookInfoData,
  type HostFrame,
  type OpenSessionOut,
  type ReportedBy,
  type SidecarMessage,
  askOutcomeToWire,
  reportedByToWire,
  sidecarMessageWire,
} from '../protocol/wire.js'
import { type CallOrigin, CapabilityError, type CapabilityHandlers, MAX_REPLY_BYTES } from './capabilities.js'
import { type CapabilityTable, type Served, capabilityTable, serveCall, servingHandlers } from './capability-table.js'
import { type PointCallResult, type StreamStatus, decodeResult, fromServiceError } from './results.js'
import type { SessionOptions } from './session-options.js'

/**
 * The stream a HostSession runs on: the gRPC client's Session call (client.ts), or any duplex that
 * carries the same frames (test/support/memory-session.ts, in memory). It takes the HostFrames this
 * library writes, delivers each SidecarMessage as @grpc/proto-loader decodes it ('data'), and ends
 * with 'end' when the sidecar closed it with OK, or with 'error' carrying the status otherwise (a
 * grpc.ServiceError: its code and details). `cancel` ends it from this side (CANCELLED).
 */
export interface SessionStream {
  write(frame: HostFrame): unknown
  end(): unknown
  cancel(): void
  on(event: 'data', listener: (message: unknown) => void): unknown
  on(event: 'error', listener: (status: StreamStatus) => void): unknown
  on(event: 'end', listener: () => void): unknown
}
type CallMessage = Extract<SidecarMessage, { kind: 'capabilityCall' }>['capabilityCall']

interface Pending {
  resolve(result: PointCallResult<PointName>): void
  reject(err: HookdError): void
}

/** What became of a tool call whose confirm the host answered `'deferred'` (HostSession.reportOutcome). */
export interface OutcomeReport {
  /** The decision id of the point result that was asked (PointCallResult.decisionId). */
  decisionId: string
  /** `allowed` (the call ran), `denied` (it did not), `unknown` (the host cannot tell). */
  outcome: AskOutcome
  /** What told the host: the agent's event (`PostToolUse`, ...), or its own account (`run ended`). 1-64 characters. */
  via: string
  /** `agent` (the default: one of the agent's events said it) or `host` (the host concluded it). */
  by?: ReportedBy
}

export class HostSession {
  readonly id: string
  /** The declared hooks with their versions and the points each handles. */
  readonly hooks: readonly HookInfoData[]
  private readonly pending = new Map<number, Pending>()
  /** Outcome reports sent and not yet answered, by decision id, oldest first. */
  private readonly reports = new Map<string, Array<{ resolve(): void; reject(err: HookdError): void }>>()
  private closing: Pending | undefined
  private nextSeq = 1
  /** Confirm questions the host is answering now: deadlines pause while a human decides. */
  private humanWaits = 0
  private ended: HookdError | undefined
  private readonly handlers: CapabilityHandlers
  /** The host's handlers with the defaults for what it left out, one per capability. */
  private readonly table: CapabilityTable
  /** The calls (by their origin) whose confirm the host answered `'deferred'`. */
  private readonly deferred = new WeakSet<CallOrigin>()

  private constructor(
    private readonly stream: SessionStream,
    options: SessionOptions,
    opened: Extract<SidecarMessage, { kind: 'opened' }>['opened'],
  ) {
    this.id = opened.sessionId
    this.hooks = opened.hooks
    this.askOutcomes = opened.askOutcomes
    this.handlers = options.capabilities ?? {}
    const serving = servingHandlers(this.handlers, { workdir: options.workdir ?? process.cwd(), httpOrigins: options.policy?.httpOrigins ?? [] })
    const table = capabilityTable(serving, (origin) => {
      // A yes left to the agent's prompt: only a gate can say so.
      const point = getPoint(origin.point) as AnyPoint | undefined
      if (!point || !isGate(point)) {
        throw new CapabilityError('invalid', `ctx.confirm at ${origin.point}: the host's confirm handler answered 'deferred', which only a gate point (${GATE_POINTS.join(', ')}) takes`)
      }
      this.deferred.add(origin)
    })
    this.table = {
      ...table,
      // A human decides: the host's deadlines pause meanwhile (waitingOnHuman).
      confirm: async (args, origin) => {
        this.humanWaits += 1
        try {
          return await table.confirm(args, origin)
        } finally {
          this.humanWaits -= 1
        }
      },
    }
  }

  /**
   * Whether the sidecar takes a confirm answered `'deferred'` (recorded asked) and outcome reports. An
   * older sidecar does not: there a `'deferred'` is sent as a plain yes, and reportOutcome fails.
   */
  readonly askOutcomes: boolean

  static open(stream: SessionStream, options: SessionOptions, open: OpenSessionOut): Promise<HostSession> {
    return new Promise<HostSession>((resolve, reject) => {
      let session: HostSession | undefined
      const early: SidecarMessage[] = []
      stream.on('data', (raw: unknown) => {
        const parsed = sidecarMessageWire.safeParse(raw)
        if (!parsed.success) {
          const err = new HookdError('internal', `the sidecar sent a message this host library does not understand`)
          if (session) session.fail(err)
          else reject(err)
          stream.cancel()
          return
        }
        const message = parsed.data
        if (!session) {
          if (message.kind === 'opened') {
            session = new HostSession(stream, options, message.opened)
            for (const m of early.splice(0)) session.onMessage(m)
            resolve(session)
          } else {
            early.push(message)
          }
          return
        }
        session.onMessage(message)
      })
      stream.on('error', (err: StreamStatus) => {
        const e = fromServiceError(err)
        if (session) session.fail(e)
        else reject(e)
      })
      stream.on('end', () => {
        const e = new HookdError('unavailable', 'the sidecar ended the session')
        if (session) session.fail(e)
        else reject(e)
      })
      send(stream, { open })
    })
  }

  /**
   * Runs one point through the session's hooks and returns the chained result. Aborting `signal` sends
   * a cancel: the result still arrives, and a cancelled gate point comes back refused (refusedBy
   * 'hookd', a reason saying it was cancelled), never allowed. A session that ends first rejects it.
   */
  call<N extends PointName>(point: N, payload: PointPayload<N>, options: { signal?: AbortSignal } = {}): Promise<PointCallResult<N>> {
    if (this.ended) return Promise.reject(endedEarlier(this.ended))
    const seq = this.nextSeq++
    return new Promise<PointCallResult<N>>((resolve, reject) => {
      this.pending.set(seq, { resolve: resolve as Pending['resolve'], reject })
      const onAbort = (): void => {
        send(this.stream, { cancel: { seq } })
      }
      options.signal?.addEventListener('abort', onAbort, { once: true })
      send(this.stream, { call: { seq, point, payload: Buffer.from(JSON.stringify(payload)) } })
    })
  }

  /**
   * Ends the run: the sidecar runs afterRun with the reason and closes the stream. When this session
   * already called afterRun (or agent:done), it is not run again: the answer is that call's result.
   */
  close(reason: 'end_turn' | 'interrupted' | 'error' = 'end_turn'): Promise<PointCallResult<'afterRun'>> {
    if (this.ended) return Promise.reject(endedEarlier(this.ended))
    return new Promise<PointCallResult<'afterRun'>>((resolve, reject) => {
      this.closing = { resolve: resolve as Pending['resolve'], reject }
      send(this.stream, { close: { reason } })
    })
  }

  /**
   * Reports what became of a tool call whose confirm this host answered `'deferred'`: the sidecar
   * records it as the second audit line of the decision `report.decisionId` (the asked result's
   * decisionId), once. Resolves when it is recorded; rejects with a HookdError saying why when the
   * sidecar refuses it (not an asked decision of this session still waiting: unknown, not asked, or
   * settled already, by an earlier report or by the sidecar's bounds: 64 waiting, 30 minutes), or when
   * the sidecar takes no reports (askOutcomes false) or the session ended. A session that ends settles
   * the asks it still holds `unknown` (run ended): report before close.
   */
  reportOutcome(report: OutcomeReport): Promise<void> {
    if (this.ended) return Promise.reject(endedEarlier(this.ended))
    if (!this.askOutcomes) {
      return Promise.reject(new HookdError('failed-precondition', 'this sidecar takes no outcome reports (it is older than them): it recorded the deferred confirm as a yes; upgrade hookd to follow asks'))
    }
    return new Promise<void>((resolve, reject) => {
      const waiting = this.reports.get(report.decisionId) ?? []
      waiting.push({ resolve, reject })
      this.reports.set(report.decisionId, waiting)
      send(this.stream, {
        outcome: { decisionId: report.decisionId, outcome: askOutcomeToWire(report.outcome), via: report.via, by: reportedByToWire(report.by ?? 'agent') },
      })
    })
  }

  /**
   * The points some declared hook handles, directly or through the step point it aliases; and every
   * gate point while a declared hook is not loaded (which points it would serve is unknown, and the
   * sidecar refuses such a gate when the hook must not be skipped).
   */
  subscribedPoints(): ReadonlySet<string> {
    if (!this.served) {
      const served = new Set<string>(servedPoints(new Set(this.hooks.flatMap((h) => h.points))))
      if (this.hooks.some((h) => h.status === 'broken')) for (const gate of GATE_POINTS) served.add(gate)
      this.served = served
    }
    return this.served
  }

  private served: ReadonlySet<string> | undefined

  /** True while a hook waits on a human answering ctx.confirm through this host. */
  get waitingOnHuman(): boolean {
    return this.humanWaits > 0
  }

  /** True once the stream has ended, for whatever reason. */
  get isEnded(): boolean {
    return this.ended !== undefined
  }

  /** Drops the stream without running afterRun. */
  abandon(): void {
    this.fail(new HookdError('cancelled', 'the session was abandoned by the host'))
    this.stream.cancel()
  }

  /**
   * Calls `listener` once when the stream ends for any reason (at once if it already has). Returns the
   * function that unregisters it.
   */
  onEnd(listener: (err: HookdError) => void): () => void {
    if (this.ended) {
      listener(this.ended)
      return () => {}
    }
    this.endListeners.add(listener)
    return () => {
      this.endListeners.delete(listener)
    }
  }

  private readonly endListeners = new Set<(err: HookdError) => void>()

  private fail(err: HookdError): void {
    if (this.ended) return
    this.ended = err
    const listeners = [...this.endListeners]
    this.endListeners.clear()
    for (const listener of listeners) listener(err)
    for (const p of this.pending.values()) p.reject(err)
    this.pending.clear()
    this.closing?.reject(err)
    this.closing = undefined
    for (const waiting of this.reports.values()) for (const w of waiting) w.reject(err)
    this.reports.clear()
  }

  private onMessage(message: SidecarMessage): void {
    switch (message.kind) {
      case 'opened':
        return
      case 'result': {
        const pending = this.pending.get(message.result.seq)
        this.pending.delete(message.result.seq)
        pending?.resolve(decodeResult(message.result))
        return
      }
      case 'closed': {
        const closing = this.closing
        this.closing = undefined
        if (closing && message.closed.result) closing.resolve(decodeResult(message.closed.result))
        this.fail(new HookdError('failed-precondition', 'the host closed it'))
        this.stream.end()
        return
      }
      case 'log':
        this.handlers.log?.(message.log)
        return
      case 'diagnostic':
        this.handlers.diagnostic?.(message.diagnostic)
        return
      case 'capabilityCall':
        void this.serve(message.capabilityCall)
        return
      case 'outcomeAnswer': {
        const answer = message.outcomeAnswer
        const waiting = this.reports.get(answer.decisionId)
        const first = waiting?.shift()
        if (waiting && waiting.length === 0) this.reports.delete(answer.decisionId)
        if (!first) return
        if (answer.recorded) first.resolve()
        else first.reject(new HookdError('failed-precondition', answer.message))
        return
      }
    }
  }

  private async serve(call: CallMessage): Promise<void> {
    const read = parseJson(call.args, `${call.capability}: the arguments`)
    const origin = { hook: call.hook, point: call.point, seq: call.seq }
    // A name this host does not serve is said so whatever its arguments.
    const served: Served =
      read.ok || !isHostCapabilityName(call.capability)
        ? await serveCall(this.table, { capability: call.capability, args: read.ok ? read.value : undefined, origin }, this.handlers.onCall)
        : { ok: false, code: 'invalid', message: read.message }
    let reply: Extract<HostFrame, { capabilityResult: unknown }>['capabilityResult']
    try {
      if (!served.ok) throw new CapabilityError(served.code, served.message)
      if (this.deferred.has(origin)) {
        // A yes left to the agent's prompt: only a sidecar that takes it records it asked (an older
        // one takes the plain yes it has always had).
        reply = { id: call.id, value: Buffer.from('true'), ...(this.askOutcomes ? { deferred: true } : {}) }
        if (!this.ended) send(this.stream, { capabilityResult: reply })
        return
      }
      const value = Buffer.from(JSON.stringify(served.value))
      // A reply past the sidecar's message limit would end the whole stream: fail this call instead.
      if (value.length > MAX_REPLY_BYTES) {
        throw new CapabilityError('limit', `ctx.${call.capability}: the host's answer is ${value.length} bytes, over the limit of ${MAX_REPLY_BYTES}`)
      }
      reply = { id: call.id, value }
    } catch (err) {
      const code = err instanceof CapabilityError ? err.code : 'failed'
      reply = { id: call.id, error: { code, message: err instanceof Error ? err.message : String(err) } }
    }
    if (!this.ended) send(this.stream, { capabilityResult: reply })
  }
}

/**
 * What a call made after the session ended gets: the session's end, said as such. Repeating the
 * original error alone would read as if this call had caused it (a bad payload, a revoked key).
 */
function endedEarlier(why: HookdError): HookdError {
  return new HookdError('failed-precondition', `the session ended earlier: ${why.message}`)
}

/** Every message a host writes, typed: a misspelt field is a compile error, not a silent drop. */
function send(stream: SessionStream, frame: HostFrame): void {
  stream.write(frame)
}
