/**
 * How an agent's native tool maps onto a canonical one (vocabulary.ts), both ways: native input to
 * canonical arguments for the hooks, and the hooks' rewritten arguments back into the native input.
 *
 * Going in, paths take the canonical convention (canonical-path.ts) and flags become `true` or
 * nothing. A call whose fields have no canonical reading (a path with a NUL byte, a flag that is no
 * boolean) is unreadable: the gate refuses it (tool-gate.ts), and elsewhere it reaches hooks under its
 * own name with its own input, never as a canonical call it is not.
 *
 * Going back, only the canonical fields the hooks changed are written over the native input; every
 * other native field (Bash's `description`, Grep's `output_mode`, a field the hooks left as it was) is
 * kept as the agent sent it. A field a hook removed is removed. A field the canonical tool does not
 * know is reported and ignored, never passed to the agent (whose own input validation might reject
 * the whole call); a field that changes what the call does (vocabulary.ts BINDING_FIELDS) and the
 * agent's tool has no place for refuses the rewrite.
 */
import { resolve } from 'node:path'
import { sameJson } from '../protocol/json.js'
import { issueText } from '../protocol/issue-text.js'
import { readPath } from './canonical-path.js'
import { BINDING_FIELDS, CANONICAL_TOOLS, type CanonicalToolName, type NativeCall, isCanonicalTool } from './vocabulary.js'

/**
 * One canonical field and the native field it is. A `path` is made canonical (canonical-path.ts); a
 * `flag` is canonical `true` when the native field is `true` (or the string `"true"`, which Claude
 * Code's tools take for it), absent when it is false or absent.
 */
export interface FieldMapping {
  canonical: string
  native: string
  path?: boolean
  flag?: boolean
}

export interface ToolMapping {
  /** The agent's own tool name, e.g. `Bash`. */
  native: string
  canonical: CanonicalToolName
  fields: readonly FieldMapping[]
}

/** What a codec reads from a native input: a canonical call, a reason it cannot be read, or undefined for none. */
export type CodecRead = { name: CanonicalToolName; arguments: Record<string, unknown> } | { unreadable: string } | undefined

/**
 * A tool whose input is not a set of fields (Codex's `apply_patch` takes a whole patch): it converts
 * itself, and says when a call has no canonical form (it then reaches hooks under its own name).
 */
export interface ToolCodec {
  native: string
  /** The canonical tools its calls may read as (a call read as any other keeps its own name). */
  reads: readonly CanonicalToolName[]
  /** The canonical call `input` is, why it cannot be read, or undefined when it is none. */
  toCanonical(input: Record<string, unknown>, workdir: string): CodecRead
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

/**
 * A native call read for the hooks: the call they see, and when its arguments have no canonical
 * reading, why (`call` is then the native call under its own name).
 */
export interface ToolRead {
  call: CanonicalCall
  unreadable?: string
}

/** What a rewrite of canonical arguments becomes in the agent's input. */
export type NativeRewrite =
  | { ok: true; input: Record<string, unknown>; ignored: string[] }
  | { ok: false; message: string }

type Canonical = { name: string; arguments: Record<string, unknown> }

/** A flag field's canonical value: true, absent (undefined), or null when the native value is no boolean. */
function flagOf(value: unknown): true | undefined | null {
  if (value === true || value === 'true') return true
  if (value === undefined || value === null || value === false || value === 'false') return undefined
  return null
}

/** Whether a hook changed a field: for a flag, false and absent are the same. */
function changed(field: { flag?: boolean }, before: unknown, after: unknown): boolean {
  if (field.flag) return (before === true) !== (after === true)
  return !sameJson(before ?? null, after ?? null)
}

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

  /** Every tool the table maps (docs/agents.md's vocabulary table is checked against them). */
  get mappings(): ReadonlyArray<ToolMapping | ToolCodec> {
    return [...this.byNative.values()]
  }

  /**
   * The call hooks see, and why it has no canonical reading when it has none. A tool with no mapping,
   * or whose input lacks a field its canonical tool needs, keeps its own name and input.
   */
  read(id: string, nativeName: string, input: Record<string, unknown>, workdir: string): ToolRead {
    const native: NativeCall = { agent: this.agent, name: nativeName, input }
    const canonical = this.canonicalOf(nativeName, input, workdir)
    const own = { id, name: nativeName, arguments: input, native }
    if (canonical && 'unreadable' in canonical) return { call: own, unreadable: canonical.unreadable }
    return { call: canonical ? { id, ...canonical, native } : own }
  }

  /** The call hooks see (read's call). */
  toCanonical(id: string, nativeName: string, input: Record<string, unknown>, workdir: string): CanonicalCall {
    return this.read(id, nativeName, input, workdir).call
  }

  /** The canonical name and arguments of a native call, why it cannot be read, or undefined when it has none. */
  private canonicalOf(nativeName: string, input: Record<string, unknown>, workdir: string): Canonical | { unreadable: string } | undefined {
    const mapping = this.byNative.get(nativeName)
    if (!mapping) return undefined
    if ('toCanonical' in mapping) {
      const canonical = mapping.toCanonical(input, workdir)
      if (!canonical || 'unreadable' in canonical) return canonical
      if (!mapping.reads.includes(canonical.name)) return undefined
      return CANONICAL_TOOLS[canonical.name].safeParse(canonical.arguments).success ? canonical : undefined
    }
    const args: Record<string, unknown> = {}
    for (const field of mapping.fields) {
      const value = input[field.native]
      if (value === undefined || value === null) continue
      if (field.path && typeof value === 'string') {
        const path = readPath(value, workdir, `${nativeName}'s ${field.native}`)
        if (!path.ok) return { unreadable: path.problem }
        args[field.canonical] = path.path
      } else if (field.flag) {
        const flag = flagOf(value)
        if (flag === null) return { unreadable: `${nativeName}'s ${field.native} is neither true nor false` }
        if (flag) args[field.canonical] = true
      } else args[field.canonical] = value
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
    const canonical = isCanonicalTool(call.name) ? this.canonicalOf(call.native.name, call.native.input, workdir) : undefined
    const mapping = canonical && !('unreadable' in canonical) ? this.byNative.get(call.native.name) : undefined
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
    const known = new Set(mapping.fields.map((f) => f.canonical))
    for (const field of BINDING_FIELDS[name] ?? []) {
      if (!known.has(field.name) && changed(field, call.arguments[field.name], args[field.name])) {
        return { ok: false, message: `the rewritten ${name} arguments set '${field.name}', which the tool has no field for` }
      }
    }
    const input: Record<string, unknown> = { ...call.native.input }
    for (const field of mapping.fields) {
      const before = call.arguments[field.canonical]
      const value = args[field.canonical]
      if (!changed(field, before, value)) continue
      if (value === undefined || value === null || (field.flag && value !== true)) delete input[field.native]
      else if (field.path && typeof value === 'string') {
        if (value.includes('\0')) return { ok: false, message: `the rewritten ${name} ${field.canonical} holds a NUL byte` }
        input[field.native] = resolve(workdir, value)
      } else input[field.native] = value
    }
    // A binding field the tool has no place for was refused above if the hooks changed it; left as it
    // was, it carries nothing to report.
    const binding = new Set((BINDING_FIELDS[name] ?? []).map((f) => f.name))
    const ignored = Object.keys(args).filter((k) => !known.has(k) && !binding.has(k))
    if (sameJson(input, call.native.input) && !ignored.length) return undefined
    return { ok: true, input, ignored }
  }
}
