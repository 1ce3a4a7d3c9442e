/**
 * The hookable bridge: moves a hookable host's hooks into hookd without changing their meaning.
 * For every point some declared hook handles (directly or through its step alias), it registers one
 * forwarding handler on the host's hookable instance. The handler sends the serializable part of the
 * hook context, waits for the chained answer and applies the returned changes to the live context
 * object, in registration order, so "awaited in order, last write wins" holds. Points nobody handles
 * get no handler and cost nothing.
 */
import type { Diagnostic } from '../protocol/diagnostic.js'
import { type PointName, getPoint, isPointName } from '../protocol/points/points.js'
import type { PointCallResult } from './client.js'

/** The part of hookable the bridge uses: `hook(name, fn)` returning its unregister function. */
export interface HookableLike {
  hook(name: string, handler: (context: Record<string, unknown>) => unknown): () => void
}

/** What the bridge forwards to: a HostSession or a GuardedSession. */
export interface BridgeTarget {
  call<N extends PointName>(point: N, payload: never): Promise<PointCallResult<N>>
  subscribedPoints(): ReadonlySet<string>
  onResubscribe?(listener: () => void): () => void
}

export interface BridgeOptions {
  /** Send observer points without waiting for hookd's answer. Default false. */
  fireAndForgetObservers?: boolean
  /** Every diagnostic in the answers (hook failures, dropped fields, unavailability). */
  onDiagnostic?(d: Diagnostic): void
}

/** The JSON-safe copy of a context: functions dropped, cycles cut, bigints as strings. */
export function serializableContext(context: Record<string, unknown>): Record<string, unknown> {
  const seen = new WeakSet<object>()
  const text = JSON.stringify(context, (_key, value: unknown) => {
    if (typeof value === 'function' || typeof value === 'symbol') return undefined
    if (typeof value === 'bigint') return value.toString()
    if (value !== null && typeof value === 'object') {
      if (seen.has(value)) return undefined
      seen.add(value)
    }
    return value
  })
  return JSON.parse(text ?? '{}') as Record<string, unknown>
}

/** Applies changed fields to the live context; arrays are replaced in place, as hooks that splice expect. */
export function applyChanges(context: Record<string, unknown>, changes: Record<string, unknown>): void {
  for (const [field, value] of Object.entries(changes)) {
    const current = context[field]
    if (Array.isArray(current) && Array.isArray(value)) current.splice(0, current.length, ...(value as unknown[]))
    else context[field] = value
  }
}

/** Registers the forwarding handlers; returns one function that unregisters everything. */
export function bridgeHookable(hooks: HookableLike, session: BridgeTarget, options: BridgeOptions = {}): () => void {
  let unregister: Array<() => void> = []

  const register = (): void => {
    for (const off of unregister) off()
    unregister = []
    for (const name of session.subscribedPoints()) {
      const point = getPoint(name)
      if (!point || point.family !== 'event' || !isPointName(name)) continue
      const observer = Object.keys(point.fields).length === 0
      unregister.push(
        hooks.hook(name, async (context) => {
          const sent = session.call(name, serializableContext(context) as never)
          if (observer && options.fireAndForgetObservers) {
            sent.then((r) => r.diagnostics.forEach((d) => options.onDiagnostic?.(d)), () => {})
            return
          }
          const answer = await sent
          for (const d of answer.diagnostics) options.onDiagnostic?.(d)
          applyChanges(context, answer.result as Record<string, unknown>)
        }),
      )
    }
  }

  register()
  const stopWatching = session.onResubscribe?.(register)
  return () => {
    stopWatching?.()
    for (const off of unregister) off()
    unregister = []
  }
}
