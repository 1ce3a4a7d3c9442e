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
import { CANONICAL_TOOLS, type CanonicalToolName, type NativeCall, isCanonicalTool } from './vocabulary.js'

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

/**
 * A tool whose input is not a set of fields (Codex's `apply_patch` takes a whole patch): it converts
 * itself, and says when a call has no canonical form (it then reaches hooks under its own name).
 */
export interface ToolCodec {
  native: string
  /** The canonical call `input` is, or undefined when it is none. */
  toCanonical(input: Record<string, unknown>, workdir: string): { name: CanonicalToolName; arguments: Record<string, unknown> } | undefined
  /** The native input for checked canonical `args` of `name`, or a message saying why the tool cannot take them. */
  toNative(name: CanonicalToolName, args: Record<string, unknown>, input: Record<string, unknown>, workdir: string): Record<string, unknown> | string
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
  private readonly byNative: ReadonlyMap<string, ToolMapping | ToolCodec>

  constructor(
    readonly agent: string,
    mappings: readonly (ToolMapping | ToolCodec)[],
  ) {
    this.byNative = new Map(mappings.map((m) => [m.native, m]))
  }

  mapping(nativeName: string): ToolMapping | ToolCodec | undefined {
    return this.byNative.get(nativeName)
  }

  /**
   * The call hooks see. A tool with no mapping, or whose input lacks a field its canonical tool
   * needs, keeps its own name and input.
   */
  toCanonical(id: string, nativeName: string, input: Record<string, unknown>, workdir: string): CanonicalCall {
    const native: NativeCall = { agent: this.agent, name: nativeName, input }
    return { id, ...(this.canonicalOf(nativeName, input, workdir) ?? { name: nativeName, arguments: input }), native }
  }

  /** The canonical name and arguments of a native call, or undefined when it has none. */
  private canonicalOf(nativeName: string, input: Record<string, unknown>, workdir: string): { name: string; arguments: Record<string, unknown> } | undefined {
    const mapping = this.byNative.get(nativeName)
    if (!mapping) return undefined
    if ('toCanonical' in mapping) {
      const canonical = mapping.toCanonical(input, workdir)
      return canonical && CANONICAL_TOOLS[canonical.name].safeParse(canonical.arguments).success ? canonical : undefined
    }
    const args: Record<string, unknown> = {}
    for (const field of mapping.fields) {
      const value = input[field.native]
      if (value === undefined || value === null) continue
      args[field.canonical] = field.path && typeof value === 'string' ? toWorkdirPath(value, workdir) : value
    }
    return CANONICAL_TOOLS[mapping.canonical].safeParse(args).success ? { name: mapping.canonical, arguments: args } : undefined
  }

  /**
   * The native input for the arguments the hooks left, or undefined when they did not change them.
   * An unmapped tool's arguments are its native input, so they go back as they are.
   */
  toNative(call: CanonicalCall, args: Record<string, unknown>, workdir: string): NativeRewrite | undefined {
    if (sameJson(call.arguments, args)) return undefined
    // Mapped or not is decided again from the native call: a native name may equal a canonical one
    // (Gemini CLI's write_file) whether or not the call mapped.
    const mapped = isCanonicalTool(call.name) && this.canonicalOf(call.native.name, call.native.input, workdir) !== undefined
    const mapping = mapped ? this.byNative.get(call.native.name) : undefined
    if (!mapping) return { ok: true, input: args, ignored: [] }
    const name = call.name as CanonicalToolName
    const parsed = CANONICAL_TOOLS[name].safeParse(args)
    if (!parsed.success) {
      return { ok: false, message: issueText(parsed.error, `the rewritten ${name} arguments`) }
    }
    if ('toNative' in mapping) {
      const input = mapping.toNative(name, parsed.data, call.native.input, workdir)
      const ignored = Object.keys(args).filter((k) => !Object.hasOwn(CANONICAL_TOOLS[name].shape, k))
      return typeof input === 'string' ? { ok: false, message: input } : { ok: true, input, ignored }
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
