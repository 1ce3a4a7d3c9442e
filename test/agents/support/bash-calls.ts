/**
 * Several scenarios in one run of Claude Code (or the Agent SDK): the Messages API stand-in asks for
 * one Bash call per turn, each with its own tool_use id, then finishes. A test reads back what the
 * model was told about each call by that id, so every scenario's assertion sees its own call only,
 * however many calls share the run.
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { type AnthropicApi, type MessagesRequest, type Reply, toolResults } from './anthropic-api.js'

export interface BashCall {
  /** The tool_use id; also names the scenario in failure messages. */
  id: string
  command: string
}

/** The stand-in's script: `calls[i]` on turn i, then a final text. */
export function oneCallPerTurn(calls: readonly BashCall[]): (request: MessagesRequest, index: number) => Reply {
  return (_request, index) => {
    const call = calls[index]
    return call ? { tools: [{ id: call.id, name: 'Bash', input: { command: call.command, description: `Run ${call.command}` } }] } : { text: 'done.' }
  }
}

/**
 * The tool_result the model read for the call `id`: it must be in the turn right after the call, so a
 * result that went missing or arrived out of turn fails here, naming the call.
 */
export function resultOf(api: AnthropicApi, calls: readonly BashCall[], id: string): { tool_use_id: string; is_error: boolean; text: string } {
  const turn = calls.findIndex((call) => call.id === id)
  if (turn < 0) throw new Error(`no call '${id}' in this run's script`)
  const next = api.main[turn + 1]
  if (!next) throw new Error(`the model was not called after '${id}' (${api.main.length} turns in all)`)
  const result = toolResults(next).find((r) => r.tool_use_id === id)
  if (!result) throw new Error(`the turn after '${id}' carries no tool_result for it: ${JSON.stringify(toolResults(next))}`)
  return result
}

/** Whether the victim folder `victim` under `dir` still holds its keep.txt: the call on it did not run. */
export function survived(dir: string, victim: string): boolean {
  return existsSync(join(dir, victim, 'keep.txt'))
}
