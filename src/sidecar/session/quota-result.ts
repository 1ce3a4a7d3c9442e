/**
 * The answer to a Session point call that its tenant's quotas did not admit: no hook runs; a gate
 * refuses the call with the quota as its reason (so being over quota never lets a tool call past its
 * guards); any other point comes back unchanged, as when a host's failure policy answers for an absent
 * sidecar. Every hook that would have run is traced `not-run`, and a `quota` diagnostic says why.
 */
import type { Diagnostic } from '../../protocol/diagnostic.js'
import { type AnyPoint, handlerFor, isGate } from '../../protocol/points/points.js'
import type { HookTrace, PointResultData } from '../../protocol/wire.js'
import type { LoadedHook } from '../hooks/registry.js'

export function quotaResult(point: AnyPoint, seq: number, payload: unknown, hooks: readonly LoadedHook[], message: string): PointResultData {
  const gate = isGate(point)
  const state = gate ? point.refuse(payload, message, 'hookd') : payload
  const decided = gate ? 'no hook ran and the call was refused' : 'no hook ran and nothing was changed'
  const diagnostic: Diagnostic = { hook: '', point: point.name, kind: 'quota', message: `${message}; ${decided}` }
  const trace: HookTrace[] = hooks
    .filter((h) => handlerFor(point, h.points))
    .map((h) => ({ hook: h.name, version: h.version, outcome: 'not-run', durationUs: 0, cpuUs: 0 }))
  return { seq, point: point.name, result: point.result(state), diagnostics: [diagnostic], trace, durationUs: 0 }
}
