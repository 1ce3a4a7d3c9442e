/**
 * The hookd <-> remote hook wire: loads proto/hookd/v1/hook.proto (the `Hook` service a remote hook
 * serves) and declares, with zod, every message a remote hook sends as @grpc/proto-loader decodes it.
 * A remote hook is code hookd does not trust, so everything it sends is validated here before hookd
 * reads it; nothing else in hookd touches the raw objects. What hookd sends is built by the `to*`
 * functions below.
 */
import * as grpc from '@grpc/grpc-js'
import * as protoLoader from '@grpc/proto-loader'
import * as z from 'zod'
import { LOADER_OPTIONS } from '../../../protocol/wire.js'
import { issueText } from '../../../protocol/issue-text.js'

export const HOOK_PROTO_FILE = 'hookd/v1/hook.proto'
export const HOOK_SERVICE_NAME = 'hookd.v1.Hook'

/** The most bytes hookd accepts in one message from a remote hook (as the sidecar's own 8 MiB). */
export const MAX_REMOTE_MESSAGE_BYTES = 8 * 1024 * 1024

let loaded: protoLoader.PackageDefinition | undefined
function definition(): protoLoader.PackageDefinition {
  loaded ??= protoLoader.loadSync(HOOK_PROTO_FILE, LOADER_OPTIONS)
  return loaded
}

/** The Hook service definition: hookd builds its client from it; tests build fixture servers. */
export function hookService(): grpc.ServiceDefinition {
  const def = definition()[HOOK_SERVICE_NAME]
  if (!def || 'format' in def) throw new Error(`${HOOK_SERVICE_NAME} missing from ${HOOK_PROTO_FILE}`)
  return def as grpc.ServiceDefinition
}

const bytes = z.instanceof(Buffer)
const u64 = z.number().int().nonnegative()
/** Bounds a string a remote hook sends, so that one bad message cannot flood a diagnostic. */
const text = (max: number) => z.string().max(max, `longer than ${max} characters`)

// ------------------------------------------------------------------------------------------------
// Describe
// ------------------------------------------------------------------------------------------------

export const describeResponseWire = z.object({
  protocolVersion: z.number().int(),
  points: z.array(text(200)).max(500, 'more than 500 points'),
  version: text(200),
  description: text(2000),
})
export type DescribeResponse = z.infer<typeof describeResponseWire>

export function toDescribeRequest(protocolVersion: number, hook: string): Record<string, unknown> {
  return { protocolVersion, hook }
}

// ------------------------------------------------------------------------------------------------
// Run: hookd -> hook
// ------------------------------------------------------------------------------------------------

/** The first message of a Run stream. `args` and `ctx` are JSON text already. */
export interface InvocationData {
  callId: number
  hook: string
  handler: string
  point: string
  args: string
  ctx: string
  /** The argument index to answer with (mutating points), or undefined for the return value. */
  resultArg: number | undefined
  wallMs: number
}

export function toInvocation(i: InvocationData): Record<string, unknown> {
  return {
    invocation: {
      callId: i.callId,
      hook: i.hook,
      handler: i.handler,
      point: i.point,
      args: Buffer.from(i.args),
      ctx: Buffer.from(i.ctx),
      mutate: i.resultArg !== undefined,
      mutateArg: i.resultArg ?? 0,
      wallMs: i.wallMs,
    },
  }
}

export function toCapabilityResult(
  id: number,
  reply: { ok: true; value: unknown } | { ok: false; code: string; message: string },
): Record<string, unknown> {
  return reply.ok
    ? { capabilityResult: { id, value: Buffer.from(JSON.stringify(reply.value ?? null)) } }
    : { capabilityResult: { id, error: { code: reply.code, message: reply.message } } }
}

// ------------------------------------------------------------------------------------------------
// Run: hook -> hookd
// ------------------------------------------------------------------------------------------------

const answerWire = z.object({
  outcome: z.enum(['value', 'error']).optional(),
  value: bytes.nullable().optional(),
  error: z
    .object({
      message: z.string(),
      code: text(64),
      file: text(1000),
      line: z.number().int().nonnegative(),
    })
    .nullable()
    .optional(),
})

export const hookToSidecarWire = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('answer'), answer: answerWire }),
  z.object({
    kind: z.literal('capabilityCall'),
    capabilityCall: z.object({ id: u64, capability: text(64), args: bytes }),
  }),
  z.object({ kind: z.literal('log'), log: z.object({ message: z.string() }) }),
])
export type HookToSidecar = z.infer<typeof hookToSidecarWire>
export type HookAnswerWire = z.infer<typeof answerWire>

/** What was wrong with a message from a remote hook, in one line. */
export function hookMessageProblem(raw: unknown, error: { issues: ReadonlyArray<{ path: PropertyKey[]; message: string }> }): string {
  const kind = raw !== null && typeof raw === 'object' ? (raw as { kind?: unknown }).kind : undefined
  if (typeof kind !== 'string') return 'it sent a HookToSidecar message with none of answer, capability_call, log set'
  return `it sent an invalid ${issueText(error, 'HookToSidecar')}`
}
