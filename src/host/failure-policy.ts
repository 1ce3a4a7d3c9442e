/**
 * What a host does when hookd cannot answer a point in time: fail closed (refuse the call, the default
 * for gates) or fail open (leave everything as it was, the default for observers and transforms). The
 * outcome is built from the point catalog, so it has exactly the shape a real answer would have.
 */
import type { Diagnostic } from '../protocol/diagnostic.js'
import { type AnyPoint, GATE_POINTS, type PointName, getPoint, isGate } from '../protocol/points/points.js'

export type FailureMode = 'closed' | 'open'

export interface PointFailurePolicy {
  mode?: FailureMode
  /** How long to wait for hookd's answer, not counting time a human spends answering ctx.confirm. */
  deadlineMs?: number
}

export interface FailurePolicy {
  /** Default deadline for every point. Default 5000 ms. */
  deadlineMs?: number
  /** Per-point overrides. */
  points?: Partial<Record<PointName, PointFailurePolicy>>
}

export const DEFAULT_DEADLINE_MS = 5000

export function modeFor(point: string, policy: FailurePolicy = {}): FailureMode {
  return policy.points?.[point as PointName]?.mode ?? ((GATE_POINTS as readonly string[]).includes(point) ? 'closed' : 'open')
}

export function deadlineFor(point: string, policy: FailurePolicy = {}): number {
  return policy.points?.[point as PointName]?.deadlineMs ?? policy.deadlineMs ?? DEFAULT_DEADLINE_MS
}

/**
 * The result the host acts on when hookd could not answer: for a closed gate, a refusal whose reason
 * says hookd could not answer and why; otherwise the payload's own values, unchanged.
 */
export function failureResult(point: AnyPoint, payload: unknown, mode: FailureMode, why: string): { result: unknown; diagnostic: Diagnostic } {
  let state: unknown = point.payload.parse(payload)
  const reason = `hookd could not answer ${point.name}: ${why}`
  if (mode === 'closed' && isGate(point)) state = point.refuse(state, reason, 'hookd')
  const decided = mode === 'closed' ? 'the call was refused (fail closed)' : 'nothing was changed (fail open)'
  return {
    result: point.result(state),
    diagnostic: { hook: '', point: point.name, kind: 'unavailable', message: `${reason}; ${decided}` },
  }
}

export function requirePoint(name: string): AnyPoint {
  const point = getPoint(name)
  if (!point) throw new TypeError(`unknown hook point '${name}'`)
  return point
}
