/**
 * The host capabilities a hook can call through `ctx`, with the zod schema of each call's arguments as
 * they travel in CapabilityCall.args. The sidecar validates a call against it, checks the session's
 * policy and only then forwards it; the host validates again on arrival. The ctx functions that make
 * these calls inside the isolate are in src/sandbox/worker/surface.ts.
 */
import { z } from 'zod'

const path = z.string().min(1, 'a path is required')
const message = z.looseObject({ title: z.string(), body: z.string().optional() })

export const CAPABILITIES = {
  confirm: z.tuple([message]),
  notify: z.tuple([message]),
  'file.read': z.tuple([path]),
  'file.write': z.tuple([path, z.string()]),
  'file.exists': z.tuple([path]),
  'file.list': z.tuple([z.string().default('.')]),
  'http.fetch': z.tuple([
    z.string().min(1, 'a URL is required'),
    z
      .object({
        method: z.string().optional(),
        headers: z.record(z.string(), z.string()).optional(),
        body: z.string().optional(),
      })
      .optional(),
  ]),
} as const

export type CapabilityName = keyof typeof CAPABILITIES
export type CapabilityArgs<N extends CapabilityName> = z.output<(typeof CAPABILITIES)[N]>

export function isCapabilityName(name: string): name is CapabilityName {
  return Object.hasOwn(CAPABILITIES, name)
}

/** What `ctx.http.fetch` returns. */
export interface FetchResult {
  status: number
  headers: Record<string, string>
  body: string
}

/** Error codes a capability error may carry into the hook (as `err.code`). */
export const CAPABILITY_ERROR_CODES = {
  denied: 'denied',
  limit: 'limit',
  invalid: 'invalid',
  failed: 'failed',
} as const
