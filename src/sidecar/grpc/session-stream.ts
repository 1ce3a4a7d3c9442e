/**
 * One Session stream: the protocol machine between a host and its `Session`. The first message must be
 * `open`; then point calls, capability answers, cancels and `close` in any order. A protocol mistake
 * ends the stream with the status that says what was wrong; hook failures never do (they are
 * diagnostics in results).
 */
import type * as grpc from '@grpc/grpc-js'
import type { Diagnostic } from '../../protocol/diagnostic.js'
import { HookdError } from '../../protocol/status.js'
import { HOOKD_VERSION, PROTOCOL_VERSION } from '../../protocol/version.js'
import {
  type HostMessage,
  type SidecarFrame,
  diagnosticToWire,
  hookInfoToWire,
  hostMessageWire,
  pointResultToWire,
} from '../../protocol/wire.js'
import type { SessionObserver } from '../observability/observer.js'
import { Session } from '../session/session.js'
import type { Tenant } from '../tenant.js'
import { UndecodableFrame, hostMessageProblem } from './frames.js'
import type { OpenStream, OpenStreams } from './open-streams.js'

/**
 * What the stream machine uses of its call: grpc-js's server stream (hook-executor.ts), or any duplex
 * that behaves alike (test/support/memory-session.ts, in memory). 'data' delivers each HostMessage as
 * @grpc/proto-loader decodes it (or an UndecodableFrame); 'end' is the host's half-close; 'cancelled'
 * the host gone. `write` sends a SidecarFrame, `end` ends the call with OK once the writes are out, and
 * `emit('error', status)` ends it with that status instead (grpc-js's way for a server stream).
 */
export interface SessionCall {
  write(frame: SidecarFrame): unknown
  end(): unknown
  emit(event: 'error', status: { code: grpc.status; details: string }): unknown
  on(event: 'data', listener: (raw: unknown) => void): unknown
  on(event: 'end' | 'cancelled' | 'error', listener: () => void): unknown
}

/** Sees every message of a stream, both ways (`hookd serve --capture`: testing/capture-tap.ts). */
export interface StreamTap {
  fromHost(message: HostMessage): void
  toHost(frame: SidecarFrame): void
}

export function serveSessionStream(call: SessionCall, tenant: Tenant, open: OpenStreams, observe?: SessionObserver, tap?: StreamTap): void {
  let session: Session | undefined
  let ended = false
  let closing = false
  /** Point calls accepted and not yet answered: a draining sidecar ends the stream when none is left. */
  let inFlight = 0
  /** Set once the sidecar drains: the status this stream ends with. */
  let draining: HookdError | undefined
  const write = (message: SidecarFrame): void => {
    if (ended) return
    tap?.toHost(message)
    call.write(message)
  }
  const settleDrain = (): void => {
    if (draining && inFlight === 0 && !closing) fail(draining)
  }
  const stream: OpenStream = {
    drain: (err) => {
      draining = err
      settleDrain()
    },
    abort: (err) => fail(err),
  }
  /** Runs `then` with what `promise` brings; a rejection, or a throw in `then`, ends the stream. */
  const after = <T>(promise: Promise<T>, then: (value: T) => void): void => {
    promise.then(then).catch(fail)
  }
  const fail = (err: unknown): void => {
    if (ended) return
    ended = true
    release()
    session?.abort()
    const e = HookdError.from(err)
    call.emit('error', { code: e.grpcStatus, details: e.message })
  }
  const finish = (): void => {
    if (ended) return
    ended = true
    release()
    call.end()
  }
  const cleanup = (): void => {
    release()
    session?.abort()
  }
  const release = (): void => {
    untrack()
    open.delete(stream)
  }
  // A revoked credential ends the stream (tenancy/tenants.ts).
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
  open.add(stream)

  const onOpen = (message: Extract<HostMessage, { kind: 'open' }>): void => {
    if (session) throw new HookdError('failed-precondition', 'the session is already open; send open only once')
    if (draining) throw draining
    // Diagnostics the open pushes (a declared hook that did not load) wait until `opened` is sent: the
    // host learns the session exists before anything is said about it.
    const early: Diagnostic[] = []
    let held: Diagnostic[] | undefined = early
    const opened = Session.open(tenant, message.open, {
      capability: (c) => {
        write({ capabilityCall: { ...c, args: Buffer.from(JSON.stringify(c.args)) } })
        return undefined
      },
      log: (line) => write({ log: line }),
      diagnostic: (d) => (held ? held.push(d) : write({ diagnostic: diagnosticToWire(d) })),
    }, observe)
    session = opened.session
    session.followRegistry()
    write({
      opened: {
        sessionId: session.id,
        hooks: opened.hooks.map(hookInfoToWire),
        sidecarVersion: HOOKD_VERSION,
        protocolVersion: PROTOCOL_VERSION,
        askOutcomes: true,
      },
    })
    held = undefined
    for (const d of early) write({ diagnostic: diagnosticToWire(d) })
  }

  const onMessage = (s: Session, message: Exclude<HostMessage, { kind: 'open' }>): void => {
    switch (message.kind) {
      case 'call': {
        const { seq, point, payload } = message.call
        // 0 is the seq of the afterRun that close runs: a host's own calls start at 1, so that results,
        // capability calls and `closed` always say which call they belong to.
        if (seq === 0) throw new HookdError('invalid-argument', 'point call seq 0 is not allowed: a host numbers its calls from 1 (seq 0 is the afterRun that close runs)')
        // A draining sidecar runs no new call: the stream ends with UNAVAILABLE once the running ones
        // are answered (at once when none runs).
        if (draining) return settleDrain()
        inFlight += 1
        after(s.call(seq, point, payload), (result) => {
          inFlight -= 1
          write({ result: pointResultToWire(result) })
          settleDrain()
        })
        return
      }
      case 'capabilityResult': {
        const r = message.capabilityResult
        s.answerFromHost(r.id, { value: r.value, error: r.error, deferred: r.deferred })
        return
      }
      case 'outcome': {
        // Answered at once, in the order reports arrive; past the session's bound of refusals it throws.
        const report = message.outcome
        const answer = s.reportOutcome(report)
        write({ outcomeAnswer: { decisionId: report.decisionId.slice(0, 256), recorded: answer.recorded, message: answer.recorded ? '' : answer.message } })
        return
      }
      case 'cancel':
        s.cancel(message.cancel.seq)
        return
      case 'close': {
        closing = true
        after(s.close(message.close.reason), (result) => {
          write({ closed: { result: pointResultToWire(result) } })
          finish()
        })
        return
      }
    }
  }

  call.on('data', (raw: unknown) => {
    if (ended) return
    if (raw instanceof UndecodableFrame) return fail(new HookdError('invalid-argument', raw.describe()))
    const parsed = hostMessageWire.safeParse(raw)
    if (!parsed.success) return fail(new HookdError('invalid-argument', hostMessageProblem(raw, parsed.error)))
    const message = parsed.data
    try {
      tap?.fromHost(message)
      if (message.kind === 'open') return onOpen(message)
      if (!session) throw new HookdError('failed-precondition', `'${message.kind}' arrived before the session was opened; send 'open' first`)
      onMessage(session, message)
    } catch (err) {
      fail(err)
    }
  })
}
