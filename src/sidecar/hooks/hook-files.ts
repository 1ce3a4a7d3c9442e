/**
 * What a hook folder's files say, read without running anything: the `hook.json` schema and its
 * checks, the version (a content hash), and source positions for diagnostics (the line of an export,
 * in a plain script or through a bundle's source map; the closest point name to a misspelt one). The
 * registry and `hookd check` share these.
 */
import { createHash } from 'node:crypto'
import * as z from 'zod'
import { parseJson } from '../../protocol/bounded-json.js'
import { CONFIG_MAX_BYTES } from './hook-folder.js'
import { didYouMean } from '../../protocol/did-you-mean.js'
import { issueText } from '../../protocol/issue-text.js'
import { type HookPermissions, hookPermissions, permissionsSchema } from '../../protocol/hook-permissions.js'
import { POINT_NAMES, type PointName } from '../../protocol/points/points.js'
import { quoted } from '../../protocol/text.js'
import { TOOL_NAMES, type ToolName } from '../../protocol/tool-names.js'
import { type SourceMap, mapPosition } from './source-map.js'
import { HOOK_MODES, type HookMode } from '../chain/layer.js'

/** How deeply hook.json may nest (bounded-json.ts); its size is capped when it is read (hook-folder.ts). */
export const HOOK_JSON_DEPTH = 64

/** How long hook.json "description" may be: a line or two, for `hookd list` and `hookd check`. */
export const DESCRIPTION_MAX_CHARS = 500

/** `hook.json`, beside `index.js`. */
export const hookJsonSchema = z.strictObject({
  /** The hook's own configuration, visible as `ctx.config`. */
  config: z.unknown().optional(),
  /** One line about the hook, for `hookd list`. */
  description: z.string().max(DESCRIPTION_MAX_CHARS, `keep it to one line of at most ${DESCRIPTION_MAX_CHARS} characters`).optional(),
  /**
   * Makes the folder a remote hook (src/sidecar/runners/remote/remote-address.ts, docs/languages.md): the address of a server of the
   * `hookd.v1.Hook` service, `unix:PATH` (relative to the hook's folder) or `HOST:PORT`. No index.js.
   */
  remote: z.string().min(1, 'write unix:PATH or HOST:PORT').optional(),
  /**
   * What this hook's failure does at a gate (chain.ts OnError): "refuse" makes every failure of it
   * refuse the call (a guard that must not be skipped), "skip" lets every failure through (fail open).
   * The session's or operator's "refuse" wins over "skip".
   */
  onError: z.enum(['default', 'refuse', 'skip'], { error: 'expected "refuse", "skip" or "default"' }).optional(),
  /**
   * The tool calls this hook is called for, by their canonical names (src/agents/vocabulary.ts); absent:
   * every call. The sidecar skips it for any other call (step-planner.ts), and `hookd setup` narrows the
   * agent's own matchers to the tools the route's hooks list.
   */
  tools: z
    .array(z.string().max(64), { error: 'expected a list of tool names, e.g. ["shell", "write_file"]' })
    .min(1, 'lists no tool; leave "tools" out for a hook called for every tool call')
    .max(TOOL_NAMES.length * 2, `lists more names than there are tools (${TOOL_NAMES.length})`)
    .superRefine((names, ctx) => {
      for (const [i, name] of names.entries()) {
        if ((TOOL_NAMES as readonly string[]).includes(name)) continue
        const near = didYouMean(name, TOOL_NAMES)
        ctx.addIssue({ code: 'custom', path: [i], message: `${quoted(name, 64)} is not a canonical tool name${near ? ` (did you mean '${near}'?)` : ''}; the names are ${TOOL_NAMES.join(', ')}` })
      }
    })
    .optional(),
  /** What the hook may touch and decide (src/protocol/hook-permissions.ts); absent: what the session allows. */
  permissions: permissionsSchema.optional(),
  /**
   * "shadow" runs the hook on real traffic and records what it would have decided (the audit log's
   * `would`, the operator log, hookd_shadow_decisions_total), enforcing nothing (chain.ts, would.ts;
   * docs/writing-hooks.md "Shadow mode"). Default "enforce".
   */
  mode: z.enum(HOOK_MODES, { error: 'expected "enforce" or "shadow"' }).optional(),
})

/** The served version's name: a content hash of index.js and hook.json. */
export function versionOf(source: string, configText: string | undefined): string {
  return createHash('sha256')
    .update(source)
    .update('\0')
    .update(configText ?? '')
    .digest('hex')
    .slice(0, 12)
}

export type HookJsonCheck =
  | {
      ok: true
      config: unknown
      description?: string
      remote?: string
      onError?: 'default' | 'refuse' | 'skip'
      /** hook.json "permissions", parsed (hook-permissions.ts). */
      permissions?: HookPermissions
      /** The same block as written, for hookd.lock to record (pinning/lock-file.ts). */
      writtenPermissions?: unknown
      mode?: HookMode
      tools?: readonly ToolName[]
    }
  | { ok: false; message: string; line?: number }

/** Parses and validates hook.json; a failure says where (line, when known) and what is wrong. */
export function checkHookJson(text: string): HookJsonCheck {
  const read = parseJson(text, 'hook.json', { maxDepth: HOOK_JSON_DEPTH, maxBytes: CONFIG_MAX_BYTES })
  if (!read.ok) {
    if (read.problem !== 'not-json') return { ok: false, message: read.message }
    const message = read.message
    const line = /line (\d+)/.exec(message)?.[1] ?? lineAtOffset(text, /position (\d+)/.exec(message)?.[1])
    return { ok: false, message, ...(line !== undefined ? { line: Number(line) } : {}) }
  }
  const json = read.value
  const parsed = hookJsonSchema.safeParse(json)
  if (parsed.success) {
    const { config, description, remote, onError, permissions, mode, tools } = parsed.data
    return {
      ok: true,
      config,
      ...(description !== undefined ? { description } : {}),
      ...(remote !== undefined ? { remote } : {}),
      ...(onError !== undefined ? { onError } : {}),
      ...(mode !== undefined ? { mode } : {}),
      ...(permissions !== undefined ? { permissions: hookPermissions(permissions), writtenPermissions: (json as { permissions?: unknown }).permissions } : {}),
      ...(tools !== undefined ? { tools: [...new Set(tools)] as ToolName[] } : {}),
    }
  }
  const issue = parsed.error.issues[0]
  const key = issue?.code === 'unrecognized_keys' ? issue.keys[0] : issue?.path[0]
  const line = typeof key === 'string' ? exportLine(text, `"${key}"`) : undefined
  return {
    ok: false,
    message: `hook.json is invalid: ${issueText(parsed.error)} (it may hold "config", "description", "remote", "onError", "tools", "permissions" and "mode")`,
    ...(line !== undefined ? { line } : {}),
  }
}

function lineAtOffset(text: string, offset: string | undefined): number | undefined {
  if (offset === undefined) return undefined
  return text.slice(0, Number(offset)).split('\n').length
}

/**
 * The 1-based line where `needle` first appears in `text` as a whole word (an export name, or a quoted
 * JSON key), if it does.
 */
export function exportLine(text: string, needle: string | undefined): number | undefined {
  return exportLines(text, needle, 1)[0]
}

/**
 * The 1-based lines where `needle` appears as a whole word, at most `most` of them, in order: a bundle
 * names an export first in esbuild's export table, which maps to no line of the author's.
 */
export function exportLines(text: string, needle: string | undefined, most = 8): number[] {
  if (!needle) return []
  const escaped = needle.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  const pattern = new RegExp(`(^|[^\\w$])${escaped}(?![\\w$])`, 'g')
  const lines: number[] = []
  for (let match = pattern.exec(text); match && lines.length < most; match = pattern.exec(text)) {
    const line = lineAtOffset(text, String(match.index + (match[1]?.length ?? 0)))
    if (line !== undefined && lines.at(-1) !== line) lines.push(line)
  }
  return lines
}

/** Where an export of a bundle is in the author's files: its first place in the bundle that maps to one. */
export function mappedExport(map: SourceMap, name: string, source: string, needle: string | undefined): { file: string; line: number } | undefined {
  for (const line of exportLines(source, needle)) {
    const at = mapPosition(map, line)
    if (at) return { file: `${name}/${at.file}`, line: at.line }
  }
  return undefined
}

/**
 * The 1-based number of the last line of `text` that holds more than white space (1 for a blank text):
 * where an error found at the very end of a file is reported, inside the file.
 */
export function endOfFileLine(text: string): number {
  const lines = text.split('\n')
  for (let i = lines.length - 1; i >= 0; i--) if ((lines[i] as string).trim() !== '') return i + 1
  return 1
}

/** The point name closest to `name`, when it is a plausible typo (bounded: see didYouMean). */
export function closestPoint(name: string): PointName | undefined {
  return didYouMean(name, POINT_NAMES)
}

/**
 * Names for a message, each quoted and shown with its did-you-mean: the first `max` of them, then how
 * many more. Bounded however many names a hook (or a remote hook's Describe) sends.
 */
export function namesWithHints(names: readonly string[], max = 5): string {
  const shown = names.slice(0, max).map((name) => {
    const near = closestPoint(name)
    return near ? `${quoted(name, 64)} (did you mean '${near}'?)` : quoted(name, 64)
  })
  const more = names.length > max ? ` and ${names.length - max} more` : ''
  return shown.join(', ') + more
}
