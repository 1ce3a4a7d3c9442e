/**
 * `--record FILE`: keeps each answer exactly as the model gave it (before any hook rewrote it), and
 * writes them as a script that `--model scripted:FILE` plays back. The file is written when the run
 * ends, however it ends, so an interrupted or failed run can be replayed up to where it stopped.
 */
import { rename, writeFile } from 'node:fs/promises'
import type { ModelTurn } from './model.js'
import { type ScriptFile, type ScriptTurn, turnToScript } from './script.js'

export class Recorder {
  private readonly turns: ScriptTurn[] = []

  constructor(
    readonly file: string,
    private readonly info: { model: string; task: string },
  ) {}

  add(turn: ModelTurn): void {
    this.turns.push(turnToScript(turn))
  }

  get size(): number {
    return this.turns.length
  }

  /** Writes the script (atomically: a temp file renamed over FILE). */
  async save(): Promise<void> {
    const script: ScriptFile = { version: 1, model: this.info.model, task: this.info.task, turns: this.turns }
    const temp = `${this.file}.${process.pid}.tmp`
    await writeFile(temp, `${JSON.stringify(script, null, 2)}\n`)
    await rename(temp, this.file)
  }
}
