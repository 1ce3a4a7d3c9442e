/** What a host gets back for a point call, decoded from the wire. */
import type * as grpc from '@grpc/grpc-js'
import type { Diagnostic } from '../protocol/diagnostic.js'
import type { PointName, PointOutput } from '../protocol/points/points.js'
import { parseJson } from '../protocol/bounded-json.js'
import { HookdError } from '../protocol/status.js'
import type { HookTrace, LogLineData } from '../protocol/wire.js'

/** The chained answer to one point call. */
export interface PointCallResult<N extends PointName> {
  result: PointOutput<N>
  diagnostics: Diagnostic[]
  trace: HookTrace[]
  durationUs: number
  /**
   * The sidecar's id for this result: the `decisionId` of its line in the sidecar's audit log. Absent
   * when the host made the result up (a failure policy answering for an absent sidecar).
   */
  decisionId?: string
}

export interface InvokeResult<N extends PointName> extends PointCallResult<N> {
  logs: LogLineData[]
  notifications: unknown[]
}

/** How a call or stream ended when it did not end well: what a grpc.ServiceError carries of its status. */
export type StreamStatus = Pick<grpc.ServiceError, 'code' | 'details' | 'message'>

export function fromServiceError(err: StreamStatus): HookdError {
  return HookdError.fromGrpc(err.code, err.details || err.message, err)
}

export function decodeResult<N extends PointName>(wire: {
  result: Buffer
  diagnostics: Diagnostic[]
  trace: HookTrace[]
  durationUs: number
  decisionId?: string
}): PointCallResult<N> {
  const out: PointCallResult<N> = {
    result: readJson(wire.result, 'the result') as PointOutput<N>,
    diagnostics: wire.diagnostics,
    trace: wire.trace,
    durationUs: wire.durationUs,
  }
  if (wire.decisionId) out.decisionId = wire.decisionId
  return out
}

/** JSON the sidecar sent (it carries what hooks returned): bounded like everything else hookd reads. */
export function readJson(bytes: Buffer, what: string): unknown {
  const parsed = parseJson(bytes, what)
  if (!parsed.ok) throw new HookdError('internal', `the sidecar sent ${parsed.message}`)
  return parsed.value
}
