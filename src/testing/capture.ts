/**
 * Real traffic becomes test cases: one point call, as a sidecar or a host saw it, written as a case file
 * (case-file.ts) that replays it. What the call read is set up again (files it read, confirm answers,
 * HTTP responses), and what came out is expected (the result, diagnostics by kind, logs, the calls).
 * Move the file into a hook's tests/ folder, trim what you do not care about, and `hookd test` keeps the
 * behaviour from changing unnoticed. No environment value is ever written (env-redactor.ts): the case
 * names the session's variables and shows `<env NAME>` where a value was.
 *
 * What looks like a credential is replaced as well (credential-redactor.ts). `hookd serve --capture DIR`
 * writes a case for each point call (capture-tap.ts, front-door-capture.ts, through capture-sink.ts);
 * `writeCapturedCase` writes one directly; `casesFromRecording` turns
 * the tool calls and answers of a `hookd agent --record` script into cases that at least must run
 * without a diagnostic.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ScriptFile } from '../host/reference-agent/script.js'
import type { Diagnostic } from '../protocol/diagnostic.js'
import type { FileAccess, SessionOnError } from '../protocol/wire.js'
import { credentialRedactor } from './credential-redactor.js'
import { envRedactor } from './env-redactor.js'

/** A capability call of the point call, and how the host answered it. */
export interface CapturedCapability {
  capability: string
  args: readonly unknown[]
  hook?: string
  /** The answer, when the host gave one. */
  value?: unknown
  /** The error, when the call failed. */
  error?: { code: string; message: string }
}

/** A captured call's session, as it was opened. */
export interface CapturedSession {
  id?: string
  agentId?: string
  modelId?: string
  interactive?: boolean
  autoApprove?: boolean
  /**
   * The environment it sent: its values (then no string of the case holds one: each becomes
   * `<env NAME>`), or only the names. Either way only the names are written, as a note.
   */
  env?: Readonly<Record<string, string>> | readonly string[]
  policy?: { file?: FileAccess; httpOrigins?: readonly string[]; confirm?: boolean }
  /** What a hook's failure did at a gate (the front door's `refuse-unless-skip`). */
  onError?: SessionOnError
}

/** One point call as it happened. */
export interface CapturedCall {
  /** The session's hooks, in order. */
  hooks: readonly string[]
  point: string
  payload: unknown
  /** The session as it was opened. */
  session?: CapturedSession
  /** The chain's result; absent: the case does not check it. */
  result?: unknown
  diagnostics?: readonly Diagnostic[]
  /** ctx.log lines, in order. */
  logs?: ReadonlyArray<string | { message: string }>
  /** The capability calls the host answered (those the sidecar's policy let through), in order. */
  capabilities?: readonly CapturedCapability[]
  /** When it happened; default now. */
  at?: Date
}

/** A value kept out of every case wherever it appears (the front door's HTTP token), and what it is written as. */
export interface KeptOut {
  label: string
  value: string
}

/**
 * The case file's content for a captured call: env values and then credentials (credential-redactor.ts,
 * and the values of `keptOut`) are replaced in every string of it.
 */
export function capturedCase(captured: CapturedCall, keptOut: readonly KeptOut[] = []): Record<string, unknown> {
  const at = captured.at ?? new Date()
  const session = captured.session ?? {}
  const interactive = session.interactive ?? false
  const calls = (captured.capabilities ?? []).filter((c) => interactive || c.capability !== 'confirm')

  const ctx: Record<string, unknown> = {}
  if (session.interactive !== undefined) ctx.interactive = session.interactive
  if (session.autoApprove) ctx.autoApprove = true
  const confirm = calls.filter((c) => c.capability === 'confirm' && typeof c.value === 'boolean').map((c) => c.value)
  if (confirm.length) ctx.confirm = confirm
  const files: Record<string, string> = {}
  for (const c of calls) {
    const path = c.args[0]
    if (c.capability === 'file.read' && typeof path === 'string' && typeof c.value === 'string' && !(path in files)) files[path] = c.value
  }
  if (Object.keys(files).length) ctx.files = files
  const http: Record<string, unknown> = {}
  for (const c of calls) {
    if (c.capability !== 'http.fetch' || typeof c.args[0] !== 'string' || !isObject(c.value)) continue
    const init = isObject(c.args[1]) ? c.args[1] : {}
    const method = typeof init.method === 'string' ? init.method.toUpperCase() : 'GET'
    const { status, headers, body } = c.value
    http[`${method} ${c.args[0]}`] = { status: typeof status === 'number' ? status : 200, headers: isObject(headers) ? headers : {}, body: typeof body === 'string' ? body : '' }
  }
  if (Object.keys(http).length) ctx.http = http
  const policy: Record<string, unknown> = {}
  if (session.policy?.file !== undefined && session.policy.file !== 'read-write') policy.file = session.policy.file
  if (session.policy?.httpOrigins?.length) policy.httpOrigins = [...session.policy.httpOrigins]
  if (session.policy?.confirm === false) policy.confirm = false
  if (Object.keys(policy).length) ctx.policy = policy
  const ids: Record<string, string> = {}
  if (session.id) ids.id = session.id
  if (session.agentId) ids.agentId = session.agentId
  if (session.modelId) ids.modelId = session.modelId
  if (Object.keys(ids).length) ctx.session = ids
  if (session.onError !== undefined && session.onError !== 'default') ctx.onError = session.onError

  const expect: Record<string, unknown> = {}
  if (captured.result !== undefined) expect.result = captured.result
  expect.diagnostics = (captured.diagnostics ?? []).filter((d) => d.kind !== 'reload').map((d) => (d.hook ? { kind: d.kind, hook: d.hook } : { kind: d.kind }))
  if (captured.logs) expect.logs = captured.logs.map((l) => (typeof l === 'string' ? l : l.message))
  if (captured.capabilities) expect.calls = calls.map((c) => (c.hook ? { capability: c.capability, args: [...c.args], hook: c.hook } : { capability: c.capability, args: [...c.args] }))

  const envNames = Array.isArray(session.env) ? session.env : Object.keys(session.env ?? {})
  // Given the values, every string of the case is cleaned of them (env-redactor.ts); names are notes.
  const redactor = isEnvValues(session.env) ? envRedactor(session.env) : undefined
  const credentials = credentialRedactor(keptOut)
  const clean = <T>(value: T): T => credentials.redact(redactor ? redactor.redact(value) : value) as T
  const id = session.id ? clean(session.id) : undefined
  const parts = clean({ payload: captured.payload, ctx, expect })
  const notes = [`Captured ${at.toISOString()}${id ? ` in session ${id}` : ''}.`]
  if (envNames.length) notes.push(`The session allowed the environment variables ${envNames.join(', ')}; their values are not recorded: add them to ctx.env.`)
  if (redactor?.replaced.size) notes.push('Where a value appeared in the call it is written as <env NAME>.')
  if (credentials.replaced.size) notes.push(redactedNote(credentials.replaced))
  notes.push('Workdir files the hook only listed or checked are not recorded; add them to ctx.files.')
  return {
    name: `captured ${captured.point}${id ? ` (${id})` : ''}`,
    description: notes.join(' '),
    hooks: [...captured.hooks],
    point: captured.point,
    payload: parts.payload,
    ...(Object.keys(parts.ctx).length ? { ctx: parts.ctx } : {}),
    expect: parts.expect,
  }
}

function isEnvValues(env: CapturedSession['env']): env is Readonly<Record<string, string>> {
  return env !== undefined && !Array.isArray(env)
}

/** A captured call larger than this as JSON text is not written (it is reported instead). */
export const MAX_CASE_CHARS = 4 * 1024 * 1024
/** Cases up to this size are written indented, if that stays under PRETTY_MAX_CHARS; others on one line. */
const PRETTY_UP_TO_CHARS = 64 * 1024
const PRETTY_MAX_CHARS = 1024 * 1024

/**
 * Writes the captured call as a new case file in `dir` (writeCaseFile). Returns its path.
 */
export async function writeCapturedCase(dir: string, captured: CapturedCall): Promise<string> {
  const at = captured.at ?? new Date()
  const body = caseText(capturedCase({ ...captured, at }), `a ${captured.point} call`)
  return writeCaseFile(dir, caseBase(captured.point, at), body)
}

/** A case past MAX_CASE_CHARS: not written. */
export class CaseTooLarge extends Error {}

/** What the redactors replaced, for a case's description. */
export function redactedNote(kinds: ReadonlySet<string>): string {
  return `What looked like a credential (${[...kinds].join(', ')}) is written as <redacted ...>: put a stand-in back where a hook must see one.`
}

/** `beforeToolExecute-20260102T030405Z`: a case file's name, before its number and `.json`. */
export function caseBase(what: string, at: Date): string {
  const stamp = at.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z')
  // Bounded: an event's name is the agent's text, and a file name has 255 bytes at most.
  return `${what.replace(/[^A-Za-z0-9_-]+/g, '-').slice(0, 80)}-${stamp}`
}

/**
 * A case's file text: indented for the person who edits it, unless that multiplies a deeply nested
 * payload (two spaces per level on every line) past what a person reads: then on one line. Throws
 * (naming `what`) past MAX_CASE_CHARS.
 */
export function caseText(value: unknown, what: string): string {
  const compact = JSON.stringify(value)
  if (compact.length > MAX_CASE_CHARS) {
    throw new CaseTooLarge(`${what} is ${compact.length} characters as a test case, over the ${MAX_CASE_CHARS} written; it was not captured`)
  }
  const pretty = compact.length <= PRETTY_UP_TO_CHARS ? JSON.stringify(value, null, 2) : undefined
  return `${pretty !== undefined && pretty.length <= PRETTY_MAX_CHARS ? pretty : compact}\n`
}

/**
 * Writes `body` as a new file `base.json` (or `base-N.json`) in `dir` (created if needed, 0700), 0600;
 * never replaces a file, and never writes through a link at the name (`wx` is O_CREAT | O_EXCL: a link
 * already there takes the next name). Returns its path.
 */
export async function writeCaseFile(dir: string, base: string, body: string): Promise<string> {
  // Folders it makes are the operator's alone; folders that were there keep their modes.
  await mkdir(dir, { recursive: true, mode: 0o700 })
  for (let n = 1; ; n++) {
    const file = join(dir, n === 1 ? `${base}.json` : `${base}-${n}.json`)
    try {
      // Payloads and files the hooks read may hold secrets: readable by the operator alone.
      await writeFile(file, body, { flag: 'wx', mode: 0o600 })
      return file
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || n >= 1000) throw err
    }
  }
}

/**
 * The point calls a recorded agent run made, from its script (`hookd agent --record FILE`): each answer
 * of the model (afterModelResponse) and each tool call (beforeToolExecute). A script holds what the
 * model said, not what the hooks answered, so these cases expect only that the hooks run without a
 * diagnostic; run them once and copy the result in, or capture the replayed run instead.
 */
export function casesFromRecording(script: ScriptFile, hooks: readonly string[]): CapturedCall[] {
  const calls: CapturedCall[] = []
  const session = { agentId: 'hookd-agent', ...(script.model ? { modelId: script.model } : {}) }
  script.turns.forEach((turn, t) => {
    const toolCalls = turn.toolCalls.map((call, i) => ({ id: call.id ?? `call_${t + 1}_${i + 1}`, name: call.name, arguments: call.arguments }))
    calls.push({ hooks, point: 'afterModelResponse', payload: { text: turn.text, thinking: '', toolCalls }, session })
    for (const call of toolCalls) calls.push({ hooks, point: 'beforeToolExecute', payload: call, session })
  })
  return calls
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}
