/**
 * The bundler's one plugin: it decides every import and reads every file, so that bundling an untrusted
 * hook folder never reaches outside it and never lets esbuild touch the filesystem itself.
 *
 * - Every import is resolved by hookd (bundle-resolve.ts), through the folder's own descriptor
 *   (folder-io.ts): relative imports stay in the folder, packages come from its own node_modules,
 *   links are refused (unless the operator opted in), Node built-ins, native addons and WebAssembly are
 *   refused saying what to use instead.
 * - Every file is read here: regular files only, never through a link, size-checked before a byte is
 *   read, counted, its nesting measured (source-nesting.ts: a file deep enough kills esbuild), and
 *   recorded as an input, so that a hot reload can watch what went into the bundle.
 *
 * Nothing from the folder ever runs: this plugin is hookd's own code, and esbuild is told not to read
 * any tsconfig.json (bundle.ts passes its own).
 *
 * Modules live in a namespace of hookd's own (`hookd:`, paths relative to the folder) with no
 * `resolveDir`: for files in its `file` namespace esbuild reads on its own, past any plugin, the file a
 * `//# sourceMappingURL=` comment names (anywhere on disk: a secret quoted in an error, /dev/zero, a
 * FIFO) and the folders an import built from a template string globs. In hookd's namespace it does
 * neither; the importer's folder travels in `pluginData`. Source-map comments are blanked as well.
 */
import { dirname, extname, join } from 'node:path'
import type { Loader, OnLoadResult, OnResolveResult, Plugin } from 'esbuild'
import { ImportResolver } from './bundle-resolve.js'
import type { FileDigest } from '../pinning/content-digest.js'
import type { FolderIo } from './folder-io.js'
import { endOfFileLine } from './hook-files.js'
import { nesting } from './source-nesting.js'

export { isInside } from './folder-io.js'

export interface BundleLimits {
  /** Most files read into one bundle (package.json files included). */
  maxFiles: number
  /** Largest single input file, in bytes. */
  maxFileBytes: number
  /** Most bytes read in all. */
  maxInputBytes: number
  /** Deepest nesting of brackets and arrow functions in a source file (source-nesting.ts). */
  maxDepth: number
}

/** The namespace of every module hookd bundles; locations in it read `hookd:RELATIVE/PATH`. */
export const NAMESPACE = 'hookd'

/** A location esbuild reports, as the author's path relative to the folder. */
export function authorPath(file: string): string {
  return file.startsWith(`${NAMESPACE}:`) ? file.slice(NAMESPACE.length + 1) : file
}

/**
 * `//# sourceMappingURL=...` to the end of its line, and `/*# sourceMappingURL=... *\/` on one line:
 * blanked with spaces, so lines and columns stay where they were and code after a block comment stays
 * code. Linear: a block comment's URL stops at the first `*`.
 */
const SOURCE_MAP_COMMENT = /\/\/[#@][ \t]*sourceMappingURL=[^\n]*|\/\*[#@][ \t]*sourceMappingURL=[^*\n]*\*\//g

/** What onLoad hands on to the imports of a module: the folder it is in (absolute). */
interface ModuleData {
  dir: string
}

/**
 * maxDepth: the deepest of ~41,000 real files (node_modules of hookd and of the agents' CLIs, their
 * minified bundles included) nests 30 levels; esbuild dies at ~172,000 (source-nesting.ts).
 */
export const DEFAULT_BUNDLE_LIMITS: BundleLimits = { maxFiles: 2000, maxFileBytes: 4 * 1024 * 1024, maxInputBytes: 32 * 1024 * 1024, maxDepth: 256 }

/** What one bundling read, for bundle.ts. */
export interface ConfineState {
  io: FolderIo
  limits: BundleLimits
  /** The files read, relative to the folder, in the order they were read. */
  inputs: string[]
  /** The sha256 of each file read, from the read esbuild was given (the hook's content digest, pinning/). */
  digests: FileDigest[]
  /** Files started, counted before their read: esbuild loads files concurrently. */
  files: number
  bytes: number
  /** The last line that holds code, of each source file read (relative path): errors at a file's end are put there. */
  lastLines: Map<string, number>
}

const LOADERS: Record<string, Loader> = {
  '.ts': 'ts',
  '.mts': 'ts',
  '.cts': 'ts',
  '.tsx': 'tsx',
  '.js': 'js',
  '.mjs': 'js',
  '.cjs': 'js',
  '.jsx': 'jsx',
  '.json': 'json',
  '.txt': 'text',
}

export function confinePlugin(state: ConfineState): Plugin {
  const { io } = state
  /** Counts one file read; says why when it is over a limit. */
  const count = (path: string, bytes: number, sha256: string): string | undefined => {
    const { limits } = state
    state.bytes += bytes
    if (state.bytes > limits.maxInputBytes) {
      return `the hook's files add up to more than ${limits.maxInputBytes} bytes; import less, or bundle it yourself into one index.js`
    }
    state.inputs.push(io.shown(path))
    state.digests.push({ path: io.shown(path), sha256 })
    return undefined
  }
  const start = (): string | undefined => {
    state.files += 1
    return state.files > state.limits.maxFiles
      ? `the hook imports more than ${state.limits.maxFiles} files; import less (a package's single entry instead of its whole tree), or bundle it yourself into one index.js`
      : undefined
  }
  const resolver = new ImportResolver(io, (path, bytes, sha256) => start() ?? count(path, bytes, sha256))

  return {
    name: 'hookd-confine',
    setup(build) {
      build.onResolve({ filter: /.*/ }, async (args): Promise<OnResolveResult> => {
        const entry = args.kind === 'entry-point'
        // esbuild turns an import built from a template string into a glob ('./x/*'): hookd imports
        // files by name only.
        if (args.path.includes('*')) {
          return { errors: [{ text: `'${args.path}' is an import built from a template string; hookd bundles imports of one file by name (import each file the hook needs)` }] }
        }
        const data = args.pluginData as ModuleData | undefined
        const found = await resolver.resolve({
          spec: entry && !args.path.startsWith('./') ? `./${args.path}` : args.path,
          fromDir: data?.dir ?? io.root,
          importer: entry ? undefined : join(io.root, authorPath(args.importer)),
          style: args.kind === 'require-call' || args.kind === 'require-resolve' ? 'require' : 'import',
        })
        if (!found.ok) return { errors: [{ text: found.message }] }
        const result: OnResolveResult = { path: io.shown(found.path), namespace: NAMESPACE }
        if (found.sideEffects === false) result.sideEffects = false
        return result
      })

      build.onLoad({ filter: /.*/, namespace: NAMESPACE }, async (args): Promise<OnLoadResult> => {
        const rel = args.path
        const path = join(io.root, rel)
        const fail = (text: string): OnLoadResult => ({ errors: [{ text, location: { file: rel } }] })
        const ext = extname(path)
        const loader = LOADERS[ext]
        if (loader === undefined) {
          return fail(`${rel}: hookd bundles ${Object.keys(LOADERS).join(', ')} files; ${ext ? `'${ext}' files are` : 'a file without an extension is'} not supported`)
        }
        const tooMany = start()
        if (tooMany !== undefined) return fail(tooMany)
        const file = await io.read(path, state.limits.maxFileBytes)
        if (!file.ok) return fail(`cannot bundle ${rel}: it ${file.why}`)
        const over = count(path, file.bytes, file.sha256)
        if (over !== undefined) return fail(over)
        if (loader !== 'text') {
          // Before esbuild sees a byte: its parser recurses per level, and a deep enough file kills it.
          const depth = nesting(file.text, state.limits.maxDepth)
          if (depth.passedAt !== undefined) {
            const text = `${rel}: brackets and arrow functions nest deeper than ${state.limits.maxDepth} levels at line ${depth.passedAt}; hookd refuses such a file before bundling it: flatten the code, build deep data at run time, or read it from a .json file with ctx.file`
            return { errors: [{ text, location: { file: rel, line: depth.passedAt } }] }
          }
        }
        state.lastLines.set(rel, endOfFileLine(file.text))
        const contents = loader === 'text' || loader === 'json' ? file.text : file.text.replace(SOURCE_MAP_COMMENT, (comment) => ' '.repeat(comment.length))
        const pluginData: ModuleData = { dir: dirname(path) }
        return { contents, loader, pluginData }
      })
    },
  }
}
