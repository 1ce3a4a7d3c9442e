/**
 * The unary Invoke: one point, one chain, no interactive capabilities. `confirm` is answered by the
 * session's auto-approve flag; log lines and notifications come back in the response.
 */
import type { Diagnostic } from '../../protocol/diagnostic.js'
import { HookdError } from '../../protocol/status.js'
import { type LogLineData, type PointResultOut, invokeRequestWire, pointResultToWire } from '../../protocol/wire.js'
import { Session } from '../session/session.js'
import type { Tenant } from '../tenant.js'
import { UndecodableFrame } from './frames.js'

export interface InvokeResponseOut {
  result: PointResultOut
  logs: LogLineData[]
  notifications: Buffer[]
}

/** Runs one InvokeRequest as `tenant`. Throws a HookdError (the status to answer) on a bad request. */
export async function serveInvoke(raw: unknown, tenant: Tenant): Promise<InvokeResponseOut> {
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
  const { session } = Session.open(tenant, open, {
    capability: (c) => {
      if (c.capability === 'notify') {
        notifications.push(Buffer.from(JSON.stringify((c.args as unknown[])[0])))
        return Promise.resolve({ ok: true, value: null })
      }
      return Promise.resolve({
        ok: false,
        code: 'unavailable',
        message: `ctx.${c.capability} needs a host to serve it, and a unary Invoke has none; open a Session stream`,
      })
    },
    log: (line) => logs.push(line),
    diagnostic: (d) => diagnostics.push(d),
    quotaFails: true,
  })
  const result = await session.call(0, point, payload)
  result.diagnostics.unshift(...diagnostics)
  return { result: pointResultToWire(result), logs, notifications }
}
