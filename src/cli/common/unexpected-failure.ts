/**
 * What `hookd COMMAND` prints when it fails in a way no message of its own foresaw (a bug): the error
 * and its stack as real lines, each made inert (an error may quote a hook's or a file's text), then one
 * line saying that this is hookd's fault and what to report, and to whom.
 */
import { HOOKD_VERSION } from '../../protocol/version.js'
import { clip, inert } from '../../protocol/text.js'

/** The most lines of one stack printed (V8 keeps 10 frames unless told otherwise), and of causes followed. */
const MAX_LINES = 40
const MAX_CAUSES = 3

/** Who to tell: the package has no issue tracker URL of its own to name. */
export const REPORT_TO = 'the maintainers of the hookd-sandbox package'

/** The lines of `err`: its stack (message first), then each cause's, indented. */
function errorLines(err: unknown, depth = 0): string[] {
  const text = err instanceof Error ? (err.stack ?? `${err.name}: ${err.message}`) : String(err)
  const lines = text.split('\n').filter((line) => line.trim() !== '')
  const shown = lines.length > MAX_LINES ? [...lines.slice(0, MAX_LINES), `    ... (${lines.length - MAX_LINES} more lines)`] : lines
  const out = shown.map((line) => inert(clip(line, 1000)))
  const cause = err instanceof Error ? err.cause : undefined
  if (cause !== undefined && depth < MAX_CAUSES) out.push(...errorLines(cause, depth + 1).map((line, i) => (i === 0 ? `  caused by: ${line}` : `  ${line}`)))
  return out
}

/** True when a module hookd imports is missing: an install npm did not finish, not a bug. */
function missingModule(err: unknown): boolean {
  return err instanceof Error && ['ERR_MODULE_NOT_FOUND', 'MODULE_NOT_FOUND'].includes(String((err as NodeJS.ErrnoException).code))
}

/** The text to write to stderr (ending in a newline) for an unexpected failure of `hookd command`. */
export function unexpectedFailure(command: string, err: unknown): string {
  const [first = '', ...rest] = errorLines(err)
  const where = `hookd ${HOOKD_VERSION} (Node ${process.version}, ${process.platform} ${process.arch})`
  const advice = missingModule(err)
    ? `${where} is missing a module it needs: reinstall hookd-sandbox (npm install hookd-sandbox) so that npm installs all of its dependencies; if that does not help, please report it, with the lines above, to ${REPORT_TO}`
    : `this is a bug in ${where}: no message of its own explains it; please report it, with the lines above, to ${REPORT_TO}`
  return [`hookd ${command}: unexpected failure: ${first}`, ...rest, `hookd ${command}: ${advice}`, ''].join('\n')
}
