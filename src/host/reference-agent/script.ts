/**
 * The script format: a model's turns as JSON, written by `--record FILE` and played by
 * `--model scripted:FILE` (docs/agent.md, "Scripted runs"). Each turn is what the model answered,
 * named as the afterModelResponse step point names it: its text and its tool calls.
 *
 *   { "version": 1, "model": "claude-sonnet-4-5", "task": "tidy up",
 *     "turns": [
 *       { "text": "Let me look.", "toolCalls": [{ "id": "toolu_1", "name": "shell", "arguments": { "command": "ls" } }] },
 *       { "text": "Done." } ] }
 *
 * Only `version` and `turns` are required; a tool call's `id` defaults to `call_<turn>_<index>` and a
 * turn's `stopReason` to `tool_use` when it calls tools and `end_turn` otherwise.
 */
import { readFile } from 'node:fs/promises'
import * as z from 'zod'
import { AgentError } from './errors.js'
import type { ModelTurn, StopReason, TextBlock, ToolUseBlock } from './model.js'
import { issueText } from '../../protocol/issue-text.js'

const stopReason = z.enum(['end_turn', 'tool_use', 'max_tokens', 'stop_sequence', 'pause_turn', 'refusal', 'model_context_window_exceeded'])

const scriptToolCall = z.strictObject({
  id: z.string().min(1).optional(),
  name: z.string().min(1, 'a tool call needs a name'),
  arguments: z.record(z.string(), z.unknown()).default({}),
})

const scriptTurn = z.strictObject({
  text: z.string().default(''),
  toolCalls: z.array(scriptToolCall).default([]),
  stopReason: stopReason.optional(),
})

export const scriptFile = z.strictObject({
  version: z.literal(1, 'version must be 1'),
  /** The model that produced the turns (informational; hooks see it as the model id). */
  model: z.string().optional(),
  /** The task of the recorded run (informational). */
  task: z.string().optional(),
  turns: z.array(scriptTurn).min(1, 'a script needs at least one turn'),
})

export type ScriptFile = z.output<typeof scriptFile>
export type ScriptTurn = z.output<typeof scriptTurn>

/** Parses a script's JSON text; the error names the file, the place and what was expected. */
export function parseScript(text: string, file: string): ScriptFile {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (err) {
    throw new AgentError('script', `${file} is not valid JSON (${(err as Error).message}); a script looks like {"version": 1, "turns": [{"text": "..."}]}`)
  }
  const parsed = scriptFile.safeParse(json)
  if (!parsed.success) {
    throw new AgentError('script', `${file} is not a hookd agent script: ${issueText(parsed.error)} (the format is in docs/agent.md, "Scripted runs")`)
  }
  return parsed.data
}

export async function loadScript(file: string): Promise<ScriptFile> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (err) {
    throw new AgentError('script', `cannot read the script ${file}: ${(err as Error).message.replace(/^[A-Z]+: /, '')}`)
  }
  return parseScript(text, file)
}

/** A script turn as the model's answer. */
export function turnFromScript(turn: ScriptTurn, index: number): ModelTurn {
  const content: Array<TextBlock | ToolUseBlock> = []
  if (turn.text) content.push({ type: 'text', text: turn.text })
  turn.toolCalls.forEach((call, i) => {
    content.push({ type: 'tool_use', id: call.id ?? `call_${index + 1}_${i + 1}`, name: call.name, input: call.arguments })
  })
  const stop: StopReason = turn.stopReason ?? (turn.toolCalls.length ? 'tool_use' : 'end_turn')
  return { content, stopReason: stop }
}

/** The model's answer as a script turn (what --record writes). */
export function turnToScript(turn: ModelTurn): ScriptTurn {
  const text = turn.content
    .filter((b): b is TextBlock => b.type === 'text')
    .map((b) => b.text)
    .join('')
  const toolCalls = turn.content
    .filter((b): b is ToolUseBlock => b.type === 'tool_use')
    .map((b) => ({ id: b.id, name: b.name, arguments: b.input }))
  return { text, toolCalls, stopReason: turn.stopReason }
}
