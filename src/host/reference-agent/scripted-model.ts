/**
 * A model that plays a recorded conversation (script.ts) instead of calling the API: turn N of the run
 * gets turn N of the script, whatever was asked. Hook authors use it to try a hook against a known
 * sequence of tool calls, without a key and without spending tokens.
 */
import { AgentError } from './errors.js'
import type { Model, ModelRequest, ModelTurn, StreamHandlers } from './model.js'
import { type ScriptFile, loadScript, turnFromScript } from './script.js'

export const SCRIPTED_PREFIX = 'scripted:'

export class ScriptedModel implements Model {
  readonly id: string
  private next = 0

  constructor(
    private readonly script: ScriptFile,
    private readonly file = 'the script',
  ) {
    this.id = script.model ?? 'scripted'
  }

  static async load(file: string): Promise<ScriptedModel> {
    return new ScriptedModel(await loadScript(file), file)
  }

  turn(_request: ModelRequest, handlers: StreamHandlers, signal: AbortSignal): Promise<ModelTurn> {
    if (signal.aborted) return Promise.reject(new AgentError('interrupted', 'interrupted while the model was answering'))
    const index = this.next++
    const turn = this.script.turns[index]
    if (!turn) {
      const n = this.script.turns.length
      return Promise.reject(
        new AgentError(
          'script',
          `${this.file} has ${n} turn${n === 1 ? '' : 's'}, and the run asked the model for turn ${index + 1} (the last turn called tools, so the model is asked again); add a final turn without toolCalls`,
        ),
      )
    }
    if (turn.text) handlers.text(turn.text)
    return Promise.resolve(turnFromScript(turn, index))
  }
}
