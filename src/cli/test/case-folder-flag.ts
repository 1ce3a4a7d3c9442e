/**
 * `hookd test --cases DIR`: run the cases in DIR (what `hookd serve --capture DIR` wrote, or any
 * folder of case files) against the hooks folder, instead of each hook's tests/ folder.
 */
import { isAbsolute, relative, resolve } from 'node:path'
import type { RunReport, TestRunner } from '../../testing/test-runner.js'
import { UsageError } from '../common/args.js'
import { isDirectory } from '../common/hook-paths.js'

export const CASES_HELP = `  --cases DIR   run the case files under DIR (what 'hookd serve --capture DIR' writes: point
                calls and agents' events) against the hooks folder, instead of its hooks' tests/.
                A case that names an agent ("agent": "claude-code", with the event it sent) is
                replayed through that agent's own dialect, and passes when the agent would get
                the answer the case expects`

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
