/**
 * The event points (docs/points.md; a hookable host's events): every hook point of a hookable-based
 * agent host, the fields a handler may change, and the step point whose handlers also serve it.
 *
 * An event point's payload is the serializable part of the host's hook context. Handlers mutate a copy;
 * the chain returns only the changed fields the point allows, so the host can apply them to its live
 * context and "awaited in order, last write wins" holds across the process boundary. This file is part
 * of the one catalog: points.ts merges it into `points`.
 */
import * as z from 'zod'
import type { Alias, FieldDecision, PointSpec } from './point-spec.js'
import { sameJson } from '../json.js'

export type EventPayload = Record<string, unknown>

/** The chain's value: the event as the host sent it and as the hooks have changed it so far. */
export interface EventState {
  initial: EventPayload
  current: EventPayload
}

export type Fields = Record<string, z.ZodType>

const anyJson = z.unknown()
const gate: Fields = { block: z.boolean(), reason: z.string(), result: anyJson }
const toolTransform: Fields = { result: anyJson, isError: z.boolean() }

/** Points whose handlers may change fields, with those fields. */
const MUTABLE = {
  'turn:before': { options: z.record(z.string(), z.unknown()) },
  'context:transform': { messages: z.array(z.unknown()) },
  'system:transform': { system: z.string() },
  'tool:gate': gate,
  'tool:unknown': { result: anyJson, suppressError: z.boolean() },
  'tool:transform': toolTransform,
  'tool:error': { result: anyJson },
  'mcp:tool:gate': gate,
  'mcp:tool:transform': { result: anyJson },
  'mcp:tools:filter': { tools: z.array(z.unknown()) },
  'skills:catalog': { catalog: anyJson },
  'content-ref:resolve': { data: anyJson },
  'tracing:redact': { redacted: anyJson },
  'child:tool:gate': gate,
  'child:tool:transform': toolTransform,
} as const satisfies Record<string, Fields>

/**
 * The decision each mutable field makes (hook.json "permissions".decide, point-spec.ts FieldDecision):
 * a gate's fields refuse; what a tool, an MCP tool or a content reference returned, and what a trace
 * records of it, are results; what the model is offered or reads (its options, tools, skills, system
 * prompt, messages) is its text, where appending to the system prompt or the messages adds context.
 */
const gateDecides = { block: 'refuse', reason: 'refuse', result: 'refuse' } as const
const DECIDES: { readonly [N in keyof typeof MUTABLE]: { readonly [K in keyof (typeof MUTABLE)[N]]: FieldDecision } } = {
  'turn:before': { options: 'rewriteModelText' },
  'context:transform': { messages: 'context' },
  'system:transform': { system: 'context' },
  'tool:gate': gateDecides,
  'tool:unknown': { result: 'rewriteResults', suppressError: 'rewriteResults' },
  'tool:transform': { result: 'rewriteResults', isError: 'rewriteResults' },
  'tool:error': { result: 'rewriteResults' },
  'mcp:tool:gate': gateDecides,
  'mcp:tool:transform': { result: 'rewriteResults' },
  'mcp:tools:filter': { tools: 'rewriteModelText' },
  'skills:catalog': { catalog: 'rewriteModelText' },
  'content-ref:resolve': { data: 'rewriteResults' },
  'tracing:redact': { redacted: 'rewriteResults' },
  'child:tool:gate': gateDecides,
  'child:tool:transform': { result: 'rewriteResults', isError: 'rewriteResults' },
}

/** Points that only observe. */
const OBSERVERS = [
  // Turn and stream
  'system:before', 'agent:start', 'stream:start', 'stream:thinking', 'stream:text', 'stream:end', 'stream:progress',
  'stream:server_tool_use', 'stream:server_tool_result', 'stream:error', 'stream:retry', 'model:fallback',
  'context:overflow', 'compact:start', 'compact:progress', 'compact:end', 'steer:inject', 'turn:after',
  'tool-results:after', 'usage', 'output', 'agent:done', 'agent:abort',
  // Tool and MCP
  'tool:dispatched', 'tool:before', 'tool:after', 'tool:cancelled', 'mcp:tool:before', 'mcp:tool:after',
  'mcp:tool:error', 'validation:reject', 'validation:coerce',
  // MCP connection and skills
  'mcp:bootstrap:start', 'mcp:bootstrap:end', 'mcp:bootstrap:settled', 'mcp:tools:list', 'mcp:connect', 'mcp:error',
  'mcp:warn', 'mcp:close', 'mcp:auth:required', 'mcp:auth:url', 'mcp:auth:success', 'mcp:auth:error',
  'skills:resolve', 'skills:activate', 'skills:deactivate',
  // Session and background tasks
  'session:start', 'session:end', 'session:turns', 'session:meta', 'session:save', 'background:start',
  'background:exit', 'background:stall', 'background:reassign', 'background:adopt', 'background:reconcile',
  'execution:ready', 'tool-state:commit-failed',
  // Decisions, budgets and guards
  'decision:start', 'decision:end', 'budget:exceeded', 'tool-budget:exceeded', 'repeat-guard:exceeded',
  // Provider, cache and repair
  'cache:break', 'cache:drift', 'history:repair', 'provider:input-transformations', 'provider:diagnostic',
  'oauth:refresh', 'pairing:repair', 'replay:done', 'tool-batch:resumed', 'resume:mismatch',
  // Sub-agents: the parent's own spawns, and child events re-fired on the parent
  'spawn:queued', 'spawn:before', 'spawn:complete', 'spawn:error',
  'child:spawn:queued', 'child:spawn:before', 'child:spawn:complete', 'child:spawn:error',
  'child:stream:text', 'child:stream:thinking', 'child:stream:end', 'child:stream:error', 'child:stream:retry',
  'child:stream:server_tool_use', 'child:stream:server_tool_result', 'child:tool:dispatched', 'child:tool:before',
  'child:tool:after', 'child:tool:error', 'child:tool:cancelled', 'child:validation:reject',
  'child:repeat-guard:exceeded', 'child:background:start', 'child:background:exit', 'child:background:stall',
  'child:background:reassign', 'child:background:adopt', 'child:background:reconcile', 'child:turn:after',
  'child:artifact:recorded',
] as const

type MutableName = keyof typeof MUTABLE
type ObserverName = (typeof OBSERVERS)[number]
export type EventPointName = MutableName | ObserverName

export const eventSchema = z
  .record(z.string(), z.unknown())
  .transform((event): EventState => ({ initial: event, current: event }))

/** The changed allowed fields between the event as sent and as the chain left it. */
export function changedFields(state: EventState, fields: readonly string[]): EventPayload {
  const out: EventPayload = {}
  for (const field of fields) {
    if (Object.hasOwn(state.current, field) && !sameJson(state.initial[field], state.current[field])) {
      out[field] = state.current[field]
    }
  }
  return out
}

const str = (v: unknown, fallback = ''): string => (typeof v === 'string' ? v : v === undefined || v === null ? fallback : JSON.stringify(v))
const obj = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {}

function split(changes: Record<string, unknown>, keep: readonly string[]): string[] {
  return Object.keys(changes).filter((k) => !keep.includes(k))
}

/**
 * tool:gate <- beforeToolExecute: allow false blocks; `reason` is a field like any other (set alone, it
 * sets the event's reason; a block without one keeps the reason already on the event); arguments cannot
 * be rewritten at an event gate.
 */
const gateAlias: Alias<EventState> = {
  point: 'beforeToolExecute',
  skip: (s) => s.current.block === true,
  payload: (s) => ({ id: str(s.current.callId ?? s.current.id), name: str(s.current.name), arguments: obj(s.current.input) }),
  changes: (r, s) => {
    const changes: Record<string, unknown> = {}
    if (typeof r.reason === 'string') changes.reason = r.reason
    if (r.allow === false) {
      changes.block = true
      if (changes.reason === undefined && typeof s.current.reason !== 'string') changes.reason = 'refused by a hook'
    }
    return { changes, dropped: split(r, ['allow', 'reason']) }
  },
}

const ALIASES: Partial<Record<EventPointName, Alias<EventState>>> = {
  'tool:gate': gateAlias,
  'tool:transform': {
    point: 'afterToolExecute',
    skip: () => false,
    payload: (s) => ({
      call: { id: str(s.current.callId ?? s.current.id), name: str(s.current.name), arguments: obj(s.current.input) },
      result: { text: str(s.current.result), isError: s.current.isError === true },
    }),
    changes: (r) => {
      const changes: Record<string, unknown> = {}
      if (r.text !== undefined) changes.result = r.text
      if (r.isError !== undefined) changes.isError = r.isError
      return { changes, dropped: [] }
    },
  },
  'system:transform': {
    point: 'beforeModelRequest',
    skip: () => false,
    payload: (s) => ({
      system: str(s.current.system),
      model: str(s.current.model ?? s.current.modelId),
      messages: Array.isArray(s.current.messages) ? s.current.messages : [],
    }),
    changes: (r) => ({ changes: r.system !== undefined ? { system: r.system } : {}, dropped: [] }),
  },
  'agent:start': {
    point: 'beforeRun',
    skip: () => false,
    payload: (s) => ({ sessionId: str(s.current.sessionId), agentId: str(s.current.agentId), modelId: str(s.current.modelId ?? s.current.model) }),
    changes: () => ({ changes: {}, dropped: [] }),
  },
  'agent:done': {
    point: 'afterRun',
    skip: () => false,
    payload: (s) => {
      const reason = s.current.reason
      return { reason: reason === 'interrupted' || reason === 'error' ? reason : s.current.aborted === true ? 'interrupted' : 'end_turn' }
    },
    changes: () => ({ changes: {}, dropped: [] }),
  },
}

function eventPoint(name: EventPointName, fields: Fields, decides: Readonly<Record<string, FieldDecision>>): PointSpec<EventPayload, EventState, Record<string, unknown>, EventPayload> {
  const names = Object.keys(fields)
  const alias = ALIASES[name]
  return {
    name,
    family: 'event',
    mode: 'mutate',
    summary: names.length
      ? `event point; the handler may change ${names.join(', ')} on the event it is given.`
      : 'event point; the handler observes the event it is given.',
    payload: eventSchema,
    fields,
    decides,
    args: (state) => [state.current],
    apply: (state, changes) => ({ initial: state.initial, current: { ...state.current, ...changes } }),
    stopped: () => false,
    ...('block' in fields
      ? {
          refuse: (state: EventState, reason: string) => ({ initial: state.initial, current: { ...state.current, block: true, reason } }),
          refused: (state: EventState) => state.current.block === true,
        }
      : {}),
    result: (state) => changedFields(state, names),
    output: z.record(z.string(), z.unknown()),
    ...(alias ? { alias } : {}),
  }
}

type EventPointTable = { readonly [N in EventPointName]: PointSpec<EventPayload, EventState, Record<string, unknown>, EventPayload> }

export function eventPoints(): EventPointTable {
  const table: Partial<Record<EventPointName, PointSpec<EventPayload, EventState, Record<string, unknown>, EventPayload>>> = {}
  for (const [name, fields] of Object.entries(MUTABLE) as Array<[MutableName, Fields]>) table[name] = eventPoint(name, fields, DECIDES[name])
  for (const name of OBSERVERS) table[name] = eventPoint(name, {}, {})
  return table as EventPointTable
}
