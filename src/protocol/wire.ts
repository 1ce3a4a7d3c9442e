/**
 * The host <-> sidecar wire: loads proto/hookd/v1/hookd.proto and declares, with zod, every message as
 * @grpc/proto-loader decodes it. Each message is one definition: a zod schema of its wire form, whose
 * enum fields (proto-enum.ts) and unset fields (`unsetWhenEmpty`) are codecs. Parsing it decodes: both
 * sides validate what they receive with it, and nothing else in hookd touches raw proto objects.
 * Encoding it (`...ToWire`) writes hookd's form back. The two forms' types are its z.output (`...Data`,
 * hookd's form) and z.input (`...Out`, the wire's), never written out again.
 */
import { fileURLToPath } from 'node:url'
import * as grpc from '@grpc/grpc-js'
import * as protoLoader from '@grpc/proto-loader'
import * as z from 'zod'
import { ASK_OUTCOMES } from './ask-outcomes.js'
import { DEFAULT_JSON_LIMITS, type JsonLimits, parseJson } from './bounded-json.js'
import { DIAGNOSTIC_KINDS, type Diagnostic } from './diagnostic.js'
import { protoEnum } from './proto-enum.js'

export const PROTO_ROOT = fileURLToPath(new URL('../../proto', import.meta.url))
export const PROTO_FILE = 'hookd/v1/hookd.proto'

/** Options shared by server, client and reflection so that both sides decode alike. */
export const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: false,
  longs: Number,
  enums: String,
  bytes: Buffer,
  defaults: true,
  oneofs: true,
  includeDirs: [PROTO_ROOT],
}

let loaded: protoLoader.PackageDefinition | undefined
export function packageDefinition(): protoLoader.PackageDefinition {
  loaded ??= protoLoader.loadSync(PROTO_FILE, LOADER_OPTIONS)
  return loaded
}

/** The HookExecutor service definition, for servers and clients. */
export function hookExecutorService(): grpc.ServiceDefinition {
  const def = packageDefinition()['hookd.v1.HookExecutor']
  if (!def || 'format' in def) throw new Error('hookd.v1.HookExecutor missing from the proto')
  return def as grpc.ServiceDefinition
}

export const SERVICE_NAME = 'hookd.v1.HookExecutor'

// ------------------------------------------------------------------------------------------------
// Shared pieces: the enums, and fields proto3 cannot leave unset
// ------------------------------------------------------------------------------------------------

const bytes = z.instanceof(Buffer)
const u64 = z.number().int().nonnegative()

/** The file access a session asks for, in the order hookd's own files list them (the default first). */
export const FILE_ACCESS = ['read-write', 'none', 'read'] as const
export type FileAccess = (typeof FILE_ACCESS)[number]

/** What a hook's failure does at a gate, as a hook's hook.json and the chain say it (chain.ts). */
export const ON_ERROR = ['default', 'refuse', 'skip'] as const
export type OnError = (typeof ON_ERROR)[number]

/**
 * What a session asks for (proto OnError): the three above, or `refuse-unless-skip`, which refuses on
 * any failure unless the failed hook's own hook.json says "skip" (sessions that guard an agent).
 */
export const SESSION_ON_ERROR = [...ON_ERROR, 'refuse-unless-skip'] as const
export type SessionOnError = (typeof SESSION_ON_ERROR)[number]

export const HOOK_OUTCOMES = ['changed', 'no-opinion', 'refused', 'failed', 'not-run', 'cancelled'] as const
export type HookOutcome = (typeof HOOK_OUTCOMES)[number]

export const HOOK_STATUSES = ['ready', 'broken', 'stale'] as const
export type HookStatus = (typeof HOOK_STATUSES)[number]

/** Who a host says concluded an ask's outcome (proto AskOutcomeBy). */
export const REPORTED_BY = ['agent', 'host'] as const
export type ReportedBy = (typeof REPORTED_BY)[number]

/**
 * Every proto enum of the wire, by its name in the proto, each value in the proto's order. A name from
 * a newer peer reads as what a reader can act on (a failed hook, a broken one, an internal fault, no
 * outcome: a refused report); a session's own settings (file access, onError) refuse it.
 */
export const PROTO_ENUMS = {
  FileAccess: protoEnum('FILE_ACCESS_', ['none', 'read', 'read-write'] satisfies FileAccess[], { unspecified: 'read-write' }),
  OnError: protoEnum('ON_ERROR_', SESSION_ON_ERROR),
  DiagnosticKind: protoEnum('', DIAGNOSTIC_KINDS, { unknown: 'internal' }),
  HookOutcome: protoEnum('HOOK_OUTCOME_', HOOK_OUTCOMES, { unknown: 'failed' }),
  HookStatus: protoEnum('HOOK_STATUS_', HOOK_STATUSES, { unknown: 'broken' }),
  /** ASK_OUTCOME_UNSPECIFIED is no outcome: the report is refused (session/outcome-reports.ts). */
  AskOutcome: protoEnum('ASK_OUTCOME_', ASK_OUTCOMES, { unknown: undefined }),
  AskOutcomeBy: protoEnum('ASK_OUTCOME_BY_', REPORTED_BY, { unknown: 'agent' }),
}
const { FileAccess: fileAccess, OnError: sessionOnError, DiagnosticKind: diagnosticKind, HookOutcome: hookOutcome, HookStatus: hookStatus } = PROTO_ENUMS
const { AskOutcome: askOutcome, AskOutcomeBy: reportedBy } = PROTO_ENUMS

export const fileAccessToWire = fileAccess.toWire
export const onErrorToWire = sessionOnError.toWire
export const askOutcomeToWire = askOutcome.toWire
export const reportedByToWire = reportedBy.toWire

type Flat<T> = { [K in keyof T]: T[K] }

/**
 * A message whose `empty` fields read as unset. proto3 always carries a scalar ('' or 0 when unset) and
 * a message field as null; hookd's form leaves such a field out. Decoding drops a field that holds its
 * empty value (or is absent, from an older peer); encoding writes the empty value for one left out.
 */
function unsetWhenEmpty<S extends z.ZodObject, K extends keyof z.output<S> & string>(wire: S, empty: { readonly [P in K]: z.output<S>[P] }) {
  type Wire = z.output<S>
  type Data = Flat<Omit<Wire, K> & { [P in K]?: Exclude<Wire[P], null | undefined> }>
  const keys = Object.keys(empty) as K[]
  return z.codec(wire, z.custom<Data>(), {
    decode: (message) => {
      const out: Record<string, unknown> = { ...message }
      for (const key of keys) if (out[key] === undefined || out[key] === empty[key]) delete out[key]
      return out as Data
    },
    encode: (data) => {
      const out: Record<string, unknown> = { ...data }
      for (const key of keys) out[key] ??= empty[key]
      return out as Wire
    },
  })
}

// ------------------------------------------------------------------------------------------------
// Messages both ways
// ------------------------------------------------------------------------------------------------

export const diagnosticWire = unsetWhenEmpty(
  z.object({
    hook: z.string(),
    point: z.string(),
    kind: diagnosticKind.field,
    message: z.string(),
    file: z.string(),
    line: z.number().int(),
    version: z.string(),
  }),
  { file: '', line: 0, version: '' },
)
/** A Diagnostic as proto-loader encodes it. */
export type DiagnosticOut = z.input<typeof diagnosticWire>
export const diagnosticToWire = (d: Diagnostic): DiagnosticOut => diagnosticWire.encode(d)

/** A ctx.confirm question no person saw: the session's auto_approve flag answered it (proto AutoConfirm). */
const autoConfirmWire = z.object({ title: z.string(), body: z.string(), approved: z.boolean() })
export type AutoConfirm = z.output<typeof autoConfirmWire>

export const traceWire = z.object({
  hook: z.string(),
  version: z.string(),
  /** The content digest of the version that ran (`sha256:...`, src/sidecar/pinning/content-digest.ts); absent from an older sidecar. */
  digest: z.codec(z.string().max(200).optional(), z.string().optional(), {
    decode: (digest) => (digest ? digest : undefined),
    encode: (digest) => digest ?? '',
  }),
  outcome: hookOutcome.field,
  durationUs: u64,
  cpuUs: u64,
  /** The confirms the hook asked that auto-approve answered: absent when none, read as [] (also from an older sidecar). */
  autoConfirms: z.codec(z.array(autoConfirmWire).default([]), z.array(autoConfirmWire).optional(), {
    decode: (confirms) => confirms,
    encode: (confirms) => confirms ?? [],
  }),
})
export type HookTrace = z.output<typeof traceWire>

export const pointResultWire = z.object({
  seq: u64,
  point: z.string(),
  /** JSON, read by the host with its own bounds (host/results.ts). */
  result: bytes,
  diagnostics: z.array(diagnosticWire),
  trace: z.array(traceWire),
  durationUs: u64,
  /** The result's id in the audit log (see audit.ts); empty from a sidecar older than the field. */
  decisionId: z.string().default(''),
})
export type PointResultOut = z.input<typeof pointResultWire>
/** A point result as the sidecar holds it: the result a value, its decision id set by the session before it is sent. */
export type PointResultData = Omit<z.output<typeof pointResultWire>, 'result' | 'decisionId'> & { result: unknown; decisionId?: string }

export function pointResultToWire(r: PointResultData): PointResultOut {
  return pointResultWire.encode({ ...r, result: Buffer.from(JSON.stringify(r.result ?? null)), decisionId: r.decisionId ?? '' })
}

const capabilityCallWire = z.object({ id: u64, seq: u64, hook: z.string(), point: z.string(), capability: z.string(), args: bytes })
/** A capability call as the session makes it: its arguments a value (JSON on the wire). */
export type CapabilityCallData = Omit<z.output<typeof capabilityCallWire>, 'args'> & { args: unknown }

export const logLineWire = z.object({ seq: u64, hook: z.string(), point: z.string(), message: z.string(), timeMs: u64 })
export type LogLineData = z.output<typeof logLineWire>

export const hookInfoWire = unsetWhenEmpty(
  z.object({
    name: z.string(),
    version: z.string(),
    points: z.array(z.string()),
    status: hookStatus.field,
    lastError: diagnosticWire.nullable(),
    loadedAtMs: u64,
    /** One line about the hook (hook.json "description"). Absent from an older sidecar; bounded like every text a peer sends. */
    description: z.string().max(2000).optional(),
    /** The served version's content digest (`sha256:...`). Absent from an older sidecar. */
    digest: z.string().max(200).optional(),
    /** hook.json "permissions" in one line (hook-permissions.ts describePermissions); absent: none declared, or an older sidecar. */
    permissions: z.string().max(4000).optional(),
  }),
  { lastError: null, description: '', digest: '', permissions: '' },
)
export type HookInfoData = z.output<typeof hookInfoWire>
export type HookInfoOut = z.input<typeof hookInfoWire>
export const hookInfoToWire = (h: HookInfoData): HookInfoOut => hookInfoWire.encode(h)

/** A oneof message as a writer sets it: exactly one field, typed, without the `kind` the decoder adds. */
type Frame<M> = M extends { kind: infer K extends string } ? { [P in K]: M[P & keyof M] } : never

// ------------------------------------------------------------------------------------------------
// Host -> sidecar
// ------------------------------------------------------------------------------------------------

export const openSessionWire = z.object({
  protocolVersion: z.number().int(),
  sessionId: z.string(),
  agentId: z.string(),
  modelId: z.string(),
  hooks: z.array(z.string()),
  workdir: z.string(),
  interactive: z.boolean(),
  autoApprove: z.boolean(),
  policy: z.object({ file: fileAccess.field, httpOrigins: z.array(z.string()), env: z.array(z.string()), denyConfirm: z.boolean() }).nullable(),
  env: z.record(z.string(), z.string()),
  /** Absent from an older host: the default. */
  onError: sessionOnError.field.default('default'),
})
export type OpenSessionWire = z.output<typeof openSessionWire>
/** OpenSession as proto-loader encodes it. */
export type OpenSessionOut = z.input<typeof openSessionWire>

/** An AskOutcomeReport as the session takes it; `outcome` undefined when the host left it unspecified. */
const outcomeReportWire = z.object({ decisionId: z.string(), outcome: askOutcome.field, via: z.string(), by: reportedBy.field })
export type OutcomeReportData = z.output<typeof outcomeReportWire>

export const hostMessageWire = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('open'), open: openSessionWire }),
  z.object({ kind: z.literal('call'), call: z.object({ seq: u64, point: z.string(), payload: bytes }) }),
  z.object({
    kind: z.literal('capabilityResult'),
    capabilityResult: z.object({
      id: u64,
      outcome: z.enum(['value', 'error']).optional(),
      value: bytes.nullable().optional(),
      error: z.object({ code: z.string(), message: z.string() }).nullable().optional(),
      /** Absent from an older host: a plain answer. */
      deferred: z.boolean().default(false),
    }),
  }),
  z.object({ kind: z.literal('cancel'), cancel: z.object({ seq: u64 }) }),
  z.object({ kind: z.literal('close'), close: z.object({ reason: z.string() }) }),
  z.object({ kind: z.literal('outcome'), outcome: outcomeReportWire }),
])
export type HostMessage = z.output<typeof hostMessageWire>
/** Every HostMessage a host writes: exactly one field set, each typed. */
export type HostFrame = Frame<z.input<typeof hostMessageWire>>

export const invokeRequestWire = z.object({
  session: openSessionWire.nullable(),
  point: z.string(),
  payload: bytes,
})

// ------------------------------------------------------------------------------------------------
// Sidecar -> host
// ------------------------------------------------------------------------------------------------

export const sidecarMessageWire = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('opened'),
    opened: z.object({
      sessionId: z.string(),
      hooks: z.array(hookInfoWire),
      sidecarVersion: z.string(),
      protocolVersion: z.number().int(),
      /** False from a sidecar older than the field, which takes no deferred answer and no outcome report. */
      askOutcomes: z.boolean().default(false),
    }),
  }),
  z.object({ kind: z.literal('result'), result: pointResultWire }),
  z.object({ kind: z.literal('capabilityCall'), capabilityCall: capabilityCallWire }),
  z.object({ kind: z.literal('log'), log: logLineWire }),
  z.object({ kind: z.literal('diagnostic'), diagnostic: diagnosticWire }),
  z.object({ kind: z.literal('closed'), closed: z.object({ result: pointResultWire.nullable() }) }),
  z.object({
    kind: z.literal('outcomeAnswer'),
    // Bounded like every text a peer sends.
    outcomeAnswer: z.object({ decisionId: z.string().max(256), recorded: z.boolean(), message: z.string().max(4000) }),
  }),
])
export type SidecarMessage = z.infer<typeof sidecarMessageWire>
/** Every SidecarMessage the sidecar writes: exactly one field set, each typed. */
export type SidecarFrame = Frame<z.input<typeof sidecarMessageWire>>

export const invokeResponseWire = z.object({
  result: pointResultWire.nullable(),
  logs: z.array(logLineWire),
  notifications: z.array(bytes),
})

export const listHooksResponseWire = z.object({ hooks: z.array(hookInfoWire) })

/** Parses a JSON document from a bytes field, bounded (bounded-json.ts); the error says which field held what. */
export function parseJsonBytes(field: string, data: Buffer, limits: JsonLimits = DEFAULT_JSON_LIMITS): { ok: true; value: unknown } | { ok: false; message: string } {
  const parsed = parseJson(data, field, limits)
  return parsed.ok ? parsed : { ok: false, message: parsed.message }
}
