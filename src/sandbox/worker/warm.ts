/**
 * Warm isolates: a few isolates per worker created ahead of time, each with its context made and the
 * prelude evaluated, so that an invocation starts with only its own work left (the ctx, the hook's code,
 * the call). Each one is handed out once and never returned: fresh state per invocation is kept, only
 * the creation moves off the critical path. The prelude is compiled with a code cache hookd produces.
 */
import ivm from 'isolated-vm'
import { PRELUDE, REHEARSAL } from './surface.js'

export interface WarmIsolate {
  isolate: ivm.Isolate
  context: ivm.Context
  /** The prelude's setup function (see surface.ts). */
  setup: ivm.Reference<unknown>
  /** CPU time the isolate used before it was handed out (warm-up), to subtract from the hook's. */
  cpuBaseNs: bigint
  /** Where isolated-vm's catastrophic-error report for this isolate goes. */
  onCatastrophe(handler: (message: string) => void): void
}

let preludeCache: ivm.ExternalCopy<ArrayBuffer> | undefined

/** Runs REHEARSAL (surface.ts) in a warm isolate, so V8 has compiled the prelude before a hook needs it. */
async function rehearse(context: ivm.Context, setup: ivm.Reference<unknown>): Promise<void> {
  const run = (await context.eval(REHEARSAL, { reference: true })) as ivm.Reference<unknown>
  await run.apply(undefined, [setup.derefInto()], { timeout: 1000 })
  run.release()
}

/** Creates an isolate with its context and evaluated prelude. */
export async function createWarm(memoryMb: number): Promise<WarmIsolate> {
  let catastrophe: (message: string) => void = () => {}
  const isolate = new ivm.Isolate({
    memoryLimit: Math.max(8, memoryMb),
    onCatastrophicError: (message: string) => catastrophe(message),
  })
  try {
    const context = await isolate.createContext()
    const prelude = (await isolate.compileScript(PRELUDE, {
      filename: 'hookd-prelude',
      ...(preludeCache ? { cachedData: preludeCache } : { produceCachedData: true }),
    })) as ivm.Script & ivm.CachedDataResult
    if (!preludeCache && prelude.cachedData) preludeCache = prelude.cachedData
    const setup = (await prelude.run(context, { reference: true })) as ivm.Reference<unknown>
    prelude.release()
    await rehearse(context, setup)
    return {
      isolate,
      context,
      setup,
      cpuBaseNs: isolate.cpuTime,
      onCatastrophe: (handler) => {
        catastrophe = handler
      },
    }
  } catch (err) {
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
  async take(memoryMb: number): Promise<WarmIsolate> {
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
    const step = async (): Promise<void> => {
      if (list.length >= (this.wanted.get(memoryMb) ?? this.size)) {
        this.filling.delete(memoryMb)
        return
      }
      if (!idle()) {
        setTimeout(() => void step(), 1)
        return
      }
      try {
        list.push(await createWarm(memoryMb))
        setImmediate(() => void step())
      } catch {
        // Retried after the next invocation; take() creates isolates itself meanwhile.
        this.filling.delete(memoryMb)
      }
    }
    setImmediate(() => void step())
  }

  /** Drops every spare (on shutdown or retirement). */
  drain(): void {
    for (const list of this.spares.values()) for (const w of list.splice(0)) if (!w.isolate.isDisposed) w.isolate.dispose()
  }
}
