/**
 * The step points: the six points of an agent's run loop (docs/points.md; the agent loop's steps).
 * A handler gets `ctx` and the point's payload and returns the fields it changes.
 *
 * Chaining rules: one hook's output is the next hook's input; every returned field is optional and
 * replaces only itself (`reason` included); `undefined`/`null` keep the current value; returning nothing
 * means no opinion; `beforeToolExecute` stops at the first `allow: false`.
 */
import * as z from 'zod'
import type { PointSpec, StepPointName } from './point-spec.js'

const jsonObject = z.record(z.string(), z.unknown())

const toolCall = z.looseObject({
  id: z.string(),
  name: z.string(),
  arguments: jsonObject,
})

const message = z.looseObject({ role: z.string(), text: z.string() })

function point<P, S, F extends Record<string, unknown>, O>(
  spec: Omit<PointSpec<P, S, F, O>, 'family' | 'mode'>,
): PointSpec<P, S, F, O> {
  return { ...spec, family: 'step', mode: 'return' }
}

const nothing = z.object({})

const toolDecision = z.object({
  allow: z.boolean(),
  reason: z.string().optional(),
  refusedBy: z.string().optional(),
  /**
   * A hook deferred the call (`defer: true`): it does not run now, and an agent with its own "decide
   * later" (Claude Code's defer) is told so; to every other host it is a refusal, so a host that does not
   * know the field never runs a deferred call.
   */
  deferred: z.boolean().optional(),
  arguments: jsonObject,
})
type ToolDecision = z.infer<typeof toolDecision>
type ToolCallState = z.infer<typeof toolCall> & { decision: ToolDecision }

const toolResult = z.object({ text: z.string(), isError: z.boolean() })

/** A run's start or end: hooks observe its payload and answer nothing. */
function runPoint<N extends string, S extends z.core.$ZodLooseShape>(name: N, summary: string, shape: S) {
  return point({
    name,
    summary,
    payload: z.looseObject(shape),
    fields: {},
    decides: {},
    args: (state) => [state],
    apply: (state) => state,
    stopped: () => false,
    result: () => ({}),
    output: nothing,
  })
}

export const stepPoints = {
  beforeRun: runPoint('beforeRun', 'Once, at the start of a run. Receives {sessionId, agentId, modelId}; returns nothing.', {
    sessionId: z.string(),
    agentId: z.string(),
    modelId: z.string(),
  }),

  afterRun: runPoint('afterRun', 'Once, when the run ends. Receives {reason} (end_turn, interrupted or error); returns nothing.', {
    reason: z.enum(['end_turn', 'interrupted', 'error']),
  }),

  beforeModelRequest: point({
    name: 'beforeModelRequest',
    summary: 'Every turn, before the provider call. Receives {system, model, messages}; may return {system}.',
    payload: z.looseObject({ system: z.string(), model: z.string(), messages: z.array(message) }),
    fields: { system: z.string() },
    decides: { system: 'context' },
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
    decides: { text: 'rewriteModelText', thinking: 'rewriteModelText' },
    args: (state) => [state],
    apply: (state, changes) => ({ ...state, ...changes }),
    stopped: () => false,
    result: (state) => ({ text: state.text, thinking: state.thinking }),
    output: z.object({ text: z.string(), thinking: z.string() }),
  }),

  beforeToolExecute: point({
    name: 'beforeToolExecute',
    summary: 'Before a tool runs. Receives {id, name, arguments}; may return {allow, reason, arguments, defer}.',
    payload: toolCall.transform(
      (call): ToolCallState => ({ ...call, decision: { allow: true, arguments: call.arguments } }),
    ),
    fields: { allow: z.boolean(), reason: z.string(), arguments: jsonObject, defer: z.boolean() },
    decides: { allow: 'refuse', reason: 'refuse', arguments: 'rewriteArguments', defer: 'refuse' },
    tool: (state) => state.name,
    args: ({ decision, ...call }) => [{ ...call, arguments: decision.arguments }],
    // Each field replaces only itself, `reason` too: a reason returned without `allow: false` is kept (the
    // host sees it whether or not the call is refused), and a refusal that gives none keeps the one an
    // earlier hook set. The default text is for a refusal no hook explained.
    apply: (state, changes, hook) => {
      const decision: ToolDecision = { ...state.decision }
      if (changes.arguments !== undefined) decision.arguments = changes.arguments
      if (changes.reason !== undefined) decision.reason = changes.reason
      if (changes.allow === false) {
        decision.allow = false
        decision.reason ??= `refused by hook '${hook}'`
        decision.refusedBy = hook
      } else if (changes.defer === true) {
        // A deferral stops the chain as a refusal does: the call does not run now, whoever reads the answer.
        decision.allow = false
        decision.deferred = true
        decision.reason ??= `deferred by hook '${hook}'`
        decision.refusedBy = hook
      }
      return { ...state, decision }
    },
    stopped: (state) => !state.decision.allow,
    refuse: (state, reason, by) => ({ ...state, decision: { ...state.decision, allow: false, reason, refusedBy: by } }),
    refused: (state) => !state.decision.allow,
    result: (state) => state.decision,
    output: toolDecision,
  }),

  afterToolExecute: point({
    name: 'afterToolExecute',
    summary: 'After a tool returns. Receives {call: {id, name, arguments}, result: {text, isError}}; may return {text, isError}.',
    payload: z.looseObject({ call: toolCall, result: toolResult }),
    fields: { text: z.string(), isError: z.boolean() },
    decides: { text: 'rewriteResults', isError: 'rewriteResults' },
    args: (state) => [state.call, state.result],
    apply: (state, changes) => ({ ...state, result: { ...state.result, ...changes } }),
    stopped: () => false,
    result: (state) => state.result,
    output: toolResult,
  }),
} as const satisfies Record<StepPointName, unknown>
