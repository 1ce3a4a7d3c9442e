/**
 * hookd's entries in an agent's hooks file, merged without touching anything else. Two shapes:
 *
 *   grouped (Codex hooks.json, Gemini CLI settings.json): {"hooks": {"Event": [{"matcher"?, "hooks": [entry]}]}}
 *   flat (Copilot CLI, Cursor hooks.json):                {"hooks": {"event": [entry]}}
 *
 * hookd's entries are the ones it writes, exactly: an entry of the agent's shape whose command is one
 * `hookd init` or `hookd setup` writes for that agent (hookd-command.ts); every other entry is
 * another's, never replaced, removed or trusted. A new setup puts each event's entry where hookd's
 * entry of that event already was (Codex trusts hooks by their place in the file, so moving them, or
 * the user's hooks after them, would untrust them), appends it otherwise, and takes hookd's entries
 * out of the events it no longer needs.
 */
import * as z from 'zod'
import { parseJson } from '../../protocol/bounded-json.js'
import { issueText } from '../../protocol/issue-text.js'
import { HookdError } from '../../protocol/status.js'
import { type HookdCommand, type RouteOwner, parseHookdCommand } from './hookd-command.js'
import type { Config, FoundEntry, Merged, Placement, Position, SettingsFormat } from './settings-format.js'

export type HookShape = 'grouped' | 'flat'

/** What hookd's entries look like in one agent's file. */
export interface Ours extends RouteOwner {
  shape: HookShape
  /** The entry field holding the command. */
  field: 'command' | 'bash'
  /** The entry hookd writes for a command: its fields, and the values of those that are not numbers. */
  entry(command: string, timeoutS: number): Record<string, unknown>
  /** True for an entry of the agent's own http hooks that hookd wrote (Copilot CLI's: copilot/copilot-http.ts). */
  isHttpEntry?(entry: Record<string, unknown>, event: string): boolean
}

/** The hooks.json format of an agent whose entries look like `ours`. */
export function hooksJson(ours: Ours): SettingsFormat {
  return {
    parse: parseConfig,
    entry: ours.entry,
    isHookd: (entry, event) => isHookdEntry(entry, event, ours),
    with: (config, placements) => withHooks(config, placements, ours),
    without: (config) => withoutHooks(config, ours),
    entries: (config) => entriesOf(config, ours),
  }
}

type Item = Record<string, unknown>

const isItem = (v: unknown): v is Item => v !== null && typeof v === 'object' && !Array.isArray(v)

const configSchema = z.looseObject({ hooks: z.record(z.string(), z.array(z.unknown())).optional() })

/** Parses a config file's text; a HookdError naming the file and what is wrong with it. */
export function parseConfig(text: string, file: string): Config {
  if (text.trim() === '') return {}
  const json = parseJson(text, file, { maxBytes: 4 * 1024 * 1024, maxDepth: 32 })
  if (!json.ok) throw new HookdError('failed-precondition', `${json.message}; fix it by hand (hookd changes nothing in a file it cannot read)`)
  const parsed = configSchema.safeParse(json.value)
  if (!parsed.success || !isItem(json.value)) {
    const why = parsed.success ? 'it is not a JSON object' : issueText(parsed.error)
    throw new HookdError('failed-precondition', `${file}: ${why}; fix it by hand (hookd changes nothing in a file it cannot read)`)
  }
  return json.value
}

/**
 * What hookd wrote in `entry` under `event`, or undefined when it is another's: hookd's entries have
 * exactly the fields `ours.entry` gives (the same values, any whole number where it has a number),
 * and a command hookd writes for the agent.
 */
export function hookdCommandOf(entry: unknown, event: string, ours: Ours): HookdCommand | undefined {
  if (!isItem(entry)) return undefined
  const model = ours.entry('', 1)
  const keys = Object.keys(model)
  if (Object.keys(entry).length !== keys.length) return undefined
  for (const key of keys) {
    if (!Object.hasOwn(entry, key)) return undefined
    const value = entry[key]
    if (key === ours.field) continue
    if (typeof model[key] === 'number' ? !(Number.isSafeInteger(value) && (value as number) > 0) : value !== model[key]) return undefined
  }
  return parseHookdCommand(entry[ours.field], ours, event)
}

/** True for an entry hookd wrote (hookdCommandOf, or one of the agent's http hooks hookd wrote). */
export function isHookdEntry(entry: unknown, event: string, ours: Ours): boolean {
  return hookdCommandOf(entry, event, ours) !== undefined || (isItem(entry) && ours.isHttpEntry?.(entry, event) === true)
}

/** True when a grouped-shape group holds hookd's entries only. */
function isHookdGroup(group: unknown, event: string, ours: Ours): boolean {
  return isItem(group) && Array.isArray(group.hooks) && group.hooks.length > 0 && group.hooks.every((h) => isHookdEntry(h, event, ours))
}

/** An event's list without hookd's entries (groups left empty by that are dropped). */
function withoutOurs(list: unknown[], event: string, ours: Ours): unknown[] {
  if (ours.shape === 'flat') return list.filter((e) => !isHookdEntry(e, event, ours))
  return list.flatMap((g) => {
    if (!isItem(g) || !Array.isArray(g.hooks)) return [g]
    const kept = g.hooks.filter((h) => !isHookdEntry(h, event, ours))
    if (kept.length === g.hooks.length) return [g]
    return kept.length ? [{ ...g, hooks: kept }] : []
  })
}

/**
 * `config` with hookd's entries for `placements` and no other hookd entry, and where each landed.
 * `moved` names the events whose other entries changed place (for Codex, whose trust follows places).
 */
export function withHooks(config: Config, placements: readonly Placement[], ours: Ours): Merged {
  const hooks: Record<string, unknown> = isItem(config.hooks) ? { ...config.hooks } : {}
  const positions = new Map<string, Position>()
  const moved: string[] = []
  const wanted = new Map(placements.map((p) => [p.event, p]))
  for (const [event, value] of Object.entries(hooks)) {
    if (!Array.isArray(value) || wanted.has(event)) continue
    const kept = withoutOurs(value, event, ours)
    if (kept.length !== value.length && placeOf(value, event, ours) < kept.length) moved.push(event)
    if (kept.length) hooks[event] = kept
    else delete hooks[event]
  }
  for (const p of placements) {
    const list = Array.isArray(hooks[p.event]) ? (hooks[p.event] as unknown[]) : []
    const item = ours.shape === 'flat' ? p.entry : { ...(p.matcher !== undefined ? { matcher: p.matcher } : {}), hooks: [p.entry] }
    // Where hookd's entry was, if it was somewhere: the first of its own groups (or entries).
    const at = placeOf(list, p.event, ours)
    const rest = withoutOurs(list, p.event, ours)
    const index = at === -1 ? rest.length : Math.min(at, rest.length)
    if (at !== -1 && rest.length + 1 !== list.length) moved.push(p.event)
    hooks[p.event] = [...rest.slice(0, index), item, ...rest.slice(index)]
    positions.set(p.event, { group: index, handler: 0 })
  }
  const out: Config = { ...config }
  if (Object.keys(hooks).length) out.hooks = hooks
  else delete out.hooks
  return { config: out, positions, moved }
}

/** Every entry in `config`, in order, each with whether it is hookd's. */
export function entriesOf(config: Config, ours: Ours): FoundEntry[] {
  const found: FoundEntry[] = []
  if (!isItem(config.hooks)) return found
  for (const [event, list] of Object.entries(config.hooks)) {
    if (!Array.isArray(list)) continue
    list.forEach((item, group) => {
      if (ours.shape === 'flat') {
        found.push({ event, position: { group, handler: 0 }, entry: item, hookd: hookdCommandOf(item, event, ours) })
        return
      }
      if (!isItem(item) || !Array.isArray(item.hooks)) return
      item.hooks.forEach((h, handler) => {
        found.push({ event, position: { group, handler }, entry: h, ...(item.matcher !== undefined ? { matcher: item.matcher } : {}), hookd: hookdCommandOf(h, event, ours) })
      })
    })
  }
  return found
}

/** `config` without hookd's entries; `moved` names events where other entries changed place. */
export function withoutHooks(config: Config, ours: Ours): { config: Config; moved: string[] } {
  const { config: out, moved } = withHooks(config, [], ours)
  return { config: out, moved }
}

/** The index of hookd's first entry (flat) or first hookd-only group (grouped) in a list; -1 if none. */
function placeOf(list: unknown[], event: string, ours: Ours): number {
  return list.findIndex((x) => (ours.shape === 'flat' ? isHookdEntry(x, event, ours) : isHookdGroup(x, event, ours)))
}
