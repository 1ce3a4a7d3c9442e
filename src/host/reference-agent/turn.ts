/**
 * One turn of the loop, with its hooks, in this order:
 *
 *   turn:before          options (model, maxTokens) for this request
 *   context:transform    the messages sent this turn (the saved conversation is not changed)
 *   beforeModelRequest   this turn's system prompt, built from the agent's own: never saved, so a
 *                        hook that adds to it adds afresh every turn
 *   system:transform     the system prompt once more
 *   stream:start, the model streaming (stream:text per chunk), stream:end | stream:error
 *   afterModelResponse   its text rewrite is what gets saved
 *   turn:after, usage, then each tool call (tool-step.ts) and tool-results:after
 */
import { answerDecisions, systemDecisions } from './decisions.js'
import { type AgentError, fromSdkError } from './errors.js'
import type { MessageSnapshot } from './hook-map.js'
import { type Message, type Model, type ModelTurn, type TextBlock, type ToolResultBlock, type ToolUseBlock, message as messageSchema, textOf } from './model.js'
import type { Recorder } from './record.js'
import { type RunContext, untilAborted } from './run-context.js'
import { runToolCall } from './tool-step.js'
import type { AgentTool } from './tools.js'

export interface Conversation {
  messages: Message[]
  turns: number
  answer: string
}

export function toAgentError(err: unknown): AgentError {
  return fromSdkError(err, { model: '', baseURL: '' })
}

function snapshotText(m: Message): string {
  if (typeof m.content === 'string') return m.content
  return m.content
    .map((b) => {
      if (b.type === 'text') return b.text
      if (b.type === 'tool_use') return `[tool call ${b.name} ${JSON.stringify(b.input)}]`
      return `[tool result${b.is_error ? ' (error)' : ''}] ${b.content}`
    })
    .join('\n')
}

export interface TurnSetup {
  model: Model
  system: string
  maxTokens: number
  recorder: Recorder | undefined
  tools: readonly AgentTool[]
}

/** One turn: ask the model, save its answer, run its tool calls. True when the model must be asked again. */
export async function turn(run: RunContext, state: Conversation, setup: TurnSetup): Promise<boolean> {
  const n = state.turns
  const before = { turn: n, options: { model: setup.model.id, maxTokens: setup.maxTokens } }
  await run.fire('turn:before', before)
  const model = typeof before.options.model === 'string' && before.options.model ? before.options.model : setup.model.id
  const maxTokens = Number.isInteger(before.options.maxTokens) && before.options.maxTokens > 0 ? before.options.maxTokens : setup.maxTokens

  // The conversation sent this turn: context:transform may change it; the saved one stays as it is.
  const sent = { turn: n, messages: structuredClone(state.messages) }
  await run.fire('context:transform', sent)
  const checked = messageSchema.array().min(1).safeParse(sent.messages)
  if (!checked.success) run.ui.notice(`context:transform left messages the API cannot take (${checked.error.issues[0]?.message ?? 'invalid'}); the saved conversation is sent instead`)
  const messages = checked.success ? checked.data : state.messages
  const snapshot: MessageSnapshot[] = messages.map((m) => ({ role: m.role, text: snapshotText(m) }))

  // This turn's system prompt, from the agent's own: never saved, so a hook adds to it afresh each turn.
  const request = await run.call('beforeModelRequest', { system: setup.system, model, messages: snapshot })
  for (const d of systemDecisions(setup.system, request)) run.ui.decision(d)
  const systemEvent = { turn: n, system: request.result.system, model, messages: snapshot }
  await run.fire('system:transform', systemEvent)
  const system = typeof systemEvent.system === 'string' ? systemEvent.system : request.result.system

  const answer = await ask(run, n, setup, { model, system, messages, maxTokens })
  setup.recorder?.add(answer)
  const text = textOf(answer.content)
  const calls = answer.content.filter((b): b is ToolUseBlock => b.type === 'tool_use')
  const response = await run.call('afterModelResponse', { text, thinking: '', toolCalls: calls.map((c) => ({ id: c.id, name: c.name, arguments: c.input })) })
  for (const d of answerDecisions(text, response)) run.ui.decision(d)
  const saved: Message = { role: 'assistant', content: savedContent(answer, response.result.text) }
  state.messages.push(saved)
  state.answer = response.result.text
  await run.fire('turn:after', { turn: n, message: saved, stopReason: answer.stopReason, ...(answer.usage ? { usage: answer.usage } : {}) })
  if (answer.usage) await run.fire('usage', { turn: n, usage: answer.usage })

  if (!calls.length) {
    if (answer.stopReason === 'max_tokens') run.ui.notice(`the answer was cut at ${maxTokens} tokens (max_tokens)`)
    return false
  }
  const results: ToolResultBlock[] = []
  for (const call of calls) results.push(await runToolCall(run, n, call))
  state.messages.push({ role: 'user', content: results })
  await run.fire('tool-results:after', { turn: n, results })
  return true
}

/** The saved answer: the model's blocks, or the hooks' text in place of its text blocks. */
function savedContent(answer: ModelTurn, text: string): Array<TextBlock | ToolUseBlock> {
  const original = textOf(answer.content)
  const tools = answer.content.filter((b): b is ToolUseBlock => b.type === 'tool_use')
  if (text === original) return answer.content.filter((b) => b.type !== 'text' || b.text !== '')
  return [...(text ? [{ type: 'text' as const, text }] : []), ...tools]
}

/** Asks the model, streaming its text to the UI and to stream:text, in order. */
async function ask(
  run: RunContext,
  n: number,
  setup: TurnSetup,
  request: { model: string; system: string; messages: readonly Message[]; maxTokens: number },
): Promise<ModelTurn> {
  await run.fire('stream:start', { turn: n, model: request.model })
  run.ui.waiting(n, request.model)
  let streamed = ''
  let streamHooks: Promise<void> = Promise.resolve()
  let streamFailure: unknown
  let answer: ModelTurn
  try {
    answer = await untilAborted(
      setup.model.turn(
        { ...request, tools: setup.tools.map((t) => t.spec) },
        {
          text(delta) {
            streamed += delta
            run.ui.text(delta)
            const text = streamed
            streamHooks = streamHooks.then(() => run.fire('stream:text', { turn: n, delta, text })).catch((err: unknown) => {
              streamFailure ??= err
            })
          },
        },
        run.signal,
      ),
      run.signal,
    )
  } catch (err) {
    run.ui.answered(n)
    await streamHooks
    const e = toAgentError(err)
    if (e.kind !== 'interrupted' && !run.signal.aborted) {
      await run.fire('stream:error', { turn: n, kind: e.kind, error: e.message })
      await run.fire('turn:after', { turn: n, message: { role: 'assistant', content: streamed ? [{ type: 'text', text: streamed }] : [] }, stopReason: 'error' })
    }
    throw e
  }
  run.ui.answered(n)
  await streamHooks
  if (streamFailure) throw streamFailure
  if (streamed) await run.fire('stream:end', { turn: n, text: streamed })
  return answer
}
