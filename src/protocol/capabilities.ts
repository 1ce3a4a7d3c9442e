/**
 * The host capabilities a hook can call through `ctx`, with the zod schema of each call's arguments as
 * they travel in CapabilityCall.args. The sidecar validates a call against it, checks the session's
 * policy and only then forwards it; the host validates again on arrival. The ctx functions that make
 * these calls inside the isolate are in src/sidecar/worker/isolate/surface.ts; docs/capabilities.md documents
 * them for hook and host authors, and types/hook.d.ts declares them for hook authors.
 *
 * The schemas bound every string a hook can send. A capability call crosses gRPC to the host, whose
 * client accepts messages of at most 8 MiB: without bounds, one `ctx.file.write` of a huge string
 * would end the whole session's stream instead of failing one call. JSON escaping can grow a string
 * up to six times, so the largest text a hook may send (1 MiB characters) stays under that ceiling.
 */
import * as z from 'zod'

/** The longest text `ctx.file.write` and `ctx.file.append` and a `ctx.http.fetch` body may carry, in characters. */
export const MAX_TEXT_CHARS = 1024 * 1024
/** The longest path, URL, header value, title or body a hook may pass, in characters. */
export const MAX_SHORT_CHARS = 16 * 1024
/** The most headers one `ctx.http.fetch` may send. */
export const MAX_HEADERS = 64

function text(what: string, max: number): z.ZodString {
  return z.string().max(max, `${what} is longer than ${max} characters`)
}

const path = text('the path', MAX_SHORT_CHARS).min(1, 'a path is required')
/** What confirm and notify show; unknown fields are dropped, not forwarded. */
const message = z.object({ title: text('title', MAX_SHORT_CHARS), body: text('body', MAX_SHORT_CHARS).optional() })

const fetchInit = z.object({
  method: z
    .string()
    .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,32}$/, 'method must be an HTTP method name such as GET or POST')
    .optional(),
  headers: z
    .record(text('a header name', 256), text('a header value', MAX_SHORT_CHARS))
    .refine((h) => Object.keys(h).length <= MAX_HEADERS, `at most ${MAX_HEADERS} headers`)
    .optional(),
  body: text('the body', MAX_TEXT_CHARS).optional(),
})

export const CAPABILITIES = {
  confirm: z.tuple([message]),
  notify: z.tuple([message]),
  'file.read': z.tuple([path]),
  'file.write': z.tuple([path, text('the text', MAX_TEXT_CHARS)]),
  'file.append': z.tuple([path, text('the text', MAX_TEXT_CHARS)]),
  'file.exists': z.tuple([path]),
  'file.list': z.tuple([text('the path', MAX_SHORT_CHARS).default('.')]),
  'http.fetch': z.tuple([text('the URL', MAX_SHORT_CHARS).min(1, 'a URL is required'), fetchInit.optional()]),
} as const

export type CapabilityName = keyof typeof CAPABILITIES

/** The most names `ctx.file.list` returns. */
export const MAX_LIST_ENTRIES = 10_000

/**
 * What a host may answer each capability with (CapabilityResult.value, as JSON). The sidecar checks an
 * answer against it before the hook sees it; one that does not fit ends the session with
 * INVALID_ARGUMENT naming the call, like any other protocol mistake (docs/protocol.md). `example` is
 * shown in that message.
 */
export const CAPABILITY_RESULTS = {
  confirm: { schema: z.boolean(), example: 'true or false' },
  notify: { schema: z.unknown(), example: 'null' },
  'file.read': { schema: z.string(), example: 'the text as a JSON string' },
  'file.write': { schema: z.unknown(), example: 'null' },
  'file.append': { schema: z.unknown(), example: 'null' },
  'file.exists': { schema: z.boolean(), example: 'true or false' },
  'file.list': { schema: z.array(z.string()).max(MAX_LIST_ENTRIES), example: '["a.txt", "dir"]' },
  'http.fetch': {
    schema: z.object({ status: z.number().int().min(100).max(999), headers: z.record(z.string(), z.string()), body: z.string() }),
    example: '{"status": 200, "headers": {}, "body": ""}',
  },
} as const satisfies Record<CapabilityName, { schema: z.ZodType; example: string }>
export type CapabilityArgs<N extends CapabilityName> = z.output<(typeof CAPABILITIES)[N]>

export function isCapabilityName(name: string): name is CapabilityName {
  return Object.hasOwn(CAPABILITIES, name)
}

/** What `ctx.confirm` and `ctx.notify` take. */
export type CapabilityMessage = z.output<typeof message>

/** The options `ctx.http.fetch` takes. */
export type FetchInit = z.output<typeof fetchInit>

/** What `ctx.http.fetch` returns. */
export interface FetchResult {
  status: number
  headers: Record<string, string>
  body: string
}

/** "HTTP://Example.com:80/x" -> "http://example.com"; undefined when not an http(s) URL. */
export function originOf(url: string): string | undefined {
  try {
    const u = new URL(url)
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined
    return u.origin
  } catch {
    return undefined
  }
}

export { quoted } from './text.js'


/**
 * Error codes a capability error carries into the hook (as `err.code`). Besides these, a file
 * capability passes on the host's system error code (ENOENT, EISDIR, ENOTDIR, EACCES, ...).
 */
export const CAPABILITY_ERROR_CODES = {
  /** The session's policy (sidecar) or the host refused the call. Uncaught: `capability-denied`. */
  denied: 'denied',
  /** A per-invocation or per-call limit was hit. Uncaught: `limit`. */
  limit: 'limit',
  /** The arguments do not fit the capability. */
  invalid: 'invalid',
  /** The host tried and failed (network error, a handler that threw). */
  failed: 'failed',
  /** The host did not answer within the sidecar's ceiling. */
  timeout: 'timeout',
  /** The host cancelled the point call while the capability waited. */
  cancelled: 'cancelled',
  /** No host can serve the capability (unary Invoke, or the host disconnected). */
  unavailable: 'unavailable',
} as const
export type CapabilityErrorCode = (typeof CAPABILITY_ERROR_CODES)[keyof typeof CAPABILITY_ERROR_CODES]
