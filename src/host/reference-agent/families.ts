/**
 * How the two hook families share the agent's steps without a handler running twice.
 *
 * Where a step point defines a step (beforeRun, beforeModelRequest, afterModelResponse, beforeToolExecute,
 * afterToolExecute, afterRun), the loop calls that step point itself; every other step is an event
 * point fired on the hookable instance and forwarded to hookd by the bridge. Five event points cover a
 * step too (the alias table: tool:gate, tool:transform, system:transform, agent:start,
 * agent:done), and hookd serves them with step handlers when a hook lacks the event one. Forwarding
 * such a point while some declared hook handles its step only under the step name would run that
 * step handler a second time, so the bridge forwards a covered event point only when no declared
 * hook would serve it through the alias. A hook that names the event point itself next to such a
 * hook is reported at start, with what to change.
 */
import { POINT_NAMES, getPoint } from '../../protocol/points/points.js'

export interface HookExports {
  name: string
  /** The point names the hook exports. */
  points: readonly string[]
}

export interface BridgePlan {
  /** Covered event points the bridge must not forward. */
  withheld: ReadonlySet<string>
  /** One line per event handler that will not run, saying why and what to do. */
  warnings: string[]
}

/** event point -> the step point that covers the same step, from the catalog's alias table. */
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
 * Decides which covered event points the bridge forwards, given the declared hooks' exports. Without
 * them (hookd not reached), nothing covered is forwarded: the step calls cover those steps, and the
 * step gate fails closed on its own.
 */
export function planBridge(declared: readonly HookExports[] | undefined): BridgePlan {
  const covered = coveredPoints()
  if (!declared) return { withheld: new Set(covered.keys()), warnings: [] }
  const withheld = new Set<string>()
  const warnings: string[] = []
  for (const [eventName, stepName] of covered) {
    const stepOnly = declared.filter((h) => h.points.includes(stepName) && !h.points.includes(eventName))
    if (!stepOnly.length) continue
    withheld.add(eventName)
    const direct = declared.filter((h) => h.points.includes(eventName))
    if (direct.length) {
      warnings.push(
        `${direct.length > 1 ? 'hooks' : 'hook'} ${names(direct)} handle${direct.length > 1 ? '' : 's'} ${eventName}, which does not run in this agent: ` +
          `${names(stepOnly)} handle${stepOnly.length > 1 ? '' : 's'} the same step as ${stepName} only, and forwarding ${eventName} would run that ` +
          `${stepName} handler a second time. Give ${names(direct)} a ${stepName} handler instead, or give ${names(stepOnly)} a ${eventName} handler too.`,
      )
    }
  }
  return { withheld, warnings }
}
