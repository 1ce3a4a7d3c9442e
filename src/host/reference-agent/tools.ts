/**
 * The agent's tools: shell, read_file, write_file and list_files, each working in the workdir. File
 * paths go through `confine` (the same check the host library applies to ctx.file), so they cannot
 * leave the workdir, through `..` or a symbolic link. `shell` runs `/bin/sh -c` with the workdir as
 * its current folder and your privileges: it is confined by hooks such as guard, not by the OS.
 *
 * A tool's input comes from the model, so zod checks it before the tool runs.
 */
import { spawn } from 'node:child_process'
import { mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import * as z from 'zod'
import { CapabilityError, confine } from '../capabilities.js'
import type { ToolSpec } from './model.js'
import { issueText } from '../../protocol/issue-text.js'

export interface ToolContext {
  workdir: string
  signal: AbortSignal
}

/** What the model reads back. */
export interface ToolOutput {
  text: string
  isError: boolean
}

/** A tool with its input erased: `parse` checks what the model sent, `run` takes what `parse` kept. */
export interface AgentTool {
  readonly spec: ToolSpec
  parse(input: unknown): { ok: true; input: Record<string, unknown> } | { ok: false; message: string }
  run(input: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutput>
}

/** A failure the model should read as the tool's error result. */
export class ToolFailure extends Error {}

/** Builds a tool from a zod object schema; the JSON schema the model sees is derived from it. */
export function defineTool<S extends z.ZodObject>(definition: {
  name: string
  description: string
  input: S
  run(input: z.output<S>, ctx: ToolContext): Promise<ToolOutput | string>
}): AgentTool {
  // The schema of what the model sends (io: 'input'): a field with a default is optional to it.
  const { $schema: _ignored, ...schema } = z.toJSONSchema(definition.input, { io: 'input' }) as Record<string, unknown>
  return {
    spec: { name: definition.name, description: definition.description, input_schema: { ...schema, type: 'object' } },
    parse(input) {
      const parsed = definition.input.safeParse(input)
      if (parsed.success) return { ok: true, input: parsed.data as Record<string, unknown> }
      return { ok: false, message: `invalid input for ${definition.name}: ${issueText(parsed.error)}` }
    },
    async run(input, ctx) {
      const out = await definition.run(input as z.output<S>, ctx)
      return typeof out === 'string' ? { text: out, isError: false } : out
    },
  }
}

/** The most output one tool call returns to the model. */
export const MAX_TOOL_OUTPUT = 100 * 1024
/** How long a shell command may run. */
export const SHELL_TIMEOUT_MS = 120_000
const MAX_LISTED = 1000

async function inside(tool: string, ctx: ToolContext, path: string): Promise<string> {
  try {
    return await confine(ctx.workdir, path)
  } catch (err) {
    if (err instanceof CapabilityError) throw new ToolFailure(`${tool}('${path}') refused: ${err.message}`)
    throw err
  }
}

function clip(text: string): string {
  if (text.length <= MAX_TOOL_OUTPUT) return text
  return `${text.slice(0, MAX_TOOL_OUTPUT)}\n[... ${text.length - MAX_TOOL_OUTPUT} more characters cut]`
}

function fsReason(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).replace(/^[A-Z0-9_]+: /, '').replace(/, \w+ '.*'$/s, '')
}

export const shellTool = defineTool({
  name: 'shell',
  description: `Runs a command with /bin/sh in the working folder and returns its output (stdout and stderr) and exit status. Times out after ${SHELL_TIMEOUT_MS / 1000} s.`,
  input: z.object({ command: z.string().min(1).describe('The command line, e.g. "ls -la"') }),
  run: ({ command }, ctx) =>
    new Promise<ToolOutput>((resolve, reject) => {
      if (ctx.signal.aborted) return reject(new ToolFailure('shell: not started because the run was interrupted'))
      const child = spawn('/bin/sh', ['-c', command], { cwd: ctx.workdir, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
      let output = ''
      let timedOut = false
      const add = (chunk: Buffer): void => {
        if (output.length <= MAX_TOOL_OUTPUT) output += chunk.toString('utf8')
      }
      child.stdout.on('data', add)
      child.stderr.on('data', add)
      // The command runs in its own process group, so the whole group goes when the run is stopped.
      const kill = (): void => {
        try {
          if (child.pid) process.kill(-child.pid, 'SIGKILL')
        } catch {
          // already gone
        }
      }
      const timer = setTimeout(() => {
        timedOut = true
        kill()
      }, SHELL_TIMEOUT_MS)
      ctx.signal.addEventListener('abort', kill, { once: true })
      child.on('error', (err) => {
        clearTimeout(timer)
        reject(new ToolFailure(`shell: cannot start /bin/sh: ${err.message}`))
      })
      child.on('close', (code, signal) => {
        clearTimeout(timer)
        ctx.signal.removeEventListener('abort', kill)
        if (ctx.signal.aborted) return reject(new ToolFailure('shell: stopped because the run was interrupted'))
        const text = clip(output.trimEnd())
        if (timedOut) return resolve({ text: `${text}\n[killed after ${SHELL_TIMEOUT_MS / 1000} s]`.trim(), isError: true })
        if (code === 0) return resolve({ text: text || '(no output)', isError: false })
        const status = code === null ? `killed by ${signal ?? 'a signal'}` : `exit status ${code}`
        resolve({ text: `${text}\n[${status}]`.trim(), isError: true })
      })
    }),
})

export const readFileTool = defineTool({
  name: 'read_file',
  description: 'Reads a text file in the working folder. The path is relative to the working folder.',
  input: z.object({ path: z.string().min(1).describe('Path relative to the working folder') }),
  async run({ path }, ctx) {
    const full = await inside('read_file', ctx, path)
    try {
      const info = await stat(full)
      if (!info.isFile()) throw new ToolFailure(`read_file('${path}'): not a file; use list_files for folders`)
      if (info.size > MAX_TOOL_OUTPUT) throw new ToolFailure(`read_file('${path}'): the file has ${info.size} bytes, over the limit of ${MAX_TOOL_OUTPUT}; read parts with shell (head, sed -n)`)
      return await readFile(full, 'utf8')
    } catch (err) {
      if (err instanceof ToolFailure) throw err
      throw new ToolFailure(`read_file('${path}') failed: ${fsReason(err)}`)
    }
  },
})

export const writeFileTool = defineTool({
  name: 'write_file',
  description: 'Writes a text file in the working folder, creating missing folders and replacing any existing file.',
  input: z.object({
    path: z.string().min(1).describe('Path relative to the working folder'),
    content: z.string().describe('The whole new content of the file'),
  }),
  async run({ path, content }, ctx) {
    const full = await inside('write_file', ctx, path)
    try {
      await mkdir(dirname(full), { recursive: true })
      await writeFile(full, content)
    } catch (err) {
      throw new ToolFailure(`write_file('${path}') failed: ${fsReason(err)}`)
    }
    return `wrote ${Buffer.byteLength(content)} bytes to ${path}`
  },
})

export const listFilesTool = defineTool({
  name: 'list_files',
  description: 'Lists a folder of the working folder: one name per line, folders end with "/".',
  input: z.object({ path: z.string().min(1).default('.').describe('Folder relative to the working folder; default "."') }),
  async run({ path }, ctx) {
    const full = await inside('list_files', ctx, path)
    try {
      const entries = (await readdir(full, { withFileTypes: true })).map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort()
      if (!entries.length) return '(empty folder)'
      const more = entries.length > MAX_LISTED ? `\n[... and ${entries.length - MAX_LISTED} more]` : ''
      return entries.slice(0, MAX_LISTED).join('\n') + more
    } catch (err) {
      throw new ToolFailure(`list_files('${path}') failed: ${fsReason(err)}`)
    }
  },
})

export const BUILTIN_TOOLS: readonly AgentTool[] = [shellTool, readFileTool, writeFileTool, listFilesTool]
