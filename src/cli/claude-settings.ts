/**
 * hookd's entries in a Claude Code settings file, merged without touching anything else: every other
 * key, event, matcher group and hook keeps its place and value. hookd's own entries are the `http`
 * hooks whose URL path starts with `/claude-code/`; a new setup replaces them all, so running it again
 * (with other hooks, or another port) leaves no stale entry behind.
 *
 * Claude Code 2.1.328 skips a whole settings file, silently, in `-p` runs when one hook entry in it is
 * invalid (measured with the real CLI), so the entries written here use only fields measured to
 * work: `type`, `url`, `headers`, `timeout` (seconds) and `onFailure`.
 */
import * as z from 'zod'
import { parseJson } from '../protocol/bounded-json.js'
import { issueText } from '../protocol/issue-text.js'
import type { MappedEvent } from '../agents/claude-code/events.js'
import { CommandError } from './args.js'

export type Settings = Record<string, unknown>

/** Events whose calls carry a tool name: their group matches every tool. */
const TOOL_EVENTS: ReadonlySet<string> = new Set(['PreToolUse', 'PostToolUse', 'PostToolUseFailure'])
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

/** True for the entries hookd writes (an http hook posting to a /claude-code/ route). */
export function isHookdEntry(entry: unknown): boolean {
  if (entry === null || typeof entry !== 'object') return false
  const { type, url } = entry as { type?: unknown; url?: unknown }
  if (type !== 'http' || typeof url !== 'string') return false
  try {
    return new URL(url).pathname.startsWith('/claude-code/')
  } catch {
    return false
  }
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

/** `settings` with hookd's entries for `events` (and no other hookd entry). */
export function withHookd(settings: Settings, events: readonly MappedEvent[], entry: HookdEntry): Settings {
  const out = withoutHookd(settings)
  const hooks: Record<string, unknown> = { ...((out.hooks as Record<string, unknown> | undefined) ?? {}) }
  for (const event of events) {
    const hook: Record<string, unknown> = {
      type: 'http',
      url: entry.url,
      headers: { Authorization: `Bearer ${entry.token}` },
      timeout: entry.timeoutS,
      ...(FAIL_CLOSED_EVENTS.has(event) ? { onFailure: 'block' } : {}),
    }
    const groupOut = TOOL_EVENTS.has(event) ? { matcher: '*', hooks: [hook] } : { hooks: [hook] }
    const existing = Array.isArray(hooks[event]) ? (hooks[event] as unknown[]) : []
    hooks[event] = [...existing, groupOut]
  }
  return { ...out, hooks }
}

/** Where settings may switch hookd off, worded for the person running setup. */
export function warnings(settings: Settings, file: string, url: string): string[] {
  const out: string[] = []
  if (settings.disableAllHooks === true) {
    out.push(`${file} sets "disableAllHooks": true, which turns off every hook of every settings file, hookd's too`)
  }
  const allowed = settings.allowedHttpHookUrls
  if (Array.isArray(allowed) && !allowed.some((p) => typeof p === 'string' && globMatches(p, url))) {
    out.push(`${file} lists "allowedHttpHookUrls" and none matches ${url}: Claude Code will not post to hookd (add "${new URL(url).origin}/*")`)
  }
  return out
}

/** Claude Code's URL patterns: `*` stands for any characters. */
function globMatches(pattern: string, url: string): boolean {
  const re = new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`)
  return re.test(url)
}
