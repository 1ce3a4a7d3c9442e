/**
 * A hook's declared permissions: hook.json's `"permissions"` block, what it may touch (files, HTTP
 * origins, env names, confirm, notify) and what it may decide (refuse a call, rewrite a tool's
 * arguments, rewrite results, rewrite the model's text, add context). The sidecar enforces the
 * intersection of these and the session's (tenant's, profile's) policy: each capability record
 * (capabilities.ts) names the permission it needs, and each point's fields name the decision they make
 * (points/field-decisions.ts). A hook without the block gets what the session allows, as before.
 *
 * This file is the schema (strict, bounded), its parsed form, and `widenedPermissions`, which says what
 * a new version may do that an older one could not: what a lock file (or a person) must approve again.
 * It imports nothing of hookd's but protocol/, so the CLI, the sidecar and the worker all read it.
 */
import * as z from 'zod'
import type { FileAccess } from './wire.js'

/** The most path globs, origins, env names and tool names a block may list, and how long each may be. */
export const MAX_PATH_GLOBS = 32
export const MAX_GLOB_CHARS = 256
/**
 * The most wildcards (`*`, `**`, `?`) one glob may hold: matching a path costs its length times the
 * states the wildcards keep alive, on the sidecar's main thread at every file call, so a glob of 128
 * stars (half a second for 32 such globs against a long path, measured) is refused at load.
 */
export const MAX_GLOB_WILDCARDS = 8
export const MAX_ORIGINS = 32
export const MAX_ORIGIN_CHARS = 256
export const MAX_ENV_NAMES = 64
export const MAX_ENV_NAME_CHARS = 128
export const MAX_TOOL_NAMES = 32
export const MAX_TOOL_NAME_CHARS = 64

/** Every tool: `"rewriteArguments": ["*"]`. */
export const ANY_TOOL = '*'

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/
const TOOL_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.:/-]*$/

function bounded<T extends z.ZodType>(item: T, what: string, max: number) {
  return z.array(item).max(max, `at most ${max} ${what}`)
}

/** A path glob inside the workdir: relative, no `..` segment, no NUL; `*`, `**` and `?` as in .gitignore. */
const pathGlob = z
  .string()
  .min(1, 'a path glob is required')
  .max(MAX_GLOB_CHARS, `a path glob is at most ${MAX_GLOB_CHARS} characters`)
  .refine((g) => !g.includes('\0'), 'a path glob may not contain a NUL byte')
  .refine((g) => !g.startsWith('/') && !/^[A-Za-z]:[\\/]/.test(g), 'a path glob is relative to the workdir, not absolute')
  .refine((g) => !g.split(/[\\/]/).includes('..'), "a path glob stays inside the workdir: no '..' segment")
  .refine((g) => (g.match(/\*\*|\*|\?/g) ?? []).length <= MAX_GLOB_WILDCARDS, `a path glob holds at most ${MAX_GLOB_WILDCARDS} wildcards ('*', '**', '?')`)

/** An HTTP origin, scheme://host[:port], normalised as URL.origin gives it. */
const origin = z
  .string()
  .max(MAX_ORIGIN_CHARS, `an origin is at most ${MAX_ORIGIN_CHARS} characters`)
  .transform((text, ctx) => {
    const normal = normalOrigin(text)
    if (normal === undefined) {
      ctx.addIssue({ code: 'custom', message: `${JSON.stringify(text.slice(0, 64))} is not an origin; write scheme://host[:port], e.g. "https://api.example.com"` })
      return z.NEVER
    }
    return normal
  })

const envName = z
  .string()
  .max(MAX_ENV_NAME_CHARS, `an env name is at most ${MAX_ENV_NAME_CHARS} characters`)
  .regex(ENV_NAME, 'an env name is letters, digits and _, not starting with a digit')

const toolName = z
  .string()
  .max(MAX_TOOL_NAME_CHARS, `a tool name is at most ${MAX_TOOL_NAME_CHARS} characters`)
  .refine((t) => t === ANY_TOOL || TOOL_NAME.test(t), `a tool name is a canonical tool (shell, write_file, ...) or "${ANY_TOOL}" for every tool`)

const flag = z.boolean({ error: 'expected true or false' })

/** What a hook may decide; each absent or false is not permitted. */
export const decideSchema = z.strictObject({
  /** Refuse a call at a gate (`allow: false`, `block: true`, with its reason). */
  refuse: flag.optional(),
  /** Approve what the agent would ask its person (a permission dialog's `allow`: permission:request). */
  approve: flag.optional(),
  /** Rewrite the arguments of these tools (canonical names at the front door; `"*"`: every tool). */
  rewriteArguments: bounded(toolName, 'tool names', MAX_TOOL_NAMES).optional(),
  /** Rewrite what a tool returned (afterToolExecute, tool:transform, ...). */
  rewriteResults: flag.optional(),
  /** Rewrite the model's text: the system prompt, the conversation, the model's own answer. */
  rewriteModelText: flag.optional(),
  /** Add to the system prompt or the conversation without changing what is there (the agents' additionalContext). */
  addContext: flag.optional(),
})

/** hook.json `"permissions"`. */
export const permissionsSchema = z
  .strictObject({
    /** ctx.file: none (the default), read, or read-write. */
    files: z.enum(['none', 'read', 'read-write'], { error: 'expected "none", "read" or "read-write"' }).optional(),
    /** Only these paths (globs relative to the workdir); absent: anywhere the session allows. */
    paths: bounded(pathGlob, 'path globs', MAX_PATH_GLOBS).optional(),
    /** ctx.http.fetch: only these origins. */
    origins: bounded(origin, 'origins', MAX_ORIGINS).optional(),
    /** ctx.env: only these names. */
    env: bounded(envName, 'env names', MAX_ENV_NAMES).optional(),
    /** ctx.confirm. */
    confirm: flag.optional(),
    /** ctx.notify. */
    notify: flag.optional(),
    /** The decisions it may make. */
    decide: decideSchema.optional(),
  })
  .refine((p) => p.paths === undefined || (p.files !== undefined && p.files !== 'none'), {
    message: '"paths" narrows file access: give "files": "read" or "read-write" with it',
    path: ['paths'],
  })

/** The decisions, named as hook.json writes them. */
export type DecisionName = keyof z.output<typeof decideSchema>
export const DECISION_NAMES: readonly DecisionName[] = ['refuse', 'approve', 'rewriteArguments', 'rewriteResults', 'rewriteModelText', 'addContext']

/** What a hook may decide, parsed: every flag present, tools deduplicated and sorted. */
export interface HookDecisions {
  refuse: boolean
  approve: boolean
  /** Tool names; `["*"]` for every tool. */
  rewriteArguments: readonly string[]
  rewriteResults: boolean
  rewriteModelText: boolean
  addContext: boolean
}

/** A permissions block, parsed: what is not written is not permitted. */
export interface HookPermissions {
  files: FileAccess
  /** Path globs the file access is limited to; undefined: anywhere the session allows. */
  paths: readonly string[] | undefined
  /** Normalised origins ("https://api.example.com"), sorted. */
  origins: readonly string[]
  env: readonly string[]
  confirm: boolean
  notify: boolean
  decide: HookDecisions
}

/** Nothing at all: a hook that only observes. */
export const NO_PERMISSIONS: HookPermissions = {
  files: 'none',
  paths: undefined,
  origins: [],
  env: [],
  confirm: false,
  notify: false,
  decide: { refuse: false, approve: false, rewriteArguments: [], rewriteResults: false, rewriteModelText: false, addContext: false },
}

const sortedSet = (items: readonly string[] | undefined): string[] => [...new Set(items ?? [])].sort()

/** The parsed form of a validated block. */
export function hookPermissions(block: z.output<typeof permissionsSchema>): HookPermissions {
  const d = block.decide ?? {}
  const tools = sortedSet(d.rewriteArguments)
  return {
    files: block.files ?? 'none',
    paths: block.paths === undefined ? undefined : sortedSet(block.paths),
    origins: sortedSet(block.origins),
    env: sortedSet(block.env),
    confirm: block.confirm === true,
    notify: block.notify === true,
    decide: {
      refuse: d.refuse === true,
      approve: d.approve === true,
      rewriteArguments: tools.includes(ANY_TOOL) ? [ANY_TOOL] : tools,
      rewriteResults: d.rewriteResults === true,
      rewriteModelText: d.rewriteModelText === true,
      addContext: d.addContext === true,
    },
  }
}

/** Validates and parses a block as it arrives (hook.json's, a lock file's); the zod error when it does not fit. */
export function parsePermissions(raw: unknown): { ok: true; permissions: HookPermissions } | { ok: false; error: z.ZodError } {
  const read = permissionsSchema.safeParse(raw)
  return read.success ? { ok: true, permissions: hookPermissions(read.data) } : { ok: false, error: read.error }
}

/** True when `tool`'s arguments may be rewritten. */
export function mayRewrite(decide: HookDecisions, tool: string): boolean {
  return decide.rewriteArguments.includes(ANY_TOOL) || decide.rewriteArguments.includes(tool)
}

const FILE_RANK: Record<FileAccess, number> = { none: 0, read: 1, 'read-write': 2 }

/**
 * What `next` may do that `locked` may not, one phrase each ("reads and writes files (was: reads)",
 * "fetches from https://x.example"); empty when `next` asks for nothing more. `undefined` is a hook
 * without a permissions block, which may do whatever the session allows: from one, nothing is wider;
 * to one, everything is.
 */
export function widenedPermissions(locked: HookPermissions | undefined, next: HookPermissions | undefined): string[] {
  if (locked === undefined) return []
  if (next === undefined) return ['declares no permissions, so it may do whatever the session allows']
  const out: string[] = []
  if (FILE_RANK[next.files] > FILE_RANK[locked.files]) out.push(`${fileWords(next.files)} (was: ${fileWords(locked.files)})`)
  if (next.files !== 'none') {
    const before = locked.files === 'none' ? [] : locked.paths
    if (next.paths === undefined && before !== undefined) out.push('files anywhere in the workdir the session allows (was: only ' + listed(before) + ')')
    else if (next.paths !== undefined) {
      const added = before === undefined ? [] : next.paths.filter((g) => !before.includes(g))
      if (added.length) out.push(`file paths ${listed(added)}`)
    }
  }
  const origins = next.origins.filter((o) => !locked.origins.includes(o))
  if (origins.length) out.push(`fetches from ${listed(origins)}`)
  const env = next.env.filter((e) => !locked.env.includes(e))
  if (env.length) out.push(`reads env ${listed(env)}`)
  if (next.confirm && !locked.confirm) out.push('asks the person (ctx.confirm)')
  if (next.notify && !locked.notify) out.push('notifies the person (ctx.notify)')
  const was = locked.decide
  const now = next.decide
  if (now.refuse && !was.refuse) out.push('refuses calls')
  if (now.approve && !was.approve) out.push("approves calls the agent would ask its person about")
  if (now.rewriteArguments.includes(ANY_TOOL) && !was.rewriteArguments.includes(ANY_TOOL)) out.push("rewrites every tool's arguments")
  else {
    const tools = now.rewriteArguments.filter((t) => !mayRewrite(was, t))
    if (tools.length) out.push(`rewrites the arguments of ${listed(tools)}`)
  }
  if (now.rewriteResults && !was.rewriteResults) out.push("rewrites tools' results")
  if (now.rewriteModelText && !was.rewriteModelText) out.push("rewrites the model's text (system prompt, messages, answers)")
  if (now.addContext && !was.addContext && !was.rewriteModelText) out.push("adds context to the model's text")
  return out
}

/**
 * A block in one line, for `hookd list`, `hookd check` and the audit log: "files read (src/**);
 * origins https://a.example; env A; confirm; decides refuse, rewriteArguments shell". What it does not
 * name, the hook may not do; a block that names nothing reads "nothing: it only observes".
 */
export function describePermissions(p: HookPermissions): string {
  const parts: string[] = []
  if (p.files !== 'none') parts.push(`files ${p.files}${p.paths ? ` (${listed(p.paths)})` : ''}`)
  if (p.origins.length) parts.push(`origins ${listed(p.origins)}`)
  if (p.env.length) parts.push(`env ${listed(p.env)}`)
  if (p.confirm) parts.push('confirm')
  if (p.notify) parts.push('notify')
  const d = p.decide
  const decides = [
    d.refuse ? 'refuse' : undefined,
    d.approve ? 'approve' : undefined,
    d.rewriteArguments.length ? `rewriteArguments ${d.rewriteArguments.join(' ')}` : undefined,
    d.rewriteResults ? 'rewriteResults' : undefined,
    d.rewriteModelText ? 'rewriteModelText' : undefined,
    d.addContext ? 'addContext' : undefined,
  ].filter((x) => x !== undefined)
  if (decides.length) parts.push(`decides ${decides.join(', ')}`)
  return parts.length ? parts.join('; ') : 'nothing: it only observes'
}

function fileWords(access: FileAccess): string {
  return access === 'read-write' ? 'reads and writes files' : access === 'read' ? 'reads files' : 'no file access'
}

function listed(items: readonly string[]): string {
  const shown = items.slice(0, 8).join(', ')
  return items.length > 8 ? `${shown} and ${items.length - 8} more` : shown
}

/** "HTTP://Example.com:80" -> "http://example.com"; undefined when the text is not exactly an origin. */
export function normalOrigin(text: string): string | undefined {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return undefined
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined
  if (url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== '')) return undefined
  if (/[?#]/.test(text) || /^[a-z]+:\/\/[^/]+\/./i.test(text)) return undefined
  return url.origin
}
