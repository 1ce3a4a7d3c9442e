/**
 * Which tool calls a route's hooks care about, and the agent's own condition that keeps the rest from
 * reaching hookd: hook.json "tools" (src/sidecar/hooks/hook-files.ts) lists a hook's canonical tools;
 * the route's tools are the union over its hooks that serve a tool call's point, and none (every tool)
 * as soon as one of them lists none, or its points are unknown (a hook that does not load). `hookd
 * setup` turns them into the agent's matcher from its tool table: the native tools that map to them.
 * The sidecar skips a hook for a call it did not list whatever the agent sends (step-planner.ts).
 */
import { servedPoints } from '../protocol/points/points.js'
import type { ToolTable } from './tool-mapping.js'

/** The points whose payload is one tool call, as the agents' events reach them. */
const TOOL_POINTS: ReadonlySet<string> = new Set(['beforeToolExecute', 'afterToolExecute', 'permission:request'])

/** One hook of a route, as the sidecar describes it. */
export interface RouteHook {
  /** The points it serves; empty when it did not load (unknown). */
  points: readonly string[]
  status?: string
  /** hook.json "tools"; absent: every tool. */
  tools?: readonly string[] | undefined
}

/** The canonical tools the route's hooks are called for, or undefined for every tool. */
export function routeTools(hooks: readonly RouteHook[]): ReadonlySet<string> | undefined {
  const tools = new Set<string>()
  for (const hook of hooks) {
    if (hook.status === 'broken') return undefined
    const served = servedPoints(new Set(hook.points))
    if (!served.some((p) => TOOL_POINTS.has(p))) continue
    if (hook.tools === undefined) return undefined
    for (const t of hook.tools) tools.add(t)
  }
  return tools
}

/** The agent's native tools that read as one of `tools` (a codec's tool when any of its reads is one), in table order. */
export function nativeTools(table: ToolTable, tools: ReadonlySet<string>): string[] {
  return table.mappings.filter((m) => ('reads' in m ? m.reads.some((r) => tools.has(r)) : tools.has(m.canonical))).map((m) => m.native)
}

/**
 * A matcher naming exactly `natives`: `Bash|Write`, which Claude Code reads as a list of exact names
 * (a matcher of letters, digits, `_` and `|` alone); a name with any other character makes it an
 * anchored regular expression with the names escaped, `^(?:a\.b|c)$`, which Gemini CLI reads too.
 */
export function nameList(natives: readonly string[]): string {
  return natives.every((n) => /^[A-Za-z0-9_]+$/.test(n)) ? natives.join('|') : anchoredNames(natives)
}

/**
 * A matcher naming exactly `natives` as an anchored regular expression, `^(?:run_shell_command|write_file)$`:
 * Gemini CLI 0.61.0 tests its matcher as an unanchored `new RegExp(matcher)` against the tool's name
 * (bundle's matchesToolName), so a bare list would also match longer names.
 */
export function anchoredNames(natives: readonly string[]): string {
  return `^(?:${natives.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})$`
}
