/**
 * Warm isolates: a few isolates per worker created ahead of time, each with its context made and the
 * prelude evaluated, so that an invocation starts with only its own work left (the ctx, the hook's code,
 * the call). Each one is handed out once and never returned: fresh state per invocation is kept, only
 * the creation moves off the critical path. The prelude is compiled with a code cache hookd produces.
 */
import ivm from 'isolated-vm'
import { MIN_MEMORY_MB } from '../../limits.js'
import { PRELUDE } from '../isolate/surface.js'

/** What the isolate's bridge passes on: the prelude's calls, `op` naming what it wants (surface.ts). */
export type BridgeHandler = (op: unknown, text: unknown) => Promise<string | undefined>

export interface WarmIsolate {
  isolate: ivm.Isolate
  context: ivm.Context
  /** The prelude's `hookdArm` (see surface.ts): called once, for the invocation the isolate serves. */
  arm: ivm.Reference<unknown>
  /** CPU time the isolate used before it was handed out (warm-up), to subtract from the hook's. */
  cpuBaseNs: bigint
  /** Where isolated-vm's catastrophic-error report for this isolate goes. */
  onCatastrophe(handler: (message: string) => void): void
  /**
   * Where the isolate's bridge sends the prelude's calls: the invocation's handler, then `undefined`
   * once it has its outcome, after which the bridge answers nothing.
   */
  connect(handler: BridgeHandler | undefined): void
  /** Disposes the isolate and releases its bridge (once; later calls do nothing). */
  dispose(): void
}

let preludeCache: ivm.ExternalCopy<ArrayBuffer> | undefined

/**
 * Creates an isolate with its context and evaluated prelude, and calls the prelude's setup with the
 * isolate's bridge, so that ctx's functions exist before any invocation (no hook code runs here). All
 * of it is hookd's own code and runs synchronously on the worker's thread: an isolate costs CPU time
 * each time it changes threads (V8 hands its state over; measured ~70 us), and the invocation that
 * takes this isolate starts on this thread too (arming and a cached compile, see runner.ts). Setup is
 * also the isolate's first sight of an isolated-vm Reference, which costs it ~90 us, paid here.
 */
export function createWarm(memoryMb: number): WarmIsolate {
  let catastrophe: (message: string) => void = () => {}
  let handler: BridgeHandler | undefined
  let released = false
  const isolate = new ivm.Isolate({
    memoryLimit: Math.max(MIN_MEMORY_MB, memoryMb),
    onCatastrophicError: (message: string) => catastrophe(message),
  })
  // The one host function in the isolate: only the prelude's closures hold it.
  const bridge = new ivm.Reference(async (op: unknown, text: unknown): Promise<string | undefined> => handler?.(op, text))
  try {
    const context = isolate.createContextSync()
    const prelude = isolate.compileScriptSync(PRELUDE, {
      filename: 'hookd-prelude',
      ...(preludeCache ? { cachedData: preludeCache } : { produceCachedData: true }),
    }) as ivm.Script & ivm.CachedDataResult
    if (!preludeCache && prelude.cachedData) preludeCache = prelude.cachedData
    const setup = prelude.runSync(context, { reference: true }) as ivm.Reference<unknown>
    prelude.release()
    const arm = setup.applySync(undefined, [bridge], { result: { reference: true }, timeout: 1000 }) as ivm.Reference<unknown>
    setup.release()
    return {
      isolate,
      context,
      arm,
      cpuBaseNs: isolate.cpuTime,
      onCatastrophe: (next) => {
        catastrophe = next
      },
      connect: (next) => {
        handler = next
      },
      dispose: () => {
        handler = undefined
        if (released) return
        released = true
        // The isolate first: a hook still running (a limit or a cancel ended it) stops before its
        // bridge goes away under it.
        try {
          if (!isolate.isDisposed) isolate.dispose()
        } catch {
          // Already disposed by isolated-vm (memory limit) between the check and the call.
        }
        bridge.release()
      },
    }
  } catch (err) {
    bridge.release()
    if (!isolate.isDisposed) isolate.dispose()
    throw err
  }
}

/** The most spares a chain can ask a worker to keep per memory limit (each is an idle isolate, ~1-2 MB). */
const MAX_CHAIN_SPARES = 4

/** Spare warm isolates per memory limit; refilled in the background after each take. */
export class WarmPool {
  private readonly spares = new Map<number, WarmIsolate[]>()
  private readonly filling = new Set<number>()
  /** Spares wanted per memory limit, when chains ask for more than `size` (see expect()). */
  private readonly wanted = new Map<number, number>()

  constructor(private readonly size: number) {}

  /**
   * A chain run in one worker message takes one isolate per hook, back to back: keep as many spares
   * for this memory limit as the longest chain seen, up to MAX_CHAIN_SPARES, so that its later hooks
   * do not create their isolates on the critical path. With `size` 0 (on demand), nothing changes.
   */
  expect(memoryMb: number, count: number): void {
    if (this.size <= 0) return
    const want = Math.min(MAX_CHAIN_SPARES, Math.max(this.size, count))
    if (want > (this.wanted.get(memoryMb) ?? this.size)) this.wanted.set(memoryMb, want)
  }

  /** A warm isolate for this memory limit: a spare when one is ready, else a new one now. */
  take(memoryMb: number): WarmIsolate {
    return this.spares.get(memoryMb)?.shift() ?? createWarm(memoryMb)
  }

  /**
   * Makes spares for this memory limit once the worker has nothing running. Creating an isolate holds
   * the worker's main thread for about 2 ms (isolated-vm's constructor is synchronous), so it must not
   * happen while an invocation waits on that thread: it happens between invocations instead.
   */
  refillWhenIdle(memoryMb: number, idle: () => boolean): void {
    if (this.size <= 0 || this.filling.has(memoryMb)) return
    this.filling.add(memoryMb)
    const list = this.spares.get(memoryMb) ?? []
    this.spares.set(memoryMb, list)
    const step = (): void => {
      if (list.length >= (this.wanted.get(memoryMb) ?? this.size)) {
        this.filling.delete(memoryMb)
        return
      }
      if (!idle()) {
        setTimeout(step, 1)
        return
      }
      try {
        list.push(createWarm(memoryMb))
        setImmediate(step)
      } catch {
        // Retried after the next invocation; take() creates isolates itself meanwhile.
        this.filling.delete(memoryMb)
      }
    }
    setImmediate(step)
  }
}
