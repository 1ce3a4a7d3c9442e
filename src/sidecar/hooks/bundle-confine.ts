/**
 * The bundler's one plugin: it decides every import and reads every file, so that bundling an untrusted
 * hook folder never reaches outside it.
 *
 * - A relative import that leaves the folder (`../other/x.js`), an absolute path or a URL is refused
 *   before anything is looked up; a bare import is looked up only when a node_modules inside the folder
 *   holds the package. Then esbuild's own resolver runs (package.json "exports", extensions, index
 *   files), and where it landed is checked by real path: a symbolic link that leads out is refused.
 *   A missing file and one outside get the same message, so that refusals reveal nothing of what
 *   exists outside the folder.
 * - Node built-ins (`fs`, `node:path`, `child_process`, ...) are refused: the sandbox has no Node. A
 *   bare name such as `buffer` or `events` is allowed when the folder's own node_modules holds a package
 *   of that name (a pure-JavaScript replacement). Native addons (`.node`) and WebAssembly are refused.
 * - Every file is read here (regular files only, never through a link, size-capped), counted, and
 *   recorded as an input, so that a hot reload can watch exactly what went into the bundle.
 *
 * Nothing from the folder ever runs: this plugin is hookd's own code, and esbuild is told not to read
 * any tsconfig.json (bundle.ts passes its own).
 */
import { lstat, realpath } from 'node:fs/promises'
import { isBuiltin } from 'node:module'
import { dirname, extname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import type { Loader, OnLoadResult, OnResolveResult, Plugin } from 'esbuild'
import { builtinAdvice } from './author-hints.js'
import { readRegularFile } from './read-regular-file.js'

export interface BundleLimits {
  /** Most files read into one bundle. */
  maxFiles: number
  /** Largest single input file, in bytes. */
  maxFileBytes: number
  /** Most bytes read in all. */
  maxInputBytes: number
}

export const DEFAULT_BUNDLE_LIMITS: BundleLimits = { maxFiles: 2000, maxFileBytes: 4 * 1024 * 1024, maxInputBytes: 32 * 1024 * 1024 }

/** What one bundling read, for bundle.ts. */
export interface ConfineState {
  /** The hook folder's real path. */
  root: string
  limits: BundleLimits
  /** The files read, relative to the folder, in the order they were read. */
  inputs: string[]
  /** Files started, counted before their read: esbuild loads files concurrently. */
  files: number
  bytes: number
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

/** Marks the plugin's own calls of `build.resolve`, which come back through its onResolve. */
const RESOLVING = Symbol('hookd-resolving')

/** True when `path` is `root` or below it. */
export function isInside(root: string, path: string): boolean {
  const rel = relative(root, path)
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel))
}

/** A bare specifier's package name: 'lodash/get' -> 'lodash', '@scope/pkg/x' -> '@scope/pkg'. */
function packageName(spec: string): string {
  const parts = spec.split('/')
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? spec)
}

/**
 * True when a node_modules folder between `dir` and `root` (both included) holds `name`, as Node's
 * lookup would find it; nothing above `root` is looked at.
 */
async function packageInside(root: string, dir: string, name: string): Promise<boolean> {
  for (let at = dir; isInside(root, at); at = dirname(at)) {
    try {
      await lstat(join(at, 'node_modules', name))
      return true
    } catch {
      // Not here: one folder up, as far as the root.
    }
    if (at === root) break
  }
  return false
}

function builtinRefusal(spec: string): string {
  return `'${spec}' is a Node built-in module, and hooks run in a sandbox without Node: ${builtinAdvice(spec)}`
}

export function confinePlugin(state: ConfineState): Plugin {
  const { root } = state
  const shown = (path: string): string => relative(root, path) || '.'
  const refuse = (text: string): OnResolveResult => ({ errors: [{ text }] })

  return {
    name: 'hookd-confine',
    setup(build) {
      build.onResolve({ filter: /.*/ }, async (args): Promise<OnResolveResult | undefined> => {
        if (args.pluginData === RESOLVING) return undefined
        const spec = args.path
        const from = args.importer ? ` (imported by ${shown(args.importer)})` : ''
        if (spec.startsWith('node:')) return refuse(builtinRefusal(spec))
        if (isAbsolute(spec)) {
          return refuse(`'${spec}' is an absolute path; a hook imports only files inside its own folder, by a relative path such as './lib.js'`)
        }
        if (/^[a-z][a-z0-9+.-]*:/i.test(spec)) return refuse(`'${spec}' is a URL; hookd bundles only files of the hook's folder and packages in its node_modules`)
        const base = args.resolveDir || root
        const relativeSpec = spec === '.' || spec === '..' || spec.startsWith('./') || spec.startsWith('../')
        const file = relativeSpec || args.kind === 'entry-point'
        const builtin = !file && isBuiltin(spec)
        // One message whether the target is missing or lies outside the folder (a package above it, a
        // link out of it): what the bundler says must not tell a hook's author what exists elsewhere.
        const missing = (): OnResolveResult =>
          builtin
            ? refuse(builtinRefusal(spec))
            : file
              ? refuse(`cannot find '${spec}'${from} inside the hook's folder (hookd follows no symbolic link out of it)`)
              : refuse(`cannot find the package '${packageName(spec)}'${from} in the hook's node_modules; run npm install in the hook's folder (hookd never uses packages outside it)`)

        // Checked before esbuild looks: a path that leaves the folder, or a package the folder does not
        // hold, is never searched for outside it.
        if (relativeSpec && !isInside(root, resolve(base, spec))) {
          return refuse(`'${spec}'${from} leads outside the hook's folder; a hook may import only its own files`)
        }
        if (!file && !(await packageInside(root, base, packageName(spec)))) return missing()

        const found = await build.resolve(spec, { kind: args.kind, resolveDir: base, importer: args.importer, pluginData: RESOLVING })
        if (found.errors.length > 0 || found.external || found.namespace !== 'file' || found.path === '') return missing()
        let real: string
        try {
          real = await realpath(found.path)
        } catch {
          return missing()
        }
        if (!isInside(root, real)) return missing()
        const ext = extname(real)
        if (ext === '.node') {
          return refuse(`'${spec}'${from} is a native Node addon (${shown(real)}); the sandbox runs JavaScript only: use a pure-JavaScript package`)
        }
        if (ext === '.wasm') {
          return refuse(`'${spec}'${from} is WebAssembly (${shown(real)}); the sandbox has no WebAssembly (its memory escapes the hook's memory limit): use a pure-JavaScript package`)
        }
        const result: OnResolveResult = { path: real, namespace: 'file' }
        if (found.sideEffects === false) result.sideEffects = false
        return result
      })

      build.onLoad({ filter: /.*/, namespace: 'file' }, async (args): Promise<OnLoadResult> => {
        const rel = shown(args.path)
        const fail = (text: string): OnLoadResult => ({ errors: [{ text, location: { file: rel } }] })
        if (!isInside(root, args.path)) return fail(`${rel} is outside the hook's folder`)
        const ext = extname(args.path)
        const loader = LOADERS[ext]
        if (loader === undefined) {
          return fail(`${rel}: hookd bundles ${Object.keys(LOADERS).join(', ')} files; ${ext ? `'${ext}' files are` : 'a file without an extension is'} not supported`)
        }
        const { limits } = state
        state.files += 1
        if (state.files > limits.maxFiles) {
          return fail(`the hook imports more than ${limits.maxFiles} files; import less (a package's single entry instead of its whole tree), or bundle it yourself into one index.js`)
        }
        const file = await readRegularFile(args.path, limits.maxFileBytes)
        if (!file.ok) return fail(`cannot bundle ${rel}: it ${file.why}`)
        state.bytes += file.bytes
        if (state.bytes > limits.maxInputBytes) {
          return fail(`the hook's files add up to more than ${limits.maxInputBytes} bytes; import less, or bundle it yourself into one index.js`)
        }
        state.inputs.push(rel)
        return { contents: file.text, loader, resolveDir: dirname(args.path) }
      })
    },
  }
}
