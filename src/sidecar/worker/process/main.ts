/**
 * A sandbox worker process: the entry point the supervisor forks. It runs invocations in fresh isolates
 * (see runner.ts) and relays capability calls and log lines to the sidecar. If a hook brings this
 * process down (a V8 fatal out-of-memory), the supervisor replaces it. If isolated-vm reports that it
 * lost control of an isolate, this worker retires: it asks for no more work, lets what runs finish and
 * aborts, as isolated-vm's README asks.
 */
import v8 from 'node:v8'
import { type AnyPoint, type PointName, getPoint } from '../../../protocol/points/points.js'
import { type ChainStep, runChain } from '../../chain/chain.js'
import type { CapabilityReply, InvocationReport } from '../../runners/hook-runner.js'
import type { FromWorker, ToWorker } from '../protocol.js'
import { type InvocationHost, expectChain, forgetHook, onCatastrophicError, rememberHook, runInIsolate } from './run-in-isolate.js'

// Scripts compiled from here on (the prelude, hook code) are compiled whole, not function by function
// on first call: the code cache hookd makes at a hook version's first compile then holds its inner
// functions too, which every fresh isolate otherwise compiled again (measured on the bench hook: the
// run of an invocation 586 -> 431 us). Set after this process's own modules have loaded.
v8.setFlagsFromString('--no-lazy')

type Pending = (reply: CapabilityReply) => void

const pendingCapabilities = new Map<string, Pending>()
const running = new Map<number, AbortController>()
let nextCallId = 1
let retiring = false

/** How long a retiring worker waits for its running invocations before it aborts anyway. */
const RETIRE_MS = 30_000

function send(message: FromWorker, then?: () => void): void {
  if (!process.send) return
  // The callback runs once the message is written, so a retiring worker never aborts over an answer.
  process.send(message, undefined, {}, () => then?.())
}

function settled(id: number): void {
  running.delete(id)
  if (retiring && running.size === 0) process.abort()
}

async function invoke(message: Extract<ToWorker, { $: 'invoke' }>): Promise<void> {
  const hook = rememberHook(message.hook)
  if (!hook) {
    send({
      $: 'done',
      id: message.id,
      outcome: { ok: false, kind: 'internal', message: `worker has no code for ${message.hook.name} version ${message.hook.version}` },
      wallUs: 0,
      cpuUs: 0,
    })
    return
  }
  const abort = new AbortController()
  running.set(message.id, abort)
  const call = { point: message.point, resultArg: message.resultArg ?? -1 }
  const result = await runInIsolate(hook, call, message.args, message.ctx, message.limits, hostFor(message.id), abort.signal)
  send({ $: 'done', id: message.id, outcome: result.outcome, wallUs: result.wallUs, cpuUs: result.cpuUs }, () => {
    result.afterAnswer()
    settled(message.id)
  })
}

/**
 * Relays a hook's capability calls and log lines to the sidecar, tagged with its chain step if any.
 * `beforeWait` runs as a call leaves (a chain disposes the isolates of its finished steps then).
 */
function hostFor(id: number, step?: number, beforeWait?: () => void): InvocationHost {
  const tag = step === undefined ? {} : { step }
  return {
    capability(capability, args, heldMb) {
      beforeWait?.()
      const callId = nextCallId++
      return new Promise<CapabilityReply>((resolve) => {
        pendingCapabilities.set(`${id}:${callId}`, resolve)
        send({ $: 'capability', id, callId, capability, args, heldMb, ...tag })
      })
    },
    log(text) {
      send({ $: 'log', id, message: text, ...tag })
    },
  }
}

/**
 * Runs consecutive hooks of one point call here, with the chain's own rules (chain.ts), so that only
 * the first costs a round trip to the sidecar. Each step runs in its own fresh isolate with the message's
 * limits, exactly as an 'invoke' would, and is reported as soon as it ends; the sidecar runs the same
 * chain on those reports (see WorkerPool.invokeChain). A cancel stops the running step, and the chain
 * marks the rest cancelled.
 */
async function chain(message: Extract<ToWorker, { $: 'chain' }>): Promise<void> {
  const abort = new AbortController()
  running.set(message.id, abort)
  // Isolates of finished steps are disposed once the chain has answered (off the critical path): a
  // few at most, each holding little; any other is disposed as its step ends, so that a chain holds
  // about one hook's memory at a time. A step that waits on its host disposes them first: what waits
  // there is counted against the worker's parked memory one isolate at a time (WorkerPool).
  const later: Array<() => void> = []
  const flush = (): void => {
    for (const then of later.splice(0)) then()
  }
  const point = getPoint(message.point) as AnyPoint | undefined
  // Every step's code is taken as the message arrives, not as the step starts: the source of a version
  // comes once, with the first message that needs it, and another chain of the same hooks sent right
  // after this one (without it) may reach those steps first.
  const code = message.steps.map((data) => rememberHook(data.hook))
  try {
    if (point) {
      expectChain(message.limits.memoryMb, message.steps.length)
      const steps: ChainStep[] = message.steps.map((data, step) => ({
        hook: {
          name: data.hook.name,
          version: data.hook.version,
          filename: data.hook.filename,
          points: new Set(data.points as PointName[]),
          ...(data.mode ? { mode: data.mode } : {}),
          ...(data.layer ? { layer: data.layer } : {}),
          ...(data.permissions ? { permissions: data.permissions } : {}),
        },
        invoke: async (handler, args, resultArg): Promise<InvocationReport> => {
          const hook = code[step]
          let report: InvocationReport
          if (!hook) {
            const message = `worker has no code for ${data.hook.name} version ${data.hook.version}`
            report = { outcome: { ok: false, kind: 'internal', message }, wallUs: 0, cpuUs: 0 }
          } else {
            const call = { point: handler, resultArg: resultArg ?? -1 }
            const result = await runInIsolate(hook, call, JSON.stringify(args), data.ctx, message.limits, hostFor(message.id, step, flush), abort.signal)
            report = { outcome: result.outcome, wallUs: result.wallUs, cpuUs: result.cpuUs }
            if (later.length < CHAIN_DEFERRED_DISPOSALS && result.heldMb <= CHAIN_DEFERRED_MB) later.push(result.afterAnswer)
            else result.afterAnswer()
          }
          send({ $: 'step', id: message.id, step, ...report })
          return report
        },
      }))
      const onError = new Map(message.steps.map((step) => [step.hook.name, step.onError]))
      await runChain(point, 0, JSON.parse(message.initial) as unknown, steps, {
        signal: abort.signal,
        jsonDepth: message.limits.jsonDepth,
        onError: (hook) => onError.get(hook.name) ?? 'default',
        // The sidecar asks the person; here a rewrite being asked about stays, as it does there until a no.
        ...(message.canAsk ? { ask: () => Promise.resolve(true) } : {}),
      })
    }
  } finally {
    send({ $: 'chained', id: message.id }, () => {
      flush()
      settled(message.id)
    })
  }
}

const CHAIN_DEFERRED_DISPOSALS = 4
/** The most a finished step's isolate may hold (heldMb) to wait for the chain's answer before it is disposed. */
const CHAIN_DEFERRED_MB = 8

async function load(message: Extract<ToWorker, { $: 'load' }>): Promise<void> {
  const hook = rememberHook(message.hook)
  if (!hook) return
  const abort = new AbortController()
  running.set(message.id, abort)
  const refuse = (): Promise<CapabilityReply> =>
    Promise.resolve({ ok: false, code: 'denied', message: 'capabilities are not available while a hook loads' })
  const result = await runInIsolate(hook, null, '[]', null, message.limits, { capability: refuse, log: () => {} }, abort.signal)
  const outcome = result.outcome
  const then = (): void => {
    result.afterAnswer()
    settled(message.id)
  }
  if (outcome.ok) {
    const exports = JSON.parse(outcome.value ?? '[]') as string[]
    send({ $: 'loaded', id: message.id, outcome: { ok: true, exports } }, then)
  } else {
    send(
      {
        $: 'loaded',
        id: message.id,
        outcome: { ok: false, message: outcome.message, ...(outcome.line !== undefined ? { line: outcome.line } : {}) },
      },
      then,
    )
  }
}

onCatastrophicError((reason) => {
  process.stderr.write(`hookd worker: isolated-vm reported a catastrophic error: ${reason}\n`)
  if (retiring) return
  retiring = true
  send({ $: 'retire', reason: reason.slice(0, 2000) })
  if (running.size === 0) process.abort()
  setTimeout(() => process.abort(), RETIRE_MS).unref()
})

process.on('message', (raw: ToWorker) => {
  switch (raw.$) {
    case 'invoke':
      void invoke(raw)
      return
    case 'load':
      void load(raw)
      return
    case 'chain':
      void chain(raw)
      return
    case 'capabilityResult': {
      const key = `${raw.id}:${raw.callId}`
      const resolve = pendingCapabilities.get(key)
      pendingCapabilities.delete(key)
      resolve?.(raw.reply)
      return
    }
    case 'cancel':
      running.get(raw.id)?.abort()
      for (const [key, resolve] of pendingCapabilities) {
        if (key.startsWith(`${raw.id}:`)) {
          pendingCapabilities.delete(key)
          resolve({ ok: false, code: 'cancelled', message: 'the host cancelled this point call' })
        }
      }
      return
    case 'forget':
      forgetHook(raw.key)
      return
  }
})

// The last line of defence: a rejection nobody handled is logged (the pool keeps this process's
// stderr tail for its crash messages), never the end of every invocation this worker runs.
process.on('unhandledRejection', (reason) => {
  process.stderr.write(`hookd worker: an unhandled rejection: ${reason instanceof Error ? reason.message : String(reason)}\n`)
})

// A worker never outlives its sidecar. When the IPC channel closes (the sidecar exited, crashed or was
// killed), it ends at once with SIGKILL: a clean exit would wait for isolated-vm's threads, and an
// isolate parked on the host (waiting in applySyncPromise) would keep the process alive for good. The
// parent's pid is watched too, in case the channel's close is never seen; where setpriv is available
// the kernel also kills it with its parent (PR_SET_PDEATHSIG, worker/pool/walls.ts).
const die = (): void => {
  process.kill(process.pid, 'SIGKILL')
}
process.on('disconnect', die)
const parent = process.ppid
setInterval(() => {
  if (process.ppid !== parent) die()
}, 1000).unref()
// Ctrl-C in a terminal reaches the whole process group: the sidecar decides when its workers stop.
process.on('SIGINT', () => {})
send({ $: 'ready', pid: process.pid })
