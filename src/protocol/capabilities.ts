/**
 * The capabilities a hook can call through `ctx`, one record each: the call's name (its `ctx` path:
 * `file.read` is `ctx.file.read`), the zod schema of its arguments as they travel in
 * CapabilityCall.args, what it is answered with, the policy class whose rule judges it, the permission
 * a hook that declares its permissions needs for it (hook.json "permissions"), and who serves it (the
 * host, or the sidecar itself). Everything else is derived from these records or tested against them:
 *
 * - the sidecar validates a call against `args`, judges it by its class's rule
 *   (src/sidecar/session/policy.ts: a class without a rule is refused), then, for a hook that declares
 *   its permissions, by its permission's rule (src/sidecar/session/permission-rules.ts), and checks the
 *   host's answer against `result`;
 * - the host library's handler table (src/host/capability-table.ts) is a mapped type over the names
 *   the host serves: a missing handler is a compile error. The host session, the front door
 *   (src/sidecar/http/sidecar-run.ts) and `hookd test` (through the host session) dispatch through it;
 * - `hookd test`'s case format names the calls from `HOST_CAPABILITY_NAMES` (src/testing/case-file.ts);
 * - the prelude's ctx tree (src/sidecar/worker/isolate/prelude.js) is walked against the records by
 *   test/integration/capabilities/capability-dispatch.test.ts, and types/hook.d.ts is checked against them by
 *   test/types/hook-types.test.ts; docs/capabilities.md's tables, the proto's comments and the Python
 *   examples' calls are checked by test/unit/capability-records.test.ts.
 *
 * docs/architecture.md, "Adding a capability", lists what a new one touches.
 *
 * `ctx.log` is not among them: it is not a call but a line, sent while the hook runs and answered by
 * nobody (LogLine on the wire).
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
/** The most names `ctx.file.list` returns. */
export const MAX_LIST_ENTRIES = 10_000

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

const fetchResult = z.object({ status: z.number().int().min(100).max(999), headers: z.record(z.string(), z.string()), body: z.string() })

/**
 * The policy classes: each has one rule in src/sidecar/session/policy.ts, which reads the arguments
 * below (the path a file rule confines, the URL whose origin the network rule checks).
 */
export interface PolicyClasses {
  /** `policy.file` allows reading; the path stays inside the workdir, off hookd's own files. */
  'file-read': readonly [path: string, ...unknown[]]
  /** `policy.file` allows writing; the path stays inside the workdir, off the protected names. */
  'file-write': readonly [path: string, ...unknown[]]
  /** The URL's origin is on `policy.httpOrigins`. */
  network: readonly [url: string, ...unknown[]]
  /** `policy.confirm` allows asking the human. */
  ask: readonly [message: { title: string }, ...unknown[]]
  /** Always allowed (bounded by the limits). */
  notify: readonly unknown[]
}
export type PolicyClass = keyof PolicyClasses

/**
 * The permission a capability needs of a hook that declares its permissions (hook.json "permissions",
 * hook-permissions.ts): each has one rule in src/sidecar/session/permission-rules.ts, which reads the
 * arguments below (the path a glob must match, the URL whose origin must be declared).
 */
export interface PermissionNeeds {
  /** "files": "read" or "read-write", and the path matches "paths" when there are any. */
  'files-read': readonly [path: string, ...unknown[]]
  /** "files": "read-write", and the path matches "paths" when there are any. */
  'files-write': readonly [path: string, ...unknown[]]
  /** The URL's origin is in "origins". */
  origin: readonly [url: string, ...unknown[]]
  /** "confirm": true. */
  confirm: readonly unknown[]
  /** "notify": true. */
  notify: readonly unknown[]
}
export type PermissionNeed = keyof PermissionNeeds

/** Who answers a capability: the host (forwarded as a CapabilityCall), or the sidecar itself. */
export type CapabilityServer = 'host' | 'sidecar'

/**
 * What the hook gets back from a capability that returns nothing: the host answers `null` (anything
 * else it answers is accepted and dropped), and the ctx function returns `undefined`.
 */
const NOTHING = { schema: z.unknown(), example: 'null' }

/**
 * One capability's record. `C` ties the arguments to what its class's rule reads, `P` to what its
 * permission's rule reads.
 */
function capability<
  C extends PolicyClass,
  P extends PermissionNeed,
  A extends z.ZodType<PolicyClasses[C] & PermissionNeeds[P]>,
  R extends z.ZodType,
  S extends CapabilityServer,
>(record: {
  /** The class whose rule judges the call. */
  policy: C
  /** What a hook that declares its permissions must have declared to make the call. */
  permission: P
  /** The call's arguments, in order, as they travel (JSON array). */
  args: A
  /** What the host answers with (CapabilityResult.value), and how the error message shows it. */
  result: { schema: R; example: string }
  server: S
}): typeof record {
  return record
}

export const CAPABILITIES = {
  confirm: capability({ policy: 'ask', permission: 'confirm', args: z.tuple([message]), result: { schema: z.boolean(), example: 'true or false' }, server: 'host' }),
  notify: capability({ policy: 'notify', permission: 'notify', args: z.tuple([message]), result: NOTHING, server: 'host' }),
  'file.read': capability({ policy: 'file-read', permission: 'files-read', args: z.tuple([path]), result: { schema: z.string(), example: 'the text as a JSON string' }, server: 'host' }),
  'file.write': capability({ policy: 'file-write', permission: 'files-write', args: z.tuple([path, text('the text', MAX_TEXT_CHARS)]), result: NOTHING, server: 'host' }),
  'file.append': capability({ policy: 'file-write', permission: 'files-write', args: z.tuple([path, text('the text', MAX_TEXT_CHARS)]), result: NOTHING, server: 'host' }),
  'file.exists': capability({ policy: 'file-read', permission: 'files-read', args: z.tuple([path]), result: { schema: z.boolean(), example: 'true or false' }, server: 'host' }),
  'file.list': capability({
    policy: 'file-read',
    permission: 'files-read',
    args: z.tuple([text('the path', MAX_SHORT_CHARS).default('.')]),
    result: { schema: z.array(z.string()).max(MAX_LIST_ENTRIES), example: '["a.txt", "dir"]' },
    server: 'host',
  }),
  'http.fetch': capability({
    policy: 'network',
    permission: 'origin',
    args: z.tuple([text('the URL', MAX_SHORT_CHARS).min(1, 'a URL is required'), fetchInit.optional()]),
    result: { schema: fetchResult, example: '{"status": 200, "headers": {}, "body": ""}' },
    server: 'host',
  }),
} as const

type Records = typeof CAPABILITIES
export type CapabilityName = keyof Records
/** The arguments of a call, as validated. */
export type CapabilityArgs<N extends CapabilityName> = z.output<Records[N]['args']>
/** What a call returns to the hook (and what the host's handler returns): nothing for NOTHING. */
export type CapabilityValue<N extends CapabilityName> = Records[N]['result'] extends typeof NOTHING ? void : z.output<Records[N]['result']['schema']>
/** The capabilities the host serves (forwarded to it as CapabilityCalls). */
export type HostCapabilityName = { [N in CapabilityName]: Records[N]['server'] extends 'host' ? N : never }[CapabilityName]

/** A record seen through its name's own types: what lets a generic `N` reach them without casts. */
export interface CapabilityRecord<N extends CapabilityName> {
  policy: PolicyClass
  permission: PermissionNeed
  args: z.ZodType<CapabilityArgs<N>>
  result: { schema: z.ZodType; example: string }
  server: CapabilityServer
}
const RECORDS: { readonly [N in CapabilityName]: CapabilityRecord<N> } = CAPABILITIES

export function capabilityRecord<N extends CapabilityName>(name: N): CapabilityRecord<N> {
  return RECORDS[name]
}

export const CAPABILITY_NAMES = Object.keys(CAPABILITIES).filter(isCapabilityName)
export const HOST_CAPABILITY_NAMES = CAPABILITY_NAMES.filter(isHostCapabilityName)

export function isCapabilityName(name: string): name is CapabilityName {
  return Object.hasOwn(CAPABILITIES, name)
}

export function isHostCapabilityName(name: string): name is HostCapabilityName {
  return isCapabilityName(name) && CAPABILITIES[name].server === 'host'
}

/** The policy class of the capability named `name`; undefined when no record has that name. */
export function policyClassOf(name: string): PolicyClass | undefined {
  return isCapabilityName(name) ? CAPABILITIES[name].policy : undefined
}

/** The arguments of a call to `name`, validated; the zod error when they do not fit. */
export function parseCapabilityArgs<N extends CapabilityName>(name: N, raw: unknown): z.ZodSafeParseResult<CapabilityArgs<N>> {
  return capabilityRecord(name).args.safeParse(raw)
}

/** What `ctx.confirm` and `ctx.notify` take. */
export type CapabilityMessage = z.output<typeof message>

const asked = z.tuple([message]).rest(z.unknown())

/**
 * The question of a call of the `ask` class (ctx.confirm), which a human answers; undefined for every
 * other class. The session answers it by auto-approve when nobody can be asked, and waits for it longer.
 */
export function questionOf<N extends CapabilityName>(name: N, args: CapabilityArgs<N>): CapabilityMessage | undefined {
  if (capabilityRecord(name).policy !== 'ask') return undefined
  const read = asked.safeParse(args)
  return read.success ? read.data[0] : undefined
}

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
export { CAPABILITY_ERROR_CODES, type CapabilityErrorCode, type CapabilityCode, passOn } from './capability-errors.js'
