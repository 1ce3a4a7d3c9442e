/**
 * Runs one point through a session's hooks, in declared order: each hook's validated answer becomes
 * the next hook's input; a failing hook becomes a diagnostic and is skipped; a refusal stops the chain.
 */
import type { Diagnostic } from '../protocol/diagnostic.js'
import type { AnyPoint } from '../protocol/points.js'
import type { HookTrace, PointResultData } from '../protocol/wire.js'
import type { LoadedHook } from './registry.js'
import type { InvocationReport } from './worker/supervisor.js'

export interface ChainStep {
  hook: LoadedHook
  /** Runs the hook for this point with the given arguments (after ctx). */
  invoke(args: readonly unknown[]): Promise<InvocationReport>
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

/** Validates a hook's returned value against the point's fields. */
export function checkReturn(point: AnyPoint, value: unknown): ReturnCheck {
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
  const changes: Record<string, unknown> = {}
  const ignored: string[] = []
  for (const [field, fieldValue] of Object.entries(value)) {
    const schema = Object.hasOwn(point.fields, field) ? point.fields[field] : undefined
    if (!schema) {
      ignored.push(field)
      continue
    }
    if (fieldValue === null || fieldValue === undefined) continue
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

export async function runChain(
  point: AnyPoint,
  seq: number,
  initial: unknown,
  steps: readonly ChainStep[],
  signal?: AbortSignal,
): Promise<PointResultData> {
  const started = process.hrtime.bigint()
  const diagnostics: Diagnostic[] = []
  const trace: HookTrace[] = []
  let state = initial

  for (const { hook, invoke } of steps) {
    const base = { hook: hook.name, version: hook.version }
    if (point.stopped(state)) {
      trace.push({ ...base, outcome: 'not-run', durationUs: 0, cpuUs: 0 })
      continue
    }
    if (signal?.aborted) {
      trace.push({ ...base, outcome: 'cancelled', durationUs: 0, cpuUs: 0 })
      continue
    }
    const report = await invoke(point.args(state))
    const timing = { durationUs: report.wallUs, cpuUs: report.cpuUs }
    const diagnostic = (kind: Diagnostic['kind'], message: string, line?: number): void => {
      const d: Diagnostic = { hook: hook.name, point: point.name, kind, message, file: hook.filename, version: hook.version }
      if (line !== undefined) d.line = line
      diagnostics.push(d)
    }
    const { outcome } = report
    if (!outcome.ok) {
      diagnostic(outcome.kind, `hook '${hook.name}' ${point.name}: ${outcome.message}`, outcome.line)
      trace.push({ ...base, outcome: outcome.kind === 'cancelled' ? 'cancelled' : 'failed', ...timing })
      continue
    }
    if (outcome.value === undefined) {
      trace.push({ ...base, outcome: 'no-opinion', ...timing })
      continue
    }
    const check = checkReturn(point, JSON.parse(outcome.value) as unknown)
    if (check.error) {
      diagnostic('invalid-result', `hook '${hook.name}': ${check.error}; the hook was skipped`)
      trace.push({ ...base, outcome: 'failed', ...timing })
      continue
    }
    if (check.ignored.length) {
      const allowed = Object.keys(point.fields)
      diagnostic(
        'ignored-field',
        `hook '${hook.name}' returned ${check.ignored.map((f) => `'${f}'`).join(', ')}, which ${point.name} does not accept; ignored (it accepts: ${allowed.length ? allowed.join(', ') : 'nothing'})`,
      )
    }
    if (Object.keys(check.changes).length === 0) {
      trace.push({ ...base, outcome: 'no-opinion', ...timing })
      continue
    }
    state = point.apply(state, check.changes, hook.name)
    trace.push({ ...base, outcome: point.stopped(state) ? 'refused' : 'changed', ...timing })
  }

  return {
    seq,
    point: point.name,
    result: point.result(state),
    diagnostics,
    trace,
    durationUs: Math.round(Number(process.hrtime.bigint() - started) / 1000),
  }
}
