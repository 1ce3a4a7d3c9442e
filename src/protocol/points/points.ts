/**
 * The point catalog: every hook point hookd knows, with its payload schema, the fields a hook may
 * return, how a return merges into the chain's value, and the chain's final result. Host library,
 * sidecar, CLI and tests all read this table; nothing else lists points.
 *
 * Two families: the step points of an agent's run loop (step-points.ts), whose handlers return what they
 * change, and the event points of a hookable host (event-points.ts) and of the agents' own moments
 * (agent-points.ts: permission dialogs, subagents, compaction, ...), whose handlers mutate the event
 * they are given. A step-point handler also serves the event point that aliases it (tool:gate <-
 * beforeToolExecute, ...), so one hook serves both kinds of host.
 */
import type * as z from 'zod'
import { agentPoints } from './agent-points.js'
import { eventPoints } from './event-points.js'
import type { PointSpec } from './point-spec.js'
import { stepPoints } from './step-points.js'

export type { Alias, PointSpec, StepPointName } from './point-spec.js'
export { AGENT_POINT_NAMES, type AgentPointName, isAgentPointName } from './agent-points.js'
export { stepPoints }

export const points = { ...stepPoints, ...eventPoints(), ...agentPoints() } as const

export type Points = typeof points
export type PointName = keyof Points
/** What a host sends for a point. */
export type PointPayload<N extends PointName> = z.input<Points[N]['payload']>
/** What a host receives at the end of a point's chain. */
export type PointOutput<N extends PointName> = z.output<Points[N]['output']>

/** A point with its types erased, for code that handles every point alike. */
export type AnyPoint = PointSpec<unknown, unknown, Record<string, unknown>, unknown>

export const POINT_NAMES = Object.keys(points) as PointName[]

export function isPointName(name: string): name is PointName {
  return Object.hasOwn(points, name)
}

export function getPoint(name: string): AnyPoint | undefined {
  return isPointName(name) ? (points[name] as unknown as AnyPoint) : undefined
}

/** The export a hook uses to serve `point`, given its exports: the point itself, or the step point it aliases. */
export function handlerFor(point: AnyPoint, exported: ReadonlySet<string>): string | undefined {
  if (exported.has(point.name)) return point.name
  if (point.alias && exported.has(point.alias.point)) return point.alias.point
  return undefined
}

/** Every point a hook with these exports serves, directly or through an alias, in catalog order. */
export function servedPoints(exported: ReadonlySet<string>): PointName[] {
  return POINT_NAMES.filter((name) => handlerFor(points[name] as unknown as AnyPoint, exported) !== undefined)
}

/** True when hookd refuses the call itself when it cannot let the point's hooks decide (see PointSpec.refuse). */
export function isGate(point: AnyPoint): point is AnyPoint & { refuse: NonNullable<AnyPoint['refuse']> } {
  return point.refuse !== undefined
}

/** The gate points' names. */
export const GATE_POINTS: readonly PointName[] = POINT_NAMES.filter((name) => isGate(points[name] as unknown as AnyPoint))
