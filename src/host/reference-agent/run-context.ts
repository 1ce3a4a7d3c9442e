/**
 * What every step of a run shares: the hook port (step points), the hookable instance (event
 * points), the UI, the tools and the run's abort signal. Waiting on hookd or on a hook never outlives
 * an interrupt: `call` and `fire` give up as soon as the run is aborted.
 */
import type { Hookable } from 'hookable'
import type { PointName, PointPayload } from '../../protocol/points/points.js'
import type { PointCallResult } from '../client.js'
import { AgentError } from './errors.js'
import type { AgentHookMap, AgentPoint } from './hook-map.js'
import type { HookPort } from './hooks.js'
import type { AgentTool } from './tools.js'
import type { AgentUI } from './ui.js'

export interface RunContext {
  readonly ui: AgentUI
  readonly workdir: string
  readonly tools: ReadonlyMap<string, AgentTool>
  readonly signal: AbortSignal
  /** Calls a step point; its diagnostics are shown. */
  call<N extends PointName>(point: N, payload: PointPayload<N>): Promise<PointCallResult<N>>
  /** Fires an event point on the hookable instance (and through the bridge, on hookd). */
  fire<N extends AgentPoint>(point: N, context: Parameters<AgentHookMap[N]>[0]): Promise<void>
}

export function interrupted(): AgentError {
  return new AgentError('interrupted', 'interrupted')
}

/** Resolves as `work` does, or rejects with an interrupt as soon as `signal` aborts. */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => {})
    return Promise.reject(interrupted())
  }
  return new Promise<T>((resolve, reject) => {
    const stop = (): void => reject(interrupted())
    signal.addEventListener('abort', stop, { once: true })
    work.then(
      (value) => {
        signal.removeEventListener('abort', stop)
        resolve(value)
      },
      (err: unknown) => {
        signal.removeEventListener('abort', stop)
        reject(err)
      },
    )
  })
}

export function runContext(parts: {
  ui: AgentUI
  workdir: string
  tools: ReadonlyMap<string, AgentTool>
  signal: AbortSignal
  port: HookPort
  hookable: Hookable<AgentHookMap>
}): RunContext {
  const { ui, port, hookable, signal } = parts
  return {
    ui,
    workdir: parts.workdir,
    tools: parts.tools,
    signal,
    async call(point, payload) {
      const answer = await untilAborted(port.call(point, payload), signal)
      for (const d of answer.diagnostics) ui.diagnostic(d)
      return answer
    },
    async fire(point, context) {
      // hookable's callHook types its rest arguments per name; one context object is what every point takes.
      const fired = hookable.callHook(point, ...([context] as unknown as Parameters<AgentHookMap[typeof point]>))
      await untilAborted(Promise.resolve(fired), signal)
    },
  }
}
