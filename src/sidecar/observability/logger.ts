/**
 * hookd's operator log (`hookd serve --log-level`, `--log-format`): one line per event on stderr.
 *
 * - text (the default): `hookd: MESSAGE`, the lines hookd has always printed, for people.
 * - json: one JSON object per line, for log pipelines. Every line has `time` (ISO 8601), `level`,
 *   `event` and `msg` (the text line's message); events add fields of their own, named in snake_case
 *   and documented in docs/operations.md#logs. Names are stable: fields may be added, never renamed.
 *
 * Text that came from hooks, hosts or files is inert either way (src/protocol/text.ts): escaped in a text
 * line, and in JSON written with the characters a terminal could act on as \u escapes.
 *
 * The audit log (`--audit`) is separate and unchanged: it records every decision for the record, this
 * log tells the operator what happens.
 */
import { inert, inertJson } from '../../protocol/text.js'

export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]
export const LOG_FORMATS = ['text', 'json'] as const
export type LogFormat = (typeof LOG_FORMATS)[number]

const RANK: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3 }

/** Extra fields of a JSON line (undefined values are left out). */
export type LogFields = Record<string, unknown>

export class Logger {
  private readonly rank: number

  constructor(
    private readonly write: (line: string) => void,
    readonly level: LogLevel = 'info',
    readonly format: LogFormat = 'text',
  ) {
    this.rank = RANK[level]
  }

  /** True when lines of `level` are written. */
  enabled(level: LogLevel): boolean {
    return RANK[level] <= this.rank
  }

  log(level: LogLevel, event: string, msg: string, fields?: LogFields): void {
    if (RANK[level] <= this.rank) this.emit(level, event, msg, fields)
  }

  /**
   * A line written whatever the level: where hookd listens (`listening on ADDR`, `metrics on URL`...),
   * which scripts and supervisors wait for.
   */
  always(event: string, msg: string, fields?: LogFields): void {
    this.emit('info', event, msg, fields)
  }

  private emit(level: LogLevel, event: string, msg: string, fields: LogFields | undefined): void {
    if (this.format === 'text') {
      this.write(`hookd: ${inert(msg)}\n`)
      return
    }
    const line: LogFields = { time: new Date().toISOString(), level, event, msg }
    if (fields) for (const [key, value] of Object.entries(fields)) if (value !== undefined) line[key] = value
    this.write(`${inertJson(JSON.stringify(line))}\n`)
  }
}
