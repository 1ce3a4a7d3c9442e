/**
 * The command lines an agent runs for one hook event, in the two shapes hookd writes: `hookd setup`'s
 * (hookd's shim, `build/hookd-hook` compiled at install, else the script `bin/hookd-hook`, with the
 * route it posts to, the token file it proves itself with, and its timeout) and `hookd init`'s (the
 * shim `hookd up` installs in the user's state folder, on a bare route). Every agent with command
 * hooks runs them through a shell (sh or bash), so each word is shell-quoted. hookd-command.ts reads
 * them back, and takes nothing else for hookd's own.
 */
import { accessSync, constants } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The package this module is part of (dist/agents/settings/ or src/agents/settings/ in it). */
const PACKAGE = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')
/** The shim as a script (sh, then bash or curl): works wherever sh does. */
export const SCRIPT_SHIM = join(PACKAGE, 'bin', 'hookd-hook')
/** The shim compiled at install (scripts/build-shim.sh): the same answers, a process start cheaper. */
export const NATIVE_SHIM = join(PACKAGE, 'build', 'hookd-hook')

/** The shim setup writes: the compiled one when the install built it, else the script. */
export function shimPath(): string {
  try {
    accessSync(NATIVE_SHIM, constants.X_OK)
    return NATIVE_SHIM
  } catch {
    return SCRIPT_SHIM
  }
}

/** A word shell-quoted for the agents' shells (sh, bash): single quotes, with ' spelled '\''. */
export function shellQuote(text: string): string {
  return /^[A-Za-z0-9_./:=,@%+-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`
}

export interface ShimCall {
  /** The front door route, e.g. http://127.0.0.1:7390/claude-code/guard. */
  url: string
  /** The file holding the token the shim proves itself with. */
  tokenFile: string
  /** Seconds the shim waits for hookd. */
  timeoutS: number
  /** Let the event through when hookd cannot be asked (events that start or end a run). */
  failOpen?: boolean
  /** The shim to run (default: shimPath()). */
  shim?: string
}

/** The shell command that runs the shim for one event. */
export function shimCommand(call: ShimCall): string {
  return [call.shim ?? shimPath(), ...(call.failOpen ? ['--fail-open'] : []), '--token-file', call.tokenFile, '--timeout', String(call.timeoutS), call.url]
    .map(shellQuote)
    .join(' ')
}

/** Where `hookd up` installs the shim, as the committed entries spell it (the user's shell expands it). */
const TEAM_SHIM = '"${HOOKD_STATE_DIR:-$HOME/.local/state/hookd}/bin/hookd-hook"'

/** What a committed entry runs where the user's shim is missing: a refusal that says how to get it, or (fail open) nothing. */
function teamMissing(failOpen: boolean): string {
  return failOpen ? 'exit 0' : `{ echo "hookd is not set up for this user: run 'npx hookd-sandbox up' (hookd's docs/agents.md)" >&2; exit 2; }`
}

/** The shell command a committed entry (`hookd init`) runs: the user's shim, or a refusal that says how to get it. */
export function teamCommand(route: string, hooksDir: string, timeoutS: number, failOpen: boolean): string {
  const args = [...(failOpen ? ['--fail-open'] : []), '--timeout', String(timeoutS), '--hooks-dir', hooksDir, route].map(shellQuote).join(' ')
  return `h=${TEAM_SHIM}; [ -x "$h" ] || ${teamMissing(failOpen)}; exec "$h" ${args}`
}
