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
 * once, however many calls arrive. Everything here is computed from the flights themselves, so a flight
 * that ends (an answer, a cancel, its worker's death) gives its room back by being gone.
 */
import type { Flight } from './flights.js'
import type { WorkerProcess } from './worker-process.js'

/** The memory limits of what runs in `worker` now: reservations, and flights with no capability call out. */
export function runningMb(worker: WorkerProcess): number {
  let mb = worker.reservedMb
  for (const flight of worker.inflight.values()) if (flight.outstanding === 0) mb += flight.memoryMb
  return mb
}

/** What the invocations waiting on their host in `worker` hold now. */
export function parkedMb(worker: WorkerProcess): number {
  let mb = 0
  for (const flight of worker.inflight.values()) if (flight.outstanding > 0) mb += flight.parkedMb
  return mb
}

/** Whether `worker` may start work whose isolates run with `memoryMb`: one with nothing running always may. */
export function roomToRun(worker: WorkerProcess, memoryMb: number, maxRunningMb: number): boolean {
  const running = runningMb(worker)
  return running === 0 || running + memoryMb <= maxRunningMb
}

/** Why a wait was refused: what was parked already, and what this one holds when that is over its limit. */
export interface WaitRefused {
  parkedMb: number
  holdsMb?: number
}

/**
 * A flight that runs starts to wait on its host, its isolate holding `heldMb`: admitted (it counts what
 * it holds from now on, `flight.parkedMb`) or refused.
 */
export function admitWait(worker: WorkerProcess, flight: Flight, heldMb: number, maxParkedMb: number): WaitRefused | undefined {
  const parked = parkedMb(worker)
  const holds = Math.max(flight.memoryMb, heldMb)
  if (parked + holds > maxParkedMb) return { parkedMb: parked, ...(holds > flight.memoryMb ? { holdsMb: holds } : {}) }
  flight.parkedMb = holds
  return undefined
}
