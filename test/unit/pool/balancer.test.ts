/**
 * The pool's choices as functions (src/sidecar/worker/pool/balancer.ts, memory-room.ts), over views of
 * workers written out as rows, no processes: which worker takes new work (state, room by memory, the
 * least busy, ties by turn, retries alone), which waiting work starts when room frees, and whether a
 * wait on the host fits the parked cap.
 */
import { describe, expect, it } from 'vitest'
import { type Turn, type Want, type WorkerView, assign, choose } from '../../../src/sidecar/worker/pool/balancer.js'
import { admitWait, roomToRun } from '../../../src/sidecar/worker/pool/memory-room.js'

/** A ready, idle worker, changed by `over`. */
const worker = (over: Partial<WorkerView> = {}): WorkerView => ({ state: 'ready', inflight: 0, runningMb: 0, heldAlone: false, ...over })
const pool = (over: Partial<Turn> = {}): Turn => ({ turn: 0, retrying: 0, maxRunningMb: 256, ...over })
const want = (memoryMb: number, alone = false): Want => ({ memoryMb, alone })

describe('choose: the worker for new work', () => {
  it.each<[string, WorkerView[], Want, Turn, number | undefined]>([
    ['no worker at all', [], want(32), pool(), undefined],
    ['the one ready worker', [worker()], want(32), pool(), 0],
    ['never one still starting', [worker({ state: 'starting' }), worker()], want(32), pool(), 1],
    ['never one retiring', [worker({ state: 'retiring' }), worker({ inflight: 3 })], want(32), pool(), 1],
    ['never one gone (its channel closed, or it exited)', [worker({ state: 'gone' }), worker({ inflight: 3 })], want(32), pool(), 1],
    ['nothing when every worker is starting or gone', [worker({ state: 'starting' }), worker({ state: 'gone' })], want(32), pool(), undefined],
    ['never one held for a retry', [worker({ heldAlone: true }), worker({ inflight: 2 })], want(32), pool(), 1],
    ['the least busy, wherever the turn is', [worker({ inflight: 2 }), worker({ inflight: 1 }), worker({ inflight: 3 })], want(32), pool({ turn: 2 }), 1],
    ['among equals, the first from the turn on', [worker(), worker(), worker()], want(32), pool({ turn: 1 }), 1],
    ['among equals, the turn wraps round', [worker(), worker({ inflight: 1 }), worker()], want(32), pool({ turn: 2 }), 2],
    ['a turn past the end (workers died) counts round', [worker(), worker()], want(32), pool({ turn: 5 }), 1],
    ['room: not one whose running work leaves too little', [worker({ inflight: 1, runningMb: 240 }), worker({ inflight: 4, runningMb: 128 })], want(32), pool(), 1],
    ['room: an exact fit is room', [worker({ inflight: 1, runningMb: 224 })], want(32), pool(), 0],
    ['room: nothing when every worker is full', [worker({ inflight: 1, runningMb: 240 }), worker({ inflight: 1, runningMb: 250 })], want(32), pool(), undefined],
    ['room: reservations not sent yet count (inflight 0)', [worker({ runningMb: 250 }), worker({ inflight: 1, runningMb: 16 })], want(32), pool(), 1],
    ['room: one with nothing running takes work of any size', [worker({ inflight: 2, runningMb: 0 })], want(1024), pool(), 0],
    ['room: parked work does not count against running room', [worker({ inflight: 5, runningMb: 0 })], want(200), pool(), 0],
    ['new work waits behind a retry', [worker(), worker()], want(32), pool({ retrying: 1 }), undefined],
    ['a retry: only a worker with nothing in flight', [worker({ inflight: 1 }), worker()], want(32, true), pool({ retrying: 1 }), 1],
    ['a retry waits when every worker has work', [worker({ inflight: 1 }), worker({ inflight: 1 })], want(32, true), pool({ retrying: 1 }), undefined],
    ['a retry never takes a worker another retry holds', [worker({ heldAlone: true }), worker()], want(32, true), pool({ retrying: 2 }), 1],
  ])('%s', (_, workers, wanted, turn, chosen) => {
    expect(choose(workers, wanted, turn)).toBe(chosen)
  })
})

describe('assign: which waiting work starts', () => {
  it.each<[string, Want[], WorkerView[], Turn, Array<[number, number]>, number]>([
    ['nothing waits', [], [worker()], pool(), [], 0],
    ['no worker yet: everything keeps waiting', [want(32)], [], pool(), [], 0],
    ['oldest first: room for one, the first gets it', [want(200), want(200)], [worker({ inflight: 1, runningMb: 56 })], pool(), [[0, 0]], 0],
    ['work that does not fit keeps its place; the smaller behind it starts', [want(250), want(16)], [worker({ inflight: 1, runningMb: 128 })], pool(), [[1, 0]], 0],
    ['room taken by work placed in the same round counts', [want(100), want(100), want(100)], [worker()], pool(), [[0, 0], [1, 0]], 0],
    ['equals alternate: each waiter on the next worker in turn', [want(32), want(32), want(32)], [worker(), worker()], pool(), [[0, 0], [1, 1], [2, 0]], 1],
    ['the turn moves on from the last placed', [want(32)], [worker(), worker(), worker()], pool({ turn: 1 }), [[0, 1]], 2],
    ['a retry is placed; the work behind it waits for it to end', [want(32, true), want(32)], [worker(), worker()], pool({ retrying: 1 }), [[0, 0]], 1],
    ['two retries take two workers: the first is held for the first', [want(32, true), want(32, true)], [worker(), worker()], pool({ retrying: 2 }), [[0, 0], [1, 1]], 0],
    ['a second retry waits when the only idle worker went to the first', [want(32, true), want(32, true)], [worker(), worker({ inflight: 1 })], pool({ retrying: 2 }), [[0, 0]], 1],
    ['a starting worker takes nothing, however much waits', [want(8), want(8)], [worker({ state: 'starting' })], pool(), [], 0],
  ])('%s', (_, waiting, workers, turn, placed, next) => {
    const result = assign(waiting, workers, turn)
    expect(result.placed.map((p) => [p.waiter, p.worker])).toEqual(placed)
    expect(result.turn).toBe(next)
  })

  it('reads the views without changing them', () => {
    const workers = [worker({ inflight: 1, runningMb: 64 })]
    const before = JSON.stringify(workers)
    expect(assign([want(64, true), want(64)], workers, pool({ retrying: 1 })).placed).toEqual([])
    expect(assign([want(64)], workers, pool()).placed).toEqual([{ waiter: 0, worker: 0 }])
    expect(JSON.stringify(workers)).toBe(before)
  })
})

describe('memory rules', () => {
  it.each<[string, number, number, number, boolean]>([
    ['nothing running: any size', 0, 4096, 256, true],
    ['fits under the cap', 128, 64, 256, true],
    ['exactly the cap', 192, 64, 256, true],
    ['one MB over the cap', 193, 64, 256, false],
  ])('roomToRun: %s', (_, running, memoryMb, max, fits) => {
    expect(roomToRun(running, memoryMb, max)).toBe(fits)
  })

  it.each<[string, [number, number, number, number], ReturnType<typeof admitWait>]>([
    ['a wait within the cap counts its memory limit', [0, 32, 10, 512], { ok: true, parkedMb: 32 }],
    ['an isolate holding more than its limit counts what it holds', [0, 16, 21, 512], { ok: true, parkedMb: 21 }],
    ['up to the cap exactly', [480, 32, 0, 512], { ok: true, parkedMb: 32 }],
    ['past the cap: refused, saying what is parked', [481, 32, 0, 512], { ok: false, refused: { parkedMb: 481 } }],
    ['past the cap by what it holds: refused, saying what it holds', [48, 16, 21, 64], { ok: false, refused: { parkedMb: 48, holdsMb: 21 } }],
    ['a single wait larger than the cap is refused even alone', [0, 64, 600, 512], { ok: false, refused: { parkedMb: 0, holdsMb: 600 } }],
  ])('admitWait: %s', (_, [parked, memoryMb, heldMb, max], expected) => {
    expect(admitWait(parked, memoryMb, heldMb, max)).toEqual(expected)
  })
})
