/**
 * The host <-> sidecar wire: loads proto/hookd/v1/hookd.proto and declares, with zod, the shape of every
 * message as @grpc/proto-loader decodes it. Both sides validate what they receive with these schemas;
 * nothing else in hookd touches raw proto objects.
 */
import { fileURLToPath } from 'node:url'
import * as grpc from '@grpc/grpc-js'
import * as protoLoader from '@grpc/proto-loader'
import * as z from 'zod'
import type { AskOutcome } from './ask-outcomes.js'
import { DEFAULT_JSON_LIMITS, type JsonLimits, parseJson } from './bounded-json.js'
import { DIAGNOSTIC_KINDS, type Diagnostic, kindFromWire, kindToWire } from './diagnostic.js'

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
// Shared pieces
// ------------------------------------------------------------------------------------------------

const bytes = z.instanceof(Buffer)
const u64 = z.number().int().nonnegative()

export const FILE_ACCESS = ['read-write', 'none', 'read'] as const
export type FileAccess = (typeof FILE_ACCESS)[number]

const fileAccessWire = z
  .enum(['FILE_ACCESS_UNSPECIFIED', 'FILE_ACCESS_NONE', 'FILE_ACCESS_READ', 'FILE_ACCESS_READ_WRITE'])
  .transform((v): FileAccess => (v === 'FILE_ACCESS_NONE' ? 'none' : v === 'FILE_ACCESS_READ' ? 'read' : 'read-write'))

export function fileAccessToWire(access: FileAccess): string {
  return access === 'none' ? 'FILE_ACCESS_NONE' : access === 'read' ? 'FILE_ACCESS_READ' : 'FILE_ACCESS_READ_WRITE'
}

/** What a hook's failure does at a gate, as a hook's hook.json and the chain say it (chain.ts). */
export const ON_ERROR = ['default', 'refuse', 'skip'] as const
export type OnError = (typeof ON_ERROR)[number]

/**
 * What a session asks for (proto OnError): the three above, or `refuse-unless-skip`, which refuses on
 * any failure unless the failed hook's own hook.json says "skip" (sessions that guard an agent).
 */
export const SESSION_ON_ERROR = [...ON_ERROR, 'refuse-unless-skip'] as const
export type SessionOnError = (typeof SESSION_ON_ERROR)[number]

const onErrorWire = z
  .enum(['ON_ERROR_DEFAULT', 'ON_ERROR_REFUSE', 'ON_ERROR_SKIP', 'ON_ERROR_REFUSE_UNLESS_SKIP'])
  .transform((v): SessionOnError => (v === 'ON_ERROR_REFUSE' ? 'refuse' : v === 'ON_ERROR_SKIP' ? 'skip' : v === 'ON_ERROR_REFUSE_UNLESS_SKIP' ? 'refuse-unless-skip' : 'default'))

export function onErrorToWire(onError: SessionOnError): string {
  return `ON_ERROR_${onError.toUpperCase().replaceAll('-', '_')}`
}

export const policyWire = z.object({
  file: fileAccessWire,
  httpOrigins: z.array(z.string()),
  env: z.array(z.string()),
  denyConfirm: z.boolean(),
})

export const openSessionWire = z.object({
  protocolVersion: z.number().int(),
  sessionId: z.string(),
  agentId: z.string(),
  modelId: z.string(),
  hooks: z.array(z.string()),
  workdir: z.string(),
  interactive: z.boolean(),
  autoApprove: z.boolean(),
  policy: policyWire.nullable(),
  env: z.record(z.string(), z.string()),
  /** Absent from an older host: the default. */
  onError: onErrorWire.default('default'),
})
export type OpenSessionWire = z.infer<typeof openSessionWire>

const diagnosticKindWire = z.string().transform(kindFromWire)

export const diagnosticWire = z
  .object({
    hook: z.string(),
    point: z.string(),
    kind: diagnosticKindWire,
    message: z.string(),
    file: z.string(),
    line: z.number().int(),
    version: z.string(),
  })
  .transform((d): Diagnostic => {
    const out: Diagnostic = { hook: d.hook, point: d.point, kind: d.kind, message: d.message }
    if (d.file) out.file = d.file
    if (d.line) out.line = d.line
    if (d.version) out.version = d.version
    return out
  })

/** A Diagnostic as proto-loader encodes it. */
export interface DiagnosticOut {
  hook: string
  point: string
  kind: string
  message: string
  file: string
  line: number
  version: string
}

export function diagnosticToWire(d: Diagnostic): DiagnosticOut {
  return {
    hook: d.hook,
    point: d.point,
    kind: kindToWire(d.kind),
    message: d.message,
    file: d.file ?? '',
    line: d.line ?? 0,
    version: d.version ?? '',
  }
}

export const HOOK_OUTCOMES = ['changed', 'no-opinion', 'refused', 'failed', 'not-run', 'cancelled'] as const
export type HookOutcome = (typeof HOOK_OUTCOMES)[number]

/** A ctx.confirm question no person saw: the session's auto_approve flag answered it (proto AutoConfirm). */
export interface AutoConfirm {
  title: string
  /** Empty when the hook gave none. */
  body: string
  approved: boolean
}

export interface HookTrace {
  hook: string
  version: string
  outcome: HookOutcome
  durationUs: number
  cpuUs: number
  /** The confirms the hook asked that the session's auto-approve flag answered; absent when none. */
  autoConfirms?: AutoConfirm[]
}

const outcomeWire = z.string().transform((v): HookOutcome => {
  const name = v.replace(/^HOOK_OUTCOME_/, '').toLowerCase().replace(/_/g, '-')
  return (HOOK_OUTCOMES as readonly string[]).includes(name) ? (name as HookOutcome) : 'failed'
})

export const traceWire = z.object({
  hook: z.string(),
  version: z.string(),
  outcome: outcomeWire,
  durationUs: u64,
  cpuUs: u64,
  /** Empty from a sidecar older than the field. */
  autoConfirms: z.array(z.object({ title: z.string(), body: z.string(), approved: z.boolean() })).default([]),
})

export type HookTraceOut = Omit<HookTrace, 'outcome' | 'autoConfirms'> & { outcome: string; autoConfirms: AutoConfirm[] }

export function traceToWire(t: HookTrace): HookTraceOut {
  return { ...t, outcome: `HOOK_OUTCOME_${t.outcome.toUpperCase().replace(/-/g, '_')}`, autoConfirms: t.autoConfirms ?? [] }
}

/** A point result as both sides hold it, with the result still as JSON text. */
export interface PointResultData {
  seq: number
  point: string
  result: unknown
  diagnostics: Diagnostic[]
  trace: HookTrace[]
  durationUs: number
  /** The result's id in the audit log (see audit.ts); set by the session before the result is sent. */
  decisionId?: string
}

export const pointResultWire = z.object({
  seq: u64,
  point: z.string(),
  result: bytes,
  diagnostics: z.array(diagnosticWire),
  trace: z.array(traceWire),
  durationUs: u64,
  /** Empty from a sidecar older than the field. */
  decisionId: z.string().default(''),
})

export interface PointResultOut {
  seq: number
  point: string
  result: Buffer
  diagnostics: DiagnosticOut[]
  trace: HookTraceOut[]
  durationUs: number
  decisionId: string
}

export function pointResultToWire(r: PointResultData): PointResultOut {
  return {
    seq: r.seq,
    point: r.point,
    result: Buffer.from(JSON.stringify(r.result ?? null)),
    diagnostics: r.diagnostics.map(diagnosticToWire),
    trace: r.trace.map(traceToWire),
    durationUs: r.durationUs,
    decisionId: r.decisionId ?? '',
  }
}

export interface CapabilityCallData {
  id: number
  seq: number
  hook: string
  point: string
  capability: string
  args: unknown
}

export interface LogLineData {
  seq: number
  hook: string
  point: string
  message: string
  timeMs: number
}

export const logLineWire = z.object({
  seq: u64,
  hook: z.string(),
  point: z.string(),
  message: z.string(),
  timeMs: u64,
})

export const HOOK_STATUSES = ['ready', 'broken', 'stale'] as const
export type HookStatus = (typeof HOOK_STATUSES)[number]

export interface HookInfoData {
  name: string
  version: string
  points: string[]
  status: HookStatus
  lastError?: Diagnostic
  loadedAtMs: number
  /** One line about the hook (hook.json "description"); absent when it has none. */
  description?: string
}

export const hookInfoWire = z
  .object({
    name: z.string(),
    version: z.string(),
    points: z.array(z.string()),
    status: z.string(),
    lastError: diagnosticWire.nullable(),
    loadedAtMs: u64,
    // Absent from an older sidecar; bounded like every text a peer sends.
    description: z.string().max(2000).optional(),
  })
  .transform((h): HookInfoData => {
    const status = h.status.replace(/^HOOK_STATUS_/, '').toLowerCase()
    const out: HookInfoData = {
      name: h.name,
      version: h.version,
      points: h.points,
      status: (HOOK_STATUSES as readonly string[]).includes(status) ? (status as HookStatus) : 'broken',
      loadedAtMs: h.loadedAtMs,
    }
    if (h.lastError) out.lastError = h.lastError
    if (h.description) out.description = h.description
    return out
  })

export interface HookInfoOut {
  name: string
  version: string
  points: string[]
  status: string
  lastError: DiagnosticOut | null
  loadedAtMs: number
  description: string
}

export function hookInfoToWire(h: HookInfoData): HookInfoOut {
  return {
    name: h.name,
    version: h.version,
    points: h.points,
    status: `HOOK_STATUS_${h.status.toUpperCase()}`,
    lastError: h.lastError ? diagnosticToWire(h.lastError) : null,
    loadedAtMs: h.loadedAtMs,
    description: h.description ?? '',
  }
}

// ------------------------------------------------------------------------------------------------
// Host -> sidecar
// ------------------------------------------------------------------------------------------------

/** Who a host says concluded an ask's outcome (proto AskOutcomeBy). */
export type ReportedBy = 'agent' | 'host'

/** An AskOutcomeReport as the session takes it; `outcome` undefined when the host left it unspecified. */
export interface OutcomeReportData {
  decisionId: string
  outcome: AskOutcome | undefined
  via: string
  by: ReportedBy
}

const askOutcomeWire = z.string().transform((v): AskOutcome | undefined =>
  v === 'ASK_OUTCOME_ALLOWED' ? 'allowed' : v === 'ASK_OUTCOME_DENIED' ? 'denied' : v === 'ASK_OUTCOME_UNKNOWN' ? 'unknown' : undefined,
)

export function askOutcomeToWire(outcome: AskOutcome): string {
  return `ASK_OUTCOME_${outcome.toUpperCase()}`
}

export function reportedByToWire(by: ReportedBy): string {
  return by === 'host' ? 'ASK_OUTCOME_BY_HOST' : 'ASK_OUTCOME_BY_AGENT'
}

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
  z.object({
    kind: z.literal('outcome'),
    outcome: z.object({
      decisionId: z.string(),
      outcome: askOutcomeWire,
      via: z.string(),
      by: z.string().transform((v): ReportedBy => (v === 'ASK_OUTCOME_BY_HOST' ? 'host' : 'agent')),
    }),
  }),
])
export type HostMessage = z.infer<typeof hostMessageWire>

/** OpenSession as proto-loader encodes it. */
export interface OpenSessionOut {
  protocolVersion: number
  sessionId: string
  agentId: string
  modelId: string
  hooks: string[]
  workdir: string
  interactive: boolean
  autoApprove: boolean
  policy: { file: string; httpOrigins: string[]; env: string[]; denyConfirm: boolean }
  env: Record<string, string>
  onError: string
}

/** Every HostMessage a host writes: exactly one field set, each typed. */
export type HostFrame =
  | { open: OpenSessionOut }
  | { call: { seq: number; point: string; payload: Buffer } }
  | { capabilityResult: { id: number; value: Buffer; deferred?: boolean } | { id: number; error: { code: string; message: string } } }
  | { cancel: { seq: number } }
  | { close: { reason: string } }
  | { outcome: { decisionId: string; outcome: string; via: string; by: string } }

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
  z.object({
    kind: z.literal('capabilityCall'),
    capabilityCall: z.object({
      id: u64,
      seq: u64,
      hook: z.string(),
      point: z.string(),
      capability: z.string(),
      args: bytes,
    }),
  }),
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
export type SidecarFrame =
  | { opened: { sessionId: string; hooks: HookInfoOut[]; sidecarVersion: string; protocolVersion: number; askOutcomes: boolean } }
  | { result: PointResultOut }
  | { capabilityCall: { id: number; seq: number; hook: string; point: string; capability: string; args: Buffer } }
  | { log: LogLineData }
  | { diagnostic: DiagnosticOut }
  | { closed: { result: PointResultOut | null } }
  | { outcomeAnswer: { decisionId: string; recorded: boolean; message: string } }

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

export { DIAGNOSTIC_KINDS }
