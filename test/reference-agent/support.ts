/** Runs the agent as a library against a fake API or a script, capturing what the terminal would show. */
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { type AgentOptions, type AgentResult, AnthropicModel, type Model, TerminalUI, type TerminalOptions, runAgent } from '../../src/host/reference-agent/index.js'
import type { FakeApi } from './fake-api.js'
import { addFiles } from '../support/sidecar.js'

export class Capture extends Writable {
  text = ''
  constructor(private readonly onWrite?: (text: string) => void) {
    super()
  }

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    const text = chunk.toString()
    this.text += text
    this.onWrite?.(text)
    done()
  }
}

export interface Ran {
  result: AgentResult
  stdout: string
  stderr: string
}

export function apiModel(api: FakeApi | string, options: { maxRetries?: number } = {}): AnthropicModel {
  return new AnthropicModel({ model: 'claude-test', apiKey: 'test-key', baseURL: typeof api === 'string' ? api : api.url, maxRetries: options.maxRetries ?? 0 })
}

/** A temp workdir holding `files`. */
export async function workdir(files: Record<string, string> = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'hookd-agent-work-'))
  await addFiles(dir, files)
  return dir
}

export async function runCaptured(
  options: Omit<AgentOptions, 'ui' | 'model' | 'workdir' | 'task'> & {
    model: Model
    workdir?: string
    task?: string
    onText?: (text: string) => void
    confirm?: TerminalOptions['confirm']
  },
): Promise<Ran> {
  const { onText, confirm, ...rest } = options
  const stdout = new Capture(onText)
  const stderr = new Capture()
  const ui = new TerminalUI({ stdout, stderr, spinner: false, color: false, confirm: confirm ?? (() => Promise.resolve(false)) })
  const result = await runAgent({ task: 'do the task', workdir: options.workdir ?? (await workdir()), ...rest, ui })
  return { result, stdout: stdout.text, stderr: stderr.text }
}

/** The local date strings a hook may have used while the test ran (UTC, as the today hook does). */
export function todayUtc(): string {
  return new Date().toISOString().slice(0, 10)
}
