/**
 * The event points the agent loop fires on its hookable instance, with the context each carries. The
 * map is hookable's type parameter, so a wrong point name or field is a compile error in the loop and
 * in any host handler registered on the same instance. The bridge sends the JSON-safe part of a
 * context to hookd and applies the fields the point lets a hook change (src/protocol/points/event-points.ts).
 */
import type { Message, StopReason, ToolResultBlock, Usage } from './model.js'

export type RunReason = 'end_turn' | 'interrupted' | 'error'

/** Every tool:* context. */
export interface ToolEvent {
  turn: number
  callId: string
  name: string
  input: Record<string, unknown>
}

/** A message as the beforeModelRequest step point shows it: role and text. */
export type MessageSnapshot = { role: string; text: string }

type Handler<C> = (ctx: C) => void | Promise<void>

export type AgentHookMap = {
  'agent:start': Handler<{ sessionId: string; agentId: string; modelId: string; task: string; workdir: string }>
  /** Mutable: options (model, maxTokens) for this turn's request. */
  'turn:before': Handler<{ turn: number; options: { model: string; maxTokens: number } }>
  /** Mutable: messages, the conversation sent with this turn's request (the saved one is not changed). */
  'context:transform': Handler<{ turn: number; messages: Message[] }>
  /** Mutable: system, this turn's system prompt (never saved). */
  'system:transform': Handler<{ turn: number; system: string; model: string; messages: MessageSnapshot[] }>
  'stream:start': Handler<{ turn: number; model: string }>
  'stream:text': Handler<{ turn: number; delta: string; text: string }>
  'stream:end': Handler<{ turn: number; text: string }>
  'stream:error': Handler<{ turn: number; kind: string; error: string }>
  'turn:after': Handler<{ turn: number; message: Message; stopReason: StopReason | 'error'; usage?: Usage }>
  usage: Handler<{ turn: number; usage: Usage }>
  /** Mutable: block + reason refuse the call; result answers it without running the tool. */
  'tool:gate': Handler<ToolEvent & { block?: boolean; reason?: string; result?: unknown }>
  /** Mutable: result answers a call to a tool that does not exist; suppressError makes it a normal result. */
  'tool:unknown': Handler<ToolEvent & { result?: unknown; suppressError?: boolean }>
  'validation:reject': Handler<ToolEvent & { error: string }>
  'tool:before': Handler<ToolEvent>
  /** Mutable: result, what the model reads instead of the error. */
  'tool:error': Handler<ToolEvent & { error: string; result?: unknown }>
  /** Mutable: result and isError, what the model reads. */
  'tool:transform': Handler<ToolEvent & { result: unknown; isError: boolean; outputBytes: number }>
  'tool:after': Handler<ToolEvent & { result: string; isError: boolean; outputBytes: number }>
  'tool-results:after': Handler<{ turn: number; results: ToolResultBlock[] }>
  'agent:abort': Handler<{ reason: 'interrupted' }>
  'agent:done': Handler<{ reason: RunReason; turns: number; error?: string }>
}

export type AgentPoint = keyof AgentHookMap
