/**
 * A sandbox worker process: the entry point the supervisor forks. It runs invocations in fresh isolates
 * (see runner.ts) and relays capability calls and log lines to the sidecar. If a hook brings this
 * process down (a V8 fatal out-of-memory), the supervisor replaces it.
 */
import type { CapabilityReply, FromWorker, ToWorker } from './protocol.js'
import { rememberHook, runInIsolate } from './runner.js'

type Pending = (reply: CapabilityReply) => void

const pendingCapabilities = new Map<string, Pending>()
const running = new Map<number, AbortController>()
let nextCallId = 1

function send(message: FromWorker): void {
  process.send?.(message)
}

async function invoke(message: Extract<ToWorker, { $: 'invoke' }>): Promise<void> {
  const hook = rememberHook(message.hook)
  if (!hook) {
    send({
      $: 'done',
      id: message.id,
      outcome: { ok: false, kind: 'internal', message: `worker has no code for version ${message.hook.version}` },
      wallUs: 0,
      cpuUs: 0,
    })
    return
  }
  const abort = new AbortController()
  running.set(message.id, abort)
  const result = await runInIsolate(hook, message.point, message.args, message.ctx, message.limits, {
    capability(capability, args) {
      const callId = nextCallId++
      return new Promise<CapabilityReply>((resolve) => {
        pendingCapabilities.set(`${message.id}:${callId}`, resolve)
        send({ $: 'capability', id: message.id, callId, capability, args })
      })
    },
    log(text) {
      send({ $: 'log', id: message.id, message: text })
    },
  }, abort.signal)
  running.delete(message.id)
  send({ $: 'done', id: message.id, outcome: result.outcome, wallUs: result.wallUs, cpuUs: result.cpuUs })
}

async function load(message: Extract<ToWorker, { $: 'load' }>): Promise<void> {
  const hook = rememberHook(message.hook)
  if (!hook) return
  const refuse = (): Promise<CapabilityReply> =>
    Promise.resolve({ ok: false, code: 'denied', message: 'capabilities are not available while a hook loads' })
  const result = await runInIsolate(hook, null, '[]', null, message.limits, { capability: refuse, log: () => {} })
  const outcome = result.outcome
  if (outcome.ok) {
    const exports = JSON.parse(outcome.value ?? '[]') as string[]
    send({ $: 'loaded', id: message.id, outcome: { ok: true, exports } })
  } else {
    send({
      $: 'loaded',
      id: message.id,
      outcome: { ok: false, message: outcome.message, ...(outcome.line !== undefined ? { line: outcome.line } : {}) },
    })
  }
}

process.on('message', (raw: ToWorker) => {
  switch (raw.$) {
    case 'invoke':
      void invoke(raw)
      return
    case 'load':
      void load(raw)
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
  }
})

process.on('disconnect', () => process.exit(0))
send({ $: 'ready', pid: process.pid })
