/**
 * The memory a worker's invocations hold, as the pool counts it to keep a worker within its bounds
 * (docs/containment.md, "Memory parked on the host"). Each flight is in one of two states:
 *
 * - **running** (no capability call out): it counts its memory limit. Running ends within the
 *   invocation's CPU and wall-time limits, and the pool sends a worker new work only while what runs
 *   there leaves room for it (PoolOptions.maxRunningMb); the rest waits in the pool. Without that cap a
 *   burst of calls ran all at once and filled a worker past its memory cgroup before any of them had
 *   made the capability call the parked bound judges.
 * - **parked** (waiting on its host, for as long as a human or a slow host takes): it counts the more of
 *   its memory limit and what its isolate held as it started to wait (the worker measures it: heldMb),
 *   since isolated-vm's limit is a guideline; a wait that would take what is parked past
 *   PoolOptions.maxParkedMb is refused and the hook's call throws `limit`.
 *
 * So the invocations in one worker hold at most about maxRunningMb + maxParkedMb of memory limits at
 * once, however many calls arrive. The sums are computed from the flights themselves, so a flight that
 * ends (an answer, a cancel, its worker's death) gives its room back by being gone; the rules below are
 * plain functions of those sums (the balancer's table, test/unit/pool/balancer.test.ts, covers them).
 */
import type { Flight } from './flights.js'

/** The memory limits of what runs now: reservations, and flights with no capability call out. */
export function runningMbOf(flights: Iterable<Flight>, reservedMb: number): number {
  let mb = reservedMb
  for (const flight of flights) if (flight.outstanding === 0) mb += flight.memoryMb
  return mb
}

/** What the invocations waiting on their host hold now. */
export function parkedMbOf(flights: Iterable<Flight>): number {
  let mb = 0
  for (const flight of flights) if (flight.outstanding > 0) mb += flight.parkedMb
  return mb
}

/** Whether a worker running `runningMb` may start work whose isolates run with `memoryMb`: one with nothing running always may. */
export function roomToRun(runningMb: number, memoryMb: number, maxRunningMb: number): boolean {
  return runningMb === 0 || runningMb + memoryMb <= maxRunningMb
}

/** Why a wait was refused: what was parked already, and what this one holds when that is over its limit. */
export interface WaitRefused {
  parkedMb: number
  holdsMb?: number
}

/** A wait admitted (it counts `parkedMb` from now on), or refused. */
export type WaitAdmission = { ok: true; parkedMb: number } | { ok: false; refused: WaitRefused }

/**
 * A flight that runs with `memoryMb` starts to wait on its host, its isolate holding `heldMb`, in a
 * worker where `parkedMb` is parked already: admitted while the parked total stays within `maxParkedMb`.
 */
export function admitWait(parkedMb: number, memoryMb: number, heldMb: number, maxParkedMb: number): WaitAdmission {
  const holds = Math.max(memoryMb, heldMb)
  if (parkedMb + holds > maxParkedMb) return { ok: false, refused: { parkedMb, ...(holds > memoryMb ? { holdsMb: holds } : {}) } }
  return { ok: true, parkedMb: holds }
}
