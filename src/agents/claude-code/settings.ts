/**
 * hookd's entries in a Claude Code settings file, merged without touching anything else: every other
 * key, event, matcher group and hook keeps its place and value. hookd's own entries are exactly the
 * ones it writes: `command` hooks whose command is one `hookd init` or `hookd setup` writes for Claude
 * Code (../settings/hookd-command.ts), and `http` hooks posting to a `/claude-code/` route with a bearer token, with
 * no field hookd does not write; every other entry is another's, left as it is. A new setup replaces
 * hookd's, so running it again (with other hooks, another port, the other transport) leaves no stale
 * entry behind.
 *
 * The entries written here use only fields measured to work with Claude Code 2.1.328: `type`,
 * `command` or `url`, `headers`, `timeout` (seconds) and `onFailure`. Measured there too: Claude Code
 * drops a whole settings file, silently, when one of its known settings has the wrong type
 * (`"env": "x"`, `"permissions": "x"`, `"model": 5`), hookd's entries with it, while it keeps the
 * file's valid hooks when another hook entry is malformed; settings-checks.ts says which.
 */
import * as z from 'zod'
import { parseJson } from '../../protocol/bounded-json.js'
import { issueText } from '../../protocol/issue-text.js'
import { HookdError } from '../../protocol/status.js'
import { parseRoutePath } from '../route-path.js'
import { parseHookdCommand } from '../settings/hookd-command.js'
import type { Placement, SettingsFormat } from '../settings/settings-format.js'
import { CLAUDE_CODE } from './tools.js'

export type Settings = Record<string, unknown>

/**
 * Events whose calls carry a tool name: their group matches every tool (`"matcher": "*"`), or only the
 * native tools the route's hooks list (hook.json "tools": `"matcher": "Bash|Write"`).
 */
export const TOOL_EVENTS: readonly string[] = ['PreToolUse', 'PermissionRequest', 'PostToolUse', 'PostToolUseFailure', 'PermissionDenied']

/**
 * Events whose answer hookd never uses (their points only observe): a command entry runs them in the
 * background (`async: true`, which Claude Code 2.1.328 takes on command hooks only), so they cost the
 * session nothing.
 */
export const OBSERVE_ONLY_EVENTS: readonly string[] = ['PostCompact', 'Notification', 'FileChanged']
/**
 * Events where the shim lets the call through when hookd cannot answer: the end events (a failing hook
 * there must let the session end; exit 2 at Stop would keep it going), and those that only say what
 * became of an ask (nothing there to refuse).
 */
export const CLAUDE_FAIL_OPEN: readonly string[] = [
  'SessionStart',
  'PostToolBatch',
  'PermissionDenied',
  // Moments with nothing to refuse: a refusal there would keep a subagent working, or block a compaction.
  'SubagentStart',
  'SubagentStop',
  'PreCompact',
  'PostCompact',
  'Notification',
  'FileChanged',
  'Stop',
  'StopFailure',
  'SessionEnd',
]

/**
 * Events where a failing hook can stop something, so hookd's entry fails closed there
 * (`onFailure: "block"`; Claude Code ignores it on Stop and the other end events).
 */
const FAIL_CLOSED_EVENTS: ReadonlySet<string> = new Set(['PreToolUse', 'PermissionRequest', 'PostToolUse', 'PostToolUseFailure', 'UserPromptSubmit', 'ConfigChange'])

export interface HookdEntry {
  /** The route's URL, e.g. http://127.0.0.1:7390/claude-code/guard,audit. */
  url: string
  token: string
  /** Seconds Claude Code waits for an answer. */
  timeoutS: number
}

const hookEntry = z.looseObject({ type: z.string().optional(), url: z.string().optional() })
const group = z.looseObject({ hooks: z.array(hookEntry).optional() })
const settingsSchema = z.looseObject({
  hooks: z.record(z.string(), z.array(group)).optional(),
})

/** Parses a settings file's text; a HookdError naming the file and what is wrong with it. */
export function parseSettings(text: string, file: string): Settings {
  if (text.trim() === '') return {}
  const json = parseJson(text, file, { maxBytes: 4 * 1024 * 1024, maxDepth: 32 })
  if (!json.ok) throw new HookdError('failed-precondition', `${json.message}; fix it by hand (hookd changes nothing in a file it cannot read)`)
  const parsed = settingsSchema.safeParse(json.value)
  if (!parsed.success || json.value === null || typeof json.value !== 'object' || Array.isArray(json.value)) {
    const why = parsed.success ? 'it is not a JSON object' : issueText(parsed.error)
    throw new HookdError('failed-precondition', `${file}: ${why}; fix it by hand (hookd changes nothing in a file it cannot read)`)
  }
  return json.value as Settings
}

/** The fields of the entries hookd writes (httpEntry, commandEntry, and `async` for observe-only events): an entry with any other is another's. */
const COMMAND_FIELDS = ['command', 'timeout', 'type']
const HTTP_FIELDS = ['headers', 'onFailure', 'timeout', 'type', 'url']

const isWhole = (value: unknown): boolean => Number.isSafeInteger(value) && (value as number) > 0

/** True for the entries hookd writes: a command it writes for Claude Code, or an http hook posting to a /claude-code/ route with a bearer token. */
export function isHookdEntry(entry: unknown): boolean {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return false
  const fields = Object.keys(entry)
  const { type, url, command, headers, timeout, onFailure } = entry as Record<string, unknown>
  if (!isWhole(timeout)) return false
  if (type === 'command') {
    const own = fields.filter((f) => f !== 'async')
    if (fields.includes('async') && (entry as Record<string, unknown>).async !== true) return false
    return own.length === COMMAND_FIELDS.length && own.every((f) => COMMAND_FIELDS.includes(f)) && parseHookdCommand(command, { agent: CLAUDE_CODE }) !== undefined
  }
  if (type !== 'http' || typeof url !== 'string' || !fields.every((f) => HTTP_FIELDS.includes(f))) return false
  if (onFailure !== undefined && onFailure !== 'block') return false
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) return false
  const names = Object.keys(headers)
  const authorization = (headers as Record<string, unknown>).Authorization
  if (names.length !== 1 || typeof authorization !== 'string' || !/^Bearer [^\s]{1,4096}$/.test(authorization)) return false
  try {
    const parsed = new URL(url)
    if (parsed.protocol !== 'http:' || `${parsed.origin}${parsed.pathname}` !== url) return false
    return parseRoutePath(parsed.pathname, [CLAUDE_CODE]) !== undefined
  } catch {
    return false
  }
}

/** The bearer tokens in hookd's http entries (an older setup's), so that a dry run can mask them. */
export function hookdSecrets(settings: Settings): string[] {
  const found: string[] = []
  const hooks = settings.hooks
  if (hooks === null || typeof hooks !== 'object' || Array.isArray(hooks)) return found
  for (const groups of Object.values(hooks as Record<string, unknown>)) {
    if (!Array.isArray(groups)) continue
    for (const g of groups) {
      const entries = g !== null && typeof g === 'object' ? (g as { hooks?: unknown }).hooks : undefined
      if (!Array.isArray(entries)) continue
      for (const h of entries) {
        if (!isHookdEntry(h)) continue
        const headers = (h as { headers?: unknown }).headers
        if (headers === null || typeof headers !== 'object') continue
        for (const value of Object.values(headers as Record<string, unknown>)) {
          const bearer = typeof value === 'string' ? /^Bearer\s+(\S+)/i.exec(value)?.[1] : undefined
          if (bearer && !bearer.startsWith('$')) found.push(bearer)
        }
      }
    }
  }
  return found
}

/** `settings` without hookd's entries: groups and event lists left empty by that are removed too. */
export function withoutHookd(settings: Settings): Settings {
  const hooks = settings.hooks
  if (hooks === null || typeof hooks !== 'object' || Array.isArray(hooks)) return settings
  const kept: Record<string, unknown> = {}
  for (const [event, groups] of Object.entries(hooks as Record<string, unknown>)) {
    if (!Array.isArray(groups)) {
      kept[event] = groups
      continue
    }
    const remaining = groups.flatMap((g: unknown) => {
      if (g === null || typeof g !== 'object' || !Array.isArray((g as { hooks?: unknown }).hooks)) return [g]
      const entries = ((g as { hooks: unknown[] }).hooks).filter((h) => !isHookdEntry(h))
      if (entries.length === (g as { hooks: unknown[] }).hooks.length) return [g]
      return entries.length ? [{ ...(g as object), hooks: entries }] : []
    })
    if (remaining.length) kept[event] = remaining
  }
  const out: Settings = { ...settings }
  if (Object.keys(kept).length) out.hooks = kept
  else delete out.hooks
  return out
}

/** hookd's `http` entry for `event` (`hookd setup claude-code --transport http`): the token rides in its header. */
export function httpEntry(event: string, entry: HookdEntry): Record<string, unknown> {
  return {
    type: 'http',
    url: entry.url,
    headers: { Authorization: `Bearer ${entry.token}` },
    timeout: entry.timeoutS,
    ...(FAIL_CLOSED_EVENTS.has(event) ? { onFailure: 'block' } : {}),
  }
}

/** hookd's `command` entry: the shim's command line, and Claude Code's own timeout in seconds. */
export function commandEntry(command: string, timeoutS: number): Record<string, unknown> {
  return { type: 'command', command, timeout: timeoutS }
}

/** `settings` with hookd's entries for `placements`, each in a group of its own after the others' (and no other hookd entry). */
export function withEntries(settings: Settings, placements: readonly Placement[]): Settings {
  const out = withoutHookd(settings)
  const hooks: Record<string, unknown> = { ...((out.hooks as Record<string, unknown> | undefined) ?? {}) }
  for (const p of placements) {
    const groupOut = p.matcher !== undefined ? { matcher: p.matcher, hooks: [p.entry] } : { hooks: [p.entry] }
    const existing = Array.isArray(hooks[p.event]) ? (hooks[p.event] as unknown[]) : []
    hooks[p.event] = [...existing, groupOut]
  }
  return { ...out, hooks }
}

/** Claude Code's settings as setup and init merge hookd's entries into them. */
export const CLAUDE_SETTINGS: SettingsFormat = {
  parse: parseSettings,
  entry: commandEntry,
  isHookd: (entry) => isHookdEntry(entry),
  with: (config, placements) => ({ config: withEntries(config, placements), positions: new Map(), moved: [] }),
  without: (config) => ({ config: withoutHookd(config), moved: [] }),
  entries: (config) => {
    const hooks = config.hooks
    if (hooks === null || typeof hooks !== 'object' || Array.isArray(hooks)) return []
    return Object.entries(hooks as Record<string, unknown>).flatMap(([event, groups]) =>
      (Array.isArray(groups) ? groups : []).flatMap((g: unknown, group) => {
        const entries = g !== null && typeof g === 'object' ? (g as { hooks?: unknown; matcher?: unknown }).hooks : undefined
        const matcher = g !== null && typeof g === 'object' ? (g as { matcher?: unknown }).matcher : undefined
        return (Array.isArray(entries) ? entries : []).map((entry: unknown, handler) => {
          const command = entry !== null && typeof entry === 'object' ? (entry as { command?: unknown }).command : undefined
          return { event, position: { group, handler }, entry, ...(matcher !== undefined ? { matcher } : {}), hookd: isHookdEntry(entry) ? parseHookdCommand(command, { agent: CLAUDE_CODE }) : undefined }
        })
      }),
    )
  },
  secrets: hookdSecrets,
}
