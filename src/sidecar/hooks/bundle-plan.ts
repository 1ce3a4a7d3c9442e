/**
 * Whether a hook folder must be bundled before the isolate can run it, and from which entry file.
 *
 * A plain CommonJS `index.js` with no package.json runs as it is: it is the fast path, and every hook
 * written before bundling existed keeps it. Everything else that a bare CommonJS script cannot run is
 * bundled (bundle.ts): TypeScript (`index.ts`, `index.mts`, `index.cts`), an ES module (`index.mjs`, an
 * `index.js` with `import`/`export` statements or under `"type": "module"`), an `index.js` that
 * `require`s a file or package by a literal name, and any folder whose package.json declares
 * dependencies (resolved from the folder's own node_modules).
 *
 * Pure: the registry gives it what it already read (the folder's file names, index.js, package.json);
 * `readBundlePlan` reads them itself for callers that have not.
 */
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { parseJson } from '../../protocol/bounded-json.js'
import { PACKAGE_JSON_MAX_BYTES } from './hook-folder.js'
import { readRegularFile } from './read-regular-file.js'

/** The entry files hookd looks for, in the order it names them in messages. */
export const ENTRY_FILES = ['index.js', 'index.mjs', 'index.ts', 'index.mts', 'index.cts'] as const


export interface FolderFacts {
  /** The names of the files in the hook's folder (not recursive). */
  names: readonly string[]
  /** index.js's text, when there is one. */
  indexJs?: string | undefined
  /** package.json's text, when there is one. */
  packageJson?: string | undefined
}

export type BundlePlan =
  /** Run index.js as it is. */
  | { kind: 'plain' }
  /** Bundle from `entry` (a name in the folder); `why` says why, for messages. */
  | { kind: 'bundle'; entry: string; why: string }
  /** No entry file at all: the registry's own "has no index.js" (or a remote hook). */
  | { kind: 'none' }
  /** The folder cannot be planned; `file` is relative to the folder. */
  | { kind: 'error'; message: string; file: string; line?: number }

/**
 * `export`/`import` statements at the start of a line: ES module syntax a CommonJS script cannot run
 * (`exports.x = ...` and `importance = 1` are not).
 */
const MODULE_SYNTAX = /^[ \t]*(?:import[ \t]*[{*'"]|import[ \t]+[\w$]|export[ \t]*[{*]|export[ \t]+(?:default|const|let|var|function|class|async)\b)/m
/** A require of a literal name: a file or package to bundle. */
const LITERAL_REQUIRE = /(?:^|[^\w$.])require[ \t]*\([ \t]*['"`]/

export function bundlePlan(facts: FolderFacts): BundlePlan {
  const entries = ENTRY_FILES.filter((name) => facts.names.includes(name))
  if (entries.length > 1) {
    return {
      kind: 'error',
      message: `the hook folder has ${entries.join(' and ')}; keep one entry file (hookd bundles index.ts itself: no compiled index.js is needed)`,
      file: entries[0] as string,
    }
  }
  const entry = entries[0]
  if (entry === undefined) return { kind: 'none' }

  let pkg: { type?: unknown; dependencies?: unknown } | undefined
  if (facts.packageJson !== undefined) {
    const parsed = parseJson(facts.packageJson, 'package.json', { maxDepth: 16, maxBytes: PACKAGE_JSON_MAX_BYTES })
    if (!parsed.ok) return { kind: 'error', message: `${parsed.message}; fix it, or remove package.json if the hook needs no packages`, file: 'package.json' }
    if (parsed.value === null || typeof parsed.value !== 'object' || Array.isArray(parsed.value)) {
      return { kind: 'error', message: 'package.json must hold a JSON object, e.g. {"dependencies": {"lodash": "4.17.21"}}', file: 'package.json' }
    }
    pkg = parsed.value as typeof pkg
  }
  const dependencies = pkg?.dependencies
  const hasDependencies = dependencies !== null && typeof dependencies === 'object' && Object.keys(dependencies).length > 0

  if (entry !== 'index.js') {
    const why = entry === 'index.mjs' ? 'it is an ES module' : 'it is TypeScript'
    return { kind: 'bundle', entry, why }
  }
  if (hasDependencies) return { kind: 'bundle', entry, why: 'package.json declares dependencies' }
  if (pkg?.type === 'module') return { kind: 'bundle', entry, why: 'package.json says "type": "module"' }
  const source = facts.indexJs ?? ''
  if (MODULE_SYNTAX.test(source)) return { kind: 'bundle', entry, why: 'it uses import or export' }
  if (LITERAL_REQUIRE.test(source)) return { kind: 'bundle', entry, why: 'it requires other files or packages' }
  return { kind: 'plain' }
}

/** The most of index.js read to plan: enough for any hook the registry would load. */
const INDEX_JS_MAX_BYTES = 4 * 1024 * 1024

/** Reads what `bundlePlan` needs from a hook folder (regular files only, bounded), then plans. */
export async function readBundlePlan(dir: string): Promise<BundlePlan> {
  let names: string[]
  try {
    // Links are listed too: an entry that is a link is then refused when it is read, saying why.
    names = (await readdir(dir, { withFileTypes: true })).filter((d) => d.isFile() || d.isSymbolicLink()).map((d) => d.name)
  } catch (err) {
    return { kind: 'error', message: `cannot read the hook folder: ${(err as Error).message}`, file: '.' }
  }
  const read = async (name: string, max: number): Promise<string | undefined> => {
    if (!names.includes(name)) return undefined
    const file = await readRegularFile(join(dir, name), max)
    return file.ok ? file.text : undefined
  }
  const packageJson = await read('package.json', PACKAGE_JSON_MAX_BYTES)
  if (names.includes('package.json') && packageJson === undefined) {
    return { kind: 'error', message: `package.json cannot be read: a regular file of at most ${PACKAGE_JSON_MAX_BYTES} bytes is needed`, file: 'package.json' }
  }
  return bundlePlan({ names, indexJs: await read('index.js', INDEX_JS_MAX_BYTES), packageJson })
}
