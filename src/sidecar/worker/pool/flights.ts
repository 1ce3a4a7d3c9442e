/**
 * What a worker is running: one flight per message that expects an answer (an invocation, a chain, a
 * load). The pool makes a flight with what its caller waits for; the worker it runs on holds it
 * (worker-process.ts), settles it with the worker's answer, or, when the worker dies, with a
 * `worker-crash` (`crashed`). Each flight has a deadline, paused while a capability call waits on the
 * host, past which its worker is judged hung, and the memory it counts against its worker: while it
 * runs, its memory limit; while it waits on its host, what it parked with (memory-room.ts).
 */
import { type ChainRequest, type InvocationHost, type InvocationReport, type InvocationRequest, type InvokeOutcome, failedReport } from '../../runners/hook-runner.js'
import type { LoadOutcome } from '../protocol.js'

interface Deadline {
  /** When the worker must have answered, unless a capability call is outstanding (ms, monotonic). */
  deadline: number
  /** Capability calls waiting on the host. */
  outstanding: number
  pausedAt: number
  /** The memory limit its isolates run with: what it counts against its worker while it runs. */
  memoryMb: number
  /**
   * While a capability call is outstanding: what it counts against its worker's parked memory (the
   * more of its memory limit and what its isolate held as it started to wait).
   */
  parkedMb: number
}

interface Calls {
  /** The steps (invoke: step 0) that made a capability call: those are never run again. */
  called: Set<number>
}

export interface InvokeFlight extends Deadline, Calls {
  type: 'invoke'
  request: InvocationRequest
  /** It ended: the worker's report, or a `worker-crash` with `lost` when its worker died under it. */
  settle(report: InvocationReport, lost: boolean): void
}

export interface LoadFlight extends Deadline {
  type: 'load'
  resolve(outcome: LoadOutcome): void
}

export interface ChainFlight extends Deadline, Calls {
  type: 'chain'
  request: ChainRequest
  /** A step's report arrived. */
  stepped(step: number, report: InvocationReport): void
  /** The chain is over: reports not received settle (see ChainRunState.end). */
  end(crash?: InvokeOutcome, retryable?: (step: number) => boolean): void
}

export type Flight = InvokeFlight | LoadFlight | ChainFlight

export const now = (): number => performance.now()

/** A deadline `ms` from now, for a flight whose isolates run with `memoryMb`. */
export function deadlineIn(ms: number, memoryMb: number): Deadline {
  return { deadline: now() + ms, outstanding: 0, pausedAt: 0, memoryMb, parkedMb: 0 }
}

/** A capability call leaves for the host: the flight's deadline stops running. */
export function pause(flight: Deadline): void {
  if (flight.outstanding++ === 0) flight.pausedAt = now()
}

/** A capability call came back: the deadline runs again, moved by the time it waited. */
export function resume(flight: Deadline): void {
  if (--flight.outstanding === 0) flight.deadline += now() - flight.pausedAt
}

/** Ends a flight whose worker died (`message` says how) with the `worker-crash` outcome. */
export function crashed(flight: Flight, message: string): void {
  if (flight.type === 'invoke') flight.settle(failedReport('worker-crash', message), true)
  // The steps that made no capability call may run again (ChainRunState.end).
  else if (flight.type === 'chain') flight.end({ ok: false, kind: 'worker-crash', message }, (step) => !flight.called.has(step))
  else flight.resolve({ ok: false, message })
}

/** Who gets a capability call or log line: the invocation, or the chain's step that made it. */
export function hostOf(flight: Flight, step: number | undefined): InvocationHost | undefined {
  if (flight.type === 'invoke') return step === undefined ? flight.request : undefined
  if (flight.type === 'chain') return step === undefined ? undefined : flight.request.steps[step]
  return undefined
}
