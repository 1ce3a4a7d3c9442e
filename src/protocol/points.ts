/**
 * The point catalog: every hook point hookd knows, with its payload schema, the fields a hook may
 * return, how a return merges into the chain's value, and the chain's final result. Host library,
 * sidecar, CLI and tests all read this table; nothing else lists points.
 *
 * Chaining rules (rienda seed): one hook's output is the next hook's input; every returned field is
 * optional and replaces only itself; `undefined`/`null` keep the current value; returning nothing
 * means no opinion; `beforeToolExecute` stops at the first `allow: false`.
 */
import { z } from 'zod'
import { zidanePoints } from './zidane-points.js'

const jsonObject = z.record(z.string(), z.unknown())

const toolCall = z.looseObject({
  id: z.string(),
  name: z.string(),
  arguments: jsonObject,
})

const message = z.looseObject({ role: z.string(), text: z.string() })

/**
 * A hook point. `S` is the value carried along the chain, `F` the fields a hook may change.
 *
 * `mode` says how a hook answers: `return` (rienda: the handler returns the fields it changes) or
 * `mutate` (zidane: the handler mutates the event it is given; the changed fields are its answer).
 */
export interface PointSpec<P, S, F extends Record<string, unknown>, O> {
  readonly name: string
  readonly family: 'rienda' | 'zidane'
  readonly mode: 'return' | 'mutate'
  /** One line for `--help` and docs. */
  readonly summary: string
  /** What the host sends. */
  readonly payload: z.ZodType<S, P>
  /** The fields a hook may return, each optional (null or undefined keeps the current value). */
  readonly fields: { readonly [K in keyof F]-?: z.ZodType<F[K]> }
  /** The arguments after `ctx` that the hook function receives. */
  args(state: S): readonly unknown[]
  /** The chain's value after a hook's validated, non-null fields are applied. */
  apply(state: S, changes: Partial<F>, hook: string): S
  /** True when no later hook may run (a refusal). */
  stopped(state: S): boolean
  /** What the host receives at the end of the chain. */
  result(state: S): O
  readonly output: z.ZodType<O>
  /** A rienda point whose handlers also serve this one (zidane points only). */
  readonly alias?: Alias<S>
}

/**
 * How a rienda handler serves a zidane point: its payload is built from the zidane event, and its
 * validated return becomes changes to the event's mutable fields.
 */
export interface Alias<S> {
  readonly point: RiendaPointName
  /** True when the rienda handler must not run (e.g. the call is already refused). */
  skip(state: S): boolean
  payload(state: S): unknown
  /** Zidane changes from the rienda changes; fields that cannot be expressed are listed in `dropped`. */
  changes(riendaChanges: Record<string, unknown>, state: S): { changes: Record<string, unknown>; dropped: string[] }
}

function point<P, S, F extends Record<string, unknown>, O>(
  spec: Omit<PointSpec<P, S, F, O>, 'family' | 'mode'>,
): PointSpec<P, S, F, O> {
  return { ...spec, family: 'rienda', mode: 'return' }
}

const nothing = z.object({})

const toolDecision = z.object({
  allow: z.boolean(),
  reason: z.string().optional(),
  refusedBy: z.string().optional(),
  arguments: jsonObject,
})
type ToolDecision = z.infer<typeof toolDecision>
type ToolCallState = z.infer<typeof toolCall> & { decision: ToolDecision }

const toolResult = z.object({ text: z.string(), isError: z.boolean() })

export const riendaPoints = {
  beforeRun: point({
    name: 'beforeRun',
    summary: 'Once, at the start of a run. Receives {sessionId, agentId, modelId}; returns nothing.',
    payload: z.looseObject({ sessionId: z.string(), agentId: z.string(), modelId: z.string() }),
    fields: {},
    args: (state) => [state],
    apply: (state) => state,
    stopped: () => false,
    result: () => ({}),
    output: nothing,
  }),

  afterRun: point({
    name: 'afterRun',
    summary: 'Once, when the run ends. Receives {reason} (end_turn, interrupted or error); returns nothing.',
    payload: z.looseObject({ reason: z.enum(['end_turn', 'interrupted', 'error']) }),
    fields: {},
    args: (state) => [state],
    apply: (state) => state,
    stopped: () => false,
    result: () => ({}),
    output: nothing,
  }),

  beforeModelRequest: point({
    name: 'beforeModelRequest',
    summary: 'Every turn, before the provider call. Receives {system, model, messages}; may return {system}.',
    payload: z.looseObject({ system: z.string(), model: z.string(), messages: z.array(message) }),
    fields: { system: z.string() },
    args: (state) => [state],
    apply: (state, changes) => ({ ...state, ...changes }),
    stopped: () => false,
    result: (state) => ({ system: state.system }),
    output: z.object({ system: z.string() }),
  }),

  afterModelResponse: point({
    name: 'afterModelResponse',
    summary: 'Every turn, after the model answers. Receives {text, thinking, toolCalls}; may return {text, thinking}.',
    payload: z.looseObject({
      text: z.string(),
      thinking: z.string().default(''),
      toolCalls: z.array(toolCall).default([]),
    }),
    fields: { text: z.string(), thinking: z.string() },
    args: (state) => [state],
    apply: (state, changes) => ({ ...state, ...changes }),
    stopped: () => false,
    result: (state) => ({ text: state.text, thinking: state.thinking }),
    output: z.object({ text: z.string(), thinking: z.string() }),
  }),

  beforeToolExecute: point({
    name: 'beforeToolExecute',
    summary: 'Before a tool runs. Receives {id, name, arguments}; may return {allow, reason, arguments}.',
    payload: toolCall.transform(
      (call): ToolCallState => ({ ...call, decision: { allow: true, arguments: call.arguments } }),
    ),
    fields: { allow: z.boolean(), reason: z.string(), arguments: jsonObject },
    args: ({ decision, ...call }) => [{ ...call, arguments: decision.arguments }],
    apply: (state, changes, hook) => {
      const decision: ToolDecision = { ...state.decision }
      if (changes.arguments !== undefined) decision.arguments = changes.arguments
      if (changes.allow === false) {
        decision.allow = false
        decision.reason = changes.reason ?? `refused by hook '${hook}'`
        decision.refusedBy = hook
      }
      return { ...state, decision }
    },
    stopped: (state) => !state.decision.allow,
    result: (state) => state.decision,
    output: toolDecision,
  }),

  afterToolExecute: point({
    name: 'afterToolExecute',
    summary: 'After a tool returns. Receives {call: {id, name, arguments}, result: {text, isError}}; may return {text, isError}.',
    payload: z.looseObject({ call: toolCall, result: toolResult }),
    fields: { text: z.string(), isError: z.boolean() },
    args: (state) => [state.call, state.result],
    apply: (state, changes) => ({ ...state, result: { ...state.result, ...changes } }),
    stopped: () => false,
    result: (state) => state.result,
    output: toolResult,
  }),
} as const

export type RiendaPointName = keyof typeof riendaPoints

export const points = { ...riendaPoints, ...zidanePoints() } as const

export type Points = typeof points
export type PointName = keyof Points
/** What a host sends for a point. */
export type PointPayload<N extends PointName> = z.input<Points[N]['payload']>
/** What a host receives at the end of a point's chain. */
export type PointOutput<N extends PointName> = z.output<Points[N]['output']>

/** A point with its types erased, for code that handles every point alike. */
export type AnyPoint = PointSpec<unknown, unknown, Record<string, unknown>, unknown>

export const POINT_NAMES = Object.keys(points) as PointName[]

export function isPointName(name: string): name is PointName {
  return Object.hasOwn(points, name)
}

export function getPoint(name: string): AnyPoint | undefined {
  return isPointName(name) ? (points[name] as unknown as AnyPoint) : undefined
}

/** The export a hook uses to serve `point`, given its exports: the point itself, or its rienda alias. */
export function handlerFor(point: AnyPoint, exported: ReadonlySet<string>): string | undefined {
  if (exported.has(point.name)) return point.name
  if (point.alias && exported.has(point.alias.point)) return point.alias.point
  return undefined
}

/** Every point a hook with these exports serves, directly or through an alias, in catalog order. */
export function servedPoints(exported: ReadonlySet<string>): PointName[] {
  return POINT_NAMES.filter((name) => handlerFor(points[name] as unknown as AnyPoint, exported) !== undefined)
}
