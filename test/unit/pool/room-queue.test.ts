/**
 * The queue of work waiting for room in the pool (src/sidecar/worker/pool/room-queue.ts) over workers
 * without processes (fake-worker.ts): new work takes a worker at once when one has room, waiting work
 * starts oldest first when a flight ends, an aborted wait leaves the queue, a retry holds its worker
 * and new work waits behind it, and a pool that stops gives every waiter nothing.
 */
import { describe, expect, it } from 'vitest'
import { deadlineIn } from '../../../src/sidecar/worker/pool/flights.js'
import { RoomQueue } from '../../../src/sidecar/worker/pool/room-queue.js'
import type { WorkerProcess } from '../../../src/sidecar/worker/pool/worker-process.js'
import { type FakeChild, fakeWorker, recordingOwner } from './fake-worker.js'

/** A queue over `n` ready workers, each with room for two 64 MB invocations. */
function setup(n: number, startReady = true) {
  let stopped = false
  const workers: Array<{ child: FakeChild; w: WorkerProcess }> = []
  const queue = new RoomQueue({ workers: () => workers.map((x) => x.w), stopped: () => stopped, maxRunningMb: 128 })
  for (let i = 0; i < n; i++) workers.push(fakeWorker({ owner: recordingOwner(() => queue.changed()), ready: startReady, pid: 100 + i }))
  /** Sends a 64 MB load on a worker the queue gave, as the pool does; returns its id. */
  const run = (w: WorkerProcess | undefined): number => {
    if (!w) throw new Error('no worker given')
    return w.start({ type: 'load', resolve: () => {}, ...deadlineIn(60_000, 64) }, (id) => ({ $: 'cancel', id }))
  }
  const done = (i: number, id: number): void => (workers[i] as { child: FakeChild }).child.says({ $: 'loaded', id, outcome: { ok: true, exports: [] } })
  const pidOf = (w: WorkerProcess | undefined): number | undefined => w?.pid
  return { queue, workers, run, done, pidOf, stop: () => (stopped = true) }
}

const MB64 = { memoryMb: 64, alone: false }

describe('the room queue', () => {
  it('gives new work a worker at once while one has room: the least busy, equals in turn', async () => {
    const { queue, run, pidOf } = setup(2)
    const first = await queue.pick(MB64)
    const second = await queue.pick(MB64)
    expect([pidOf(first), pidOf(second)]).toEqual([100, 101])
    run(first)
    // The second's room is reserved, not yet sent: 100 has a flight, 101 none, so 101 is less busy.
    expect(pidOf(await queue.pick(MB64))).toBe(101)
    expect(queue.waiting).toBe(0)
  })

  it('holds work that finds no room, and starts it oldest first as flights end', async () => {
    const { queue, run, done, pidOf } = setup(2)
    const ids: number[] = []
    for (let i = 0; i < 4; i++) ids.push(run(await queue.pick(MB64)))
    const order: string[] = []
    const a = queue.pick(MB64).then((w) => (order.push('a'), w))
    const b = queue.pick(MB64).then((w) => (order.push('b'), w))
    await Promise.resolve()
    expect(queue.waiting).toBe(2)
    // Worker 101's first flight ends: room for one, and the oldest takes it.
    done(1, ids[1] as number)
    expect(pidOf(await a)).toBe(101)
    expect([order, queue.waiting]).toEqual([['a'], 1])
    done(0, ids[0] as number)
    expect(pidOf(await b)).toBe(100)
    expect(order).toEqual(['a', 'b'])
  })

  it('lets smaller work behind big work start while the big one does not fit', async () => {
    const { queue, run, done, pidOf } = setup(1)
    const ids = [run(await queue.pick(MB64)), run(await queue.pick(MB64))]
    const big = queue.pick({ memoryMb: 100, alone: false })
    const small = queue.pick({ memoryMb: 32, alone: false })
    done(0, ids[0] as number)
    const smallId = run(await small)
    expect(queue.waiting).toBe(1)
    done(0, ids[1] as number)
    // 32 MB run there now: 100 more do not fit under 128 until it ends too.
    expect(queue.waiting).toBe(1)
    done(0, smallId)
    expect(pidOf(await big)).toBe(100)
  })

  it('ends a wait at once when its signal aborts, and never gives that work a worker', async () => {
    const { queue, run, done } = setup(1)
    const ids = [run(await queue.pick(MB64)), run(await queue.pick(MB64))]
    const abort = new AbortController()
    const cancelled = queue.pick(MB64, abort.signal)
    const next = queue.pick(MB64)
    abort.abort()
    expect(await cancelled).toBeUndefined()
    expect(queue.waiting).toBe(1)
    done(0, ids[0] as number)
    expect((await next)?.pid).toBe(100)
    // Already aborted: no worker, no wait.
    expect(await queue.pick(MB64, abort.signal)).toBeUndefined()
  })

  it('runs a retry alone on a worker with nothing in flight, and holds new work until it ends', async () => {
    const { queue, run, done, pidOf } = setup(2)
    // Worker 100 is busy: the retry takes 101.
    run(await queue.pick(MB64))
    let retryGot: WorkerProcess | undefined
    let finish: () => void = () => {}
    const retry = queue.alone(async () => {
      retryGot = await queue.pick({ memoryMb: 64, alone: true })
      const id = run(retryGot)
      await new Promise<void>((resolve) => (finish = resolve))
      done(1, id)
      retryGot?.release()
    })
    await Promise.resolve()
    expect(pidOf(retryGot)).toBe(101)
    // Room on both workers, but new work waits behind the retry.
    const later = queue.pick(MB64)
    await Promise.resolve()
    expect(queue.waiting).toBe(1)
    finish()
    await retry
    expect(pidOf(await later)).toBe(101)
  })

  it('gives every waiting work nothing once the pool stops, and new work nothing at once', async () => {
    const { queue, run, stop } = setup(1)
    run(await queue.pick(MB64))
    run(await queue.pick(MB64))
    const waiting = [queue.pick(MB64), queue.pick(MB64)]
    stop()
    queue.changed()
    expect(await Promise.all(waiting)).toEqual([undefined, undefined])
    expect(await queue.pick(MB64)).toBeUndefined()
  })

  it('tells start-up once a worker is ready', async () => {
    const { queue, workers } = setup(1, false)
    let ready = false
    const started = queue.whenReady().then(() => (ready = true))
    await Promise.resolve()
    expect(ready).toBe(false)
    workers[0]?.child.says({ $: 'ready', pid: 100 })
    await started
    expect(ready).toBe(true)
  })
})
