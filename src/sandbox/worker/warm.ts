/**
 * Warm isolates: a few isolates per worker created ahead of time, each with its context made and the
 * prelude evaluated, so that an invocation starts with only its own work left (the ctx, the hook's code,
 * the call). Each one is handed out once and never returned: fresh state per invocation is kept, only
 * the creation moves off the critical path. The prelude is compiled with a code cache hookd produces.
 */
import ivm from 'isolated-vm'
import { PRELUDE } from './surface.js'

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

/** Spare warm isolates per memory limit; refilled in the background after each take. */
export class WarmPool {
  private readonly spares = new Map<number, WarmIsolate[]>()
  private readonly filling = new Set<number>()

  constructor(private readonly size: number) {}

  /** A warm isolate for this memory limit: a spare when one is ready, else a new one now. */
  async take(memoryMb: number): Promise<WarmIsolate> {
    const spare = this.spares.get(memoryMb)?.shift()
    this.refill(memoryMb)
    return spare ?? createWarm(memoryMb)
  }

  /** Drops every spare (on shutdown or retirement). */
  drain(): void {
    for (const list of this.spares.values()) for (const w of list.splice(0)) if (!w.isolate.isDisposed) w.isolate.dispose()
  }

  private refill(memoryMb: number): void {
    if (this.size <= 0 || this.filling.has(memoryMb)) return
    this.filling.add(memoryMb)
    // After the current invocation has had its turn: warming up never delays an answer.
    setImmediate(async () => {
      try {
        const list = this.spares.get(memoryMb) ?? []
        this.spares.set(memoryMb, list)
        while (list.length < this.size) list.push(await createWarm(memoryMb))
      } catch {
        // A failed warm-up is retried by the next take; take() creates isolates itself meanwhile.
      } finally {
        this.filling.delete(memoryMb)
      }
    })
  }
}
