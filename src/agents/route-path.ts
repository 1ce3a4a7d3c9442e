/**
 * The grammar of an agent's front-door routes, the part of the URL after the origin:
 *
 *   /AGENT/guard,audit        these hooks, in this order (the route's profile is the default one)
 *   /AGENT/profile/strict     the hooks and policy of the profile `strict.profile.json`
 *
 * AGENT is an agent's id (registry.ts). The front door reads routes with it (sidecar/http/agent-route.ts,
 * which also reads the profiles), and setup and init write them and read them back
 * (settings/hookd-command.ts), so both sides agree on one grammar.
 */
import { HOOK_NAME } from '../protocol/hook-name.js'
import { HookdError } from '../protocol/status.js'

/** The most hooks one route lists. */
export const MAX_ROUTE_HOOKS = 32

/** A parsed route: the agent, and where its hooks come from. */
export interface RoutePath {
  agent: string
  /** The route's own text after the agent (`guard,audit` or `profile/strict`). */
  channel: string
  source: { hooks: string[] } | { profile: string }
}

/**
 * The route `path` names for one of `agents`, or undefined when its first segment names none of them
 * (404). A HookdError (invalid-argument) for a bad hook list or profile name.
 */
export function parseRoutePath(path: string, agents: readonly string[]): RoutePath | undefined {
  const parts = path.split('/').slice(1)
  const agent = agents.find((a) => a === parts[0])
  if (agent === undefined) return undefined
  const rest = parts.slice(1)
  if (rest.length === 2 && rest[0] === 'profile') {
    const name = rest[1] as string
    if (!HOOK_NAME.test(name)) throw new HookdError('invalid-argument', `'${name}' is not a profile name (letters, digits, ".", "_", "-")`)
    return { agent, channel: `profile/${name}`, source: { profile: name } }
  }
  if (rest.length !== 1 || !rest[0]) {
    throw new HookdError('invalid-argument', `the path ${path} names no hooks; post to /${agent}/HOOK[,HOOK...] or /${agent}/profile/NAME`)
  }
  const hooks = (rest[0] as string).split(',')
  for (const name of hooks) {
    if (!HOOK_NAME.test(name)) throw new HookdError('invalid-argument', `'${name}' in ${path} is not a hook name (letters, digits, ".", "_", "-"); list hooks separated by commas`)
  }
  if (hooks.length > MAX_ROUTE_HOOKS) throw new HookdError('invalid-argument', `${path} lists ${hooks.length} hooks; at most ${MAX_ROUTE_HOOKS}`)
  return { agent, channel: hooks.join(','), source: { hooks } }
}
