/**
 * Per-invocation limits: what one hook invocation may spend, enforced by the worker that runs it (or,
 * for a remote hook, by the sidecar around its stream). One schema validates them wherever they come
 * from: `hookd serve` flags, a tenants file, an embedding program's options.
 */
import * as z from 'zod'
import { issueText } from '../protocol/issue-text.js'

export interface Limits {
  /** Isolate heap limit. */
  memoryMb: number
  /** CPU time on the isolate's own clock. */
  cpuMs: number
  /** Wall time, not counting time spent waiting for the host to answer a capability call. */
  wallMs: number
  /** Size of the returned value as JSON text. */
  resultBytes: number
  /** ctx.log volume; past it lines are dropped after one truncation marker. */
  logBytes: number
  /** ctx.log lines (an empty line costs a message on every channel all the same); past it, as logBytes. */
  logLines: number
  /** Capability calls (confirm, notify, file.*, http.fetch). */
  capabilityCalls: number
  /** Bytes of arguments (as JSON) all capability calls of one invocation may carry together. */
  capabilityBytes: number
  /**
   * The deepest nesting of arrays and objects in any JSON a hook or a host sends through hookd (a
   * hook's answer and capability arguments, a host's payload and capability answers). See
   * src/protocol/bounded-json.ts.
   */
  jsonDepth: number
}

export const DEFAULT_LIMITS: Limits = {
  memoryMb: 64,
  cpuMs: 1000,
  wallMs: 10_000,
  resultBytes: 1024 * 1024,
  logBytes: 64 * 1024,
  logLines: 1000,
  capabilityCalls: 256,
  capabilityBytes: 4 * 1024 * 1024,
  jsonDepth: 64,
}

/** The smallest isolate heap V8 runs a hook in. */
export const MIN_MEMORY_MB = 8

const POSITIVE = 'expected a positive integer'
const positiveInt = z.number({ error: POSITIVE }).int({ error: POSITIVE }).positive({ error: POSITIVE })

/** Each limit, optional: what a flag set, a tenants file or an embedding program may give. */
export const limitsSchema = z.strictObject({
  memoryMb: z
    .number({ error: POSITIVE })
    .int({ error: POSITIVE })
    .min(MIN_MEMORY_MB, { error: `expected an integer of at least ${MIN_MEMORY_MB}` })
    .optional(),
  cpuMs: positiveInt.optional(),
  wallMs: positiveInt.optional(),
  resultBytes: positiveInt.optional(),
  logBytes: positiveInt.optional(),
  logLines: positiveInt.optional(),
  capabilityCalls: positiveInt.optional(),
  capabilityBytes: positiveInt.optional(),
  jsonDepth: positiveInt.max(1000, { error: 'expected an integer of at most 1000' }).optional(),
})

/** Given limits over the defaults, validated; throws a RangeError naming the bad limit. */
export function resolveLimits(given: Partial<Limits> = {}, base: Limits = DEFAULT_LIMITS): Limits {
  const parsed = limitsSchema.safeParse(given)
  if (!parsed.success) {
    throw new RangeError(issueText(parsed.error, 'limits'))
  }
  const out: Limits = { ...base }
  for (const [key, value] of Object.entries(parsed.data) as Array<[keyof Limits, number | undefined]>) if (value !== undefined) out[key] = value
  return out
}

/** How long hookd waits for a host to answer a capability call: confirm (a human), everything else. */
export interface HostWaits {
  confirmMs: number
  capabilityMs: number
}

export const DEFAULT_WAITS: HostWaits = { confirmMs: 10 * 60_000, capabilityMs: 30_000 }
