/**
 * The unary Invoke: one point, one chain, no interactive capabilities. `confirm` is answered by the
 * session's auto-approve flag; log lines and notifications come back in the response.
 */
import type { Diagnostic } from '../../protocol/diagnostic.js'
import { HookdError } from '../../protocol/status.js'
import { type LogLineData, type PointResultOut, invokeRequestWire, pointResultToWire } from '../../protocol/wire.js'
import type { SessionObserver } from '../observability/observer.js'
import { Session } from '../session/session.js'
import type { Tenant } from '../tenant.js'
import { UndecodableFrame } from './frames.js'

export interface InvokeResponseOut {
  result: PointResultOut
  logs: LogLineData[]
  notifications: Buffer[]
}

/**
 * The bytes of log lines, and of notifications, one Invoke answer carries: with the result (at most
 * Limits.resultBytes, 1 MiB by default) and the diagnostics, well under gRPC's 4 MiB default message
 * limit that hosts' clients apply.
 */
export const INVOKE_SHARE_BYTES = 1024 * 1024

/** Runs one InvokeRequest as `tenant`. Throws a HookdError (the status to answer) on a bad request. */
export async function serveInvoke(raw: unknown, tenant: Tenant, observe?: SessionObserver): Promise<InvokeResponseOut> {
  if (raw instanceof UndecodableFrame) throw new HookdError('invalid-argument', raw.describe())
  const parsed = invokeRequestWire.safeParse(raw)
  if (!parsed.success || !parsed.data.session) throw new HookdError('invalid-argument', 'InvokeRequest.session is required')
  const { session: open, point, payload } = parsed.data
  if (open.interactive) {
    throw new HookdError('invalid-argument', 'Invoke cannot serve an interactive session (no one can answer confirm); use the Session stream')
  }
  const logs: LogLineData[] = []
  const notifications: Buffer[] = []
  const diagnostics: Diagnostic[] = []
  // The whole answer must fit in one gRPC message: logs and notifications get a share each, and what
  // does not fit is counted and reported, never allowed to push the result out.
  const kept = { logs: 0, notifications: 0 }
  const dropped = { logs: 0, notifications: 0 }
  const { session } = Session.open(tenant, open, {
    capability: (c) => {
      if (c.capability === 'notify') {
        const note = Buffer.from(JSON.stringify((c.args as unknown[])[0]))
        if (kept.notifications + note.length > INVOKE_SHARE_BYTES) dropped.notifications += 1
        else {
          kept.notifications += note.length
          notifications.push(note)
        }
        return Promise.resolve({ ok: true, value: null })
      }
      return Promise.resolve({
        ok: false,
        code: 'unavailable',
        message: `ctx.${c.capability} needs a host to serve it, and a unary Invoke has none; open a Session stream`,
      })
    },
    log: (line) => {
      const size = Buffer.byteLength(line.message) + 64
      if (kept.logs + size > INVOKE_SHARE_BYTES) dropped.logs += 1
      else {
        kept.logs += size
        logs.push(line)
      }
    },
    diagnostic: (d) => diagnostics.push(d),
    quotaFails: true,
  }, observe)
  const result = await session.call(0, point, payload)
  result.diagnostics.unshift(...diagnostics)
  for (const what of ['logs', 'notifications'] as const) {
    if (dropped[what] === 0) continue
    result.diagnostics.push({
      hook: '',
      point,
      kind: 'limit',
      message: `the Invoke answer carries at most ${INVOKE_SHARE_BYTES} bytes of ${what === 'logs' ? 'log lines' : 'notifications'}; ${dropped[what]} more were dropped (a Session stream delivers them all, as they happen)`,
    })
  }
  return { result: pointResultToWire(result), logs, notifications }
}
