/**
 * How an agent's settings file holds hook entries, and which of them are hookd's: what `hookd setup`
 * and `hookd init` need of a file to merge hookd's entries in and take them out again without touching
 * anything else. Two formats implement it: the hooks.json shapes of the agents with command hooks
 * (hooks-json.ts) and Claude Code's settings (claude-code/settings.ts). An agent names its format in
 * its definition (agent-definition.ts).
 */
import type { HookdCommand } from './hookd-command.js'
import type { ShimCall } from './shim-command.js'

export type Config = Record<string, unknown>

/** One event's entry, and the matcher of its group where the format groups entries. */
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

/** A file's settings with hookd's entries placed, and where each landed. */
export interface Merged {
  config: Config
  /** Where each event's entry is (formats that keep places: hooks-json.ts). */
  positions: Map<string, Position>
  /** Events whose other entries changed place (Codex trusts hooks by their place). */
  moved: string[]
}

/** One entry of a hooks file, hookd's or another's, with where it is (what Codex's trust is keyed by). */
export interface FoundEntry {
  event: string
  position: Position
  entry: unknown
  /** Its group's matcher (grouped shape), when the group has one. */
  matcher?: unknown
  /** What hookd wrote in it; undefined for another's entry. */
  hookd: HookdCommand | undefined
}

export interface SettingsFormat {
  /** The file's settings; a HookdError naming the file and what is wrong with it (hookd changes nothing in a file it cannot read). */
  parse(text: string, file: string): Config
  /** The entry hookd writes to run `command` (the shim) with the agent's own timeout. */
  entry(command: string, timeoutS: number): Record<string, unknown>
  /** True for an entry hookd wrote under `event`: exactly one it writes, never one that only looks like it. */
  isHookd(entry: unknown, event: string): boolean
  /** `config` with hookd's entries for `placements` and no other hookd entry. */
  with(config: Config, placements: readonly Placement[]): Merged
  /** `config` without hookd's entries. */
  without(config: Config): { config: Config; moved: string[] }
  /** Every entry in `config`, in order, each with whether it is hookd's (what Codex's trust reads). */
  entries(config: Config): FoundEntry[]
  /**
   * The entry for an agent that runs no command for its hooks (OpenCode's plugin, which posts to the
   * route itself): setup writes this in place of `entry` around the shim's command.
   */
  entryOf?(call: ShimCall): Record<string, unknown>
  /** Secrets in hookd's entries (tokens an older setup wrote), masked when a dry run shows the file. */
  secrets?(config: Config): string[]
}
