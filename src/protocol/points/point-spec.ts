/**
 * The shape of one entry of the point catalog (points.ts): what a point's payload is, which fields a
 * hook may change, how an answer merges into the chain's value, and what the host receives.
 */
import type * as z from 'zod'
import type { DecisionName } from '../hook-permissions.js'

/**
 * The decision a field makes, as hook.json "permissions".decide names it (field-decisions.ts reads it):
 * `context` is `addContext` when the change only appends to what is there, `rewriteModelText` otherwise;
 * `permission` (a permission dialog's decision) is `approve` for an allow, `refuse` for the rest.
 */
export type FieldDecision = Exclude<DecisionName, 'addContext' | 'approve'> | 'context' | 'permission'

/** The six step points' names (step-points.ts), which event points may alias. */
export type StepPointName = 'beforeRun' | 'afterRun' | 'beforeModelRequest' | 'afterModelResponse' | 'beforeToolExecute' | 'afterToolExecute'

/**
 * A hook point. `S` is the value carried along the chain, `F` the fields a hook may change.
 *
 * `mode` says how a hook answers: `return` (step points: the handler returns the fields it changes) or
 * `mutate` (event points: the handler mutates the event it is given; the changed fields are its answer).
 */
export interface PointSpec<P, S, F extends Record<string, unknown>, O> {
  readonly name: string
  /**
   * `step`: the six points of an agent's run loop (an agent loop), whose handlers return the fields
   * they change. `event`: the many points of a hookable host (a hookable host), whose handlers mutate
   * the event they are given.
   */
  readonly family: 'step' | 'event'
  readonly mode: 'return' | 'mutate'
  /** One line for `--help` and docs. */
  readonly summary: string
  /** What the host sends. */
  readonly payload: z.ZodType<S, P>
  /** The fields a hook may return, each optional (null or undefined keeps the current value). */
  readonly fields: { readonly [K in keyof F]-?: z.ZodType<F[K]> }
  /** The decision each field makes: what a hook that declares its permissions must have declared to change it. */
  readonly decides: { readonly [K in keyof NoInfer<F>]-?: FieldDecision }
  /** Points with a `rewriteArguments` field: the tool the call names (a permission lists tools by name). */
  readonly tool?: (state: S) => string
  /** The arguments after `ctx` that the hook function receives. */
  args(state: S): readonly unknown[]
  /** The chain's value after a hook's validated, non-null fields are applied. */
  apply(state: S, changes: Partial<F>, hook: string): S
  /** True when no later hook may run (a refusal). */
  stopped(state: S): boolean
  /**
   * Gates only (a tool call that may be refused): the state with the call refused by `by` (a hook's
   * name, or 'hookd') for `reason`. hookd refuses this way when it cannot let a gate decide: a quota,
   * a lost invocation, a host that is gone. Points that are not gates have none.
   */
  refuse?(state: S, reason: string, by: string): S
  /**
   * Gates only: true once the call is refused (or blocked). hookd's own refusals (a hook that could not
   * decide, a cancel) leave a refusal a hook already made as it is, reason and all.
   */
  refused?(state: S): boolean
  /** What the host receives at the end of the chain. */
  result(state: S): O
  readonly output: z.ZodType<O>
  /** A step point whose handlers also serve this one (event points only). */
  readonly alias?: Alias<S>
}

/**
 * How a step-point handler serves an event point: its payload is built from the event, and its
 * validated return becomes changes to the event's mutable fields.
 */
export interface Alias<S> {
  readonly point: StepPointName
  /** True when the step handler must not run (e.g. the call is already refused). */
  skip(state: S): boolean
  payload(state: S): unknown
  /** Event changes from the step point's changes; fields that cannot be expressed are listed in `dropped`. */
  changes(stepChanges: Record<string, unknown>, state: S): { changes: Record<string, unknown>; dropped: string[] }
}
