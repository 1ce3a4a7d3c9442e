/**
 * Bundles a hook folder into one CommonJS script for the isolate, with esbuild: a hook written in
 * TypeScript, as an ES module, or with npm packages runs exactly like a hand-written `index.js`.
 * bundle-plan.ts says when a folder needs it (a plain CommonJS index.js does not: that is the fast path);
 * bundle-confine.ts keeps every import and every read inside the folder.
 *
 * The script leaves its exports in `module.exports`, as `wrapHookSource` (worker/isolate/surface.ts)
 * expects: esbuild's `cjs` format does that for ES modules, and a footer turns `export default {...}`
 * into the exports themselves, so `export default { beforeToolExecute() {} }` and named exports both
 * work. The footer comes last, so the bundle's line numbers, which the source map translates back to the
 * author's files (`mapPosition`), are those esbuild wrote.
 *
 * Bundling runs in esbuild's own process (a Go binary from npm), not on the sidecar's thread; every
 * import is resolved and every file read by hookd's plugin (bounded, through the folder's descriptor,
 * no links, its nesting measured before esbuild parses it), and the result is capped at
 * BUNDLE_MAX_BYTES, like any index.js. esbuild-supervisor.ts runs the build: a deadline that is never
 * waited past, and a fresh esbuild process whenever one ends, so that one folder's build can neither
 * break bundling for good nor fail another folder's.
 */
import { join } from 'node:path'
import type * as esbuild from 'esbuild'
import { ENTRY_FILES, readBundlePlan } from './bundle-plan.js'
import { type BundleLimits, type ConfineState, DEFAULT_BUNDLE_LIMITS, authorPath, confinePlugin } from './bundle-confine.js'
import type { EsbuildApi } from './esbuild-process.js'
import { superviseBuild } from './esbuild-supervisor.js'
import type { FileDigest } from '../pinning/content-digest.js'
import { FolderIo } from './folder-io.js'
import { SOURCE_MAX_BYTES } from './hook-folder.js'

export { mapPosition, type SourcePosition } from './source-map.js'
export { bundlePlan, readBundlePlan, type BundlePlan, type FolderFacts } from './bundle-plan.js'
export { DEFAULT_BUNDLE_LIMITS, type BundleLimits } from './bundle-confine.js'

/** The largest bundle hookd loads: the same cap as a hand-written index.js (hook-folder.ts). */
export const BUNDLE_MAX_BYTES = SOURCE_MAX_BYTES

/** How long one bundling may take before it is cancelled. */
export const BUNDLE_TIMEOUT_MS = 20_000

export interface BundleOptions {
  /** The entry file's name in the folder; default: what `readBundlePlan` picks. */
  entry?: string
  /** Default BUNDLE_MAX_BYTES. */
  maxBytes?: number
  limits?: Partial<BundleLimits>
  /** Default BUNDLE_TIMEOUT_MS. */
  timeoutMs?: number
  /** Follow symbolic links in the folder (hookd serve --allow-symlinks). Default false. */
  followSymlinks?: boolean
}

/** A problem esbuild reported that did not stop the bundle (an import that is always undefined, say). */
export interface BundleWarning {
  message: string
  file: string
  line?: number
}

export type BundleResult =
  | {
      ok: true
      /** One CommonJS script that assigns the hook's exports to `module.exports`. */
      source: string
      /** Its source map (version 3, JSON text); `sources` are relative to the hook's folder. */
      sourceMap: string
      /** Every file read, relative to the hook's folder (package.json included when there is one). */
      inputs: string[]
      /** The sha256 of each input, from the read esbuild was given. */
      digests: FileDigest[]
      /** The entry file's name. */
      entry: string
      warnings: BundleWarning[]
    }
  | {
      ok: false
      message: string
      /** Relative to the hook's folder: the author's file, or a package's file under node_modules. */
      file: string
      line?: number
    }

/**
 * Turns `export default {...}` into the exports: the default object itself when it is the only export
 * (so its methods keep their `this`), else a plain object of the default's own properties and the named
 * exports. Only for ES modules (esbuild marks their exports `__esModule`); CommonJS is left alone.
 */
const DEFAULT_EXPORT_FOOTER = `;(function (m) {
  var e = m.exports, d = e && e.__esModule ? e.default : undefined
  if (d === null || (typeof d !== 'object' && typeof d !== 'function')) return
  var named = Object.keys(e).filter(function (k) { return k !== 'default' })
  if (named.length === 0) { m.exports = d; return }
  var o = {}
  Object.keys(d).forEach(function (k) { o[k] = d[k] })
  named.forEach(function (k) { o[k] = e[k] })
  m.exports = o
})(module);`

export async function bundleHook(dir: string, options: BundleOptions = {}): Promise<BundleResult> {
  let entry = options.entry
  if (entry === undefined) {
    const plan = await readBundlePlan(dir)
    if (plan.kind === 'error') return plan.line === undefined ? { ok: false, message: plan.message, file: plan.file } : { ok: false, message: plan.message, file: plan.file, line: plan.line }
    if (plan.kind === 'none') {
      return { ok: false, message: `the hook folder has no entry file; create one of ${ENTRY_FILES.join(', ')}`, file: '.' }
    }
    entry = plan.kind === 'bundle' ? plan.entry : 'index.js'
  }
  if (!/^[\w.-]+$/.test(entry) || entry.startsWith('.')) {
    return { ok: false, message: `the entry must be a file directly in the hook's folder, e.g. index.ts; got '${entry}'`, file: '.' }
  }
  let io: FolderIo
  try {
    io = await FolderIo.open(dir, options.followSymlinks === true)
  } catch (err) {
    return { ok: false, message: (err as Error).message, file: '.' }
  }
  try {
    return await build(io, entry, options)
  } finally {
    await io.close()
  }
}

async function build(io: FolderIo, entry: string, options: BundleOptions): Promise<BundleResult> {
  const { root } = io
  const limits = { ...DEFAULT_BUNDLE_LIMITS, ...options.limits }
  const maxBytes = options.maxBytes ?? BUNDLE_MAX_BYTES
  const timeoutMs = options.timeoutMs ?? BUNDLE_TIMEOUT_MS
  // What the last attempt read: a build that esbuild's process ended under is made again from scratch.
  let state: ConfineState = { io, limits, inputs: [], digests: [], files: 0, bytes: 0, lastLines: new Map() }

  const outcome = await superviseBuild({
    key: root,
    timeoutMs,
    async run(esbuild: EsbuildApi) {
      const mine: ConfineState = { io, limits, inputs: [], digests: [], files: 0, bytes: 0, lastLines: new Map() }
      state = mine
      const context = await esbuild.context({
        absWorkingDir: root,
        entryPoints: [entry],
        // Never written: `write: false` keeps the output in memory; the name only places the source map.
        outfile: join(root, 'index.js'),
        write: false,
        bundle: true,
        format: 'cjs',
        platform: 'neutral',
        // The isolate runs Node 20's V8.
        target: 'node20',
        // Given, so that no tsconfig.json is read, from the folder or above it: its "paths" could redirect
        // imports, and nothing outside the folder may shape the bundle. (The plugin resolves every import,
        // so esbuild's own resolver, which would read package.json files up to /, never runs.)
        tsconfigRaw: {},
        // Packages test these; the sandbox has neither `process` nor `global`.
        define: { 'process.env.NODE_ENV': '"production"', global: 'globalThis' },
        sourcemap: 'external',
        sourcesContent: false,
        legalComments: 'none',
        charset: 'utf8',
        metafile: true,
        logLevel: 'silent',
        footer: { js: DEFAULT_EXPORT_FOOTER },
        plugins: [confinePlugin(mine)],
      })
      try {
        return await context.rebuild()
      } finally {
        await context.dispose()
      }
    },
  })
  if (outcome.kind === 'failed') return failure(outcome.error, entry, state.lastLines)
  if (outcome.kind === 'late') return { ok: false, message: `bundling took longer than ${timeoutMs} ms and was stopped; import less`, file: entry }
  if (outcome.kind === 'died') return { ok: false, message: outcome.message, file: entry }
  const { result } = outcome

  const js = result.outputFiles.find((f) => f.path.endsWith('.js'))
  const map = result.outputFiles.find((f) => f.path.endsWith('.js.map'))
  if (!js || !map) return { ok: false, message: 'esbuild produced no script', file: entry }
  if (js.contents.length > maxBytes) {
    return { ok: false, message: tooBig(js.contents.length, maxBytes, result.metafile), file: entry }
  }
  // package.json decides whether and how the folder is bundled: a hot reload must watch it too.
  const inputs = [...state.inputs]
  if (!inputs.includes('package.json') && (await io.kind(join(root, 'package.json'))) === 'file') inputs.push('package.json')
  return { ok: true, source: js.text, sourceMap: authorSources(map.text), inputs, digests: [...state.digests], entry, warnings: result.warnings.map(toWarning) }
}

/** The source map with its `sources` as the author's paths (relative to the folder, no namespace). */
function authorSources(text: string): string {
  const map = JSON.parse(text) as { sources?: unknown }
  if (Array.isArray(map.sources)) map.sources = map.sources.map((s) => (typeof s === 'string' ? authorPath(s) : s))
  return JSON.stringify(map)
}

function toWarning(message: esbuild.Message): BundleWarning {
  const warning: BundleWarning = { message: message.text, file: authorPath(message.location?.file ?? '') }
  if (message.location?.line) warning.line = message.location.line
  return warning
}

/**
 * The first error of a failed build, at its place in the author's files. esbuild reports an error at
 * the end of a file (an unclosed brace) on the line after the last one when the file ends with a
 * newline: it is put on the file's last line of code instead.
 */
function failure(err: unknown, entry: string, lastLines: ReadonlyMap<string, number>): BundleResult {
  const errors = (err as { errors?: esbuild.Message[] }).errors
  const first = Array.isArray(errors) ? errors[0] : undefined
  if (!first) return { ok: false, message: `bundling failed: ${err instanceof Error ? err.message : String(err)}`, file: entry }
  const more = errors && errors.length > 1 ? ` (and ${errors.length - 1} more ${errors.length === 2 ? 'error' : 'errors'})` : ''
  const out: BundleResult = { ok: false, message: `${first.text}${more}`, file: (first.location?.file && authorPath(first.location.file)) || entry }
  if (first.location?.line) out.line = Math.min(first.location.line, lastLines.get(out.file) ?? Infinity)
  return out
}

/** Over the cap: say how big, and which inputs weigh most, so the author knows what to cut. */
function tooBig(bytes: number, maxBytes: number, metafile: esbuild.Metafile): string {
  const output = Object.values(metafile.outputs).find((o) => o.entryPoint !== undefined) ?? Object.values(metafile.outputs)[0]
  const heaviest = Object.entries(output?.inputs ?? {})
    .sort((a, b) => b[1].bytesInOutput - a[1].bytesInOutput)
    .slice(0, 3)
    .map(([file, info]) => `${authorPath(file)} (${Math.round(info.bytesInOutput / 1024)} KiB)`)
  return `the bundled hook is ${bytes} bytes, over the ${maxBytes} bytes hookd loads; the largest parts are ${heaviest.join(', ')}: import only what you use (a package's single function, e.g. 'lodash/get'), or move data the hook reads to ctx.file`
}
