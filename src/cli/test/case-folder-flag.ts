/**
 * `hookd test --cases DIR`: run the cases in DIR (what `hookd serve --capture DIR` wrote, or any
 * folder of case files) against the hooks folder, instead of each hook's tests/ folder.
 */
import { readdir } from 'node:fs/promises'
import { isAbsolute, join, relative, resolve } from 'node:path'
import { AGENT_IDS } from '../../agents/registry.js'
import type { RunReport, TestRunner } from '../../testing/test-runner.js'
import { UsageError } from '../common/args.js'
import { isDirectory, isHookFolder } from '../common/hook-paths.js'

export const CASES_HELP = `  --cases DIR   run the case files under DIR (what 'hookd serve --capture DIR' writes: point
                calls and agents' events) against the hooks folder, instead of its hooks' tests/.
                A case that names an agent ("agent": "claude-code", with the event it sent) is
                replayed through that agent's own dialect, and passes when the agent would get
                the answer the case expects. 'hookd test DIR' does the same when DIR holds
                cases and no hooks (what --capture wrote)`

/**
 * `hookd test DIR` where DIR is a folder of cases, not of hooks (what --capture writes): the same as
 * `hookd test --cases DIR`, against --hooks or ./hooks. DIR is one when it is no hook's folder, holds no
 * hook folder, and holds case files (`*.json`) or an agent's folder of them (DIR/claude-code/...).
 * Returns the --cases folder and the positionals left for the hooks folder.
 */
export async function captureFolderArgs(cases: string | undefined, positionals: string[], cwd: string): Promise<{ cases: string | undefined; positionals: string[] }> {
  if (cases !== undefined || positionals.length !== 1) return { cases, positionals }
  const only = positionals[0] as string
  const folder = resolve(cwd, only)
  if (!(await isDirectory(folder)) || (await isHookFolder(folder))) return { cases, positionals }
  const entries = await readdir(folder, { withFileTypes: true }).catch(() => [])
  let holdsCases = false
  for (const e of entries.slice(0, 10_000)) {
    if (e.isDirectory() && (await isHookFolder(join(folder, e.name)))) return { cases, positionals }
    if ((e.isFile() && e.name.endsWith('.json') && !e.name.startsWith('.')) || (e.isDirectory() && AGENT_IDS.includes(e.name))) holdsCases = true
  }
  return holdsCases ? { cases: only, positionals: [] } : { cases, positionals }
}

/** How one run goes with --cases DIR; undefined without it. Throws a UsageError for a folder that is not one. */
export async function casesRun(cases: string | undefined, selected: readonly string[] | undefined, cwd: string): Promise<((runner: TestRunner) => Promise<RunReport>) | undefined> {
  if (cases === undefined) return undefined
  if (selected !== undefined) throw new UsageError("--cases runs every case in its folder against a hooks folder: give the hooks folder (or --hooks), not hook names")
  const folder = resolve(cwd, cases)
  if (cases === '' || !(await isDirectory(folder))) throw new UsageError(`--cases: no folder '${cases}'; give the folder 'hookd serve --capture' wrote to`)
  const rel = relative(cwd, folder)
  const shown = rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? folder : rel
  return (runner) => runner.runFolder(folder, shown)
}
