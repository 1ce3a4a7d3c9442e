/**
 * Runs one point through a session's hooks, in declared order: each hook's validated answer becomes
 * the next hook's input; a failing hook becomes a diagnostic and is skipped; a refusal stops the chain.
 *
 * Two kinds of step are the layers' (docs/operations.md, "Layers"): a floor hook's refusal at a gate
 * ends the chain whatever the point's own rule (an event gate otherwise lets a later hook mutate
 * `block` back), so no later hook's answer can undo it; a shadow hook runs in its place and sees what
 * it would see, but its answer is only recorded as what it `would` have done (would.ts), and its
 * failure never refuses.
 */
import type { Diagnostic, DiagnosticKind } from '../../protocol/diagnostic.js'
import { type AnyPoint, type PointName, getPoint, handlerFor, isGate } from '../../protocol/points/points.js'
import type { HookTrace, OnError, PointResultData } from '../../protocol/wire.js'
import type { InvocationReport } from '../runners/hook-runner.js'
import { parseJson } from '../../protocol/bounded-json.js'
import { sameJson } from '../../protocol/json.js'
import { MESSAGE_CHARS, clip, quoted } from '../../protocol/text.js'
import { hintFor } from '../hooks/author-hints.js'
import type { HookPermissions } from '../../protocol/hook-permissions.js'
import { permittedChanges } from './permitted-changes.js'
import type { HookMode, Layer } from './layer.js'
import { type Would, wouldOf } from './would.js'

export type { HookMode, Layer } from './layer.js'

/** One hook's line of a chain's trace, with what only the sidecar's records carry (not the wire's). */
export interface ChainTrace extends HookTrace {
  layer?: Layer
  /** A shadow hook: what it would have decided. */
  would?: Would
}

/** Who made a result what it is: the hook whose answer (or failure, refused by hookd) stands, and its layer. */
export interface DecidedBy {
  hook: string
  layer: Layer | 'hookd'
}

/** A chain's result, with the sidecar's own records of it. */
export type ChainResult = Omit<PointResultData, 'trace'> & { trace: ChainTrace[]; decidedBy?: DecidedBy }

/** What the chain reads of a hook (a sandbox worker running a chain has no more of it). */
export interface ChainHook {
  name: string
  version: string
  filename: string
  /** The points its exports serve. */
  points: ReadonlySet<PointName>
  /** hook.json "onError" (the session combines it with its own and the operator's). */
  onError?: OnError
  /** The content digest of this version (src/sidecar/pinning/content-digest.ts), for the trace. */
  digest?: string
  /** hook.json "mode": `shadow` records what the hook would decide and enforces nothing. */
  mode?: HookMode
  /** Its layer; a `floor` hook's refusal ends the chain. Absent: `session`. */
  layer?: Layer
  /** hook.json "permissions": the decisions it may make (permitted-changes.ts); undefined: any its point allows. */
  permissions?: HookPermissions | undefined
}

export interface ChainStep {
  hook: ChainHook
  /**
   * Runs the hook's export `handler` with the given arguments (after ctx). With `resultArg`, the answer
   * is that argument as the handler left it (mutating points) instead of the return value.
   */
  invoke(handler: string, args: readonly unknown[], resultArg?: number): Promise<InvocationReport>
}

export interface ReturnCheck {
  changes: Record<string, unknown>
  ignored: string[]
  error?: string
}

function describeType(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return `a ${typeof value}`
}

/**
 * Validates a hook's answer against the point's fields. With `nullKeeps` (returning points), null and
 * undefined fields keep the current value; for mutating points a null that was written is a value.
 */
export function checkReturn(point: AnyPoint, value: unknown, nullKeeps = true): ReturnCheck {
  const allowed = Object.keys(point.fields)
  const shape = allowed.length ? `{${allowed.map((f) => `${f}?`).join(', ')}}` : 'nothing'
  if (value === null || value === undefined) return { changes: {}, ignored: [] }
  if (typeof value !== 'object' || Array.isArray(value)) {
    return {
      changes: {},
      ignored: [],
      error: `${point.name} must return ${allowed.length ? `an object like ${shape} or nothing` : 'nothing'}; it returned ${describeType(value)}`,
    }
  }
  const entries = Object.entries(value)
  // An answer that names fields, none of them the point's ({decision: "block"} at beforeToolExecute), is
  // a hook written for another system or misspelt: reading it as "no change" would let a gate through
  // on a mistake that says nothing. Points that accept nothing keep the milder ignored-field.
  if (nullKeeps && allowed.length && entries.length && !entries.some(([field]) => Object.hasOwn(point.fields, field))) {
    return {
      changes: {},
      ignored: [],
      error: `${point.name} returned {${fieldNames(entries.map(([field]) => field))}}, none of which it accepts; return an object like ${shape} or nothing`,
    }
  }
  const changes: Record<string, unknown> = {}
  const ignored: string[] = []
  for (const [field, fieldValue] of entries) {
    const schema = Object.hasOwn(point.fields, field) ? point.fields[field] : undefined
    if (!schema) {
      ignored.push(field)
      continue
    }
    if (fieldValue === undefined || (nullKeeps && fieldValue === null)) continue
    const parsed = schema.safeParse(fieldValue)
    if (!parsed.success) {
      const expected = parsed.error.issues[0]?.message ?? 'invalid'
      return {
        changes: {},
        ignored: [],
        error: `${point.name} returned an invalid '${field}' (${describeType(fieldValue)}): ${expected}`,
      }
    }
    changes[field] = parsed.data
  }
  return { changes, ignored }
}

/** Field names a hook chose, for a message: quoted, each cut short, at most five named. */
function fieldNames(names: readonly string[]): string {
  const shown = names.slice(0, 5).map((f) => quoted(f, 64)).join(', ')
  return names.length > 5 ? `${shown} and ${names.length - 5} more` : shown
}

/** The top-level fields a mutating handler changed on its event. */
function mutations(before: unknown, after: unknown): Record<string, unknown> | string {
  if (after === null || typeof after !== 'object' || Array.isArray(after)) return 'the event is no longer an object'
  const prev = (before ?? {}) as Record<string, unknown>
  const next = after as Record<string, unknown>
  const changed: Record<string, unknown> = {}
  for (const key of Object.keys(next)) if (!sameJson(prev[key], next[key])) changed[key] = next[key]
  return changed
}

/**
 * What a hook's failure does at a gate (beforeToolExecute, tool:gate, ...), where "skipped" would mean
 * "allowed". `default`: the seed's rule for what the hook did (it threw, returned an invalid value or did
 * not load: skipped) and a refusal for what it could not help (a limit, a crash, its host or server lost,
 * a cancel: the call is refused by hookd). `refuse`: every failure refuses. `skip`: none does (fail open).
 * Points that are not gates always skip a failed hook.
 */
export type { OnError }

/** Failures that are the hook's own doing: skipped under `default`. */
const HOOKS_OWN: ReadonlySet<DiagnosticKind> = new Set(['throw', 'invalid-result', 'load', 'hook-removed', 'capability-denied'])

/** How a failure reads in a refusal's reason. */
const COULD_NOT_DECIDE: Partial<Record<DiagnosticKind, string>> = {
  timeout: 'it ran past its wall-time limit',
  cpu: 'it ran past its CPU time limit',
  memory: 'it ran out of memory',
  'result-too-large': 'its answer was over the size limit',
  limit: 'it hit a per-invocation limit',
  'worker-crash': 'its sandbox worker died',
  cancelled: 'the call was cancelled',
  unavailable: 'it could not be reached',
  internal: 'hookd failed to run it',
  throw: 'it threw',
  'invalid-result': 'it returned a value the point does not accept',
  load: 'it did not load',
  'hook-removed': 'its folder was removed',
  'capability-denied': 'it made a capability call the policy refuses',
}

/** True when a hook's failure of this kind refuses a gate under `policy`. */
export function failureRefuses(policy: OnError, kind: DiagnosticKind): boolean {
  if (policy === 'skip') return false
  if (policy === 'refuse') return true
  return !HOOKS_OWN.has(kind)
}

/** The reason a gate refused by hookd carries when a hook could not decide. */
export function couldNotDecide(hook: string, kind: DiagnosticKind): string {
  return `hookd refused the call: hook '${hook}' could not decide (${COULD_NOT_DECIDE[kind] ?? kind})`
}

/** The reason a gate carries when the host cancelled the call before its hooks decided. */
export const CANCELLED_REASON = 'hookd refused the call: the host cancelled it before its hooks decided'

export interface ChainOptions {
  /** A cancel: the hooks not yet run are traced `cancelled`; a gate not yet refused is refused. */
  signal?: AbortSignal | undefined
  /** The deepest JSON a hook's answer may be (Limits.jsonDepth). */
  jsonDepth: number
  /** What each hook's failure does at a gate. Default: `default` for every hook. */
  onError?: (hook: ChainHook) => OnError
  /**
   * Puts a question to a person at a gate (a shell command rewritten by a hook that may not rewrite
   * it: permitted-changes.ts) and says whether they said yes. Absent: nobody can be asked, and such a
   * rewrite is dropped.
   */
  ask?: (hook: ChainHook, question: { title: string; body: string }) => Promise<boolean>
}

const NO_TIME = { durationUs: 0, cpuUs: 0 }

export async function runChain(
  point: AnyPoint,
  seq: number,
  initial: unknown,
  steps: readonly ChainStep[],
  options: ChainOptions,
): Promise<ChainResult> {
  const { signal, jsonDepth } = options
  const gate = isGate(point)
  const started = process.hrtime.bigint()
  const diagnostics: Diagnostic[] = []
  const trace: ChainTrace[] = []
  let state = initial
  /** Set once a floor hook refused the gate: no later hook runs. */
  let sealed = false
  let decidedBy: DecidedBy | undefined
  /** The gate is refused already: who refused it stays the one who decided. */
  const settled = (): boolean => gate && point.refused?.(state) === true

  for (const { hook, invoke } of steps) {
    const layer = hook.layer ?? 'session'
    const shadow = hook.mode === 'shadow'
    const base = { hook: hook.name, version: hook.version, ...(hook.digest ? { digest: hook.digest } : {}), ...(hook.layer ? { layer } : {}), ...(shadow ? { would: 'none' as const } : {}) }
    const handler = handlerFor(point, hook.points)
    if (!handler) continue
    const alias = handler === point.name ? undefined : point.alias
    // The step point whose rules judge the answer: the point itself, or the alias's.
    const judge = alias ? (getPoint(alias.point) as AnyPoint) : point
    if (sealed || point.stopped(state) || alias?.skip(state)) {
      trace.push({ ...base, outcome: 'not-run', durationUs: 0, cpuUs: 0 })
      continue
    }
    if (signal?.aborted) {
      trace.push({ ...base, outcome: 'cancelled', durationUs: 0, cpuUs: 0 })
      continue
    }
    const label = alias ? `hook '${hook.name}' (${handler} serving ${point.name})` : `hook '${hook.name}'`
    const diagnostic = (kind: Diagnostic['kind'], message: string, line?: number, file?: string): void => {
      const d: Diagnostic = { hook: hook.name, point: point.name, kind, message: clip(message, MESSAGE_CHARS * 2), file: file ?? hook.filename, version: hook.version }
      if (line !== undefined) d.line = line
      diagnostics.push(d)
    }
    /**
     * The hook failed: a diagnostic, and at a gate, a refusal when the failure policy says so (never
     * for a shadow hook, which decides nothing).
     */
    const failed = (kind: DiagnosticKind, message: string, timing: { durationUs: number; cpuUs: number }, line?: number, file?: string): void => {
      diagnostic(kind, message, line, file)
      trace.push({ ...base, outcome: kind === 'cancelled' ? 'cancelled' : 'failed', ...timing, ...(shadow ? { would: 'failed' as const } : {}) })
      if (!shadow && gate && !point.refused?.(state) && failureRefuses(options.onError?.(hook) ?? 'default', kind)) {
        state = point.refuse(state, couldNotDecide(hook.name, kind), 'hookd')
        decidedBy = { hook: hook.name, layer }
      }
      if (layer === 'floor' && settled()) sealed = true
    }

    let report: InvocationReport
    if (alias) {
      const stepState = judge.payload.safeParse(alias.payload(state))
      if (!stepState.success) {
        failed('internal', `${label}: the ${point.name} event could not be turned into a ${judge.name} payload; the hook was skipped`, NO_TIME)
        continue
      }
      report = await invoke(handler, judge.args(stepState.data))
    } else if (point.mode === 'mutate') {
      report = await invoke(handler, point.args(state), 0)
    } else {
      report = await invoke(handler, point.args(state))
    }
    const timing = { durationUs: report.wallUs, cpuUs: report.cpuUs }
    const { outcome } = report
    if (!outcome.ok) {
      failed(outcome.kind, `${label} ${handler}: ${outcome.message}`, timing, outcome.line, outcome.file)
      continue
    }
    if (outcome.value === undefined) {
      trace.push({ ...base, outcome: 'no-opinion', ...timing })
      continue
    }
    // The answer was serialized by the hook's own thread, which can nest far deeper than this one can
    // walk: checked before anything recursive touches it.
    const parsed = parseJson(outcome.value, 'the returned value', { maxDepth: jsonDepth, maxBytes: Number.MAX_SAFE_INTEGER })
    if (!parsed.ok) {
      failed(parsed.problem === 'not-json' ? 'internal' : 'invalid-result', `${label} ${handler}: ${parsed.message}; the hook was skipped`, timing)
      continue
    }
    let answer = parsed.value
    const mutate = !alias && point.mode === 'mutate'
    if (mutate) {
      const changed = mutations(point.args(state)[0], answer)
      if (typeof changed === 'string') {
        failed('invalid-result', `${label}: ${changed}; the hook was skipped`, timing)
        continue
      }
      answer = changed
    }
    const check = checkReturn(judge, answer, !mutate)
    // What to write instead, for an answer written for another agent's hooks ({decision: 'block'}).
    const hint = hintFor({ point: handler, returned: answer })
    const instead = hint === undefined ? '' : `; ${hint}`
    if (check.error) {
      failed('invalid-result', `${label}: ${check.error}; the hook was skipped${instead}`, timing)
      continue
    }
    let changes = check.changes
    let ignored = check.ignored
    if (alias) {
      const mapped = alias.changes(changes, state)
      changes = mapped.changes
      ignored = [...ignored, ...mapped.dropped]
    }
    if (ignored.length) {
      const allowed = Object.keys(point.fields)
      const verb = mutate ? 'changed' : 'returned'
      diagnostic(
        'ignored-field',
        `${label} ${verb} ${fieldNames(ignored)}, which ${point.name} does not let a hook change; ignored (it accepts: ${allowed.length ? allowed.join(', ') : 'nothing'})${instead}`,
      )
    }
    let ask: { title: string; body: string; refusal: string } | undefined
    if (hook.permissions && Object.keys(changes).length) {
      const permitted = permittedChanges(point, state, changes, hook.name, hook.permissions, gate && options.ask !== undefined)
      changes = permitted.kept
      for (const note of permitted.notes) diagnostic('not-permitted', `${label} ${note}`)
      ask = permitted.ask
    }
    if (Object.keys(changes).length === 0) {
      trace.push({ ...base, outcome: 'no-opinion', ...timing })
      continue
    }
    let next = point.apply(state, changes, hook.name)
    if (shadow) {
      // Recorded, not applied: the chain goes on as if the hook had no opinion.
      trace.push({ ...base, outcome: 'no-opinion', ...timing, would: wouldOf(point, state, next, changes) })
      continue
    }
    // A rewrite the hook may not make, kept only if the person approves it: a no refuses the call.
    if (ask && options.ask && gate && !point.refused?.(next) && !(await options.ask(hook, { title: ask.title, body: ask.body }))) {
      next = point.refuse(next, ask.refusal, 'hookd')
    }
    if (!settled()) decidedBy = { hook: hook.name, layer }
    state = next
    trace.push({ ...base, outcome: point.stopped(state) || (layer === 'floor' && settled()) ? 'refused' : 'changed', ...timing })
    if (layer === 'floor' && settled()) sealed = true
  }

  // A cancelled (or interrupted: the host went away) gate never comes back allowed, whatever the failure
  // policy: what its hooks had not decided, hookd refuses. A refusal a hook made stands as it is.
  if (gate && signal?.aborted && !point.refused?.(state)) {
    state = point.refuse(state, CANCELLED_REASON, 'hookd')
    decidedBy = { hook: 'hookd', layer: 'hookd' }
  }

  return {
    seq,
    point: point.name,
    result: point.result(state),
    diagnostics,
    trace,
    durationUs: Math.round(Number(process.hrtime.bigint() - started) / 1000),
    ...(decidedBy ? { decidedBy } : {}),
  }
}
