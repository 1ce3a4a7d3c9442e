/**
 * Kubernetes manifests checked offline, as the API server would check them, in two passes:
 *
 * 1. The schema: kubernetes-models (pinned in package.json) carries validators generated from the
 *    Kubernetes 1.33 OpenAPI spec: types, required fields, enums, formats.
 * 2. Unknown fields: those validators, like the OpenAPI spec, let unknown fields through, but the API
 *    server rejects them (kubectl's default --validate=strict), and a misspelt security field that
 *    silently does nothing is the mistake that matters most here. The same package's TypeScript
 *    interfaces know every field, so each document is type-checked as an object literal of its kind's
 *    interface; TypeScript's excess-property check then names any field the kind does not have.
 */
import { readFile, readdir } from 'node:fs/promises'
import { join, relative } from 'node:path'
import ts from 'typescript'
import { parseAllDocuments } from 'yaml'

export interface Manifest {
  /** The file, relative to the folder searched. */
  file: string
  /** The document's position in its file, from 0. */
  index: number
  doc: { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown }; [key: string]: unknown }
}

/** Every document of every .yaml/.yml file under `dir`; YAML errors (duplicate keys included) throw. */
export async function loadManifests(dir: string): Promise<Manifest[]> {
  const out: Manifest[] = []
  const files = (await readdir(dir, { recursive: true })).filter((f) => /\.ya?ml$/.test(f)).sort()
  for (const file of files) {
    const docs = parseAllDocuments(await readFile(join(dir, file), 'utf8'), { prettyErrors: true })
    if (!Array.isArray(docs)) throw new Error(`${file}: not a YAML stream`)
    docs.forEach((d, index) => {
      if (d.errors.length > 0) throw new Error(`${file} document ${index}: ${d.errors.map((e) => e.message).join('; ')}`)
      const doc: unknown = d.toJS()
      if (doc !== null) out.push({ file: relative(dir, join(dir, file)), index, doc: doc as Manifest['doc'] })
    })
  }
  return out
}

/** `file#index Kind/name`, for messages. */
export function label(m: Manifest): string {
  return `${m.file}#${m.index} ${String(m.doc.kind)}/${String(m.doc.metadata?.name)}`
}

/** The kubernetes-models module of a document's kind: `v1` → `kubernetes-models/v1/Pod`. */
function modulePath(m: Manifest): string {
  const { apiVersion, kind } = m.doc
  if (typeof apiVersion !== 'string' || typeof kind !== 'string' || !/^[\w.]+(\/\w+)?$/.test(apiVersion) || !/^\w+$/.test(kind)) {
    throw new Error(`${m.file}#${m.index}: apiVersion and kind must be set (got ${String(apiVersion)}, ${String(kind)})`)
  }
  return `kubernetes-models/${apiVersion}/${kind}`
}

interface ModelModule {
  [name: string]: new (data: unknown) => { validate(): void }
}

/** Pass 1: the schema. One line per problem: `label: /json/pointer message`. */
export async function schemaProblems(manifests: Manifest[]): Promise<string[]> {
  const problems: string[] = []
  for (const m of manifests) {
    let mod: ModelModule
    try {
      mod = (await import(modulePath(m))) as ModelModule
    } catch (err) {
      problems.push(`${label(m)}: no Kubernetes 1.33 schema for ${String(m.doc.apiVersion)} ${String(m.doc.kind)} (${(err as Error).message.split('\n')[0]})`)
      continue
    }
    const Model = mod[m.doc.kind as string] as ModelModule[string]
    try {
      new Model(m.doc).validate()
    } catch (err) {
      const errors = (err as { errors?: Array<{ instancePath: string; message: string; params?: { allowedValues?: unknown[] } }> }).errors
      if (!errors) throw err
      for (const e of errors) {
        const allowed = e.params?.allowedValues ? ` (${e.params.allowedValues.join(', ')})` : ''
        problems.push(`${label(m)}: ${e.instancePath || '/'} ${e.message}${allowed}`)
      }
    }
  }
  return [...new Set(problems)]
}

/** Pass 2: fields the kind does not have (and any type TypeScript disagrees with). */
export function unknownFieldProblems(manifests: Manifest[], root: string): string[] {
  const lines: string[] = []
  const where: Array<{ manifest: Manifest; path: string }> = []
  const push = (text: string, manifest: Manifest, path: string): void => {
    lines.push(text)
    where.push({ manifest, path })
  }
  manifests.forEach((m, i) => {
    const kind = m.doc.kind as string
    push(`import type { I${kind} as T${i} } from '${modulePath(m)}'`, m, '')
  })
  manifests.forEach((m, i) => {
    // One property per line, so that a diagnostic's line names the field's path.
    const emit = (value: unknown, path: string, indent: string, prefix: string, suffix: string): void => {
      if (value !== null && typeof value === 'object') {
        const entries = Array.isArray(value) ? value.map((v, k) => [String(k), v] as const) : Object.entries(value)
        const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}']
        push(`${indent}${prefix}${open}`, m, path)
        for (const [k, v] of entries) {
          emit(v, `${path}/${k}`, `${indent}  `, Array.isArray(value) ? '' : `${JSON.stringify(k)}: `, ',')
        }
        push(`${indent}${close}${suffix}`, m, path)
      } else {
        push(`${indent}${prefix}${JSON.stringify(value)}${suffix}`, m, path)
      }
    }
    emit(m.doc, '', '', `export const m${i}: T${i} = `, '')
  })
  const file = join(root, 'test', '.kubernetes-manifests.generated.ts')
  const text = `${lines.join('\n')}\n`
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: [],
    lib: ['lib.es2022.d.ts'],
  }
  const host = ts.createCompilerHost(options)
  const getSourceFile = host.getSourceFile.bind(host)
  host.getSourceFile = (name, version, ...rest) =>
    name === file ? ts.createSourceFile(name, text, version) : getSourceFile(name, version, ...rest)
  const fileExists = host.fileExists.bind(host)
  host.fileExists = (name) => name === file || fileExists(name)
  const readFileText = host.readFile.bind(host)
  host.readFile = (name) => (name === file ? text : readFileText(name))
  const program = ts.createProgram([file], options, host)
  const problems: string[] = []
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const message = ts.flattenDiagnosticMessageText(d.messageText, '\n').split('\n')[0] as string
    if (d.file?.fileName !== file || d.start === undefined) {
      problems.push(`type check: ${message}`)
      continue
    }
    const at = where[d.file.getLineAndCharacterOfPosition(d.start).line] as { manifest: Manifest; path: string }
    problems.push(`${label(at.manifest)}: ${at.path || '/'} ${message}`)
  }
  return problems
}
