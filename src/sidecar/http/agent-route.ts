/**
 * Which hooks an agent's requests run, from the URL its hook entry posts to:
 *
 *   /claude-code/guard,audit        these hooks, in this order, with the default profile
 *   /claude-code/profile/strict     the profile `strict.profile.json` in the tenant's hooks folder
 *   /codex/guard, /gemini/..., ...  the same for every agent of src/agents/registry.ts (the grammar:
 *                                   src/agents/route-path.ts)
 *
 * A profile names the hooks and what they may do:
 *
 *   { "hooks": ["guard", "audit"],
 *     "policy": { "file": "read", "httpOrigins": ["https://api.example.com"], "env": ["TEAM"] },
 *     "confirm": "ask" }
 *
 * `confirm` says how `ctx.confirm` is answered: `ask` (default) leaves the question to the agent's own
 * permission prompt (Claude Code's `ask`), `deny` answers no at once, `allow` answers yes at once.
 * `policy.file` defaults to `read`: hooks of the agents' path read the project and write nothing
 * unless a profile opts in with `"file": "read-write"` (and even then never where something outside
 * the sandbox runs what it finds: src/protocol/protected-paths.ts).
 * Profiles are read when a run opens, so an edit applies to the runs that start after it.
 */
import { join } from 'node:path'
import * as z from 'zod'
import { AGENT_IDS } from '../../agents/registry.js'
import { MAX_ROUTE_HOOKS, type RoutePath, parseRoutePath } from '../../agents/route-path.js'
import { parseJson } from '../../protocol/bounded-json.js'
import { HOOK_NAME } from '../../protocol/hook-name.js'
import { issueText } from '../../protocol/issue-text.js'
import { HookdError } from '../../protocol/status.js'
import { FILE_ACCESS, type FileAccess, SESSION_ON_ERROR, type SessionOnError } from '../../protocol/wire.js'
import { readRegularFile } from '../hooks/read-regular-file.js'

export type ConfirmMode = 'ask' | 'allow' | 'deny'

export interface Profile {
  hooks: string[]
  policy: { file: FileAccess; httpOrigins: string[]; env: string[] }
  confirm: ConfirmMode
  /**
   * What a hook's failure does at a gate (session OnError). Default `refuse-unless-skip`: a guard's own
   * bug refuses the agent's call, unless the hook's hook.json says "onError": "skip".
   */
  onError: SessionOnError
}

/** A parsed route: the agent (one of the registry's, src/agents/registry.ts), and where its hooks come from. */
export type AgentRoute = RoutePath

const MAX_PROFILE_BYTES = 64 * 1024

const profileSchema = z.strictObject({
  hooks: z.array(z.string().regex(HOOK_NAME, 'is not a hook name (letters, digits, ".", "_", "-")')).max(MAX_ROUTE_HOOKS),
  policy: z
    .strictObject({
      file: z.enum(FILE_ACCESS).optional(),
      httpOrigins: z.array(z.string().max(2048)).max(64).optional(),
      env: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'is not an environment variable name')).max(64).optional(),
    })
    .optional(),
  confirm: z.enum(['ask', 'allow', 'deny']).optional(),
  onError: z.enum(SESSION_ON_ERROR).optional(),
})

/** The route a request path names, or undefined when it names none (404). Throws for a bad hook list. */
export function parseAgentRoute(path: string): AgentRoute | undefined {
  return parseRoutePath(path, AGENT_IDS)
}

/** What a profile's hooks may do with files when it does not say: read the workdir, write nothing. */
export const DEFAULT_FILE_ACCESS: FileAccess = 'read'

/** The default profile of a hook list in the URL: files read-only in the workdir, no HTTP, no env, confirm asks. */
export function defaultProfile(hooks: string[]): Profile {
  return { hooks, policy: { file: DEFAULT_FILE_ACCESS, httpOrigins: [], env: [] }, confirm: 'ask', onError: 'refuse-unless-skip' }
}

/** The route's profile: the URL's hook list, or `<hooksRoot>/<name>.profile.json`. */
export async function resolveProfile(route: AgentRoute, hooksRoot: string): Promise<Profile> {
  if ('hooks' in route.source) return defaultProfile(route.source.hooks)
  const file = join(hooksRoot, `${route.source.profile}.profile.json`)
  // The hooks folder is untrusted: a profile is a regular file there, not a link to elsewhere.
  const read = await readRegularFile(file, MAX_PROFILE_BYTES)
  if (!read.ok) {
    const why = read.reason === 'missing' ? 'no such file' : read.why
    throw new HookdError('not-found', `profile '${route.source.profile}' cannot be read (${why}): create ${route.source.profile}.profile.json in the hooks folder, or list hooks in the URL`)
  }
  const text = read.text
  const what = `profile ${route.source.profile}.profile.json`
  const json = parseJson(text, what, { maxBytes: MAX_PROFILE_BYTES, maxDepth: 8 })
  if (!json.ok) throw new HookdError('invalid-argument', json.message)
  const parsed = profileSchema.safeParse(json.value)
  if (!parsed.success) throw new HookdError('invalid-argument', issueText(parsed.error, what))
  const p = parsed.data
  return {
    hooks: p.hooks,
    policy: { file: p.policy?.file ?? DEFAULT_FILE_ACCESS, httpOrigins: p.policy?.httpOrigins ?? [], env: p.policy?.env ?? [] },
    confirm: p.confirm ?? 'ask',
    onError: p.onError ?? 'refuse-unless-skip',
  }
}
