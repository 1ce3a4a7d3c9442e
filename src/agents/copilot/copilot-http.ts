/**
 * Copilot CLI's own `http` hooks, as `hookd setup copilot --transport http` writes them: each event's
 * entry posts the event to the front door's route with `?event=<name>` (Copilot's events do not name
 * themselves) and hookd's token in its Authorization header. Measured with Copilot CLI 1.0.102
 * (test/agents/real-clis/copilot-hookd.test.ts):
 *  - it posts to a plain `http://127.0.0.1` URL only when COPILOT_HOOK_ALLOW_LOCALHOST=1 is in its
 *    environment, and otherwise skips such an entry without a word, for every event: the gates included;
 *  - the headers are sent as written, so the token crosses the connection in the clear, and whatever
 *    answers on the port is taken as hookd's answer: nothing proves it (the shim's entries prove both ways);
 *  - a gate (preToolUse) whose http hook cannot connect is denied ("hook errored"), as a command hook's.
 * What it cannot do: Copilot lets a call through when a hook outlives timeoutSec, and no shim refuses
 * first here, so a hookd slower than that fails open (docs/agents.md, Copilot CLI).
 * Which entries are hookd's: exactly these fields, a route of Copilot's own, a bearer token.
 */
import type { Config } from '../settings/settings-format.js'
import { parseRoutePath } from '../route-path.js'
import { COPILOT } from './tools.js'

const HTTP_FIELDS = ['headers', 'timeoutSec', 'type', 'url']
const BEARER = /^Bearer ([^\s]{1,4096})$/

/** What Copilot needs in its own environment to post to a loopback http:// URL at all. */
export const ALLOW_LOCALHOST = 'COPILOT_HOOK_ALLOW_LOCALHOST'

/** hookd's http entry for `event`: the route with the event's name, the token, Copilot's own timeout. */
export function httpEntry(event: string, url: string, token: string, timeoutS: number): Record<string, unknown> {
  return { type: 'http', url: `${url}?event=${event}`, headers: { Authorization: `Bearer ${token}` }, timeoutSec: timeoutS }
}

/** The token of an entry hookd wrote under `event`; undefined for any other entry. */
function tokenOf(entry: Record<string, unknown>, event: string): string | undefined {
  const fields = Object.keys(entry)
  const { type, url, headers, timeoutSec } = entry
  if (type !== 'http' || typeof url !== 'string' || fields.length !== HTTP_FIELDS.length || !fields.every((f) => HTTP_FIELDS.includes(f))) return undefined
  if (!Number.isSafeInteger(timeoutSec) || (timeoutSec as number) <= 0) return undefined
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers) || Object.keys(headers).length !== 1) return undefined
  const authorization = (headers as Record<string, unknown>).Authorization
  const token = typeof authorization === 'string' ? BEARER.exec(authorization)?.[1] : undefined
  if (token === undefined) return undefined
  try {
    const parsed = new URL(url)
    if (parsed.protocol !== 'http:' || parsed.search !== `?event=${event}` || `${parsed.origin}${parsed.pathname}${parsed.search}` !== url) return undefined
    const route = parseRoutePath(parsed.pathname, [COPILOT])
    return route && parsed.pathname === `/${COPILOT}/${route.channel}` ? token : undefined
  } catch {
    return undefined
  }
}

/** True for an http entry hookd wrote under `event`. */
export function isHttpEntry(entry: Record<string, unknown>, event: string): boolean {
  return tokenOf(entry, event) !== undefined
}

/** The tokens in hookd's http entries, masked when a dry run shows the file. */
export function httpSecrets(config: Config): string[] {
  const hooks = config.hooks
  if (hooks === null || typeof hooks !== 'object' || Array.isArray(hooks)) return []
  const tokens = new Set<string>()
  for (const [event, list] of Object.entries(hooks as Record<string, unknown>)) {
    if (!Array.isArray(list)) continue
    for (const entry of list) {
      if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) continue
      const token = tokenOf(entry as Record<string, unknown>, event)
      if (token !== undefined) tokens.add(token)
    }
  }
  return [...tokens]
}

/** Setup's warning for http entries: Copilot skips them silently without COPILOT_HOOK_ALLOW_LOCALHOST=1. */
export function httpWarning(): string {
  return `Copilot CLI posts to an http:// hook only with ${ALLOW_LOCALHOST}=1 in its own environment, and without it skips hookd's entries without a word (every tool call then runs unguarded): export ${ALLOW_LOCALHOST}=1 wherever copilot runs (your shell profile), or use the default --transport command, whose entries need nothing of the kind`
}
