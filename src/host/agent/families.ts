/**
 * How the two hook families share the agent's steps without a handler running twice.
 *
 * Where rienda defines a step (beforeRun, beforeModelRequest, afterModelResponse, beforeToolExecute,
 * afterToolExecute, afterRun), the loop calls that rienda point itself; every other step is a zidane
 * point fired on the hookable instance and forwarded to hookd by the bridge. Five zidane points cover a
 * rienda step too (the alias table: tool:gate, tool:transform, system:transform, agent:start,
 * agent:done), and hookd serves them with rienda handlers when a hook lacks the zidane one. Forwarding
 * such a point while some declared hook handles its step only under the rienda name would run that
 * rienda handler a second time, so the bridge forwards a covered zidane point only when no declared
 * hook would serve it through the alias. A hook that names the zidane point itself next to such a
 * hook is reported at start, with what to change.
 */
import { POINT_NAMES, getPoint } from '../../protocol/points.js'

export interface HookExports {
  name: string
  /** The point names the hook exports. */
  points: readonly string[]
}

export interface BridgePlan {
  /** Covered zidane points the bridge must not forward. */
  withheld: ReadonlySet<string>
  /** One line per zidane handler that will not run, saying why and what to do. */
  warnings: string[]
}

/** zidane point -> the rienda point that covers the same step, from the catalog's alias table. */
export function coveredPoints(): Map<string, string> {
  const covered = new Map<string, string>()
  for (const name of POINT_NAMES) {
    const alias = getPoint(name)?.alias
    if (alias) covered.set(name, alias.point)
  }
  return covered
}

const names = (hooks: readonly HookExports[]): string => hooks.map((h) => `'${h.name}'`).join(', ')

/**
 * Decides which covered zidane points the bridge forwards, given the declared hooks' exports. Without
 * them (hookd not reached), nothing covered is forwarded: the rienda calls cover those steps, and the
 * rienda gate fails closed on its own.
 */
export function planBridge(declared: readonly HookExports[] | undefined): BridgePlan {
  const covered = coveredPoints()
  if (!declared) return { withheld: new Set(covered.keys()), warnings: [] }
  const withheld = new Set<string>()
  const warnings: string[] = []
  for (const [zidane, rienda] of covered) {
    const riendaOnly = declared.filter((h) => h.points.includes(rienda) && !h.points.includes(zidane))
    if (!riendaOnly.length) continue
    withheld.add(zidane)
    const direct = declared.filter((h) => h.points.includes(zidane))
    if (direct.length) {
      warnings.push(
        `${direct.length > 1 ? 'hooks' : 'hook'} ${names(direct)} handle${direct.length > 1 ? '' : 's'} ${zidane}, which does not run in this agent: ` +
          `${names(riendaOnly)} handle${riendaOnly.length > 1 ? '' : 's'} the same step as ${rienda} only, and forwarding ${zidane} would run that ` +
          `${rienda} handler a second time. Give ${names(direct)} a ${rienda} handler instead, or give ${names(riendaOnly)} a ${zidane} handler too.`,
      )
    }
  }
  return { withheld, warnings }
}
