/**
 * One invocation of a remote hook: one `hookd.v1.Hook/Run` stream (proto/hookd/v1/hook.proto). It keeps
 * the promises a sandboxed invocation keeps (see worker/runner.ts), so that the chain cannot tell the
 * two apart: the same wall-time limit, not counting time spent waiting for the host to answer a
 * capability call; the same caps on capability calls, their arguments, log volume and the answer's size;
 * the same outcome kinds. Capability calls and log lines go to the session through the request's
 * `onCapability` and `onLog`, exactly as a worker's do, so the session's policy checks them.
 *
 * The first outcome wins: the hook's answer, the wall-time limit, a cancel, a broken stream or a
 * protocol violation. After it the stream is ended (or cancelled) and whatever the hook sends is
 * ignored. Never rejects.
 */
import { clip } from '../../../protocol/text.js'
import * as grpc from '@grpc/grpc-js'
import { parseJson } from '../../../protocol/bounded-json.js'
import { FAILURE_TEXT } from '../failure-text.js'
import { InvocationBudget } from '../invocation-budget.js'
import type { DiagnosticKind } from '../../../protocol/diagnostic.js'
import type { CapabilityReply, InvocationReport, InvocationRequest, InvokeOutcome } from '../hook-runner.js'
import type { Limits } from '../../limits.js'
import {
  type HookAnswerWire,
  hookMessageProblem,
  hookToSidecarWire,
  toCapabilityResult,
  toInvocation,
} from './remote-wire.js'

/** How long a hook may take to end its stream after answering, before hookd cancels it. */
const END_GRACE_MS = 2000


/** The client side of the Run rpc, as grpc-js's generic client has it. */
export interface RunClient {
  Run(metadata?: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<unknown, unknown>
}

let nextCallId = 1

/** A gRPC error's text for a message: its details, without grpc-js's empty trailing resolution note. */
export function grpcDetails(err: { details?: string; message: string }): string {
  return clip((err.details || err.message).replace(/\.?\s*Resolution note:\s*$/, ''))
}

/**
 * Runs `request` (as a worker would) on the remote hook behind `client`. `address` is for messages.
 * `request.point` is the handler to run; `request.ctx.hook.point` the point the host called.
 */
export function runRemote(client: RunClient, address: string, request: InvocationRequest): Promise<InvocationReport> {
  const { limits, signal } = request
  const started = performance.now()
  return new Promise<InvocationReport>((resolve) => {
    let outcome: InvokeOutcome | undefined
    let timer: NodeJS.Timeout | undefined
    /** Wall time spent with at least one capability call waiting on the host. */
    let waitedMs = 0
    let waitingSince: number | undefined
    const waiting = new Set<number>()
    const budget = new InvocationBudget(limits)

    let stream: grpc.ClientDuplexStream<unknown, unknown>
    try {
      stream = client.Run()
    } catch (err) {
      // A closed client (the sidecar is shutting down) refuses to start calls.
      const message = FAILURE_TEXT.unreachable(address, err instanceof Error ? err.message : String(err))
      return resolve({ outcome: { ok: false, kind: 'unavailable', message }, wallUs: 0, cpuUs: 0 })
    }

    const settle = (o: InvokeOutcome, how: 'end' | 'cancel'): void => {
      if (outcome) return
      outcome = o
      if (timer) clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      if (how === 'cancel') {
        stream.cancel()
      } else {
        stream.end()
        // A hook that does not end its stream after answering is not waited for.
        setTimeout(() => stream.cancel(), END_GRACE_MS).unref()
      }
      resolve({ outcome: o, wallUs: Math.round((performance.now() - started) * 1000), cpuUs: 0 })
    }
    const fail = (kind: DiagnosticKind, message: string): void => settle({ ok: false, kind, message: clip(message) }, 'cancel')

    /** Arms the wall-time timer for the budget left; paused while a capability call waits. */
    const arm = (): void => {
      if (timer) clearTimeout(timer)
      timer = undefined
      if (outcome || waitingSince !== undefined) return
      const left = limits.wallMs - (performance.now() - started - waitedMs)
      if (left <= 0) return fail('timeout', FAILURE_TEXT.wall(limits))
      timer = setTimeout(arm, Math.max(1, Math.ceil(left)))
    }

    const onAbort = (): void => fail('cancelled', FAILURE_TEXT.cancelled())

    const capability = (id: number, name: string, argsBytes: Buffer): void => {
      const reply = (r: CapabilityReply): void => {
        if (!outcome) stream.write(toCapabilityResult(id, r))
      }
      if (waiting.has(id)) {
        return fail('invalid-result', FAILURE_TEXT.protocol(`capability_call id ${id} is already waiting for its result`))
      }
      const refused = budget.capability(name, argsBytes.length)
      if (refused) return reply(refused)
      const parsed = parseJson(argsBytes, `ctx.${name}: the argument list`, { maxDepth: limits.jsonDepth, maxBytes: limits.resultBytes })
      if (!parsed.ok) return reply({ ok: false, code: 'invalid', message: parsed.message })
      const args = parsed.value
      if (waiting.size === 0) {
        waitingSince = performance.now()
        arm()
      }
      waiting.add(id)
      const done = (r: CapabilityReply): void => {
        waiting.delete(id)
        if (waiting.size === 0 && waitingSince !== undefined) {
          waitedMs += performance.now() - waitingSince
          waitingSince = undefined
          arm()
        }
        reply(r)
      }
      request.onCapability(name, args).then(done, (err: unknown) =>
        done({ ok: false, code: 'failed', message: err instanceof Error ? err.message : String(err) }),
      )
    }

    const log = (message: string): void => {
      const line = budget.log(clip(message))
      if (line !== undefined) request.onLog(line)
    }

    stream.on('data', (raw: unknown) => {
      if (outcome) return
      const parsed = hookToSidecarWire.safeParse(raw)
      if (!parsed.success) return fail('invalid-result', FAILURE_TEXT.protocol(hookMessageProblem(raw, parsed.error)))
      const message = parsed.data
      switch (message.kind) {
        case 'answer':
          return settle(answerOutcome(message.answer, limits), 'end')
        case 'capabilityCall': {
          const c = message.capabilityCall
          return capability(c.id, c.capability, c.args)
        }
        case 'log':
          return log(message.log.message)
      }
    })
    stream.on('error', (err: grpc.ServiceError) => {
      if (outcome) return
      const details = grpcDetails(err)
      switch (err.code) {
        case grpc.status.UNAVAILABLE:
          return fail('unavailable', FAILURE_TEXT.unreachable(address, details))
        case grpc.status.UNIMPLEMENTED:
          return fail('unavailable', FAILURE_TEXT.unimplemented(address))
        case grpc.status.RESOURCE_EXHAUSTED:
          return fail('limit', FAILURE_TEXT.tooBig(details))
        case grpc.status.DEADLINE_EXCEEDED:
          return fail('timeout', FAILURE_TEXT.wall(limits))
        default:
          return fail('throw', FAILURE_TEXT.remoteFailed(details))
      }
    })
    // A stream that ends cleanly before an answer ('end' comes before 'status').
    stream.on('status', (status: grpc.StatusObject) => {
      if (!outcome && status.code === grpc.status.OK) fail('invalid-result', FAILURE_TEXT.noAnswer())
    })

    signal?.addEventListener('abort', onAbort, { once: true })
    if (signal?.aborted) return onAbort()
    stream.write(
      toInvocation({
        callId: nextCallId++,
        hook: request.hook.name,
        handler: request.point,
        point: request.ctx.hook.point,
        args: JSON.stringify(request.args),
        ctx: JSON.stringify(request.ctx),
        resultArg: request.resultArg,
        wallMs: limits.wallMs,
      }),
    )
    arm()
  })
}

/** The hook's answer as the chain reads an invocation's outcome. */
function answerOutcome(answer: HookAnswerWire, limits: Limits): InvokeOutcome {
  if (answer.outcome === 'error' && answer.error) {
    const { message, code, line } = answer.error
    const kind: DiagnosticKind = code === 'denied' ? 'capability-denied' : code === 'limit' ? 'limit' : 'throw'
    return { ok: false, kind, message: clip(message || 'the remote hook reported a failure without a message'), ...(line > 0 ? { line } : {}) }
  }
  const value = answer.outcome === 'value' ? answer.value : undefined
  if (!value || value.length === 0) return { ok: true }
  if (value.length > limits.resultBytes) {
    return { ok: false, kind: 'result-too-large', message: FAILURE_TEXT.tooLarge(limits, value.length) }
  }
  // Parsed only to check it: the chain parses the text again with the same depth limit.
  const parsed = parseJson(value, 'the answer', { maxDepth: limits.jsonDepth, maxBytes: limits.resultBytes })
  if (!parsed.ok) return { ok: false, kind: 'invalid-result', message: parsed.message }
  const text = value.toString('utf8')
  return { ok: true, value: text }
}
