/**
 * What in Claude Code's settings may keep hookd's entries from running, checked when `hookd setup
 * claude-code` writes them, worded for the person running it: a known setting of the wrong type
 * (Claude Code then drops the whole file, hookd's entries with it; measured with 2.1.328), a
 * `disableAllHooks` in any settings file Claude Code reads for the project, an `allowedHttpHookUrls`
 * that leaves hookd's URL out, and hook entries Claude Code runs nothing for.
 */
import { join } from 'node:path'
import * as z from 'zod'
import { parseJson } from '../../protocol/bounded-json.js'
import { issueText } from '../../protocol/issue-text.js'
import type { SettingsPort } from '../settings/settings-port.js'
import type { Settings } from './settings.js'

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
export async function warnings(port: SettingsPort, settings: Settings, file: string, url: string, context: WarningContext): Promise<string[]> {
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
    const read = other === file ? settings : await settingsAt(port, other)
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
async function settingsAt(port: SettingsPort, file: string): Promise<Settings | undefined> {
  const text = await port.readRegular(file, 4 * 1024 * 1024, true)
  if (text === undefined) return undefined
  const json = parseJson(text, file, { maxBytes: 4 * 1024 * 1024, maxDepth: 32 })
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
