/**
 * Sandboxed hooks: a folder's `index.js` (or the bundle esbuild made of its sources, hook-source.ts)
 * compiled and evaluated once in a throwaway isolate before it serves (the loader: the worker pool),
 * then run in a fresh isolate per invocation by the registry's runner. A load failure is reported at
 * its place in the author's files: through the source map for a bundle, inside the file for a plain
 * script. A hook that exports no point is refused (serving it would silently switch it off).
 */
import { type PointName, isPointName } from '../../../protocol/points/points.js'
import type { Limits } from '../../limits.js'
import type { HookRunner, RunnableHook } from '../../runners/hook-runner.js'
import { Semaphore } from '../../semaphore.js'
import type { LoadOutcome } from '../../worker/protocol.js'
import { hintFor } from '../author-hints.js'
import { AuthorRunner, type SourceMapOf } from '../author-runner.js'
import type { HookFiles } from '../hook-folder.js'
import { endOfFileLine, exportLine, mappedExport, namesWithHints, versionOf } from '../hook-files.js'
import { type SourceMap, mapPosition, parseSourceMap } from '../source-map.js'
import { type HookKind, type HookSettings, type LoadResult, type LoadedHook, editFailure } from './hook-kind.js'

/** Loads sandboxed hooks in a throwaway isolate (the worker pool). */
export interface HookLoader {
  load(hook: RunnableHook, limits: Limits): Promise<LoadOutcome>
}

export interface SandboxedOptions {
  /** Loads sandboxed hooks (compiles and evaluates each version once before it serves). */
  loader: HookLoader
  /** Runs sandboxed hooks: given to each one the registry serves. */
  runner: HookRunner
  /** The limits a load runs under. */
  limits: Limits
  /**
   * Sandboxed hooks loaded at once. A load's wall-time limit runs from when the worker starts it: loading
   * a whole folder at once on a busy machine would spend those limits waiting for each other. Default 2.
   */
  loadConcurrency?: number
}

export class SandboxedKind implements HookKind {
  private readonly loads: Semaphore
  /** What runs every sandboxed hook: the given runner, with failures mapped to the author's source. */
  private readonly runner: AuthorRunner

  /** `sourceMapOf`: the map of a version the registry serves, for failures of calls that ran it. */
  constructor(
    private readonly options: SandboxedOptions,
    sourceMapOf: SourceMapOf,
  ) {
    this.loads = new Semaphore(options.loadConcurrency ?? 2)
    this.runner = new AuthorRunner(options.runner, sourceMapOf)
  }

  /** Every folder no other kind claims. */
  claims(): boolean {
    return true
  }

  async load(files: HookFiles, settings: HookSettings): Promise<LoadResult> {
    const { name } = files
    if (files.bundleError !== undefined) {
      const { message, file, line } = files.bundleError
      return editFailure(withHint(message), `${name}/${file}`, line)
    }
    const filename = `${name}/${files.bundle?.entry ?? 'index.js'}`
    if (files.source === undefined) {
      return editFailure(
        `hook '${name}' has no index.js; create ${name}/index.js (or index.ts, index.mjs) exporting its points, or make it a remote hook by naming its server in ${name}/hook.json ("remote": "unix:PATH" or "HOST:PORT")`,
        filename,
      )
    }
    if (files.source.trim() === '') {
      return editFailure(`${filename} is empty; it must export the points it handles, e.g. module.exports = { beforeToolExecute(ctx, call) {} }`, filename)
    }
    const source = files.source
    const sourceMap = files.bundle?.sourceMap
    const map = sourceMap !== undefined ? parseSourceMap(sourceMap) : undefined
    // A version names what runs: the script (a bundle's included) and hook.json.
    const version = versionOf(source, files.configText)
    const outcome = await this.loads.run(() => this.options.loader.load({ name, version, filename, source }, this.options.limits))
    if (!outcome.ok) {
      const at = authorPosition(name, filename, source, map, outcome.line)
      const message = at.pastEnd ? endOfFileMessage(outcome.message) : outcome.message
      return editFailure(withHint(message), at.file, at.line)
    }
    const points = new Set<PointName>()
    const unknownExports: string[] = []
    for (const exported of outcome.exports) {
      if (isPointName(exported)) points.add(exported)
      else unknownExports.push(exported)
    }
    if (points.size === 0) {
      // Serving it would silently switch the hook off (a typo in the only export name, say).
      const exported = unknownExports.length ? `; it exports ${namesWithHints(unknownExports)}` : ''
      const at = (map && mappedExport(map, name, source, unknownExports[0])) || authorPosition(name, filename, source, undefined, map ? undefined : exportLine(source, unknownExports[0]))
      const hint = hintFor({ exported: unknownExports[0] })
      return editFailure(
        `the hook exports no hook point${exported}; export at least one, e.g. module.exports = { beforeToolExecute(ctx, call) {} }${hint && unknownExports[0] === 'default' ? `; ${hint}` : ''}`,
        at.file,
        at.line,
      )
    }
    const hook: LoadedHook = { name, version, filename, source, config: settings.config, points, unknownExports, loadedAtMs: Date.now(), runner: this.runner, onError: 'default' }
    if (sourceMap !== undefined) hook.sourceMap = sourceMap
    return { ok: true, hook, map }
  }

  /** A sandboxed hook keeps nothing between snapshots. */
  forget(): void {}

  close(): void {}
}

/**
 * Where a line of the script the isolate ran is in the author's files: through the source map for a
 * bundle; kept inside the file for a plain script (a syntax error at its very end is reported by V8
 * on the line of hookd's wrapper after it, one past the author's last line).
 */
function authorPosition(name: string, filename: string, source: string, map: SourceMap | undefined, line: number | undefined): { file: string; line?: number; pastEnd?: boolean } {
  if (line === undefined) return { file: filename }
  if (map) {
    const at = mapPosition(map, line)
    return at ? { file: `${name}/${at.file}`, line: at.line } : { file: filename }
  }
  const last = endOfFileLine(source)
  return line > last ? { file: filename, line: last, pastEnd: true } : { file: filename, line }
}

/** A load failure's text with the hint for it, when author-hints.ts has one. */
function withHint(message: string): string {
  const hint = hintFor({ kind: 'load', message })
  return hint === undefined ? message : `${message}; ${hint}`
}

/** V8's error at the wrapper after a file that ended too early ("Unexpected token ')'"), in the author's terms. */
function endOfFileMessage(message: string): string {
  const kind = /^(\w*Error):/.exec(message)?.[1] ?? 'SyntaxError'
  return `${kind}: the file ends before its code is complete: a {, ( or [ is never closed, or the last statement is cut off`
}
