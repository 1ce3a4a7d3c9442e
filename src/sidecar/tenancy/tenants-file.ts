/**
 * The tenants file (`hookd serve --tenants FILE`, docs/tenants.md): JSON naming every tenant a
 * multi-tenant sidecar serves, with its credential hash, hooks folder, limits and capability policy.
 * Validation errors point at the bad entry: `tenants[2].limits.cpuMs: expected a positive integer`.
 */
import { readFile } from 'node:fs/promises'
import { dirname, resolve } from 'node:path'
import * as z from 'zod'
import { parseJson } from '../../protocol/bounded-json.js'
import { originOf } from '../../protocol/capabilities.js'
import { HookdError } from '../../protocol/status.js'
import { FILE_ACCESS } from '../../protocol/wire.js'
import type { SessionPolicy } from '../session/policy.js'
import { remotePattern } from '../runners/remote/remote-allow.js'
import { HASH_PATTERN } from './tenant-token.js'
import { type Limits, limitsSchema } from '../limits.js'
import { issuePath } from '../../protocol/issue-text.js'

/** Per-invocation limits a tenant may set (absent: the sidecar's own), and its quotas. */
export interface TenantLimits {
  invocation: Partial<Limits>
  /** Point calls of this tenant running at once; absent: no limit. */
  concurrentInvocations?: number
  /** Point calls of this tenant started per second (a bucket of that many, refilled evenly); absent: no limit. */
  invocationsPerSecond?: number
}

export interface TenantConfig {
  id: string
  /** `sha256:<64 hex>` of the tenant's token. */
  tokenHash: string
  /** Absolute: a relative `hooks` is resolved against the tenants file's folder. */
  hooks: string
  limits: TenantLimits
  /** The ceiling on what any of the tenant's sessions may grant its hooks. */
  policy: SessionPolicy
  /**
   * The addresses the tenant's remote hooks may name (remote-allow.ts), normalised: unix paths absolute
   * (relative ones against the tenants file's folder). Empty: the tenant may have no remote hooks.
   */
  remoteHooks: string[]
  /** "refuse": every session of the tenant fails closed at gates (chain.ts OnError). */
  onError: 'default' | 'refuse'
  /** Sandbox worker processes of the tenant's own: no other tenant's hooks ever run in them. */
  workers: number
  /** Serve only what hookd.lock beside its hooks folder pins. */
  locked: boolean
  /** Serve only hooks signed by a key of `trustedKeys`. */
  requireSigned: boolean
  /** Absolute: the file of trusted public keys. */
  trustedKeys?: string
  /** Every hook of the tenant must declare its permissions (hook.json "permissions"); one without does not load. */
  requirePermissions: boolean
}

/** The most worker processes one tenant may have. */
export const MAX_TENANT_WORKERS = 64

const POSITIVE = 'expected a positive integer'
const positiveInt = z.number({ error: POSITIVE }).int({ error: POSITIVE }).positive({ error: POSITIVE })

/** A tenant's per-invocation limits (absent: the sidecar's own), and its quotas. */
const tenantLimitsSchema = limitsSchema.extend({
  concurrentInvocations: positiveInt.optional(),
  invocationsPerSecond: positiveInt.optional(),
})

const policySchema = z.strictObject({
  file: z.enum(FILE_ACCESS, { error: `expected one of ${FILE_ACCESS.map((f) => `"${f}"`).join(', ')}` }).default('none'),
  httpOrigins: z
    .array(
      z.string({ error: 'expected a string' }).transform((text, ctx) => {
        const origin = originOf(text)
        if (!origin) {
          ctx.addIssue({ code: 'custom', message: `'${text}' is not an http(s) origin; write it like https://api.example.com` })
          return z.NEVER
        }
        return origin
      }),
      { error: 'expected an array of origins' },
    )
    .default([]),
  env: z
    .array(z.string({ error: 'expected a string' }).regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'expected an environment variable name' }), {
      error: 'expected an array of environment variable names',
    })
    .default([]),
  confirm: z.boolean({ error: 'expected true or false' }).default(true),
})

const REMOTE_HOOKS = 'expected an array of addresses, e.g. ["unix:/run/acme/*.sock", "127.0.0.1:9000"]'
const remoteHooksSchema = z
  .array(
    z.string({ error: 'expected a string: unix:PATH or HOST:PORT' }).superRefine((text, ctx) => {
      try {
        remotePattern(text, '/')
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message })
      }
    }),
    { error: REMOTE_HOOKS },
  )
  .default([])

const tenantSchema = z.strictObject({
  id: z
    .string({ error: 'expected a string' })
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, { error: 'expected 1-64 letters, digits, dots, dashes or underscores, starting with a letter or digit' }),
  tokenHash: z
    .string({ error: 'expected a string' })
    .regex(HASH_PATTERN, { error: "expected 'sha256:' and 64 lowercase hex digits; run 'hookd tenant token' to make a token and its hash" }),
  hooks: z.string({ error: 'expected the path of a hooks folder' }).min(1, { error: 'expected the path of a hooks folder' }),
  limits: tenantLimitsSchema.default({}),
  policy: policySchema.default({ file: 'none', httpOrigins: [], env: [], confirm: true }),
  remoteHooks: remoteHooksSchema,
  onError: z.enum(['default', 'refuse'], { error: 'expected "refuse" (every failed hook refuses gate calls) or "default"' }).default('default'),
  workers: positiveInt.max(MAX_TENANT_WORKERS, { error: `expected at most ${MAX_TENANT_WORKERS} (the tenant's own worker processes)` }).default(1),
  /** Serve only the hooks hookd.lock (beside the tenant's hooks folder) pins (hookd serve --locked). */
  locked: z.boolean({ error: 'expected true or false' }).default(false),
  /** Serve only hooks signed by one of `trustedKeys` (hookd serve --require-signed). */
  requireSigned: z.boolean({ error: 'expected true or false' }).default(false),
  /** A file of trusted ed25519 public keys (PEM), relative to the tenants file's folder. */
  trustedKeys: z.string({ error: 'expected the path of a file of public keys' }).min(1).optional(),
  /** Every hook of the tenant must declare its permissions (hookd serve --require-permissions). */
  requirePermissions: z.boolean({ error: 'expected true (every hook must declare "permissions" in its hook.json) or false' }).default(false),
}).refine((t) => !t.requireSigned || t.trustedKeys !== undefined, { error: '"requireSigned" needs "trustedKeys": the file of public keys whose signatures are trusted', path: ['requireSigned'] })

const fileSchema = z.strictObject({
  tenants: z.array(tenantSchema, { error: 'expected an array of tenants' }),
})


type Issue = z.core.$ZodIssue

/** True when the JSON document has a value at `path` (so that a type issue there is not "missing"). */
function present(json: unknown, path: readonly PropertyKey[]): boolean {
  let at: unknown = json
  for (const key of path) {
    if (at === null || typeof at !== 'object' || !Object.hasOwn(at, key)) return false
    at = (at as Record<PropertyKey, unknown>)[key]
  }
  return at !== undefined
}

function describe(issue: Issue, json: unknown): string {
  const where = issuePath(issue.path) || '(top level)'
  if (issue.code === 'unrecognized_keys') {
    const fields = issue.path.length === 0 ? 'tenants' : issue.path.at(-1) === 'limits' ? Object.keys(tenantLimitsSchema.shape).join(', ') : issue.path.at(-1) === 'policy' ? Object.keys(policySchema.shape).join(', ') : Object.keys(tenantSchema.shape).join(', ')
    return `${where}: unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `'${k}'`).join(', ')} (known fields: ${fields})`
  }
  if (issue.code === 'invalid_type' && !present(json, issue.path)) return `${where}: missing; ${issue.message}`
  return `${where}: ${issue.message}`
}

/** Validates the tenants file's text; `file` resolves relative hooks folders and names the file in errors. */
export function parseTenants(text: string, file: string, folder = dirname(resolve(file))): TenantConfig[] {
  const read = parseJson(text, `tenants file ${file}`, { maxDepth: 16, maxBytes: 16 * 1024 * 1024 })
  if (!read.ok) throw new HookdError('invalid-argument', read.message)
  const json = read.value
  const parsed = fileSchema.safeParse(json)
  if (!parsed.success) {
    const problems = parsed.error.issues.slice(0, 5).map((issue) => describe(issue, json))
    const more = parsed.error.issues.length > 5 ? `; and ${parsed.error.issues.length - 5} more` : ''
    throw new HookdError('invalid-argument', `tenants file ${file}: ${problems.join('; ')}${more}`)
  }
  const base = folder
  const ids = new Map<string, number>()
  const hashes = new Map<string, number>()
  return parsed.data.tenants.map((t, i) => {
    const sameId = ids.get(t.id)
    if (sameId !== undefined) throw new HookdError('invalid-argument', `tenants file ${file}: tenants[${i}].id: '${t.id}' is already the id of tenants[${sameId}]; ids must be unique`)
    ids.set(t.id, i)
    const sameHash = hashes.get(t.tokenHash)
    if (sameHash !== undefined) {
      throw new HookdError(
        'invalid-argument',
        `tenants file ${file}: tenants[${i}].tokenHash: the same as tenants[${sameHash}]'s ('${parsed.data.tenants[sameHash]?.id}'); every tenant needs its own token ('hookd tenant token')`,
      )
    }
    hashes.set(t.tokenHash, i)
    const { concurrentInvocations, invocationsPerSecond, ...given } = t.limits
    const invocation: Partial<Limits> = {}
    for (const [key, value] of Object.entries(given) as Array<[keyof Limits, number | undefined]>) if (value !== undefined) invocation[key] = value
    const limits: TenantLimits = { invocation }
    if (concurrentInvocations !== undefined) limits.concurrentInvocations = concurrentInvocations
    if (invocationsPerSecond !== undefined) limits.invocationsPerSecond = invocationsPerSecond
    return {
      id: t.id,
      tokenHash: t.tokenHash,
      hooks: resolve(base, t.hooks),
      limits,
      policy: { file: t.policy.file, httpOrigins: t.policy.httpOrigins, env: t.policy.env, confirm: t.policy.confirm },
      remoteHooks: t.remoteHooks.map((text) => remotePattern(text, base)),
      onError: t.onError,
      workers: t.workers,
      locked: t.locked,
      requireSigned: t.requireSigned,
      ...(t.trustedKeys !== undefined ? { trustedKeys: resolve(base, t.trustedKeys) } : {}),
      requirePermissions: t.requirePermissions,
    }
  })
}

/** Reads and validates the tenants file. */
export async function readTenants(path: string, file = path): Promise<{ text: string; tenants: TenantConfig[] }> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (err) {
    throw new HookdError('not-found', `cannot read the tenants file ${file}: ${(err as Error).message}; pass --tenants with a JSON file (see docs/tenants.md)`)
  }
  return { text, tenants: parseTenants(text, file, dirname(resolve(path))) }
}
