/**
 * What the agent loop needs from a model, whichever answers: the Anthropic Messages API
 * (anthropic-model.ts) or a recorded conversation played back (scripted-model.ts). The conversation
 * types are the subset of the Messages API wire format the loop uses, so a saved conversation can be
 * sent to the API as it is, and zod can check one a hook rewrote (context:transform).
 */
import * as z from 'zod'

const jsonObject = z.record(z.string(), z.unknown())

export const textBlock = z.object({ type: z.literal('text'), text: z.string() })
export const toolUseBlock = z.object({ type: z.literal('tool_use'), id: z.string().min(1), name: z.string().min(1), input: jsonObject })
export const toolResultBlock = z.object({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z.string(),
  is_error: z.boolean().optional(),
})
export const block = z.discriminatedUnion('type', [textBlock, toolUseBlock, toolResultBlock])
export const message = z.object({ role: z.enum(['user', 'assistant']), content: z.union([z.string(), z.array(block)]) })

export type TextBlock = z.infer<typeof textBlock>
export type ToolUseBlock = z.infer<typeof toolUseBlock>
export type ToolResultBlock = z.infer<typeof toolResultBlock>
export type Block = z.infer<typeof block>
/** One message of the saved conversation, in the Messages API's shape. */
export type Message = z.infer<typeof message>

/** A tool as the model is told about it. */
export interface ToolSpec {
  name: string
  description: string
  input_schema: { type: 'object'; [key: string]: unknown }
}

export interface ModelRequest {
  model: string
  system: string
  messages: readonly Message[]
  tools: readonly ToolSpec[]
  maxTokens: number
}

/** Why the model stopped: the Messages API's stop_reason. */
export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence' | 'pause_turn' | 'refusal' | 'model_context_window_exceeded'

export interface Usage {
  inputTokens: number
  outputTokens: number
}

/** One answer of the model: its text and the tools it calls, in the order it gave them. */
export interface ModelTurn {
  content: Array<TextBlock | ToolUseBlock>
  stopReason: StopReason
  usage?: Usage
}

/** Called while the answer streams in. */
export interface StreamHandlers {
  text(delta: string): void
}

export interface Model {
  /** The model id hooks see (ctx.agent.modelId, beforeRun.modelId). */
  readonly id: string
  /** Asks for one answer. Rejects with an AgentError (see errors.ts); aborting rejects with kind 'interrupted'. */
  turn(request: ModelRequest, handlers: StreamHandlers, signal: AbortSignal): Promise<ModelTurn>
}

/** The text of an answer or message: its text blocks, joined. */
export function textOf(content: string | readonly Block[]): string {
  if (typeof content === 'string') return content
  return content
    .filter((b): b is TextBlock => b.type === 'text')
    .map((b) => b.text)
    .join('')
}
