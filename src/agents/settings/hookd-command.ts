/**
 * hookd's own command lines, read back strictly. A command is hookd's only when it is, byte for byte,
 * one that `hookd init` (teamCommand) or `hookd setup` (shimCommand) writes for the agent whose file
 * holds it: it is split into the shell words shellQuote writes, its flags, paths and route are checked,
 * and it is rendered again from what was read. Anything else (a command that merely mentions
 * hookd-hook, one word more, other quoting, another agent's route) is another's. What init trusts for
 * Codex, and what setup and init replace or remove, rest on this.
 */
import { basename, dirname, isAbsolute, normalize } from 'node:path'
import { parseRoutePath } from '../route-path.js'
import { shimCommand, teamCommand } from './shim-command.js'

/** A command hookd wrote, as read back: which command wrote it, and what it says. */
export type HookdCommand =
  | { by: 'init'; agent: string; route: string; hooksDir: string; timeoutS: number; failOpen: boolean }
  | { by: 'setup'; agent: string; url: string; shim: string; tokenFile: string; timeoutS: number; failOpen: boolean }

/** Whose routes a command must post to: the agent's id, and whether its routes name their event (`?event=`). */
export interface RouteOwner {
  agent: string
  /** The agent's events do not name themselves (Copilot CLI's): each entry's route says `?event=EVENT`. */
  namedEvents?: boolean | undefined
}

/** Longer than any command hookd writes (paths included): nothing past it is read. */
const MAX_COMMAND = 8192

/** One word as shellQuote writes it: bare, or single-quoted with ' spelled '\''. */
const WORD = /[A-Za-z0-9_./:=,@%+-]+|'[^']*'(?:\\''[^']*')*/y

/** The words of `text` as shellQuote joins them (one space apart), or undefined for anything else. */
function shellWords(text: string): string[] | undefined {
  const words: string[] = []
  let at = 0
  for (;;) {
    WORD.lastIndex = at
    const match = WORD.exec(text)
    if (!match) return undefined
    const word = match[0]
    words.push(word.startsWith("'") ? word.slice(1, -1).split("'\\''").join("'") : word)
    at = WORD.lastIndex
    if (at === text.length) return words
    if (text[at] !== ' ') return undefined
    at += 1
  }
}

function seconds(word: string | undefined): number | undefined {
  return word !== undefined && /^[1-9][0-9]{0,5}$/.test(word) ? Number(word) : undefined
}

/** A folder inside the project, written relative to it with '/' (as init writes --hooks-dir). */
function isInsideRelative(dir: string): boolean {
  return dir.length > 0 && dir.length <= 1024 && !dir.startsWith('/') && dir.split('/').every((part) => part !== '' && part !== '.' && part !== '..')
}

/** An absolute path in its normal form. */
function isPlainAbsolute(path: string): boolean {
  return isAbsolute(path) && normalize(path) === path && path.length <= 4096
}

/**
 * Whether `path` and `query` are a route hookd writes for `owner`: its hooks (or, from setup, a
 * profile) in canonical form; for an agent whose events do not name themselves, with `?event=EVENT`
 * for the event the entry is under.
 */
function isRoute(path: string, query: string, owner: RouteOwner, event: string | undefined, profiles: boolean): boolean {
  const agent = owner.agent
  let route
  try {
    route = parseRoutePath(path, [agent])
  } catch {
    return false
  }
  if (!route || path !== `/${agent}/${route.channel}`) return false
  if (!profiles && 'profile' in route.source) return false
  if (!owner.namedEvents) return query === ''
  return event === undefined ? /^\?event=[A-Za-z]{1,64}$/.test(query) : query === `?event=${event}`
}

/** `hookd init`'s command (teamCommand), read back; undefined when `command` is not one. */
function initCommand(command: string, owner: RouteOwner, event: string | undefined): HookdCommand | undefined {
  const exec = '; exec "$h" '
  const at = command.indexOf(exec)
  const words = at === -1 ? undefined : shellWords(command.slice(at + exec.length))
  if (!words) return undefined
  const failOpen = words[0] === '--fail-open'
  const [timeoutFlag, timeout, dirFlag, hooksDir, route, ...extra] = words.slice(failOpen ? 1 : 0)
  const timeoutS = seconds(timeout)
  if (timeoutFlag !== '--timeout' || dirFlag !== '--hooks-dir' || timeoutS === undefined || hooksDir === undefined || route === undefined || extra.length) return undefined
  if (!isInsideRelative(hooksDir)) return undefined
  const q = route.indexOf('?')
  if (!isRoute(q === -1 ? route : route.slice(0, q), q === -1 ? '' : route.slice(q), owner, event, false)) return undefined
  if (teamCommand(route, hooksDir, timeoutS, failOpen) !== command) return undefined
  return { by: 'init', agent: owner.agent, route, hooksDir, timeoutS, failOpen }
}

/** `hookd setup`'s command (shimCommand), read back; undefined when `command` is not one. */
function setupCommand(command: string, owner: RouteOwner, event: string | undefined): HookdCommand | undefined {
  const words = shellWords(command)
  if (!words) return undefined
  const [shim, ...rest] = words
  const failOpen = rest[0] === '--fail-open'
  const [tokenFlag, tokenFile, timeoutFlag, timeout, url, ...extra] = rest.slice(failOpen ? 1 : 0)
  const timeoutS = seconds(timeout)
  if (shim === undefined || tokenFlag !== '--token-file' || timeoutFlag !== '--timeout' || timeoutS === undefined || tokenFile === undefined || url === undefined || extra.length) return undefined
  // The shim of an install of hookd: build/hookd-hook or bin/hookd-hook, wherever that install is.
  if (!isPlainAbsolute(shim) || basename(shim) !== 'hookd-hook' || !['bin', 'build'].includes(basename(dirname(shim)))) return undefined
  if (!isPlainAbsolute(tokenFile)) return undefined
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return undefined
  }
  if (parsed.protocol !== 'http:' || `${parsed.origin}${parsed.pathname}${parsed.search}` !== url) return undefined
  if (!isRoute(parsed.pathname, parsed.search, owner, event, true)) return undefined
  if (shimCommand({ shim, url, tokenFile, timeoutS, failOpen }) !== command) return undefined
  return { by: 'setup', agent: owner.agent, url, shim, tokenFile, timeoutS, failOpen }
}

/**
 * `command` as hookd wrote it for `owner`'s agent (for one whose routes name their event, under `event`
 * when given), or undefined when it is not exactly a command hookd writes.
 */
export function parseHookdCommand(command: unknown, owner: RouteOwner, event?: string): HookdCommand | undefined {
  if (typeof command !== 'string' || command.length > MAX_COMMAND) return undefined
  return command.startsWith('h=') ? initCommand(command, owner, event) : setupCommand(command, owner, event)
}
