/**
 * Runs one hook invocation in a fresh isolate, inside a worker process. Enforces the limits: memory
 * (the isolate's heap limit), CPU time (the isolate's own clock), wall time excluding host waits, result
 * size, log volume and capability calls. isolated-vm's own `timeout` does not cover promises, so a
 * watchdog disposes the isolate when a limit passes, whatever the hook is doing.
 *
 * The answer comes back through the bridge (`$done`, see surface.ts), never as a promise of the
 * isolate's: the worker awaits only its own promises. The first outcome wins: the answer, a limit, a
 * cancel or a failure of the isolate. After it, the bridge ignores the hook and the isolate is disposed,
 * so nothing a hook left behind (timers of its own, finalizers, pending promises) runs on.
 */
import { clip } from '../../../protocol/text.js'
import ivm from 'isolated-vm'
import { parseJson } from '../../../protocol/bounded-json.js'
import type { DiagnosticKind } from '../../../protocol/diagnostic.js'
import { type CapabilityReply, type CtxData, type InvokeOutcome, invokeOutcome } from '../../runners/hook-runner.js'
import { type HookCode, hookCodeKey } from '../protocol.js'
import { type Limits } from '../../limits.js'
import { type PreludeLimits, hookScriptName, lineFromMessage, wrapHookSource } from '../isolate/surface.js'
import { FAILURE_TEXT } from '../../runners/failure-text.js'
import { InvocationBudget } from '../../runners/invocation-budget.js'
import { WarmPool } from './warm-isolates.js'

/** Spare warm isolates per memory limit (HOOKD_WARM_ISOLATES, default 2; 0 creates each on demand). */
const warmIsolates = new WarmPool(Number(process.env.HOOKD_WARM_ISOLATES ?? 2))
/** Invocations running in this worker now; spares are made only when it is zero. */
let active = 0

/**
 * A chain of `steps` hooks is about to run here (main.ts 'chain'): it takes one warm isolate per step,
 * so keep that many spares for this memory limit from now on (bounded; see WarmPool.expect).
 */
export function expectChain(memoryMb: number, steps: number): void {
  warmIsolates.expect(memoryMb, steps)
}

/** What the runner needs from the worker around it. */
export interface InvocationHost {
  /** A capability call leaves for the sidecar; `heldMb` is what the waiting isolate holds (heldMb()). */
  capability(capability: string, args: unknown, heldMb: number): Promise<CapabilityReply>
  log(message: string): void
}

export interface RunResult {
  outcome: InvokeOutcome
  wallUs: number
  cpuUs: number
  /** What the finished isolate still holds, in MB (heldMb()), until afterAnswer disposes it. */
  heldMb: number
  /** Call once the answer is on its way: disposes the isolate and warms the next ones. */
  afterAnswer(): void
}

/** Which export to call and what to answer with (its return value, or the argument at `resultArg`). */
export interface HookCall {
  point: string
  resultArg: number
}

interface CompiledHook {
  code: string
  columnOffset: number
  filename: string
  cachedData?: ivm.ExternalCopy<ArrayBuffer>
}


/** Hook code by name and version; the code cache is produced here, by hookd, never taken from a hook. */
const hooks = new Map<string, CompiledHook>()

export function rememberHook(code: HookCode): CompiledHook | undefined {
  const key = hookCodeKey(code)
  const known = hooks.get(key)
  if (known) return known
  if (code.source === undefined) return undefined
  const { code: wrapped, columnOffset } = wrapHookSource(code.source)
  const compiled: CompiledHook = { code: wrapped, columnOffset, filename: code.filename }
  hooks.set(key, compiled)
  return compiled
}

/** Drops code the sidecar no longer sends here (the supervisor bounds what each worker keeps). */
export function forgetHook(key: string): void {
  hooks.delete(key)
}

let catastrophe: (message: string) => void = (message) => {
  process.stderr.write(`hookd worker: isolated-vm reported a catastrophic error: ${message}\n`)
  process.abort()
}

/**
 * isolated-vm calls this when V8 lost control of an isolate (e.g. "Script failed to terminate"): the
 * process must stop serving and end (main.ts retires the worker).
 */
export function onCatastrophicError(handler: (message: string) => void): () => void {
  const previous = catastrophe
  catastrophe = handler
  return () => {
    if (catastrophe === handler) catastrophe = previous
  }
}

/** Where a failure happened: it decides what a thrown value from isolated-vm means. */
type Stage = 'arm' | 'compile' | 'evaluate' | 'run'

/**
 * Invocation run: one fresh isolate. `call` names the export to call and what to answer with (its
 * return value, or the argument at `resultArg` after it ran); `call === null` loads the hook and reports
 * its exported function names (used by the registry and `hookd check`).
 */
export async function runInIsolate(
  hook: CompiledHook,
  call: HookCall | null,
  argsJson: string,
  ctx: CtxData | null,
  limits: Limits,
  host: InvocationHost,
  signal?: AbortSignal,
): Promise<RunResult> {
  let catastrophic = false
  active += 1
  // A fresh isolate, made ahead of time with its context and prelude (warm-isolates.ts); used once.
  const warm = warmIsolates.take(limits.memoryMb)
  const started = process.hrtime.bigint()
  const { isolate } = warm
  // isolated-vm parks the isolate's thread for good and asks the process to end: this invocation ends
  // now (its isolate is left alone), and the worker retires once its other invocations are done.
  warm.onCatastrophe((message) => {
    catastrophic = true
    settle({ ok: false, kind: 'memory', message: FAILURE_TEXT.catastrophe(limits, message) })
    catastrophe(message)
  })
  const cpuNs = (): number => Number(isolate.cpuTime - warm.cpuBaseNs)
  let outcome: InvokeOutcome | undefined
  let deliver: (o: InvokeOutcome) => void = () => {}
  const answered = new Promise<InvokeOutcome>((resolve) => {
    deliver = resolve
  })
  let waitingSince: bigint | undefined
  let waitedNs = 0n
  const budget = new InvocationBudget(limits)
  let timer: NodeJS.Timeout | undefined
  let stage: Stage = 'arm'

  /** The first outcome wins; everything after it is ignored. */
  const settle = (o: InvokeOutcome): void => {
    if (outcome) return
    outcome = o
    deliver(o)
  }
  /** A limit or a cancel: settle, and stop the hook wherever it is. */
  const end = (kind: DiagnosticKind, message: string): void => {
    if (outcome) return
    settle({ ok: false, kind, message })
    warm.dispose()
  }

  const watch = (): void => {
    timer = undefined
    if (outcome) return
    // isolated-vm disposes an isolate by itself only at its memory limit (ours go through end()).
    if (isolate.isDisposed) return settle({ ok: false, kind: 'memory', message: FAILURE_TEXT.memory(limits) })
    const cpuMs = cpuNs() / 1e6
    const now = process.hrtime.bigint()
    const waitingNow = waitingSince === undefined ? 0n : now - waitingSince
    const wallMs = Number(now - started - waitedNs - waitingNow) / 1e6
    if (cpuMs > limits.cpuMs) return end('cpu', FAILURE_TEXT.cpu(limits))
    if (wallMs > limits.wallMs) return end('timeout', FAILURE_TEXT.wall(limits))
    const next = Math.min(limits.cpuMs - cpuMs, waitingSince === undefined ? limits.wallMs - wallMs : limits.cpuMs)
    timer = setTimeout(watch, Math.max(2, Math.ceil(next)))
  }

  const log = (text: string): void => {
    if (outcome) return
    const line = budget.log(text)
    if (line !== undefined) host.log(line)
  }

  const capability = async (name: string, argsText: string): Promise<string> => {
    if (outcome) return replyText({ ok: false, code: 'cancelled', message: FAILURE_TEXT.answered(name) })
    const refused = budget.capability(name, Buffer.byteLength(argsText))
    if (refused) return replyText(refused)
    // Checked here, before the arguments cross this process's IPC channel (which would serialize them
    // again on this thread's stack).
    const parsed = parseJson(argsText, `ctx.${name}: the argument list`, { maxDepth: limits.jsonDepth, maxBytes: limits.resultBytes })
    if (!parsed.ok) return replyText({ ok: false, code: 'invalid', message: parsed.message })
    const args = parsed.value
    // Measured as the wait starts: while the isolate waits in the call it allocates nothing more.
    const held = heldMb(isolate)
    const since = process.hrtime.bigint()
    waitingSince = since
    try {
      return replyText(await host.capability(name, args, held))
    } finally {
      waitedNs += process.hrtime.bigint() - since
      waitingSince = undefined
    }
  }

  // What the isolate's bridge brings (surface.ts): the answer, log lines and capability calls.
  warm.connect(async (op, text) => {
    if (typeof op !== 'string' || typeof text !== 'string') return undefined
    if (op === '$done') {
      settle(parseReply(text, limits))
      return undefined
    }
    if (op === 'log') {
      log(text)
      return undefined
    }
    return capability(op, text)
  })

  const drive = async (): Promise<void> => {
    const { context, arm } = warm
    const preludeLimits: PreludeLimits = { resultBytes: limits.resultBytes, logBytes: limits.logBytes, logLines: limits.logLines, memoryMb: limits.memoryMb }
    // Arming is hookd's own code on hookd's data, and so is compiling: both run synchronously on this
    // thread, where the warm isolate was last used, which spares trips to the isolate's thread (each
    // measured at ~65-165 us, and ~70 us more whenever the isolate changes threads). Everything that
    // can run hook code stays asynchronous, so a hook can never hold the worker's own thread (a source
    // can close the wrapper early and run code at evaluation). A version's first compile makes its
    // code cache, also asynchronously: only cached compiles, whose cost the cache bounds, run here.
    const entered = arm.applySync(
      undefined,
      [JSON.stringify(ctx ?? {}), JSON.stringify(preludeLimits), call ? call.point : null, argsJson, call ? call.resultArg : -1],
      { result: { reference: true }, timeout: limits.wallMs },
    ) as ivm.Reference<() => boolean>
    stage = 'compile'
    let script: ivm.Script & ivm.CachedDataResult
    try {
      const options = {
        filename: hookScriptName(hook.filename),
        columnOffset: hook.columnOffset,
        ...(hook.cachedData ? { cachedData: hook.cachedData } : { produceCachedData: true }),
      }
      script = (hook.cachedData ? isolate.compileScriptSync(hook.code, options) : await isolate.compileScript(hook.code, options)) as ivm.Script &
        ivm.CachedDataResult
    } catch (err) {
      if (isolate.isDisposed) throw err
      const message = clip(errorText(err))
      const line = lineFromMessage(message)
      return settle({ ok: false, kind: 'load', message, ...(line !== undefined ? { line } : {}) })
    }
    if (!hook.cachedData && script.cachedData) hook.cachedData = script.cachedData
    // One trip: the script calls the prelude's entry, which loads the module and calls the export; the
    // answer arrives through the bridge.
    stage = 'run'
    try {
      await script.run(context, { timeout: limits.wallMs })
    } catch (err) {
      // What escaped the script before any module was entered is top-level code that broke out of
      // the wrapper; after, a rejection nobody handled.
      if (!outcome && !isolate.isDisposed && !entered.applySync(undefined, [], { timeout: limits.wallMs })) stage = 'evaluate'
      throw err
    } finally {
      entered.release()
    }
  }

  const onAbort = (): void => end('cancelled', FAILURE_TEXT.cancelled())
  signal?.addEventListener('abort', onAbort, { once: true })
  if (signal?.aborted) onAbort()
  timer = setTimeout(watch, Math.max(2, Math.min(limits.cpuMs, limits.wallMs)))
  drive().catch((err: unknown) => settle(failureFrom(err, stage, limits)))

  const final = await answered
  if (timer) clearTimeout(timer)
  signal?.removeEventListener('abort', onAbort)
  const cpuUs = isolate.isDisposed || catastrophic ? 0 : Math.round(cpuNs() / 1000)
  const held = catastrophic ? 0 : heldMb(isolate)
  const wallUs = Math.round(Number(process.hrtime.bigint() - started) / 1000)
  // From here the bridge answers nothing; a catastrophic isolate is left alone, as isolated-vm asks.
  warm.connect(undefined)
  active -= 1
  // The answer is settled and the bridge ignores the hook from here on. Disposing (about 0.4 ms) and
  // warming the next isolates (about 3 ms, partly synchronous) wait until the caller has sent the answer,
  // and then a little longer: on 2 cores, starting them the moment the answer is written took the CPU
  // from the sidecar and the host while they relayed it (1 hook, paced: p50 4.1 ms, 2.7 ms deferred).
  const afterAnswer = (): void => {
    setTimeout(() => {
      if (!catastrophic) warm.dispose()
      warmIsolates.refillWhenIdle(limits.memoryMb, () => active === 0)
    }, AFTER_ANSWER_MS)
  }
  return { outcome: final, wallUs, cpuUs, heldMb: held, afterAnswer }
}

/**
 * What an isolate holds, in MB rounded up: its heap's resident pages (garbage not yet collected
 * included) and the ArrayBuffers allocated outside it. isolated-vm's memory limit is "a guideline" (it
 * is checked against the live heap after a collection), so this may pass the limit; the pool counts
 * the more of the two for an invocation that waits on its host. A synchronous call, which isolated-vm
 * serves even while the isolate waits in a capability call: ~70 us then, ~2 us on an idle isolate.
 */
function heldMb(isolate: ivm.Isolate): number {
  if (isolate.isDisposed) return 0
  try {
    const heap = isolate.getHeapStatisticsSync()
    return Math.ceil((heap.total_physical_size + heap.externally_allocated_size) / MIB)
  } catch {
    // Disposed (its limit, a cancel) between the check and the call.
    return 0
  }
}

const MIB = 1024 * 1024

/** How long after an answer is written its isolate is disposed and spares are made (see afterAnswer). */
const AFTER_ANSWER_MS = 1

function replyText(reply: CapabilityReply): string {
  // `value` is always present, so the prelude never reads it from a prototype the hook changed.
  return JSON.stringify(reply.ok ? { ok: true, value: reply.value ?? null } : { ok: false, code: reply.code, message: reply.message })
}

/** The prelude's `$done` text, checked: a reply that does not fit the protocol is hookd's own fault. */
function parseReply(text: string, limits: Limits): InvokeOutcome {
  // The prelude's reply is flat: {"ok":true,"value":"<json text>"}.
  const json = parseJson(text, 'the reply', { maxDepth: 2, maxBytes: limits.resultBytes * 6 + 4096 })
  if (!json.ok) return { ok: false, kind: 'internal', message: FAILURE_TEXT.badReply() }
  const parsed = invokeOutcome.safeParse(json.value)
  if (!parsed.success) return { ok: false, kind: 'internal', message: FAILURE_TEXT.badReply() }
  const reply = parsed.data
  if (reply.ok && reply.value !== undefined) {
    const bytes = Buffer.byteLength(reply.value)
    if (bytes > limits.resultBytes) return { ok: false, kind: 'result-too-large', message: FAILURE_TEXT.tooLarge(limits, bytes) }
  }
  return reply
}


function errorText(err: unknown): string {
  if (err instanceof Error) return `${err.name}: ${err.message}`
  return String(err)
}

function failureFrom(err: unknown, stage: Stage, limits: Limits): InvokeOutcome {
  const text = errorText(err)
  if (/memory limit/i.test(text) || /Array buffer allocation failed/i.test(text) || /Isolate was disposed/i.test(text)) {
    return { ok: false, kind: 'memory', message: FAILURE_TEXT.memory(limits) }
  }
  if (/Script execution timed out/i.test(text)) return { ok: false, kind: 'timeout', message: FAILURE_TEXT.wall(limits) }
  const stack = err instanceof Error && typeof err.stack === 'string' ? err.stack : text
  const line = lineFromMessage(stack)
  const at = line !== undefined ? { line } : {}
  // The prelude catches everything the hook throws; what escapes `invoke` is a rejection nobody handled.
  if (stage === 'run') return { ok: false, kind: 'throw', message: clip(FAILURE_TEXT.unhandled(text)), ...at }
  if (stage === 'evaluate') return { ok: false, kind: 'load', message: clip(FAILURE_TEXT.topLevel(text)), ...at }
  return { ok: false, kind: 'internal', message: clip(`hookd could not run the hook: ${text}`) }
}

