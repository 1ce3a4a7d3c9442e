/**
 * `hookd serve --capture DIR` (and `hookd agent --capture DIR`): every point call a session makes is
 * written to DIR as a ready-to-edit `hookd test` case (capture.ts): its payload, what the hooks read
 * through ctx (files, confirm answers, HTTP responses), their logs, and the result the host got.
 *
 * It listens to a session's stream (session-stream.ts gives it each message both ways, as they are
 * decoded and encoded), so it sees exactly what host and sidecar said to each other, and changes
 * nothing. What it holds is bounded by what a call may do (its capability calls and log bytes are
 * capped per invocation); a call's state is dropped when its result is written or the stream ends.
 * What it writes is bounded by the folder's sink (capture-sink.ts), which the front door's capture
 * (front-door-capture.ts) shares under `hookd serve --http ... --capture DIR`.
 */
import { parseJsonBytes, type HostMessage, type SidecarFrame, diagnosticWire } from '../protocol/wire.js'
import type { Diagnostic } from '../protocol/diagnostic.js'
import { inert } from '../protocol/text.js'
import type { StreamTap } from '../sidecar/grpc/session-stream.js'
import { type CapturedCall, type CapturedCapability, capturedCase } from './capture.js'
import { CaptureSink } from './capture-sink.js'

interface PendingCall {
  point: string
  payload: unknown
  capabilities: CapturedCapability[]
  logs: string[]
}

export class CaptureRecorder {
  constructor(
    /** Where case files go, within its bounds. */
    private readonly sink: CaptureSink,
  ) {}

  /** A tap for one session stream (SidecarOptions.tap); whatever goes wrong in it never reaches the stream. */
  session(): StreamTap {
    const tap = this.record()
    const guarded =
      <T>(see: (value: T) => void) =>
      (value: T): void => {
        try {
          see(value)
        } catch (err) {
          this.fail(err)
        }
      }
    return { fromHost: guarded(tap.fromHost), toHost: guarded(tap.toHost) }
  }

  private record(): StreamTap {
    let open: Extract<HostMessage, { kind: 'open' }>['open'] | undefined
    let sessionId = ''
    const calls = new Map<number, PendingCall>()
    const byId = new Map<number, CapturedCapability>()
    return {
      fromHost: (message) => {
        switch (message.kind) {
          case 'open':
            open = message.open
            return
          case 'call': {
            const parsed = parseJsonBytes('payload', message.call.payload)
            calls.set(message.call.seq, { point: message.call.point, payload: parsed.ok ? parsed.value : null, capabilities: [], logs: [] })
            return
          }
          case 'capabilityResult': {
            const { id, value, error } = message.capabilityResult
            const call = byId.get(id)
            byId.delete(id)
            if (!call) return
            if (error) call.error = { code: error.code, message: error.message }
            else if (value) {
              const parsed = parseJsonBytes('value', value)
              if (parsed.ok) call.value = parsed.value
            }
            return
          }
          default:
            return
        }
      },
      toHost: (frame) => {
        if ('opened' in frame) sessionId = frame.opened.sessionId
        else if ('capabilityCall' in frame) {
          const c = frame.capabilityCall
          const parsed = parseJsonBytes('args', c.args)
          const captured: CapturedCapability = { capability: c.capability, args: parsed.ok && Array.isArray(parsed.value) ? parsed.value : [], hook: c.hook }
          calls.get(c.seq)?.capabilities.push(captured)
          byId.set(c.id, captured)
        } else if ('log' in frame) calls.get(frame.log.seq)?.logs.push(frame.log.message)
        else if ('result' in frame) {
          const r = frame.result
          const call = calls.get(r.seq)
          calls.delete(r.seq)
          if (!call || !open) return
          const result = parseJsonBytes('result', r.result)
          const diagnostics = r.diagnostics.flatMap((d): Diagnostic[] => {
            const parsed = diagnosticWire.safeParse(d)
            return parsed.success ? [parsed.data] : []
          })
          const captured: CapturedCall = {
            hooks: open.hooks,
            point: call.point,
            payload: call.payload,
            session: {
              id: sessionId || open.sessionId,
              agentId: open.agentId,
              modelId: open.modelId,
              interactive: open.interactive,
              autoApprove: open.autoApprove,
              // The values, so that the case is cleaned of them (only the names are written).
              env: open.env,
              onError: open.onError,
              ...(open.policy
                ? { policy: { file: open.policy.file, httpOrigins: open.policy.httpOrigins, ...(open.policy.denyConfirm ? { confirm: false } : {}) } }
                : {}),
            },
            diagnostics,
            logs: call.logs,
            capabilities: call.capabilities,
          }
          if (result.ok) captured.result = result.value
          this.write(captured)
        }
      },
    }
  }

  private write(captured: CapturedCall): void {
    const at = new Date()
    this.sink.write([], captured.point, `a ${captured.point} call`, () => capturedCase({ ...captured, at }), at)
  }

  private fail(err: unknown): void {
    this.sink.failed(err)
  }
}

/**
 * The sidecar's tap for `--capture DIR` (a folder, or the sink of one): what cannot be written is told
 * once per cause, on `stderr`.
 */
export function captureTap(to: string | CaptureSink, stderr: { write(text: string): unknown }): () => StreamTap {
  const sink = typeof to === 'string' ? new CaptureSink(to, (line) => stderr.write(`hookd: ${inert(line)}\n`)) : to
  const recorder = new CaptureRecorder(sink)
  return () => recorder.session()
}
