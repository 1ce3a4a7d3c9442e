/**
 * The hooks a test run serves, staged in a temporary hooks folder that an embedded sidecar loads: each
 * hook's `index.js` as it is (a plain CommonJS hook) or as its bundle (TypeScript, ES modules, npm
 * packages: bundle.ts), and its `hook.json`, whose `config` a case may replace. The sidecar, its
 * workers and the isolates are the real ones; only the folder is a copy, so that a case's config never
 * touches the author's files and an edit made while the cases run cannot change a run half-way.
 *
 * A bundled hook keeps its source map, so diagnostics point at the author's file and line.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { isAbsolute, join } from 'node:path'
import { parseJson } from '../protocol/bounded-json.js'
import type { Diagnostic } from '../protocol/diagnostic.js'
import { bundleHook, mapPosition, readBundlePlan } from '../sidecar/hooks/bundle.js'
import { readRegularFile } from '../sidecar/hooks/read-regular-file.js'

/** The largest index.js or hook.json copied; the registry applies its own, smaller caps when it loads them. */
const COPY_MAX_BYTES = 4 * 1024 * 1024

/** Why a hook cannot be served at all (its bundle failed, say), at its place in the author's files. */
export interface StageProblem {
  message: string
  /** Relative to the hooks folder, e.g. "guard/index.ts". */
  file: string
  line?: number
}

interface StagedHook {
  name: string
  /** hook.json as the author wrote it, and its object when it is one. */
  hookJsonText: string | undefined
  hookJson: Record<string, unknown> | undefined
  /** The hook.json written now (a case may have replaced its config). */
  current: string | undefined
  sourceMap?: string
  problem?: StageProblem
}

export class Stage {
  private readonly hooks = new Map<string, StagedHook>()

  private constructor(
    /** The staged hooks folder the sidecar serves. */
    readonly root: string,
    private readonly dir: string,
  ) {}

  static async create(): Promise<Stage> {
    const dir = await mkdtemp(join(tmpdir(), 'hookd-test-'))
    const root = join(dir, 'hooks')
    await mkdir(root)
    return new Stage(root, dir)
  }

  /**
   * Stages (again) the hook `name` of the author's hooks folder `from`. `enforce`: a hook.json "mode"
   * is dropped, so that a candidate written to go out in shadow runs as it would once it enforces
   * (`hookd test --shadow`).
   */
  async stage(from: string, name: string, options: { enforce?: boolean } = {}): Promise<StageProblem | undefined> {
    const source = join(from, name)
    const target = join(this.root, name)
    await rm(target, { recursive: true, force: true })
    await mkdir(target)
    const hookJsonFile = await readRegularFile(join(source, 'hook.json'), COPY_MAX_BYTES)
    const read = hookJsonFile.ok ? remoteMadeAbsolute(hookJsonFile.text, source) : undefined
    const hookJsonText = read !== undefined && options.enforce ? withoutMode(read) : read
    const parsed = hookJsonText === undefined ? undefined : parseJson(hookJsonText, 'hook.json')
    const hookJson = parsed?.ok && isObject(parsed.value) ? parsed.value : undefined
    const staged: StagedHook = { name, hookJsonText, hookJson, current: hookJsonText }
    this.hooks.set(name, staged)
    if (hookJsonText !== undefined) await writeFile(join(target, 'hook.json'), hookJsonText)

    const plan = await readBundlePlan(source)
    if (plan.kind === 'error') return this.problem(staged, { message: plan.message, file: `${name}/${plan.file}`, ...(plan.line ? { line: plan.line } : {}) })
    if (plan.kind === 'none') {
      // A remote hook has only hook.json; anything else is the registry's "has no index.js" to report.
      return undefined
    }
    if (plan.kind === 'plain') {
      const index = await readRegularFile(join(source, 'index.js'), COPY_MAX_BYTES)
      if (!index.ok) return this.problem(staged, { message: `index.js ${index.why}`, file: `${name}/index.js` })
      await writeFile(join(target, 'index.js'), index.text)
      return undefined
    }
    const bundled = await bundleHook(source, { entry: plan.entry })
    if (!bundled.ok) {
      return this.problem(staged, { message: bundled.message, file: `${name}/${bundled.file}`, ...(bundled.line ? { line: bundled.line } : {}) })
    }
    staged.sourceMap = bundled.sourceMap
    await writeFile(join(target, 'index.js'), bundled.source)
    return undefined
  }

  /** Why the hook cannot be served, when it cannot. */
  problemOf(name: string): StageProblem | undefined {
    return this.hooks.get(name)?.problem
  }

  /**
   * Gives the hook `config` (undefined: hook.json's own) by rewriting its staged hook.json. Returns true
   * when the file changed, so the registry must load the hook again.
   */
  async configure(name: string, config: unknown): Promise<boolean> {
    const staged = this.hooks.get(name)
    if (!staged) return false
    const wanted = config === undefined ? staged.hookJsonText : `${JSON.stringify({ ...staged.hookJson, config }, null, 2)}\n`
    if (wanted === staged.current) return false
    const file = join(this.root, name, 'hook.json')
    if (wanted === undefined) await rm(file, { force: true })
    else await writeFile(file, wanted)
    staged.current = wanted
    return true
  }

  /** A diagnostic of a bundled hook, pointed at the author's file and line through the source map. */
  mapDiagnostic(d: Diagnostic): Diagnostic {
    const staged = this.hooks.get(d.hook)
    if (!staged?.sourceMap || d.line === undefined || d.file !== `${d.hook}/index.js`) return d
    const at = mapPosition(staged.sourceMap, d.line)
    return at ? { ...d, file: `${d.hook}/${at.file}`, line: at.line } : d
  }

  async close(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true })
  }

  private problem(staged: StagedHook, problem: StageProblem): StageProblem {
    staged.problem = problem
    return problem
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/** A remote hook's `unix:PATH` is relative to its own folder: keep it pointing there from the copy. */
function remoteMadeAbsolute(text: string, folder: string): string {
  const parsed = parseJson(text, 'hook.json')
  if (!parsed.ok || !isObject(parsed.value)) return text
  const remote = parsed.value.remote
  if (typeof remote !== 'string' || !remote.startsWith('unix:') || isAbsolute(remote.slice(5))) return text
  return `${JSON.stringify({ ...parsed.value, remote: `unix:${join(folder, remote.slice(5))}` }, null, 2)}\n`
}

/** hook.json without its "mode" (it then enforces), when it is an object that has one. */
function withoutMode(text: string): string {
  const parsed = parseJson(text, 'hook.json')
  if (!parsed.ok || !isObject(parsed.value) || !('mode' in parsed.value)) return text
  const { mode: _mode, ...rest } = parsed.value
  return `${JSON.stringify(rest, null, 2)}\n`
}
