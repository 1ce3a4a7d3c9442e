/**
 * The agents' event points: moments of the agents' own loops (src/agents/) that no step point has. A
 * permission dialog about to open, a subagent starting or stopping, a compaction, the agent's own
 * settings changing, a notice for the person, a file changing on disk, a model call and its answer as
 * the agent lets hooks change them, the tools it is about to offer the model (which hooks may only
 * narrow). They are event points (the
 * handler changes the event it is given: docs/points.md), sent by every agent whose events carry the
 * moment (docs/agents.md has each agent's table) and by any host that sends them over gRPC. The fields
 * a hook may change are the decisions the agents let the moment carry; an agent that cannot carry one
 * drops it with a line for the operator (its dialect says which). This file is part of the one
 * catalog: points.ts merges it into `points`.
 */
import * as z from 'zod'
import { type EventPayload, type EventState, type Fields, changedFields, eventSchema } from './event-points.js'
import type { FieldDecision, PointSpec } from './point-spec.js'

const text = z.string().max(100_000)

/** What a hook may answer at a permission dialog: its decision, and the call's arguments rewritten with an allow. */
export const PERMISSION_DECISIONS = ['allow', 'deny', 'ask', 'defer'] as const
export type PermissionDecision = (typeof PERMISSION_DECISIONS)[number]

/** The points and the fields a hook may change at each (none: it observes). */
const AGENT_FIELDS = {
  // The agent is about to ask its person whether a tool call may run. Receives the canonical call
  // ({id, name, arguments}, the agent's own `tool`, and `subagent` when a subagent makes it); may set
  // `decision` (allow, deny, ask: leave it to the dialog, defer: the agent's own "decide later"),
  // `reason`, and with allow the rewritten `arguments`.
  'permission:request': { decision: z.enum(PERMISSION_DECISIONS), reason: text, arguments: z.record(z.string(), z.unknown()) },
  // A subagent starts ({subagent: {id, type}}): `context` is text for it to read first.
  'subagent:start': { context: text },
  // A subagent is about to stop ({subagent, lastMessage}): `keepWorking` with a `reason` sends it back to work.
  'subagent:stop': { keepWorking: z.boolean(), reason: text },
  // The agent is about to compact its context ({trigger: manual or auto, instructions}): `block` with a `reason` stops it.
  'compact:before': { block: z.boolean(), reason: text },
  // The compaction is done ({trigger, summary}).
  'compact:after': {},
  // The agent's own settings are about to change ({source, path}): `block` with a `reason` keeps them as they were.
  'config:change': { block: z.boolean(), reason: text },
  // The agent shows its person a notice ({kind, message, title}).
  notification: {},
  // A file the agent watches changed on disk ({path, change}).
  'file:changed': {},
  // Gemini CLI (BeforeModel, AfterModel, BeforeToolSelection):
  // The agent is about to call its model ({model, messages: [{role, text}], config: {temperature,
  // maxOutputTokens, topP, topK}}): `messages` rewrites their text in order (more are added at the end),
  // `model` and `config` change the call, `block` with a `reason` stops it.
  'model:request': {
    messages: z.array(z.object({ role: z.enum(['user', 'model', 'system']), text: z.string().max(1_000_000) })).max(10_000),
    model: z.string().min(1).max(256),
    config: z.object({ temperature: z.number(), maxOutputTokens: z.number().int().positive(), topP: z.number(), topK: z.number() }).partial(),
    block: z.boolean(),
    reason: text,
  },
  // The model's answer, as the agent receives it ({text, finishReason}; Gemini CLI: one streamed chunk): `text` replaces it.
  'model:response': { text },
  // The agent is about to offer the model its tools ({tools: names, as hooks see calls' names}): `tools`
  // narrows the list; a name not offered is not added (NARROWED).
  'tools:select': { tools: z.array(z.string().max(256)).max(1000) },
} as const satisfies Record<string, Fields>

export type AgentPointName = keyof typeof AGENT_FIELDS

/**
 * The decision each field makes (hook.json "permissions".decide, point-spec.ts FieldDecision): a
 * dialog's decision approves or refuses, what stops or blocks something refuses, rewritten arguments
 * rewrite the call, and text for the model to read first adds context.
 */
const DECIDES: { readonly [N in AgentPointName]: { readonly [K in keyof (typeof AGENT_FIELDS)[N]]: FieldDecision } } = {
  'permission:request': { decision: 'permission', reason: 'refuse', arguments: 'rewriteArguments' },
  'subagent:start': { context: 'context' },
  'subagent:stop': { keepWorking: 'refuse', reason: 'refuse' },
  'compact:before': { block: 'refuse', reason: 'refuse' },
  'compact:after': {},
  'config:change': { block: 'refuse', reason: 'refuse' },
  notification: {},
  'file:changed': {},
  // What the model reads and how it is called is the model's text; appending messages only adds context.
  'model:request': { messages: 'context', model: 'rewriteModelText', config: 'rewriteModelText', block: 'refuse', reason: 'refuse' },
  'model:response': { text: 'rewriteModelText' },
  // The tools the model is offered, as mcp:tools:filter's are.
  'tools:select': { tools: 'rewriteModelText' },
}

/** How hookd refuses at the agents' gates when the hooks could not decide: the field that refuses, and its value. */
const GATES: Partial<Record<AgentPointName, { field: string; value: unknown }>> = {
  'permission:request': { field: 'decision', value: 'deny' },
  'config:change': { field: 'block', value: true },
}

/** Fields a hook may only narrow: a list whose new value keeps only what the event offered. */
const NARROWED: Partial<Record<AgentPointName, string>> = { 'tools:select': 'tools' }

/** `changes` with a narrowed field kept to the items the current event holds. */
function narrowed(name: AgentPointName, current: EventPayload, changes: Record<string, unknown>): Record<string, unknown> {
  const field = NARROWED[name]
  if (field === undefined || !Array.isArray(changes[field])) return changes
  const offered = new Set(Array.isArray(current[field]) ? (current[field] as unknown[]) : [])
  return { ...changes, [field]: (changes[field] as unknown[]).filter((item) => offered.has(item)) }
}

/**
 * How strict each permission-dialog decision is: a later hook may make the decision stricter, never
 * looser, so that what an earlier hook (the operator's floor first) kept for a person, deferred or
 * refused stands: allow < ask < defer < deny.
 */
const STRICTNESS: Readonly<Record<PermissionDecision, number>> = { allow: 0, ask: 1, defer: 2, deny: 3 }

function stricter(name: AgentPointName, current: EventPayload, changes: Record<string, unknown>): Record<string, unknown> {
  if (name !== 'permission:request') return changes
  const was = current.decision
  const now = changes.decision
  if (typeof was !== 'string' || typeof now !== 'string' || !(was in STRICTNESS) || !(now in STRICTNESS)) return changes
  if (STRICTNESS[now as PermissionDecision] >= STRICTNESS[was as PermissionDecision]) return changes
  // A looser decision keeps the stricter one already made, and with it the reason and arguments it stood on.
  const { decision: _looser, reason: _why, arguments: _args, ...rest } = changes
  return rest
}

type AgentPointSpec = PointSpec<EventPayload, EventState, Record<string, unknown>, EventPayload>

function agentPoint(name: AgentPointName, fields: Fields): AgentPointSpec {
  const decides = DECIDES[name] as Readonly<Record<string, FieldDecision>>
  const names = Object.keys(fields)
  const gate = GATES[name]
  const refused = (state: EventState): boolean => gate !== undefined && state.current[gate.field] === gate.value
  return {
    name,
    family: 'event',
    mode: 'mutate',
    summary: names.length
      ? `agent event point; the handler may change ${names.join(', ')} on the event it is given.`
      : 'agent event point; the handler observes the event it is given.',
    payload: eventSchema,
    fields,
    decides,
    // A permission dialog names the tool whose arguments a rewrite changes (a permission lists tools by name).
    ...(name === 'permission:request' ? { tool: (state: EventState) => (typeof state.current.name === 'string' ? state.current.name : '') } : {}),
    args: (state) => [state.current],
    apply: (state, changes) => ({ initial: state.initial, current: { ...state.current, ...stricter(name, state.current, narrowed(name, state.current, changes)) } }),
    // A refusal at a gate is final: no later hook runs to undo it.
    stopped: refused,
    ...(gate
      ? {
          refuse: (state: EventState, reason: string) => ({ initial: state.initial, current: { ...state.current, [gate.field]: gate.value, reason } }),
          refused,
        }
      : {}),
    result: (state) => changedFields(state, names),
    output: z.record(z.string(), z.unknown()),
  }
}

type AgentPointTable = { readonly [N in AgentPointName]: AgentPointSpec }

export const AGENT_POINT_NAMES = Object.keys(AGENT_FIELDS) as AgentPointName[]

export function isAgentPointName(name: string): name is AgentPointName {
  return Object.hasOwn(AGENT_FIELDS, name)
}

export function agentPoints(): AgentPointTable {
  const table: Partial<Record<AgentPointName, AgentPointSpec>> = {}
  for (const [name, fields] of Object.entries(AGENT_FIELDS) as Array<[AgentPointName, Fields]>) table[name] = agentPoint(name, fields)
  return table as AgentPointTable
}
