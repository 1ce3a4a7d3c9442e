/**
 * Codex runs a user's or project's hook only when its config.toml records the hook as trusted; an
 * untrusted hook is skipped without a word in `codex exec` (measured with Codex 0.169.0). Setting up
 * hookd is the user's decision to trust hookd's hooks, so setup records them, the way Codex's own
 * review does:
 *
 *   [hooks.state."<hooks.json path>:<event in snake_case>:<group index>:<handler index>"]
 *   trusted_hash = "sha256:<hex>"
 *
 * where hex is the SHA-256 of the handler's identity as compact JSON with sorted keys:
 * {"event_name", "hooks": [{"async": false, "command", "timeout", "type": "command"}], "matcher"?}
 * (read in openai/codex, codex-rs/hooks/src/engine/discovery.rs, and measured: a wrong hash skips).
 * The group's matcher is part of it for the events Codex matches on (tools, SessionStart), and not for
 * the others (measured: a PreToolUse entry in a `"matcher": ".*"` group runs only under the hash that
 * holds the matcher).
 *
 * The entries of each hooks file live in a block of config.toml of their own between two marker
 * comments naming the file, replaced as a whole when that file is set up again (the user's
 * `hookd setup codex` and a project's `hookd init codex --trust` each keep their own); a table for the
 * same key elsewhere in the file (a stale one, for a hook that was at that place before) is taken out,
 * since TOML refuses a table defined twice. A project's hooks also need the project trusted
 * (`[projects."<git root>"] trust_level = "trusted"`, measured): that table goes in the project's block
 * unless config.toml has one for it already.
 */
import { createHash } from 'node:crypto'
import type { Position } from '../settings/settings-format.js'

/** The markers of the block for `hooksFile`. */
function begin(hooksFile: string): string {
  return `# hookd: the hooks in ${hooksFile}, trusted (hookd setup codex --remove, or hookd init codex --remove, takes this block out)`
}
function end(hooksFile: string): string {
  return `# hookd: end of ${hooksFile}`
}
/** The one block of an older hookd, for the user's hooks file. */
const OLD_BEGIN = '# hookd setup codex: the hooks it wrote, trusted (hookd setup codex --remove takes this block out)'
const OLD_END = '# hookd setup codex: end'

/** One hook Codex should trust: where it is, and what it is. */
export interface TrustedHook {
  event: string
  position: Position
  command: string
  timeoutS: number
  /** Its group's matcher, when the group has one. */
  matcher?: string
}

/** The events whose group matcher Codex hashes in (codex-rs/hooks/src/events/common.rs, matcher_pattern_for_event). */
const MATCHED_EVENTS: ReadonlySet<string> = new Set(['PreToolUse', 'PostToolUse', 'PostToolUseFailure', 'PermissionRequest', 'SessionStart', 'Notification', 'SubagentStart', 'SubagentStop', 'PreCompact', 'PostCompact'])

/** `PreToolUse` -> `pre_tool_use`: Codex's names for events in trust keys. */
export function snakeEvent(event: string): string {
  return event.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase()
}

/** JSON with object keys sorted at every level, as Codex hashes it. */
function sortedJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${sortedJson(v)}`).join(',')}}`
  }
  return JSON.stringify(value)
}

export function trustHash(event: string, command: string, timeoutS: number, matcher?: string): string {
  const identity = {
    event_name: snakeEvent(event),
    hooks: [{ async: false, command, timeout: timeoutS, type: 'command' }],
    ...(matcher !== undefined && MATCHED_EVENTS.has(event) ? { matcher } : {}),
  }
  return `sha256:${createHash('sha256').update(sortedJson(identity)).digest('hex')}`
}

function tomlString(text: string): string {
  return JSON.stringify(text)
}

function keyOf(hooksFile: string, hook: TrustedHook): string {
  return `${hooksFile}:${snakeEvent(hook.event)}:${hook.position.group}:${hook.position.handler}`
}

/**
 * config.toml's text without the block for `hooksFile` (and an older hookd's one block, whose entries
 * for other files are handed back to be written in blocks of their own), and without tables for `keys`
 * (stale trust for those places).
 */
function withoutBlock(text: string, hooksFile: string, keys: ReadonlySet<string>): { text: string; dropped: string[]; kept: string[] } {
  const out: string[] = []
  const dropped: string[] = []
  const kept: string[] = []
  let block: 'mine' | 'old' | undefined
  let skipping = false
  for (const line of text.split('\n')) {
    if (line === begin(hooksFile)) block = 'mine'
    else if (line === OLD_BEGIN) block = 'old'
    if (block) {
      if (line === end(hooksFile) || line === OLD_END) block = undefined
      // An older hookd's block: the tables it holds for other hooks files stay, in blocks of their own.
      else if (block === 'old' && line !== OLD_BEGIN) kept.push(line)
      continue
    }
    const header = /^\s*\[\s*hooks\.state\.("(?:[^"\\]|\\.)*")\s*\]\s*$/.exec(line)
    if (header) {
      const key = JSON.parse(header[1] as string) as string
      skipping = keys.has(key)
      if (skipping) dropped.push(key)
    } else if (/^\s*\[/.test(line)) {
      skipping = false
    }
    if (!skipping) out.push(line)
  }
  return { text: out.join('\n').replace(/\n+$/, ''), dropped, kept }
}

/** An older hookd's block lines regrouped by the hooks file each table is for: blocks of the new form. */
function regroup(lines: readonly string[], except: string): string[] {
  const byFile = new Map<string, string[]>()
  let current: string[] | undefined
  for (const line of lines) {
    const header = /^\s*\[\s*hooks\.state\.("(?:[^"\\]|\\.)*")\s*\]\s*$/.exec(line)
    if (header) {
      const key = JSON.parse(header[1] as string) as string
      const file = key.split(':').slice(0, -3).join(':')
      current = file === except ? undefined : (byFile.get(file) ?? byFile.set(file, []).get(file))
    }
    current?.push(line)
  }
  return [...byFile].map(([file, body]) => [begin(file), ...body, end(file)].join('\n'))
}

/**
 * How config.toml, outside hookd's block for `hooksFile`, says `project` is trusted: the user's own
 * decision (made in Codex, or by hand), or undefined when it says nothing of it.
 */
export function projectTrustLevel(text: string, hooksFile: string, project: string): string | undefined {
  const lines = withoutBlock(text, hooksFile, new Set()).text.split('\n')
  const header = `[projects.${tomlString(project)}]`
  const at = lines.findIndex((line) => line.trim() === header)
  if (at === -1) return undefined
  for (const line of lines.slice(at + 1)) {
    if (/^\s*\[/.test(line)) break
    const level = /^\s*trust_level\s*=\s*"([^"]*)"\s*(#.*)?$/.exec(line)
    if (level) return level[1]
  }
  return 'unset'
}

/**
 * config.toml's new text: the block for `hooksFile` listing `hooks` (none: the block removed), and,
 * with `project`, the project trusted when config.toml does not say how it trusts it already
 * (`projectAdded`). `dropped` are the stale tables for the same places that were taken out.
 */
export function withTrust(text: string, hooksFile: string, hooks: readonly TrustedHook[], project?: string): { text: string; dropped: string[]; projectAdded: boolean } {
  const keys = new Set(hooks.map((h) => keyOf(hooksFile, h)))
  const { text: rest, dropped, kept } = withoutBlock(text, hooksFile, keys)
  const blocks = regroup(kept, hooksFile)
  let projectAdded = false
  if (hooks.length) {
    const block = [begin(hooksFile)]
    const projectTable = project === undefined ? undefined : `[projects.${tomlString(project)}]`
    if (projectTable && !rest.split('\n').some((line) => line.trim() === projectTable)) {
      block.push(projectTable, 'trust_level = "trusted"')
      projectAdded = true
    }
    for (const h of hooks) {
      block.push(`[hooks.state.${tomlString(keyOf(hooksFile, h))}]`, `trusted_hash = ${tomlString(trustHash(h.event, h.command, h.timeoutS, h.matcher))}`)
    }
    block.push(end(hooksFile))
    blocks.push(block.join('\n'))
  }
  const body = [rest, ...blocks].filter((part) => part !== '').join('\n\n')
  return { text: body === '' ? '' : `${body}\n`, dropped, projectAdded }
}
