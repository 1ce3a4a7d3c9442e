/**
 * How an agent's native tool maps onto a canonical one (vocabulary.ts), both ways: native input to
 * canonical arguments for the hooks, and the hooks' rewritten arguments back into the native input.
 *
 * Going back, only the canonical fields are written over the native input; every other native field
 * (Bash's `description`, Grep's `output_mode`, ...) is kept as the agent sent it. A field a hook
 * removed is removed; a field the canonical tool does not know is reported and ignored, never passed
 * to the agent (whose own input validation might reject the whole call).
 */
import { isAbsolute, relative, resolve, sep } from 'node:path'
import { sameJson } from '../protocol/json.js'
import { issueText } from '../protocol/issue-text.js'
import { CANONICAL_TOOLS, type CanonicalToolName, type NativeCall } from './vocabulary.js'

/** One canonical field and the native field it is. `path` fields are made workdir-relative for hooks. */
export interface FieldMapping {
  canonical: string
  native: string
  path?: boolean
}

export interface ToolMapping {
  /** The agent's own tool name, e.g. `Bash`. */
  native: string
  canonical: CanonicalToolName
  fields: readonly FieldMapping[]
}

/** A tool call as hooks see it at beforeToolExecute and afterToolExecute. */
export interface CanonicalCall {
  id: string
  name: string
  arguments: Record<string, unknown>
  native: NativeCall
}

/** What a rewrite of canonical arguments becomes in the agent's input. */
export type NativeRewrite =
  | { ok: true; input: Record<string, unknown>; ignored: string[] }
  | { ok: false; message: string }

/** An agent's tools: its mappings by native name. */
export class ToolTable {
  private readonly byNative: ReadonlyMap<string, ToolMapping>

  constructor(
    readonly agent: string,
    mappings: readonly ToolMapping[],
  ) {
    this.byNative = new Map(mappings.map((m) => [m.native, m]))
  }

  mapping(nativeName: string): ToolMapping | undefined {
    return this.byNative.get(nativeName)
  }

  /**
   * The call hooks see. A tool with no mapping, or whose input lacks a field its canonical tool
   * needs, keeps its own name and input.
   */
  toCanonical(id: string, nativeName: string, input: Record<string, unknown>, workdir: string): CanonicalCall {
    const native: NativeCall = { agent: this.agent, name: nativeName, input }
    const mapping = this.byNative.get(nativeName)
    if (mapping) {
      const args: Record<string, unknown> = {}
      for (const field of mapping.fields) {
        const value = input[field.native]
        if (value === undefined || value === null) continue
        args[field.canonical] = field.path && typeof value === 'string' ? toWorkdirPath(value, workdir) : value
      }
      if (CANONICAL_TOOLS[mapping.canonical].safeParse(args).success) return { id, name: mapping.canonical, arguments: args, native }
    }
    return { id, name: nativeName, arguments: input, native }
  }

  /**
   * The native input for the arguments the hooks left, or undefined when they did not change them.
   * An unmapped tool's arguments are its native input, so they go back as they are.
   */
  toNative(call: CanonicalCall, args: Record<string, unknown>, workdir: string): NativeRewrite | undefined {
    if (sameJson(call.arguments, args)) return undefined
    const mapping = call.name === call.native.name ? undefined : this.byNative.get(call.native.name)
    if (!mapping) return { ok: true, input: args, ignored: [] }
    const parsed = CANONICAL_TOOLS[mapping.canonical].safeParse(args)
    if (!parsed.success) {
      return { ok: false, message: issueText(parsed.error, `the rewritten ${mapping.canonical} arguments`) }
    }
    const input: Record<string, unknown> = { ...call.native.input }
    for (const field of mapping.fields) {
      const value = args[field.canonical]
      if (value === undefined || value === null) delete input[field.native]
      else input[field.native] = field.path && typeof value === 'string' ? resolve(workdir, value) : value
    }
    const known = new Set(mapping.fields.map((f) => f.canonical))
    return { ok: true, input, ignored: Object.keys(args).filter((k) => !known.has(k)) }
  }
}

/** `path` relative to `workdir` when it lies inside it; as given otherwise. */
export function toWorkdirPath(path: string, workdir: string): string {
  if (!isAbsolute(path)) return path
  const rel = relative(workdir, path)
  if (rel === '') return '.'
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return path
  return rel
}
