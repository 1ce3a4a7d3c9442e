/**
 * hookd's entries in a Claude Code settings file, merged without touching anything else: every other
 * key, event, matcher group and hook keeps its place and value. hookd's own entries are exactly the
 * ones it writes: `command` hooks whose command is one `hookd init` or `hookd setup` writes for Claude
 * Code (hookd-command.ts), and `http` hooks posting to a `/claude-code/` route with a bearer token, with
 * no field hookd does not write; every other entry is another's, left as it is. A new setup replaces
 * hookd's, so running it again (with other hooks, another port, the other transport) leaves no stale
 * entry behind.
 *
 * The entries written here use only fields measured to work with Claude Code 2.1.328: `type`,
 * `command` or `url`, `headers`, `timeout` (seconds) and `onFailure`. Measured there too: Claude Code
 * drops a whole settings file, silently, when one of its known settings has the wrong type
 * (`"env": "x"`, `"permissions": "x"`, `"model": 5`), hookd's entries with it, while it keeps the
 * file's valid hooks when another hook entry is malformed; `warnings` says which.
 */
import { join } from 'node:path'
import * as z from 'zod'
import { parseJson } from '../protocol/bounded-json.js'
import { readRegularFile } from '../sidecar/hooks/read-regular-file.js'
import { issueText } from '../protocol/issue-text.js'
import type { MappedEvent } from '../agents/claude-code/events.js'
import { parseAgentRoute } from '../sidecar/http/agent-route.js'
import { CommandError } from './args.js'
import { parseHookdCommand } from './hookd-command.js'

export type Settings = Record<string, unknown>

/** Events whose calls carry a tool name: their group matches every tool. */
const TOOL_EVENTS: ReadonlySet<string> = new Set(['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PermissionDenied'])
/**
 * Events where the shim lets the call through when hookd cannot answer: the end events (a failing hook
 * there must let the session end; exit 2 at Stop would keep it going), and those that only say what
 * became of an ask (nothing there to refuse).
 */
export const CLAUDE_FAIL_OPEN: readonly string[] = ['SessionStart', 'PostToolBatch', 'PermissionDenied', 'Stop', 'StopFailure', 'SessionEnd']

/**
 * Events where a failing hook can stop something, so hookd's entry fails closed there
 * (`onFailure: "block"`; Claude Code ignores it on Stop and the other end events).
 */
const FAIL_CLOSED_EVENTS: ReadonlySet<string> = new Set(['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'UserPromptSubmit'])

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

/** Parses a settings file's text; a CommandError naming the file and what is wrong with it. */
export function parseSettings(text: string, file: string): Settings {
  if (text.trim() === '') return {}
  const json = parseJson(text, file, { maxBytes: 4 * 1024 * 1024, maxDepth: 32 })
  if (!json.ok) throw new CommandError(`${json.message}; fix it by hand (hookd changes nothing in a file it cannot read)`)
  const parsed = settingsSchema.safeParse(json.value)
  if (!parsed.success || json.value === null || typeof json.value !== 'object' || Array.isArray(json.value)) {
    const why = parsed.success ? 'it is not a JSON object' : issueText(parsed.error)
    throw new CommandError(`${file}: ${why}; fix it by hand (hookd changes nothing in a file it cannot read)`)
  }
  return json.value as Settings
}

/** The fields of the entries hookd writes (withHookd, withHookdCommands): an entry with any other is another's. */
const COMMAND_FIELDS = ['command', 'timeout', 'type']
const HTTP_FIELDS = ['headers', 'onFailure', 'timeout', 'type', 'url']

const isWhole = (value: unknown): boolean => Number.isSafeInteger(value) && (value as number) > 0

/** True for the entries hookd writes: a command it writes for Claude Code, or an http hook posting to a /claude-code/ route with a bearer token. */
export function isHookdEntry(entry: unknown): boolean {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return false
  const fields = Object.keys(entry)
  const { type, url, command, headers, timeout, onFailure } = entry as Record<string, unknown>
  if (!isWhole(timeout)) return false
  if (type === 'command') return fields.length === COMMAND_FIELDS.length && fields.every((f) => COMMAND_FIELDS.includes(f)) && parseHookdCommand(command, 'claude-code') !== undefined
  if (type !== 'http' || typeof url !== 'string' || !fields.every((f) => HTTP_FIELDS.includes(f))) return false
  if (onFailure !== undefined && onFailure !== 'block') return false
  if (headers === null || typeof headers !== 'object' || Array.isArray(headers)) return false
  const names = Object.keys(headers)
  const authorization = (headers as Record<string, unknown>).Authorization
  if (names.length !== 1 || typeof authorization !== 'string' || !/^Bearer [^\s]{1,4096}$/.test(authorization)) return false
  try {
    const parsed = new URL(url)
    if (parsed.protocol !== 'http:' || `${parsed.origin}${parsed.pathname}` !== url) return false
    return parseAgentRoute(parsed.pathname)?.agent === 'claude-code'
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

/** `settings` with hookd's `http` entries for `events` (and no other hookd entry). */
export function withHookd(settings: Settings, events: readonly MappedEvent[], entry: HookdEntry): Settings {
  return withEntries(settings, events, (event) => ({
    type: 'http',
    url: entry.url,
    headers: { Authorization: `Bearer ${entry.token}` },
    timeout: entry.timeoutS,
    ...(FAIL_CLOSED_EVENTS.has(event) ? { onFailure: 'block' } : {}),
  }))
}

/** `settings` with hookd's `command` entries for `events` (and no other hookd entry): `of(event)` gives each one's command and timeout. */
export function withHookdCommands(settings: Settings, events: readonly MappedEvent[], of: (event: MappedEvent) => { command: string; timeoutS: number }): Settings {
  return withEntries(settings, events, (event) => {
    const { command, timeoutS } = of(event)
    return { type: 'command', command, timeout: timeoutS }
  })
}

function withEntries(settings: Settings, events: readonly MappedEvent[], hookOf: (event: MappedEvent) => Record<string, unknown>): Settings {
  const out = withoutHookd(settings)
  const hooks: Record<string, unknown> = { ...((out.hooks as Record<string, unknown> | undefined) ?? {}) }
  for (const event of events) {
    const hook = hookOf(event)
    const groupOut = TOOL_EVENTS.has(event) ? { matcher: '*', hooks: [hook] } : { hooks: [hook] }
    const existing = Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : []
    hooks[event] = [...existing, groupOut]
  }
  return { ...out, hooks }
}

/**
 * The types of the settings Claude Code knows, as far as a wrong one makes it drop the whole file
 * (measured with 2.1.328: `env`, `permissions`, `permissions.allow`, `model`, `disableAllHooks`; the
 * others are the documented types of the same family). Unknown settings are left alone, as Claude Code
 * leaves them.
 */
const strings = z.array(z.string())
const knownSettings = z.looseObject({
  env: z.record(z.string(), z.string()).optional(),
  model: z.string().optional(),
  permissions: z
    .looseObject({ allow: strings.optional(), deny: strings.optional(), ask: strings.optional(), additionalDirectories: strings.optional(), defaultMode: z.string().optional() })
    .optional(),
  disableAllHooks: z.boolean().optional(),
  allowedHttpHookUrls: strings.optional(),
  apiKeyHelper: z.string().optional(),
  cleanupPeriodDays: z.number().optional(),
  includeCoAuthoredBy: z.boolean().optional(),
  outputStyle: z.string().optional(),
  hooks: z.record(z.string(), z.unknown()).optional(),
})

export interface WarningContext {
  transport: 'command' | 'http'
  /** The user's home: ~/.claude/settings.json may switch every project's hooks off. */
  home: string | undefined
  /** The project whose settings are written (undefined for --user). */
  project: string | undefined
}

/** Where settings may keep hookd's entries from running, worded for the person running setup. */
export async function warnings(settings: Settings, file: string, url: string, context: WarningContext): Promise<string[]> {
  const out: string[] = []
  const checked = knownSettings.safeParse(settings)
  if (!checked.success) {
    out.push(`${file}: ${issueText(checked.error)}; Claude Code drops this whole file when a setting has the wrong type, hookd's entries with it: fix it by hand`)
  }
  // Every settings file Claude Code reads for this project, the one written included.
  const others = [
    ...(context.project ? [join(context.project, '.claude', 'settings.json'), join(context.project, '.claude', 'settings.local.json')] : []),
    ...(context.home ? [join(context.home, '.claude', 'settings.json')] : []),
    '/etc/claude-code/managed-settings.json',
  ]
  for (const other of [...new Set(others)]) {
    const read = other === file ? settings : await settingsAt(other)
    if (read?.disableAllHooks === true) {
      out.push(`${other} sets "disableAllHooks": true, which turns off every hook of every settings file, hookd's too`)
    }
  }
  const allowed = settings.allowedHttpHookUrls
  if (context.transport === 'http' && Array.isArray(allowed) && !allowed.some((p) => typeof p === 'string' && globMatches(p, url))) {
    out.push(`${file} lists "allowedHttpHookUrls" and none matches ${url}: Claude Code will not post to hookd (add "${new URL(url).origin}/*")`)
  }
  for (const entry of malformedEntries(settings)) out.push(`${file}: ${entry}; Claude Code runs nothing for it (hookd's entries still run)`)
  return out
}

/**
 * The settings in `file`, or undefined when it is missing, not a regular file or not JSON (it is not
 * setup's to judge); read without waiting on a FIFO a repository may have put there.
 */
async function settingsAt(file: string): Promise<Settings | undefined> {
  const read = await readRegularFile(file, 4 * 1024 * 1024, true)
  if (!read.ok) return undefined
  const json = parseJson(read.text, file, { maxBytes: 4 * 1024 * 1024, maxDepth: 32 })
  return json.ok && json.value !== null && typeof json.value === 'object' && !Array.isArray(json.value) ? (json.value as Settings) : undefined
}

/** Hook entries that name no command or URL, or a type Claude Code does not have. */
function malformedEntries(settings: Settings): string[] {
  const out: string[] = []
  const hooks = settings.hooks
  if (hooks === null || typeof hooks !== 'object' || Array.isArray(hooks)) return out
  for (const [event, groups] of Object.entries(hooks as Record<string, unknown>)) {
    if (!Array.isArray(groups)) {
      out.push(`hooks.${event} is not a list of matcher groups`)
      continue
    }
    for (const [i, g] of groups.entries()) {
      const entries = g !== null && typeof g === 'object' ? (g as { hooks?: unknown }).hooks : undefined
      if (!Array.isArray(entries)) {
        out.push(`hooks.${event}[${i}] has no "hooks" list`)
        continue
      }
      for (const [j, h] of entries.entries()) {
        const { type, command, url, prompt } = (h ?? {}) as { type?: unknown; command?: unknown; url?: unknown; prompt?: unknown }
        const where = `hooks.${event}[${i}].hooks[${j}]`
        if (type === 'command' && typeof command !== 'string') out.push(`${where} is a command hook with no "command"`)
        else if (type === 'http' && typeof url !== 'string') out.push(`${where} is an http hook with no "url"`)
        else if ((type === 'prompt' || type === 'agent') && typeof prompt !== 'string') out.push(`${where} is a ${type} hook with no "prompt"`)
        else if (type !== 'command' && type !== 'http' && type !== 'prompt' && type !== 'agent') out.push(`${where} has the type ${JSON.stringify(type) ?? 'undefined'}, which Claude Code does not know`)
      }
    }
  }
  return out
}

/** Claude Code's URL patterns: `*` stands for any characters. */
function globMatches(pattern: string, url: string): boolean {
  const re = new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`)
  return re.test(url)
}
