/**
 * The fair queue in front of the worker pool: lanes served in turn, slots freed while a hook waits on its
 * host, and queued work leaving on abort. Driven by hand-released tasks: no timing.
 */
import { describe, expect, it } from 'vitest'
import { FairQueue, type Slot } from '../../src/sidecar/tenancy/fair-queue.js'

/** A task that records when it starts and finishes when released. */
function task(log: string[], name: string): { run: (slot: Slot) => Promise<string>; release(): void; slot: Promise<Slot> } {
  let release!: () => void
  let gotSlot!: (s: Slot) => void
  const slot = new Promise<Slot>((resolve) => (gotSlot = resolve))
  const done = new Promise<void>((resolve) => (release = resolve))
  return {
    run: async (s) => {
      log.push(name)
      gotSlot(s)
      await done
      return name
    },
    release: () => release(),
    slot,
  }
}

const never = (): string => 'aborted'
const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

describe('FairQueue', () => {
  it("starts a call at once for a tenant with nothing running, whatever another tenant's flood", async () => {
    const queue = new FairQueue(1)
    const started: string[] = []
    const flood = Array.from({ length: 5 }, (_, i) => task(started, `a${i}`))
    const results = flood.map((f) => queue.run('a', f.run, undefined, never))
    expect(started).toEqual(['a0'])
    expect(queue.waiting('a')).toBe(4)
    const b = task(started, 'b0')
    const bResult = queue.run('b', b.run, undefined, never)
    expect(started).toEqual(['a0', 'b0'])
    b.release()
    expect(await bResult).toBe('b0')
    for (const f of flood) f.release()
    expect(await Promise.all(results)).toEqual(['a0', 'a1', 'a2', 'a3', 'a4'])
  })

  it('serves the lanes that queue in turn, not in the order they queued', async () => {
    const queue = new FairQueue(1)
    const started: string[] = []
    const tasks = new Map<string, ReturnType<typeof task>>()
    const all: Array<Promise<string>> = []
    for (const [lane, n] of [['a', 4], ['b', 3]] as const) {
      for (let i = 0; i < n; i++) {
        const t = task(started, `${lane}${i}`)
        tasks.set(`${lane}${i}`, t)
        all.push(queue.run(lane, t.run, undefined, never))
      }
    }
    // b had nothing running, so b0 started at once beside a0; the rest queued.
    expect(started).toEqual(['a0', 'b0'])
    const order = ['a0', 'b0', 'a1', 'b1', 'a2', 'b2', 'a3']
    for (const name of order) {
      tasks.get(name)?.release()
      await tick()
    }
    expect(started).toEqual(order)
    await Promise.all(all)
  })

  it('frees the slot while a hook waits on its host', async () => {
    const queue = new FairQueue(1)
    const started: string[] = []
    const waiting = task(started, 'waiter')
    const other = task(started, 'other')
    const first = queue.run('a', waiting.run, undefined, never)
    const second = queue.run('a', other.run, undefined, never)
    const slot = await waiting.slot
    expect(started).toEqual(['waiter'])
    slot.pause()
    await tick()
    expect(started).toEqual(['waiter', 'other'])
    // The answer came: the hook goes on at once, beside the other.
    slot.resume()
    waiting.release()
    other.release()
    expect(await Promise.all([first, second])).toEqual(['waiter', 'other'])
    // Every slot is free again.
    const again = task(started, 'again')
    const third = queue.run('a', again.run, undefined, never)
    expect(started.at(-1)).toBe('again')
    again.release()
    await third
  })

  it('lets queued work leave when its call is cancelled', async () => {
    const queue = new FairQueue(1)
    const started: string[] = []
    const busy = task(started, 'busy')
    const first = queue.run('a', busy.run, undefined, never)
    const abort = new AbortController()
    const queued = queue.run('a', task(started, 'queued').run, abort.signal, never)
    abort.abort()
    expect(await queued).toBe('aborted')
    expect(queue.waiting()).toBe(0)
    busy.release()
    await first
    expect(started).toEqual(['busy'])
  })
})
