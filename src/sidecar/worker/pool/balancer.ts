/**
 * Which worker takes new work, and which waiting work starts when room frees: pure functions of
 * read-only views of the workers and of what the work asks for, with no processes, timers or
 * messages, so the pool's scheduling is tested as a table (test/unit/pool/balancer.test.ts). The pool
 * (worker-pool.ts) applies what they decide: it reserves the room on the worker chosen and sends it.
 *
 * The rules:
 * - Only a ready worker takes work: one still starting, retiring (isolated-vm lost an isolate) or gone
 *   (its channel closed, or it exited) never does; nor one held for a retry that runs alone.
 * - Room by memory (memory-room.ts): a worker takes work only while what runs there, reservations
 *   included, leaves room for it under `maxRunningMb`; one with nothing running always may.
 * - The least busy (fewest flights) wins; among equals, the first from `turn` on (the one after the last
 *   chosen), so that sequential calls alternate and each worker warms its next isolates while another
 *   one answers (warm-isolates.ts, docs/performance.md).
 * - A retry after a crash runs alone: only on a worker with nothing in flight, which it then holds; while
 *   any retry waits or runs, other work waits behind it.
 * - Waiting work is placed in the order it arrived; work that does not fit yet keeps its place while
 *   smaller work behind it starts.
 *
 * No affinity for a worker that already holds the hook's version: a worker that lacks it is sent the
 * source once (WorkerProcess.codeFor) and keeps it, while preferring the holder would pin sequential
 * calls to one worker and undo the alternation above.
 */
import { roomToRun } from './memory-room.js'

/** Where a worker is in its life, as the balancer needs to know it. */
export type WorkerState = 'starting' | 'ready' | 'retiring' | 'gone'

/** What the balancer reads of a worker. */
export interface WorkerView {
  readonly state: WorkerState
  /** Invocations, chains and loads in flight on it. */
  readonly inflight: number
  /** The memory limits of what runs there now, reservations included (memory-room.ts). */
  readonly runningMb: number
  /** Held for a retry that runs alone: no other work goes there. */
  readonly heldAlone: boolean
}

/** What a piece of work asks for. */
export interface Want {
  /** The memory limit its isolates run with. */
  readonly memoryMb: number
  /** A retry after a crash: alone on a worker with nothing in flight (see the rules). */
  readonly alone: boolean
}

/** The pool's side of the choice. */
export interface Turn {
  /** Where the search among equals starts: the worker after the last one chosen. */
  readonly turn: number
  /** Retries waiting or running alone: while there are any, other work waits. */
  readonly retrying: number
  readonly maxRunningMb: number
}

/** The index in `workers` of the worker for `want`, or undefined when none may take it now. */
export function choose(workers: readonly WorkerView[], want: Want, pool: Turn): number | undefined {
  if (!want.alone && pool.retrying > 0) return undefined
  const n = workers.length
  let best: number | undefined
  let bestInflight = 0
  for (let i = 0; i < n; i++) {
    const at = (pool.turn + i) % n
    const w = workers[at] as WorkerView
    if (w.state !== 'ready' || w.heldAlone || (want.alone && w.inflight > 0) || !roomToRun(w.runningMb, want.memoryMb, pool.maxRunningMb)) continue
    if (best === undefined || w.inflight < bestInflight) {
      best = at
      bestInflight = w.inflight
    }
  }
  return best
}

/** Where waiting work goes: `waiter` (its index in the queue) to `worker` (its index in the workers). */
export interface Placement {
  waiter: number
  worker: number
}

/**
 * Places waiting work, oldest first, each on the worker `choose` gives it as the ones placed before it
 * left the workers (their room reserved, a retry's worker held). Returns the placements, in queue
 * order, and the turn after them.
 */
export function assign(waiting: readonly Want[], workers: readonly WorkerView[], pool: Turn): { placed: Placement[]; turn: number } {
  const placed: Placement[] = []
  if (waiting.length === 0 || workers.length === 0) return { placed, turn: pool.turn }
  // What each worker looks like as work is placed on it: reserved room counts as running.
  const views = workers.map((w) => ({ state: w.state, inflight: w.inflight, runningMb: w.runningMb, heldAlone: w.heldAlone }))
  const now = { ...pool }
  for (let i = 0; i < waiting.length; i++) {
    const want = waiting[i] as Want
    const at = choose(views, want, now)
    if (at === undefined) continue
    const view = views[at] as (typeof views)[number]
    view.runningMb += want.memoryMb
    if (want.alone) view.heldAlone = true
    now.turn = (at + 1) % views.length
    placed.push({ waiter: i, worker: at })
  }
  return { placed, turn: now.turn }
}
