/**
 * The canonical tool vocabulary: the names and arguments hooks see for the tools every coding agent
 * has, whatever the agent calls them. A hook written once against `shell {command}` guards Claude
 * Code's `Bash`, Gemini CLI's `run_shell_command`, Copilot's `bash` and hookd's own agent alike; the
 * agent's own name and input ride along in `call.native`.
 *
 * This file is the one list of canonical tools. Each agent's table (e.g. claude-code/tools.ts) maps
 * its native tools onto these with `ToolMapping`s (tool-mapping.ts); a tool no table maps reaches
 * hooks under its own name with its own input.
 *
 * Paths: a canonical `path` (and a shell's `cwd`) is resolved against the session's workdir, `.` and
 * `..` taken out, and then relative to the workdir when it lies inside it (as `ctx.file` and hookd's
 * own agent take them) and absolute otherwise (canonical-path.ts). Agents that want absolute paths get
 * them back absolute.
 */
import * as z from 'zod'

const text = z.string()
const count = z.number().int().nonnegative()

/** Each canonical tool's arguments. Only these fields are mapped; the rest of a native input stays native. */
export const CANONICAL_TOOLS = {
  /**
   * A command line run by a shell: in `cwd` when the agent's call names a folder (a path, in the
   * convention above; without it, wherever the agent runs its commands), and outside the agent's
   * sandbox when `unsandboxed` is true (the call asks to bypass it, as Claude Code's
   * `dangerouslyDisableSandbox`).
   */
  shell: z.object({ command: text, cwd: text.optional(), unsandboxed: z.boolean().optional() }),
  /** Read a text file (optionally a window of lines: `offset` is the first line, `limit` the count). */
  read_file: z.object({ path: text, offset: count.optional(), limit: count.optional() }),
  /** Create or replace a file with `content`. */
  write_file: z.object({ path: text, content: text }),
  /** Replace `old_string` with `new_string` in a file (every occurrence with `replace_all`). */
  edit_file: z.object({ path: text, old_string: text, new_string: text, replace_all: z.boolean().optional() }),
  /** Fetch a URL (`prompt`: what the agent wants to learn from it, when the agent's tool takes one). */
  web_fetch: z.object({ url: text, prompt: text.optional() }),
  /** Search the web. */
  web_search: z.object({ query: text }),
  /** Find files by a glob pattern, under `path` (default: the workdir). */
  find_files: z.object({ pattern: text, path: text.optional() }),
  /** Search file contents for a regular expression, under `path` (default: the workdir). */
  search_files: z.object({ pattern: text, path: text.optional() }),
  /** List a folder. */
  list_files: z.object({ path: text }),
} as const

export type CanonicalToolName = keyof typeof CANONICAL_TOOLS

/**
 * Canonical fields that change what a call does, not only how it is shown: a rewrite that sets one
 * the agent's tool has no place for refuses the call (dropping it would run the call somewhere else,
 * or outside the sandbox, than the hook said). `flag`: false and absent are the same.
 */
export const BINDING_FIELDS: Partial<Record<CanonicalToolName, readonly { name: string; flag?: boolean }[]>> = {
  shell: [{ name: 'cwd' }, { name: 'unsandboxed', flag: true }],
}

export const CANONICAL_TOOL_NAMES = Object.keys(CANONICAL_TOOLS) as CanonicalToolName[]

export function isCanonicalTool(name: string): name is CanonicalToolName {
  return Object.hasOwn(CANONICAL_TOOLS, name)
}

/** What a hook finds in `call.native`: the agent, and its own tool name and input, untouched. */
export interface NativeCall {
  agent: string
  name: string
  input: Record<string, unknown>
}
