/**
 * The agent on a terminal: the model's text streams to stdout; everything else (tool calls, hook
 * decisions, hook logs, diagnostics, questions) goes to stderr, one line each, so stdout can be piped.
 * While the model is thinking, a spinner turns on stderr, only when stderr is a terminal.
 */
import { type CallOrigin, type Message as ConfirmMessage, terminalConfirm } from '../capabilities.js'
import type { Diagnostic } from '../../protocol/diagnostic.js'
import type { LogLineData } from '../../protocol/wire.js'
import { type Decision, preview } from './decisions.js'
import type { AgentUI, RunEnd, RunInfo, ToolCallView } from './ui.js'
import { inert, inertLines } from '../../protocol/text.js'

/** Where the terminal writes: a stream, or a command's own io when it runs in-process. */
export interface TerminalStream {
  write(text: string): unknown
  isTTY?: boolean
}

export interface TerminalOptions {
  stdout?: TerminalStream
  stderr?: TerminalStream
  /** Where NO_COLOR is read. Default: process.env. */
  env?: NodeJS.ProcessEnv
  /** Default: whether stderr is a terminal. */
  spinner?: boolean
  /** Default: whether stderr is a terminal and NO_COLOR is unset. */
  color?: boolean
  /** Default: a y/N question on stderr, answered on stdin. */
  confirm?(message: ConfirmMessage, origin: CallOrigin): Promise<boolean>
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏']
type Tone = 'dim' | 'yellow' | 'red' | 'cyan'
const TONES: Record<Tone, string> = { dim: '2', yellow: '33', red: '31', cyan: '36' }

export class TerminalUI implements AgentUI {
  private readonly out: TerminalStream
  private readonly err: TerminalStream
  private readonly useSpinner: boolean
  private readonly color: boolean
  private readonly ask: NonNullable<TerminalOptions['confirm']>
  /** stdout ends mid-line (streamed text without its newline yet). */
  private textOpen = false
  private spinner: NodeJS.Timeout | undefined

  constructor(options: TerminalOptions = {}) {
    this.out = options.stdout ?? process.stdout
    this.err = options.stderr ?? process.stderr
    const tty = this.err.isTTY === true
    this.useSpinner = options.spinner ?? tty
    this.color = options.color ?? (tty && !(options.env ?? process.env).NO_COLOR)
    this.ask = options.confirm ?? terminalConfirm
  }

  start(info: RunInfo): void {
    const hooks = info.hooks.length ? `hooks ${info.hooks.join(', ')} (${info.sidecar})` : 'no hooks'
    this.line(this.paint('dim', `hookd agent: ${info.model}, ${hooks}, workdir ${info.workdir}`))
  }

  waiting(turn: number, model: string): void {
    if (!this.useSpinner) return
    this.stopSpinner()
    this.breakText()
    const started = Date.now()
    let frame = 0
    const draw = (): void => {
      const seconds = Math.floor((Date.now() - started) / 1000)
      this.err.write(`\r${FRAMES[frame++ % FRAMES.length]} waiting for ${model} (turn ${turn})${seconds ? ` ${seconds}s` : ''}\x1b[K`)
    }
    draw()
    this.spinner = setInterval(draw, 100)
    this.spinner.unref()
  }

  text(delta: string): void {
    if (!delta) return
    this.stopSpinner()
    this.out.write(inertLines(delta))
    this.textOpen = !delta.endsWith('\n')
  }

  answered(_turn: number): void {
    this.stopSpinner()
    this.breakText()
  }

  toolCall(call: ToolCallView): void {
    this.line(this.paint('cyan', `→ ${call.name} ${preview(call.input, 120)}`))
  }

  toolResult(call: ToolCallView, result: { text: string; isError: boolean }): void {
    const lines = result.text.trimEnd().split('\n').length
    const size = lines > 1 ? ` (${lines} lines)` : ''
    this.line(result.isError ? this.paint('red', `✗ ${call.name}: ${preview(result.text)}`) : this.paint('dim', `← ${call.name}${size}: ${preview(result.text)}`))
  }

  decision(decision: Decision): void {
    this.line(this.paint('yellow', `[${decision.hooks.join(', ')}] ${decision.summary}`))
  }

  log(line: LogLineData): void {
    this.line(this.paint('dim', `[${line.hook}] ${line.message}`))
  }

  notify(message: ConfirmMessage, origin: CallOrigin): void {
    this.line(inert(`[${origin.hook}] notify: ${message.title}${message.body ? `: ${message.body}` : ''}`))
  }

  diagnostic(d: Diagnostic): void {
    this.line(this.paint('red', `hookd: ${d.message}`))
  }

  notice(text: string): void {
    this.line(inert(`hookd agent: ${text}`))
  }

  confirm(message: ConfirmMessage, origin: CallOrigin): Promise<boolean> {
    this.stopSpinner()
    this.breakText()
    return this.ask(message, origin)
  }

  end(end: RunEnd): void {
    this.stopSpinner()
    this.breakText()
    if (end.reason === 'error') this.line(this.paint('red', `hookd agent: stopped by an error: ${end.error ?? 'unknown error'}`))
    else if (end.reason === 'interrupted') this.line('hookd agent: interrupted')
    else this.line(this.paint('dim', `hookd agent: done after ${end.turns} turn${end.turns === 1 ? '' : 's'}`))
  }

  /** Hook, tool and model text made inert (one line, no escape sequence of its own), then coloured. */
  private paint(tone: Tone, text: string): string {
    const safe = inert(text)
    return this.color ? `\x1b[${TONES[tone]}m${safe}\x1b[0m` : safe
  }

  private line(text: string): void {
    this.stopSpinner()
    this.breakText()
    this.err.write(`${text}\n`)
  }

  private breakText(): void {
    if (!this.textOpen) return
    this.out.write('\n')
    this.textOpen = false
  }

  private stopSpinner(): void {
    if (!this.spinner) return
    clearInterval(this.spinner)
    this.spinner = undefined
    this.err.write('\r\x1b[K')
  }
}
