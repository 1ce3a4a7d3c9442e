/**
 * Where an import of a bundled hook leads: hookd's own resolver, so that esbuild never looks at the
 * filesystem itself (folder-io.ts says why). It does what a bundler needs for a hook, and refuses the
 * rest with a message that says what to do:
 *
 * - a relative import: the file as named, with an extension added (`.ts`, `.mts`, `.cts`, `.js`, `.mjs`,
 *   `.cjs`, `.json`, `.tsx`, `.jsx`), with `.js` read as `.ts` (TypeScript's ESM convention), or a
 *   folder's `index` file; never outside the hook's folder;
 * - a package: from a `node_modules` between the importer and the hook's folder (never above it), by
 *   its package.json `"exports"` (conditions `import` or `require`, `module`, `default`), else
 *   `"module"`, `"main"` or its `index` file; never outside the package's own folder;
 * - Node built-ins (the sandbox has no Node), absolute paths, URLs and `#` imports are refused.
 *
 * Every path is checked for links on the way (none are followed unless the operator opted in), and
 * every package.json is read bounded, like any file of the folder.
 */
import { isBuiltin } from 'node:module'
import { dirname, extname, isAbsolute, join, resolve } from 'node:path'
import { parseJson } from '../../protocol/bounded-json.js'
import { builtinAdvice } from './author-hints.js'
import { type FolderIo, isInside } from './folder-io.js'
import { PACKAGE_JSON_MAX_BYTES } from './hook-folder.js'


/** Extensions tried, in order, for an import without one. */
export const RESOLVE_EXTENSIONS = ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs', '.json'] as const

/** `.js` written for a `.ts` file (TypeScript's ESM convention), and the like. */
const TS_FOR_JS: Record<string, readonly string[]> = { '.js': ['.ts', '.tsx'], '.jsx': ['.tsx'], '.mjs': ['.mts'], '.cjs': ['.cts'] }

const LINKS = 'hookd does not follow symbolic links in hook folders (a development setup may pass hookd serve --allow-symlinks)'

export type Resolution = { ok: true; path: string; sideEffects?: false } | { ok: false; message: string }

export interface ImportRequest {
  spec: string
  /** The folder the import is resolved from (the importer's). */
  fromDir: string
  /** The importing file, when there is one (not for the entry point). */
  importer?: string | undefined
  /** `require` for require() calls, else `import`. */
  style: 'import' | 'require'
}

/** Called for each package.json read, with its size and digest; returns why the read is over a limit, if it is. */
export type CountRead = (path: string, bytes: number, sha256: string) => string | undefined

export class ImportResolver {
  constructor(
    private readonly io: FolderIo,
    private readonly count: CountRead,
  ) {}

  async resolve(request: ImportRequest): Promise<Resolution> {
    const { spec } = request
    const from = request.importer ? ` (imported by ${this.io.shown(request.importer)})` : ''
    const fail = (message: string): Resolution => ({ ok: false, message })
    if (spec.startsWith('node:')) return fail(builtinRefusal(spec))
    if (isAbsolute(spec)) return fail(`'${spec}' is an absolute path; a hook imports only files inside its own folder, by a relative path such as './lib.js'`)
    if (/^[a-z][a-z0-9+.-]*:/i.test(spec)) return fail(`'${spec}' is a URL; hookd bundles only files of the hook's folder and packages in its node_modules`)
    if (spec.startsWith('#')) return fail(`'${spec}'${from}: package imports ('#...') are not supported; import the file by its relative path`)

    if (spec === '.' || spec === '..' || spec.startsWith('./') || spec.startsWith('../')) {
      const target = resolve(request.fromDir, spec)
      if (!isInside(this.io.root, target)) return fail(`'${spec}'${from} leads outside the hook's folder; a hook may import only its own files`)
      const found = await this.file(target, `'${spec}'${from}`)
      if (found === undefined) return fail(`cannot find '${spec}'${from} in the hook's folder`)
      return found
    }
    return this.package(request, from)
  }

  private async package(request: ImportRequest, from: string): Promise<Resolution> {
    const { spec } = request
    const fail = (message: string): Resolution => ({ ok: false, message })
    const name = packageName(spec)
    const subpath = spec.slice(name.length)
    if (!/^(?:@[\w.-]+\/)?[\w.-]+$/.test(name) || name.startsWith('.')) return fail(`'${spec}'${from} is not a package name`)
    const said = `'${spec}'${from}`

    // node_modules folders from the importer's folder up to the hook's folder, never above it.
    let dir: string | undefined
    for (let at = request.fromDir; isInside(this.io.root, at); at = dirname(at)) {
      const modules = join(at, 'node_modules')
      const kind = await this.io.kind(modules)
      if (kind === 'link') return fail(linked(said, this.io.shown(modules)))
      if (kind === 'dir') {
        const candidate = join(modules, name)
        const link = await this.io.linkOnPath(candidate)
        if (link !== undefined) return fail(linked(said, link))
        if ((await this.io.kind(candidate)) === 'dir') {
          dir = candidate
          break
        }
      }
      if (at === this.io.root) break
    }
    if (dir === undefined) {
      if (isBuiltin(spec)) return fail(builtinRefusal(spec))
      return fail(`cannot find the package '${name}'${from} in the hook's node_modules; run npm install in the hook's folder (hookd never uses packages outside it)`)
    }

    const forWhat = request.importer ? `for '${spec}', imported by ${this.io.shown(request.importer)}` : `for '${spec}'`
    const manifest = await this.manifest(dir, said, forWhat)
    if (!manifest.ok) return manifest
    const pkg = manifest.value
    const pkgFile = `${this.io.shown(dir)}/package.json`
    const outside = (field: string): Resolution =>
      fail(`'${spec}'${from}: ${pkgFile} "${field}" leads outside the package; hookd bundles only a package's own files`)
    const inPackage = (target: string): string | undefined => {
      const full = resolve(dir, target)
      return isInside(dir, full) ? full : undefined
    }
    const done = async (found: Resolution | undefined, what: string): Promise<Resolution> => {
      if (found === undefined) return fail(`cannot find ${what}${from}; the package may be incomplete: run npm install in the hook's folder`)
      if (found.ok && pkg.sideEffects === false) return { ...found, sideEffects: false }
      return found
    }

    if (pkg.exports !== undefined && pkg.exports !== null) {
      const conditions = [request.style, 'module', 'default']
      const target = exportTarget(pkg.exports, `.${subpath}`, conditions)
      if (target === undefined || target === null) {
        const offered = conditionsIn(pkg.exports)
        const why =
          target === null || offered.length === 0 || offered.some((c) => conditions.includes(c))
            ? `the package '${name}' does not export '.${subpath}'`
            : `the package '${name}' offers '.${subpath}' only for ${offered.join(', ')}, none of which hookd bundles for (it runs a plain JavaScript engine: use a package that runs in browsers or anywhere)`
        return fail(`${said}: ${why}`)
      }
      const full = inPackage(target)
      if (full === undefined) return outside('exports')
      return done(await this.file(full, said), `'${target}' of the package '${name}'`)
    }
    if (subpath !== '') {
      const full = inPackage(`.${subpath}`)
      if (full === undefined) return fail(`${said} leads outside the package '${name}'`)
      return done(await this.file(full, said), `'${spec}'`)
    }
    for (const field of ['module', 'main'] as const) {
      const entry = pkg[field]
      if (typeof entry !== 'string' || entry === '') continue
      const full = inPackage(entry)
      if (full === undefined) return outside(field)
      const found = await this.file(full, said)
      if (found !== undefined) return done(found, '')
    }
    return done(await this.file(dir, said), `the entry file of the package '${name}'`)
  }

  /** The package.json of a package folder, read bounded; an empty object when there is none. */
  private async manifest(dir: string, said: string, forWhat: string): Promise<{ ok: true; value: Record<string, unknown> } | { ok: false; message: string }> {
    const path = join(dir, 'package.json')
    const shown = this.io.shown(path)
    const kind = await this.io.kind(path)
    if (kind === 'missing') return { ok: true, value: {} }
    if (kind === 'link') return { ok: false, message: linked(said, shown) }
    const file = await this.io.read(path, PACKAGE_JSON_MAX_BYTES)
    if (!file.ok) return { ok: false, message: `cannot read ${shown} (${forWhat}): it ${file.why}` }
    const over = this.count(path, file.bytes, file.sha256)
    if (over !== undefined) return { ok: false, message: over }
    const parsed = parseJson(file.text, shown, { maxDepth: 32, maxBytes: PACKAGE_JSON_MAX_BYTES })
    if (!parsed.ok) return { ok: false, message: `${parsed.message}; run npm install in the hook's folder again` }
    const value = parsed.value
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return { ok: false, message: `${shown} does not hold a JSON object; run npm install in the hook's folder again` }
    return { ok: true, value: value as Record<string, unknown> }
  }

  /**
   * The file `target` names: itself, with an extension, with `.ts` for `.js`, or a folder's index file.
   * Undefined when there is none; a refusal when a link is on the way.
   */
  private async file(target: string, said: string): Promise<Resolution | undefined> {
    const link = await this.io.linkOnPath(dirname(target))
    if (link !== undefined) return { ok: false, message: linked(said, link) }
    const candidates = [target, ...RESOLVE_EXTENSIONS.map((ext) => target + ext), ...(TS_FOR_JS[extname(target)] ?? []).map((ext) => target.slice(0, -extname(target).length) + ext)]
    let folder = false
    for (const candidate of candidates) {
      const kind = await this.io.kind(candidate)
      if (kind === 'link') return { ok: false, message: linked(said, this.io.shown(candidate)) }
      // A FIFO or device is taken here, and refused when it is read, saying what it is.
      if (kind === 'file' || kind === 'special') return checkedFile(candidate, said, this.io)
      if (kind === 'dir' && candidate === target) folder = true
    }
    if (!folder) return undefined
    for (const ext of RESOLVE_EXTENSIONS) {
      const index = join(target, `index${ext}`)
      const kind = await this.io.kind(index)
      if (kind === 'link') return { ok: false, message: linked(said, this.io.shown(index)) }
      if (kind === 'file' || kind === 'special') return checkedFile(index, said, this.io)
    }
    return undefined
  }
}

function checkedFile(path: string, said: string, io: FolderIo): Resolution {
  const ext = extname(path)
  if (ext === '.node') return { ok: false, message: `${said} is a native Node addon (${io.shown(path)}); the sandbox runs JavaScript only: use a pure-JavaScript package` }
  if (ext === '.wasm') {
    return { ok: false, message: `${said} is WebAssembly (${io.shown(path)}); the sandbox has no WebAssembly (its memory escapes the hook's memory limit): use a pure-JavaScript package` }
  }
  return { ok: true, path }
}

function linked(said: string, link: string): string {
  return `${said} is reached through ${link}, a symbolic link; ${LINKS}`
}

export function builtinRefusal(spec: string): string {
  return `'${spec}' is a Node built-in module, and hooks run in a sandbox without Node: ${builtinAdvice(spec)}`
}

/** A bare specifier's package name: 'lodash/get' -> 'lodash', '@scope/pkg/x' -> '@scope/pkg'. */
export function packageName(spec: string): string {
  const parts = spec.split('/')
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? spec)
}

/**
 * The target of `subpath` ('.' or './x') in a package.json "exports", by Node's rules: an exact key,
 * else the longest pattern key with one '*'; a target is a string (its '*' replaced), an array (the
 * first that works) or an object of conditions (the first, in the object's order, that `conditions`
 * holds). Null: the package blocks it; undefined: it does not export it. The value was parsed with a
 * depth limit, so the recursion is bounded.
 */
export function exportTarget(exports: unknown, subpath: string, conditions: readonly string[]): string | null | undefined {
  const map: Record<string, unknown> = isSubpathMap(exports) ? (exports as Record<string, unknown>) : { '.': exports }
  if (Object.hasOwn(map, subpath)) return targetOf(map[subpath], conditions, undefined)
  let best: { key: string; star: string } | undefined
  for (const key of Object.keys(map)) {
    const star = key.indexOf('*')
    if (star < 0 || key.indexOf('*', star + 1) >= 0) continue
    const prefix = key.slice(0, star)
    const suffix = key.slice(star + 1)
    if (subpath.length >= key.length && subpath.startsWith(prefix) && subpath.endsWith(suffix) && (!best || prefix.length > best.key.indexOf('*'))) {
      best = { key, star: subpath.slice(prefix.length, subpath.length - suffix.length) }
    }
  }
  return best ? targetOf(map[best.key], conditions, best.star) : undefined
}

function isSubpathMap(exports: unknown): boolean {
  if (exports === null || typeof exports !== 'object' || Array.isArray(exports)) return false
  const keys = Object.keys(exports)
  return keys.length > 0 && keys.every((k) => k.startsWith('.'))
}

function targetOf(value: unknown, conditions: readonly string[], star: string | undefined): string | null | undefined {
  // Node accepts only './' targets; any other is taken too, and the caller refuses one that leaves the package.
  if (typeof value === 'string') return star === undefined ? value : value.split('*').join(star)
  if (value === null) return null
  if (Array.isArray(value)) {
    for (const item of value) {
      const target = targetOf(item, conditions, star)
      if (typeof target === 'string') return target
    }
    return undefined
  }
  if (typeof value === 'object') {
    for (const [condition, next] of Object.entries(value as Record<string, unknown>)) {
      if (!conditions.includes(condition)) continue
      const target = targetOf(next, conditions, star)
      if (target !== undefined) return target
    }
  }
  return undefined
}

/** The condition names an "exports" value offers (for a message; first level of each target). */
function conditionsIn(exports: unknown): string[] {
  const found = new Set<string>()
  const visit = (value: unknown, depth: number): void => {
    if (depth > 4 || value === null || typeof value !== 'object') return
    if (Array.isArray(value)) return value.forEach((v) => visit(v, depth + 1))
    for (const [key, next] of Object.entries(value as Record<string, unknown>)) {
      if (!key.startsWith('.')) found.add(key)
      visit(next, depth + 1)
    }
  }
  visit(exports, 0)
  return [...found].slice(0, 8)
}
