/**
 * hookd's entry in OpenCode's opencode.json: one item of its `plugin` list, the plugin this install
 * ships (plugin.ts, built to dist/agents/opencode/plugin.js, loaded by its file URL) with its options:
 * the front door's route, the token's file (never the token), the wait, and the events the hooks serve.
 *
 *   {"plugin": [["file:///.../dist/agents/opencode/plugin.js", {"url": ..., "tokenFile": ..., "timeoutS": 30, "events": [...]}]]}
 *
 * `hookd setup` merges its per-event entries (`entryOf`) into that one item. An item is hookd's only
 * when it is exactly one this writes (this install's plugin, or `hookd-sandbox/opencode`, with exactly
 * these options); every other item is another's, never replaced or removed.
 */
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseRoutePath } from '../route-path.js'
import type { HookdCommand } from '../settings/hookd-command.js'
import { parseConfig } from '../settings/hooks-json.js'
import type { Config, FoundEntry, Merged, Placement, SettingsFormat } from '../settings/settings-format.js'
import { OPENCODE } from './tools.js'

/** The package this module is part of (dist/agents/opencode/ or src/agents/opencode/ in it). */
const PACKAGE = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')
/** The plugin as this install's opencode.json entries load it. */
export const PLUGIN_SPEC = pathToFileURL(join(PACKAGE, 'dist', 'agents', 'opencode', 'plugin.js')).href
/** The plugin as a project that depends on hookd-sandbox names it. */
export const PACKAGE_SPEC = 'hookd-sandbox/opencode'

const isItem = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

interface Options {
  url: string
  tokenFile: string
  timeoutS: number
  events: string[]
}

/** The options of a plugin item hookd wrote, or undefined for another's item. */
function optionsOf(item: unknown): Options | undefined {
  if (!Array.isArray(item) || item.length !== 2 || (item[0] !== PLUGIN_SPEC && item[0] !== PACKAGE_SPEC)) return undefined
  const o: unknown = item[1]
  if (!isItem(o) || Object.keys(o).sort().join(',') !== 'events,timeoutS,tokenFile,url') return undefined
  if (typeof o.url !== 'string' || typeof o.tokenFile !== 'string' || !Number.isSafeInteger(o.timeoutS) || (o.timeoutS as number) <= 0) return undefined
  if (!Array.isArray(o.events) || !o.events.every((e) => typeof e === 'string')) return undefined
  let url: URL
  try {
    url = new URL(o.url)
  } catch {
    return undefined
  }
  if (url.protocol !== 'http:' || url.search || !isRoute(url.pathname)) return undefined
  return { url: o.url, tokenFile: o.tokenFile, timeoutS: o.timeoutS as number, events: o.events as string[] }
}

/** A front-door route of OpenCode's (a bad hook list is none). */
function isRoute(path: string): boolean {
  try {
    return parseRoutePath(path, [OPENCODE]) !== undefined
  } catch {
    return false
  }
}

function plugins(config: Config): unknown[] {
  return Array.isArray(config.plugin) ? config.plugin : []
}

function withPlugins(config: Config, list: unknown[]): Config {
  const out: Config = { ...config }
  if (list.length) out.plugin = list
  else delete out.plugin
  return out
}

function merged(config: Config, placements: readonly Placement[]): Merged {
  const others = plugins(config).filter((p) => optionsOf(p) === undefined)
  const first = placements[0]?.entry
  if (!first) return { config: withPlugins(config, others), positions: new Map(), moved: [] }
  const item = [PLUGIN_SPEC, { url: first.url, tokenFile: first.tokenFile, timeoutS: first.timeoutS, events: placements.map((p) => p.event) }]
  return { config: withPlugins(config, [...others, item]), positions: new Map(placements.map((p) => [p.event, { group: others.length, handler: 0 }])), moved: [] }
}

export const OPENCODE_SETTINGS: SettingsFormat = {
  parse: parseConfig,
  // What one event's entry holds (the docs show it); setup writes entryOf's, merged into one item.
  entry: (url, timeoutS) => ({ url, tokenFile: '<token file>', timeoutS }),
  entryOf: (call) => ({ url: call.url, tokenFile: call.tokenFile, timeoutS: call.timeoutS }),
  isHookd: (entry, event) => optionsOf(entry)?.events.includes(event) === true,
  with: merged,
  without: (config) => ({ config: merged(config, []).config, moved: [] }),
  entries(config) {
    const found: FoundEntry[] = []
    plugins(config).forEach((item, group) => {
      const o = optionsOf(item)
      const hookd: HookdCommand | undefined = o && { by: 'setup', agent: OPENCODE, url: o.url, shim: String((item as unknown[])[0]), tokenFile: o.tokenFile, timeoutS: o.timeoutS, failOpen: false }
      for (const event of o?.events ?? ['plugin']) found.push({ event, position: { group, handler: 0 }, entry: item, hookd })
    })
    return found
  },
}
