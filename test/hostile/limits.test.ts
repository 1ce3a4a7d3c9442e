/**
 * Hostile hooks that try to exhaust or stall the sidecar: loops of every kind, promises that never
 * settle, memory bombs, deep recursion, a huge eval, huge answers, log and capability floods, a confirm
 * nobody answers, Atomics. The sidecar runs with small limits (support.ts) so that each limit fires
 * fast; each test asserts the exact diagnostic and that the sidecar answers an ordinary call right after.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Running } from '../support/sidecar.js'
import { CALL, CONFIRM_CEILING_MS, HOSTILE_LIMITS, afterFailure, expectServing, failed, runHooks, startHostile } from './support.js'

let running: Running

beforeAll(async () => {
  running = await startHostile()
})

afterAll(async () => {
  await running?.stop()
})

const CPU = `used more than its CPU time limit of ${HOSTILE_LIMITS.cpuMs} ms and was stopped`
const WALL = `ran longer than its wall-time limit of ${HOSTILE_LIMITS.wallMs} ms (time waiting on the host is not counted) and was stopped`
const MEMORY = `ran out of its memory limit of ${HOSTILE_LIMITS.memoryMb} MB and was stopped`

/** Runs one fixture alone and expects exactly one diagnostic and the call unchanged. */
async function expectFailure(hook: string, kind: Parameters<typeof failed>[1], message: string, line?: number, on: Running = running): Promise<void> {
  const run = await runHooks(on, [hook])
  expect(run.diagnostics).toEqual([failed(hook, kind, message, line)])
  expect(run.result).toEqual(afterFailure(hook, kind))
  await expectServing(on)
}

describe('loops and promises that never end', () => {
  it('sync-loop: an endless loop hits the CPU limit', async () => {
    await expectFailure('sync-loop', 'cpu', CPU)
  })

  it('async-loop: an endless loop across awaits hits the CPU limit', async () => {
    await expectFailure('async-loop', 'cpu', CPU)
  })

  it('microtask-storm: a microtask flood hits the CPU limit', async () => {
    await expectFailure('microtask-storm', 'cpu', CPU)
  })

  it('never-settles: a promise that never settles hits the wall-time limit', async () => {
    await expectFailure('never-settles', 'timeout', WALL)
  })

  it('atomics-wait: blocking the isolate in Atomics.wait is stopped on the isolate clock', async () => {
    await expectFailure('atomics-wait', 'cpu', CPU)
  })

  it('atomics-wait-async: Atomics.waitAsync (which aborts the process under isolated-vm) is not there', async () => {
    await expectFailure('atomics-wait-async', 'throw', 'TypeError: Atomics.waitAsync is not a function', 5)
  })
})

describe('memory', () => {
  // Memory bombs against a sidecar whose CPU limit is far away: on a busy machine the CPU clock (which
  // counts a running stretch on a steady clock, see docs/containment.md) could otherwise win the race.
  let roomy: Running
  const MEMORY_BOMBS = ['memory-array', 'memory-string', 'memory-json']

  beforeAll(async () => {
    roomy = await startHostile({ limits: { cpuMs: 10_000, wallMs: 20_000 }, only: MEMORY_BOMBS })
  })

  afterAll(async () => {
    await roomy?.stop()
  })

  it.each(MEMORY_BOMBS)('%s: growth hits the memory limit', async (hook) => {
    const run = await runHooks(roomy, [hook])
    expect(run.diagnostics).toEqual([failed(hook, 'memory', MEMORY)])
    expect(run.result).toEqual(afterFailure(hook, 'memory'))
    await expectServing(roomy)
  })

  it('memory-arraybuffer: a large ArrayBuffer is refused against the memory limit', async () => {
    await expectFailure(
      'memory-arraybuffer',
      'memory',
      `ran out of its memory limit of ${HOSTILE_LIMITS.memoryMb} MB (RangeError: Array buffer allocation failed)`,
      4,
    )
  })

  it('memory-wasm: WebAssembly (whose memory escapes the limit) is not there', async () => {
    await expectFailure('memory-wasm', 'throw', 'ReferenceError: WebAssembly is not defined', 5)
  })

  it('deep-recursion: unbounded recursion ends as a RangeError', async () => {
    await expectFailure('deep-recursion', 'throw', 'RangeError: Maximum call stack size exceeded', 4)
  })

  it('huge-eval: eval of a source over an eighth of the memory limit is refused', async () => {
    await expectFailure('huge-eval', 'throw', 'EvalError: Code generation from strings disallowed for this context', 5)
  })
})

describe('answers, logs and capability calls', () => {
  // Floods run a lot of code by design: against a sidecar whose CPU and wall-time limits are far away,
  // so that on a busy machine only the limit under test can fire.
  let roomy: Running
  const FLOODS = ['log-flood', 'capability-flood', 'capability-flood-caught']

  beforeAll(async () => {
    roomy = await startHostile({ limits: { cpuMs: 10_000, wallMs: 20_000 }, only: FLOODS })
  })

  afterAll(async () => {
    await roomy?.stop()
  })

  it('huge-result: an answer over the size limit is refused inside the isolate', async () => {
    await expectFailure(
      'huge-result',
      'result-too-large',
      `the returned value is 102425 characters of JSON, over the limit of ${HOSTILE_LIMITS.resultBytes} bytes`,
    )
  })

  it('huge-result-utf8: the size limit counts UTF-8 bytes, not characters', async () => {
    await expectFailure(
      'huge-result-utf8',
      'result-too-large',
      `the returned value is 81945 bytes of JSON, over the limit of ${HOSTILE_LIMITS.resultBytes} bytes`,
    )
  })

  it('log-flood: ctx.log stops at the volume limit with one truncation marker, and the answer still counts', async () => {
    const run = await runHooks(roomy, ['log-flood'])
    expect(run.diagnostics).toEqual([])
    expect(run.result).toEqual({ allow: true, arguments: { ...CALL.arguments, flooded: true } })
    // Each line costs its UTF-8 bytes plus one: 'line 0'..'line 466' fill 4093 of the 4096 bytes.
    const lines = Array.from({ length: 467 }, (_, i) => `line ${i}`)
    expect(run.logs).toEqual([
      ...lines,
      `[hookd: this invocation's ctx.log output passed the limit of ${HOSTILE_LIMITS.logBytes} bytes; the rest was dropped]`,
    ])
    await expectServing(roomy)
  })

  it('capability-flood: calls past the capability limit fail with kind limit', async () => {
    await expectFailure(
      'capability-flood',
      'limit',
      `Error: ctx.file.exists: over the limit of ${HOSTILE_LIMITS.capabilityCalls} capability calls per invocation`,
      4,
      roomy,
    )
  })

  it('capability-flood-caught: calls past the limit never reach the host', async () => {
    const notified: string[] = []
    const run = await runHooks(roomy, ['capability-flood-caught'], {
      capabilities: { notify: (message) => void notified.push(message.title) },
    })
    expect(run.diagnostics).toEqual([])
    expect(run.result).toEqual({ allow: true, arguments: { codes: { ok: 16, limit: 984 } } })
    expect(notified).toEqual(Array.from({ length: 16 }, (_, i) => `n${i}`))
    await expectServing(roomy)
  })

  it('confirm-unanswered: the host-side ceiling ends the wait; the wait did not count as wall time', async () => {
    const asked: string[] = []
    const run = await runHooks(running, ['confirm-unanswered'], {
      interactive: true,
      capabilities: {
        confirm: (message) => {
          asked.push(message.title)
          return new Promise<boolean>(() => {})
        },
      },
    })
    // The ceiling (1200 ms) is longer than the wall-time limit (800 ms): had the wait counted, the
    // diagnostic would be the wall-time limit's.
    expect(run.diagnostics).toEqual([
      failed('confirm-unanswered', 'timeout', `Error: ctx.confirm: the host did not answer within ${CONFIRM_CEILING_MS} ms`, 4),
    ])
    expect(asked).toEqual(['may I?'])
    expect(run.result).toEqual(afterFailure('confirm-unanswered', 'timeout'))
    await expectServing(running)
  })
})

describe('load time', () => {
  it('top-level-loop: a hook that loops while loading is reported broken and skipped', async () => {
    const pushed: string[] = []
    const run = await runHooks(running, ['top-level-loop', 'ordinary'], {
      capabilities: { diagnostic: (d) => pushed.push(`${d.hook}: ${d.kind}: ${d.message}`) },
    })
    // The registry adds its own advice after the limit's message.
    expect(pushed).toEqual([expect.stringMatching(new RegExp(`^top-level-loop: load: ${CPU}`))])
    expect(run.diagnostics).toEqual([])
    expect(run.result).toEqual({ allow: true, arguments: { ...CALL.arguments, ordinary: true } })
    const listed = (await running.client.listHooks()).find((h) => h.name === 'top-level-loop')
    expect(listed?.status).toBe('broken')
    await expectServing(running)
  })
})
