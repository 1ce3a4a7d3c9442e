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
 *
 * The entries live in one block of config.toml between two marker comments, replaced as a whole on
 * every setup; a table for the same key elsewhere in the file (a stale one, for a hook that was at
 * that place before) is taken out, since TOML refuses a table defined twice.
 */
import { createHash } from 'node:crypto'
import type { Position } from './setup-hooks-json.js'

const BEGIN = '# hookd setup codex: the hooks it wrote, trusted (hookd setup codex --remove takes this block out)'
const END = '# hookd setup codex: end'

/** One hook Codex should trust: where it is, and what it is. */
export interface TrustedHook {
  event: string
  position: Position
  command: string
  timeoutS: number
}

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

export function trustHash(event: string, command: string, timeoutS: number): string {
  const identity = { event_name: snakeEvent(event), hooks: [{ async: false, command, timeout: timeoutS, type: 'command' }] }
  return `sha256:${createHash('sha256').update(sortedJson(identity)).digest('hex')}`
}

function tomlString(text: string): string {
  return JSON.stringify(text)
}

function keyOf(hooksFile: string, hook: TrustedHook): string {
  return `${hooksFile}:${snakeEvent(hook.event)}:${hook.position.group}:${hook.position.handler}`
}

/** config.toml's text without hookd's block, and without tables for `keys` (stale trust for those places). */
function withoutBlock(text: string, keys: ReadonlySet<string>): { text: string; dropped: string[] } {
  const out: string[] = []
  const dropped: string[] = []
  let inBlock = false
  let skipping = false
  for (const line of text.split('\n')) {
    if (line === BEGIN) inBlock = true
    if (inBlock) {
      if (line === END) inBlock = false
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
  return { text: out.join('\n').replace(/\n+$/, ''), dropped }
}

/**
 * config.toml's new text: hookd's block listing `hooks` (none: the block removed). `dropped` are the
 * stale tables for the same places that were taken out.
 */
export function withTrust(text: string, hooksFile: string, hooks: readonly TrustedHook[]): { text: string; dropped: string[] } {
  const keys = new Set(hooks.map((h) => keyOf(hooksFile, h)))
  const { text: rest, dropped } = withoutBlock(text, keys)
  if (!hooks.length) return { text: rest === '' ? '' : `${rest}\n`, dropped }
  const block = [BEGIN]
  for (const h of hooks) {
    block.push(`[hooks.state.${tomlString(keyOf(hooksFile, h))}]`, `trusted_hash = ${tomlString(trustHash(h.event, h.command, h.timeoutS))}`)
  }
  block.push(END)
  return { text: `${rest === '' ? '' : `${rest}\n\n`}${block.join('\n')}\n`, dropped }
}
