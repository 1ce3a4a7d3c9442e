/**
 * `--record FILE`: keeps each answer exactly as the model gave it (before any hook rewrote it), and
 * writes them as a script that `--model scripted:FILE` plays back. The file is written when the run
 * ends, however it ends, so an interrupted or failed run can be replayed up to where it stopped.
 *
 * What the model said may hold secrets (a key it read, a customer's data), so the file is its owner's
 * alone: written 0600 (or as closed as the file it replaces, never more open), to a temp file of a new
 * random name created exclusively beside it (a link planted there is never followed) and renamed over
 * FILE. A link at FILE itself is refused rather than replaced: the person meant the file it names.
 */
import { randomBytes } from 'node:crypto'
import { lstat, open, rename, unlink } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import type { ModelTurn } from './model.js'
import { type ScriptFile, type ScriptTurn, turnToScript } from './script.js'

/** A recording's mode: its owner reads and writes it, nobody else. */
export const RECORDING_MODE = 0o600

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
    await writePrivately(this.file, `${JSON.stringify(script, null, 2)}\n`)
  }
}

/**
 * Why `file` cannot take a recording (a link, a folder, something not a file), or undefined when it
 * can: it does not exist yet, or is a regular file. `hookd agent` asks before the run, save() again.
 */
export async function recordingProblem(file: string): Promise<string | undefined> {
  const info = await lstat(file).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined
    throw err
  })
  if (!info || info.isFile()) return undefined
  if (info.isSymbolicLink()) return 'it is a symbolic link, and hookd writes a recording only to a file of its own; remove the link or record to another file'
  return `it is ${info.isDirectory() ? 'a folder' : 'not a regular file'}; record to a file`
}

async function writePrivately(file: string, text: string): Promise<void> {
  const problem = await recordingProblem(file)
  if (problem) throw new Error(problem)
  const existing = await lstat(file).catch(() => undefined)
  const mode = existing ? existing.mode & RECORDING_MODE : RECORDING_MODE
  const temp = join(dirname(file), `.${basename(file)}.${randomBytes(8).toString('hex')}.tmp`)
  // 'wx': O_CREAT | O_EXCL, so whatever already sits at the name (a planted link) fails the open.
  const handle = await open(temp, 'wx', mode)
  try {
    await handle.writeFile(text)
    await handle.close()
    // rename() replaces the name FILE itself: a link swapped in since the check is replaced, not followed.
    await rename(temp, file)
  } catch (err) {
    await handle.close().catch(() => {})
    await unlink(temp).catch(() => {})
    throw err
  }
}
