/**
 * What the agent tells the person running it, as it happens. TerminalUI (terminal.ts) renders it on a
 * terminal; a host embedding the loop can render it its own way.
 */
import type { CallOrigin, Message as ConfirmMessage } from '../capabilities.js'
import type { Diagnostic } from '../../protocol/diagnostic.js'
import type { LogLineData } from '../../protocol/wire.js'
import type { Decision } from './decisions.js'
import type { RunReason } from './hook-map.js'

export interface RunInfo {
  model: string
  hooks: readonly string[]
  workdir: string
  /** Where the hooks run: "embedded sidecar", an address, or "no hooks". */
  sidecar: string
}

export interface ToolCallView {
  id: string
  name: string
  input: Record<string, unknown>
}

export interface RunEnd {
  reason: RunReason
  /** Set when reason is 'error'. */
  error?: string
  turns: number
}

export interface AgentUI {
  start(info: RunInfo): void
  /** The request is sent; nothing has come back yet. */
  waiting(turn: number, model: string): void
  /** A piece of the model's answer. */
  text(delta: string): void
  /** The model's answer is complete (or failed). */
  answered(turn: number): void
  toolCall(call: ToolCallView): void
  toolResult(call: ToolCallView, result: { text: string; isError: boolean }): void
  /** A hook refused or rewrote something. */
  decision(decision: Decision): void
  /** A hook's ctx.log line, while the hook runs. */
  log(line: LogLineData): void
  notify(message: ConfirmMessage, origin: CallOrigin): void
  /** A hook failed, was dropped, or hookd could not answer. */
  diagnostic(d: Diagnostic): void
  /** Anything else worth a line. */
  notice(text: string): void
  /** ctx.confirm in an interactive run. */
  confirm(message: ConfirmMessage, origin: CallOrigin): Promise<boolean>
  end(end: RunEnd): void
}
