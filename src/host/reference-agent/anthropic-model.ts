/**
 * The model on the Anthropic Messages API, through @anthropic-ai/sdk, streamed: text deltas reach the
 * terminal (and the stream:text hook point) as they arrive, and the finished message, tool calls
 * included, is what the loop acts on.
 */
import Anthropic from '@anthropic-ai/sdk'
import { AgentError, NO_KEY_MESSAGE, fromSdkError } from './errors.js'
import type { Message, Model, ModelRequest, ModelTurn, StopReason, StreamHandlers, TextBlock, ToolUseBlock } from './model.js'

type MessageParam = Anthropic.MessageParam
type BlockParam = Anthropic.ContentBlockParam

/** A saved message as the SDK types it (`is_error` is left out rather than undefined). */
function toParam(m: Message): MessageParam {
  if (typeof m.content === 'string') return { role: m.role, content: m.content }
  const content = m.content.map((b): BlockParam => {
    if (b.type !== 'tool_result') return b
    return { type: 'tool_result', tool_use_id: b.tool_use_id, content: b.content, ...(b.is_error ? { is_error: true } : {}) }
  })
  return { role: m.role, content }
}

export interface AnthropicModelOptions {
  model: string
  /** Default: ANTHROPIC_API_KEY. */
  apiKey?: string
  /** Default: ANTHROPIC_BASE_URL, else the SDK's default. */
  baseURL?: string
  /** Where ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL are read. Default: process.env. */
  env?: NodeJS.ProcessEnv
  /** Retries of rate-limited, overloaded and failed requests, as the SDK does them. Default 2. */
  maxRetries?: number
  /** Per-request timeout in ms. Default: the SDK's. */
  timeoutMs?: number
}

const STOP_REASONS: readonly StopReason[] = ['end_turn', 'tool_use', 'max_tokens', 'stop_sequence', 'pause_turn', 'refusal', 'model_context_window_exceeded']

export class AnthropicModel implements Model {
  readonly id: string
  private readonly client: Anthropic

  constructor(options: AnthropicModelOptions) {
    const env = options.env ?? process.env
    const apiKey = options.apiKey ?? env.ANTHROPIC_API_KEY
    if (!apiKey) throw new AgentError('no-key', NO_KEY_MESSAGE)
    // Read as the SDK reads it (trimmed, empty is unset), from `env`: a command run in-process has its own.
    const baseURL = options.baseURL ?? (env.ANTHROPIC_BASE_URL?.trim() || undefined)
    this.id = options.model
    this.client = new Anthropic({
      apiKey,
      // Left undefined, the SDK uses its default address.
      ...(baseURL !== undefined ? { baseURL } : {}),
      ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
      ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
    })
  }

  get baseURL(): string {
    return this.client.baseURL
  }

  async turn(request: ModelRequest, handlers: StreamHandlers, signal: AbortSignal): Promise<ModelTurn> {
    try {
      const stream = this.client.messages.stream(
        {
          model: request.model,
          max_tokens: request.maxTokens,
          system: request.system,
          messages: request.messages.map(toParam),
          tools: request.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.input_schema })),
        },
        { signal },
      )
      stream.on('text', (delta) => handlers.text(delta))
      const message = await stream.finalMessage()
      const content: Array<TextBlock | ToolUseBlock> = []
      for (const b of message.content) {
        if (b.type === 'text') content.push({ type: 'text', text: b.text })
        else if (b.type === 'tool_use') {
          const input = b.input !== null && typeof b.input === 'object' && !Array.isArray(b.input) ? (b.input as Record<string, unknown>) : {}
          content.push({ type: 'tool_use', id: b.id, name: b.name, input })
        }
      }
      const stopReason = STOP_REASONS.includes(message.stop_reason as StopReason) ? (message.stop_reason as StopReason) : 'end_turn'
      return { content, stopReason, usage: { inputTokens: message.usage.input_tokens, outputTokens: message.usage.output_tokens } }
    } catch (err) {
      if (signal.aborted) throw new AgentError('interrupted', 'interrupted while the model was answering')
      throw fromSdkError(err, { model: request.model, baseURL: this.client.baseURL })
    }
  }
}
