/**
 * Cline's tools in the canonical vocabulary (../vocabulary.ts), as Cline CLI 3.0.65 names them in its
 * PreToolUse and PostToolUse payloads (`tool_call.name`, `tool_call.input`), measured with the real
 * CLI (docs/agents.md keeps the table). Its tools take lists: `run_commands` a list of commands, which
 * hooks see as one `shell` call of the commands one line each (so a guard reads every one of them);
 * `read_files` a list of files, one of which is a `read_file` call; `apply_patch` its patch as `input`,
 * read as Codex's (../codex/apply-patch.ts). A list of several files, and the tools with no canonical
 * match (search_codebase's list of queries, fetch_web_content, spawn_agent, ask_question, team_*), keep
 * their own names.
 */
import { resolve } from 'node:path'
import { readPath } from '../canonical-path.js'
import { APPLY_PATCH } from '../codex/apply-patch.js'
import { type ToolCodec, ToolTable } from '../tool-mapping.js'

export const CLINE = 'cline'

const strings = (value: unknown): string[] | undefined => (Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : undefined)

/** run_commands {commands: [...]}: a shell call of the commands, one a line; a rewrite is one command. */
const RUN_COMMANDS: ToolCodec = {
  native: 'run_commands',
  reads: ['shell'],
  toCanonical(input) {
    const commands = strings(input.commands)
    if (!commands) return typeof input.commands === 'undefined' ? undefined : { unreadable: "run_commands' commands is not a list of strings" }
    if (commands.length === 0) return undefined
    return { name: 'shell', arguments: { command: commands.join('\n') } }
  },
  toNative(name, args, input) {
    if (name !== 'shell' || typeof args.command !== 'string') return `run_commands takes a shell call, not ${name}`
    if (args.cwd !== undefined || args.unsandboxed !== undefined) return 'run_commands runs from the root of the workspace, unsandboxed by hookd: it has no place for cwd or unsandboxed'
    const before = strings(input.commands) ?? []
    // The commands as they were when the hooks left them alone; else the rewritten text as one command.
    return { ...input, commands: args.command === before.join('\n') ? before : [args.command] }
  },
}

/** read_files {files: [{path, start_line?, end_line?}]}: one whole file is a read_file call. */
const READ_FILES: ToolCodec = {
  native: 'read_files',
  reads: ['read_file'],
  toCanonical(input, workdir) {
    const files = input.files
    if (!Array.isArray(files) || files.length !== 1) return undefined
    const file = files[0] as Record<string, unknown> | null
    if (!file || typeof file !== 'object' || typeof file.path !== 'string') return undefined
    if ((file.start_line ?? null) !== null || (file.end_line ?? null) !== null) return undefined
    const path = readPath(file.path, workdir, "read_files' path")
    return path.ok ? { name: 'read_file', arguments: { path: path.path } } : { unreadable: path.problem }
  },
  toNative(name, args, input, workdir) {
    if (name !== 'read_file' || typeof args.path !== 'string') return `read_files takes a read_file call, not ${name}`
    if (args.offset !== undefined || args.limit !== undefined) return 'the rewrite of read_files keeps to a whole file: offset and limit have no place'
    // Cline wants absolute paths.
    return { ...input, files: [{ path: resolve(workdir, args.path) }] }
  },
}

/** apply_patch {input: PATCH}: Codex's patch, which Cline takes under `input`. */
const CLINE_APPLY_PATCH: ToolCodec = {
  native: 'apply_patch',
  reads: APPLY_PATCH.reads,
  toCanonical: (input, workdir) => (typeof input.input === 'string' ? APPLY_PATCH.toCanonical({ command: input.input }, workdir) : undefined),
  toNative(name, args, input, workdir) {
    const native = APPLY_PATCH.toNative(name, args, { command: input.input }, workdir)
    if (typeof native === 'string') return native
    const { command, ...rest } = native
    return { ...input, ...rest, input: command }
  },
}

export const CLINE_TOOLS = new ToolTable(CLINE, [
  RUN_COMMANDS,
  READ_FILES,
  CLINE_APPLY_PATCH,
])
