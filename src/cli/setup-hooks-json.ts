/**
 * hookd's entries in an agent's hooks file, merged without touching anything else. Two shapes:
 *
 *   grouped (Codex hooks.json, Gemini CLI settings.json): {"hooks": {"Event": [{"matcher"?, "hooks": [entry]}]}}
 *   flat (Copilot CLI, Cursor hooks.json):                {"hooks": {"event": [entry]}}
 *
 * hookd's entries are the ones whose command runs bin/hookd-hook. A new setup puts each event's entry
 * where hookd's entry of that event already was (Codex trusts hooks by their place in the file, so
 * moving them, or the user's hooks after them, would untrust them), appends it otherwise, and takes
 * hookd's entries out of the events it no longer needs.
 */
import * as z from 'zod'
import { parseJson } from '../protocol/bounded-json.js'
import { issueText } from '../protocol/issue-text.js'
import { CommandError } from './args.js'

export type Config = Record<string, unknown>
export type HookShape = 'grouped' | 'flat'

/** One event's entry, and for the grouped shape the matcher of its group. */
export interface Placement {
  event: string
  entry: Record<string, unknown>
  matcher?: string
}

/** Where an event's entry ended up: its group's index, and its index in the group (flat: 0). */
export interface Position {
  group: number
  handler: number
}

type Item = Record<string, unknown>

const isItem = (v: unknown): v is Item => v !== null && typeof v === 'object' && !Array.isArray(v)

const configSchema = z.looseObject({ hooks: z.record(z.string(), z.array(z.unknown())).optional() })

/** Parses a config file's text; a CommandError naming the file and what is wrong with it. */
export function parseConfig(text: string, file: string): Config {
  if (text.trim() === '') return {}
  const json = parseJson(text, file, { maxBytes: 4 * 1024 * 1024, maxDepth: 32 })
  if (!json.ok) throw new CommandError(`${json.message}; fix it by hand (hookd changes nothing in a file it cannot read)`)
  const parsed = configSchema.safeParse(json.value)
  if (!parsed.success || !isItem(json.value)) {
    const why = parsed.success ? 'it is not a JSON object' : issueText(parsed.error)
    throw new CommandError(`${file}: ${why}; fix it by hand (hookd changes nothing in a file it cannot read)`)
  }
  return json.value
}

/** True for an entry hookd wrote: its command (`field`) runs hookd-hook. */
export function isHookdEntry(entry: unknown, field: string): boolean {
  return isItem(entry) && typeof entry[field] === 'string' && /(^|[/'"\s])hookd-hook['"]?(\s|;|$)/.test(entry[field])
}

/** True when a grouped-shape group holds hookd's entries only. */
function isHookdGroup(group: unknown, field: string): boolean {
  return isItem(group) && Array.isArray(group.hooks) && group.hooks.length > 0 && group.hooks.every((h) => isHookdEntry(h, field))
}

/** An event's list without hookd's entries (groups left empty by that are dropped). */
function withoutOurs(list: unknown[], shape: HookShape, field: string): unknown[] {
  if (shape === 'flat') return list.filter((e) => !isHookdEntry(e, field))
  return list.flatMap((g) => {
    if (!isItem(g) || !Array.isArray(g.hooks)) return [g]
    const kept = g.hooks.filter((h) => !isHookdEntry(h, field))
    if (kept.length === g.hooks.length) return [g]
    return kept.length ? [{ ...g, hooks: kept }] : []
  })
}

/**
 * `config` with hookd's entries for `placements` and no other hookd entry, and where each landed.
 * `moved` names the events whose other entries changed place (for Codex, whose trust follows places).
 */
export function withHooks(config: Config, placements: readonly Placement[], shape: HookShape, field: string): { config: Config; positions: Map<string, Position>; moved: string[] } {
  const hooks: Record<string, unknown> = isItem(config.hooks) ? { ...config.hooks } : {}
  const positions = new Map<string, Position>()
  const moved: string[] = []
  const wanted = new Map(placements.map((p) => [p.event, p]))
  for (const [event, value] of Object.entries(hooks)) {
    if (!Array.isArray(value) || wanted.has(event)) continue
    const kept = withoutOurs(value, shape, field)
    if (kept.length !== value.length && placeOf(value, shape, field) < kept.length) moved.push(event)
    if (kept.length) hooks[event] = kept
    else delete hooks[event]
  }
  for (const p of placements) {
    const list = Array.isArray(hooks[p.event]) ? (hooks[p.event] as unknown[]) : []
    const item = shape === 'flat' ? p.entry : { ...(p.matcher !== undefined ? { matcher: p.matcher } : {}), hooks: [p.entry] }
    // Where hookd's entry was, if it was somewhere: the first of its own groups (or entries).
    const at = placeOf(list, shape, field)
    const rest = withoutOurs(list, shape, field)
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

/** hookd's entries in `config` with where each is: what Codex's trust is keyed by. */
export function hookdEntries(config: Config, shape: HookShape, field: string): Array<{ event: string; position: Position; entry: Item }> {
  const found: Array<{ event: string; position: Position; entry: Item }> = []
  if (!isItem(config.hooks)) return found
  for (const [event, list] of Object.entries(config.hooks)) {
    if (!Array.isArray(list)) continue
    list.forEach((item, group) => {
      if (shape === 'flat') {
        if (isHookdEntry(item, field)) found.push({ event, position: { group, handler: 0 }, entry: item as Item })
        return
      }
      if (!isItem(item) || !Array.isArray(item.hooks)) return
      item.hooks.forEach((h, handler) => {
        if (isHookdEntry(h, field)) found.push({ event, position: { group, handler }, entry: h as Item })
      })
    })
  }
  return found
}

/** `config` without hookd's entries; `moved` names events where other entries changed place. */
export function withoutHooks(config: Config, shape: HookShape, field: string): { config: Config; moved: string[] } {
  const { config: out, moved } = withHooks(config, [], shape, field)
  return { config: out, moved }
}

/** The index of hookd's first entry (flat) or first hookd-only group (grouped) in a list; -1 if none. */
function placeOf(list: unknown[], shape: HookShape, field: string): number {
  return list.findIndex((x) => (shape === 'flat' ? isHookdEntry(x, field) : isHookdGroup(x, field)))
}
