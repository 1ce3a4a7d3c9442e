/**
 * `hookd serve`'s stderr, through the operator log (--log-level, --log-format): the `hookd: ...` lines
 * the command prints itself (walls, listening, load failures, tenants...) are kept as they are in text
 * and become JSON objects with `event: "message"` (or `"listening"`) in JSON, so that a log pipeline
 * never gets a line it cannot parse. Lines below the level are dropped, except those that say where
 * hookd listens, which scripts and supervisors wait for.
 */
import type { LogLevel, Logger } from '../../sidecar/observability/logger.js'

/** `listening on ADDR`, `health on HOST:PORT`, `metrics on URL`, `http on URL`. */
const LISTENING = /^(listening|health|metrics|http) on (\S+)$/

/** Lines that report something wrong, by what they say (they come from several places). */
const WARNINGS = [/failed to (re)?load/, /cannot write the audit log/, /not written to the audit log/, /could not be written \(/, /still serving the last good/, /hooks cannot run/, /^http: /]

function levelOf(message: string): LogLevel {
  if (message.startsWith('internal error')) return 'error'
  return WARNINGS.some((w) => w.test(message)) ? 'warn' : 'info'
}

/** A `stderr` for the command's io whose `hookd: ` lines go through `logger`; anything else passes as is. */
export function loggedStderr(logger: Logger, raw: { write(text: string): unknown }): { write(text: string): unknown } {
  // Text at info or debug keeps every line as it is: the stream is hookd's stderr, untouched.
  if (logger.format === 'text' && logger.enabled('info')) return raw
  let partial = ''
  return {
    write(text: string): boolean {
      const lines = (partial + text).split('\n')
      partial = lines.pop() ?? ''
      for (const line of lines) {
        if (!line.startsWith('hookd: ')) {
          raw.write(`${line}\n`)
          continue
        }
        // The producers made these lines inert already; the logger escapes again, which changes nothing.
        const message = line.slice('hookd: '.length)
        const listening = LISTENING.exec(message)
        if (listening) logger.always('listening', message, { listener: listening[1] === 'listening' ? 'grpc' : listening[1], address: listening[2] })
        else logger.log(levelOf(message), 'message', message)
      }
      return true
    },
  }
}
