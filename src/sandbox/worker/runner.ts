/**
 * Runs one hook invocation in a fresh isolate, inside a worker process. Enforces the limits: memory
 * (the isolate's heap limit), CPU time (the isolate's own clock), wall time excluding host waits, result
 * size, log volume and capability calls. isolated-vm's own `timeout` does not cover promises, so a
 * watchdog disposes the isolate when a limit passes, whatever the hook is doing.
 */
import ivm from 'isolated-vm'
import type { DiagnosticKind } from '../../protocol/diagnostic.js'
import type { CapabilityReply, CtxData, HookCode, InvokeOutcome, Limits } from './protocol.js'
import { PRELUDE, hookScriptName, lineFromMessage, wrapHookSource } from './surface.js'

/** What the runner needs from the worker around it. */
export interface InvocationHost {
  capability(capability: string, args: unknown): Promise<CapabilityReply>
  log(message: string): void
}

export interface RunResult {
  outcome: InvokeOutcome
  wallUs: number
  cpuUs: number
}

interface CompiledHook {
  code: string
  columnOffset: number
  filename: string
  cachedData?: ivm.ExternalCopy<ArrayBuffer>
}

/** Hook code by version; the code cache is produced here, by hookd, never taken from a hook. */
const hooks = new Map<string, CompiledHook>()

export function rememberHook(code: HookCode): CompiledHook | undefined {
  const known = hooks.get(code.version)
  if (known) return known
  if (code.source === undefined) return undefined
  const { code: wrapped, columnOffset } = wrapHookSource(code.source)
  const compiled: CompiledHook = { code: wrapped, columnOffset, filename: code.filename }
  hooks.set(code.version, compiled)
  return compiled
}

/** Drops code the sidecar no longer serves (bounded memory across hot reloads). */
export function forgetHook(version: string): void {
  hooks.delete(version)
}

type Stop = { kind: DiagnosticKind; message: string }

/**
 * Invocation run: one fresh isolate. `point === null` loads the hook and reports its exported
 * function names (used by the registry and `hookd check`).
 */
export async function runInIsolate(
  hook: CompiledHook,
  point: string | null,
  argsJson: string,
  ctx: CtxData | null,
  limits: Limits,
  host: InvocationHost,
  signal?: AbortSignal,
): Promise<RunResult> {
  const started = process.hrtime.bigint()
  const isolate = new ivm.Isolate({ memoryLimit: Math.max(8, limits.memoryMb) })
  let stop: Stop | undefined
  let waitingSince: bigint | undefined
  let waitedNs = 0n
  let capabilityCalls = 0
  let logBytes = 0
  let logTruncated = false
  let timer: NodeJS.Timeout | undefined

  const end = (s: Stop): void => {
    if (stop) return
    stop = s
    if (!isolate.isDisposed) isolate.dispose()
  }

  const watch = (): void => {
    if (stop || isolate.isDisposed) return
    const cpuMs = Number(isolate.cpuTime) / 1e6
    const now = process.hrtime.bigint()
    const waitingNow = waitingSince === undefined ? 0n : now - waitingSince
    const wallMs = Number(now - started - waitedNs - waitingNow) / 1e6
    if (cpuMs > limits.cpuMs) {
      end({ kind: 'cpu', message: `used more than its CPU time limit of ${limits.cpuMs} ms and was stopped` })
      return
    }
    if (wallMs > limits.wallMs) {
      end({
        kind: 'timeout',
        message: `ran longer than its wall-time limit of ${limits.wallMs} ms (time waiting on the host is not counted) and was stopped`,
      })
      return
    }
    const next = Math.min(limits.cpuMs - cpuMs, waitingSince === undefined ? limits.wallMs - wallMs : limits.cpuMs)
    timer = setTimeout(watch, Math.max(2, Math.ceil(next)))
  }

  const bridge = new ivm.Reference(async (capability: string, argsText: string): Promise<string | undefined> => {
    if (capability === 'log') {
      if (logTruncated) return undefined
      logBytes += argsText.length
      if (logBytes > limits.logBytes) {
        logTruncated = true
        host.log(`[hookd: log truncated after ${limits.logBytes} bytes]`)
        return undefined
      }
      host.log(argsText)
      return undefined
    }
    capabilityCalls += 1
    if (capabilityCalls > limits.capabilityCalls) {
      return JSON.stringify({
        ok: false,
        code: 'limit',
        message: `${capability}: over the limit of ${limits.capabilityCalls} capability calls per invocation`,
      })
    }
    let args: unknown
    try {
      args = JSON.parse(argsText)
    } catch {
      return JSON.stringify({ ok: false, code: 'invalid', message: `${capability}: arguments are not JSON` })
    }
    waitingSince = process.hrtime.bigint()
    try {
      return JSON.stringify(await host.capability(capability, args))
    } finally {
      waitedNs += process.hrtime.bigint() - waitingSince
      waitingSince = undefined
    }
  })

  const onAbort = (): void => end({ kind: 'cancelled', message: 'the host cancelled the point call; the hook was stopped' })
  signal?.addEventListener('abort', onAbort, { once: true })

  let outcome: InvokeOutcome
  try {
    if (signal?.aborted) onAbort()
    timer = setTimeout(watch, Math.max(2, Math.min(limits.cpuMs, limits.wallMs)))
    const context = await isolate.createContext()
    const prelude = await isolate.compileScript(PRELUDE, { filename: 'hookd-prelude' })
    const invoke = (await prelude.run(context, { reference: true })) as ivm.Reference<unknown>
    let script: ivm.Script & ivm.CachedDataResult
    try {
      script = (await isolate.compileScript(hook.code, {
        filename: hookScriptName(hook.filename),
        columnOffset: hook.columnOffset,
        ...(hook.cachedData ? { cachedData: hook.cachedData } : { produceCachedData: true }),
      })) as ivm.Script & ivm.CachedDataResult
    } catch (err) {
      if (stop) throw err
      const message = errorText(err)
      const line = lineFromMessage(message)
      outcome = { ok: false, kind: 'load', message, ...(line !== undefined ? { line } : {}) }
      return finish(outcome)
    }
    if (!hook.cachedData && script.cachedData) hook.cachedData = script.cachedData
    const factory = (await script.run(context, { reference: true, timeout: limits.wallMs })) as ivm.Reference<unknown>
    const reply = await invoke.apply(
      undefined,
      [bridge, JSON.stringify(ctx ?? {}), factory.derefInto(), point, argsJson, limits.resultBytes],
      { result: { promise: true, copy: true }, timeout: limits.wallMs },
    )
    outcome = parseReply(reply)
  } catch (err) {
    outcome = failureFrom(err, stop, limits)
  }
  return finish(outcome)

  function finish(result: InvokeOutcome): RunResult {
    if (timer) clearTimeout(timer)
    signal?.removeEventListener('abort', onAbort)
    const cpuUs = isolate.isDisposed ? 0 : Math.round(Number(isolate.cpuTime) / 1000)
    const wallUs = Math.round(Number(process.hrtime.bigint() - started) / 1000)
    // A limit that fired as the hook finished still wins: the answer came after the deadline.
    const final: InvokeOutcome = stop ? { ok: false, kind: stop.kind, message: stop.message } : result
    bridge.release()
    if (!isolate.isDisposed) setImmediate(() => isolate.dispose())
    return { outcome: final, wallUs, cpuUs }
  }
}

function parseReply(reply: unknown): InvokeOutcome {
  if (typeof reply !== 'string') return { ok: false, kind: 'internal', message: 'the prelude returned no reply' }
  const parsed = JSON.parse(reply) as InvokeOutcome
  return parsed
}

function errorText(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`
  return String(err)
}

function failureFrom(err: unknown, stop: Stop | undefined, limits: Limits): InvokeOutcome {
  if (stop) return { ok: false, kind: stop.kind, message: stop.message }
  const text = errorText(err)
  if (/memory limit/i.test(text) || /Array buffer allocation failed/i.test(text)) {
    return { ok: false, kind: 'memory', message: `ran out of its memory limit of ${limits.memoryMb} MB and was stopped` }
  }
  if (/Script execution timed out/i.test(text)) {
    return {
      ok: false,
      kind: 'timeout',
      message: `ran longer than its wall-time limit of ${limits.wallMs} ms and was stopped`,
    }
  }
  if (/Isolate was disposed/i.test(text)) {
    return { ok: false, kind: 'memory', message: `ran out of its memory limit of ${limits.memoryMb} MB and was stopped` }
  }
  return { ok: false, kind: 'internal', message: `hookd could not run the hook: ${text}` }
}
