/**
 * Finds the test cases of some hooks: every `*.json` file in each hook's `tests/` folder, in name order,
 * parsed and validated (case-file.ts). A case that cannot be read or is invalid is a problem to report,
 * not a reason to stop: the others still run.
 */
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { hookFolderNames } from '../sidecar/hooks/hook-folder.js'
import { readRegularFile } from '../sidecar/hooks/read-regular-file.js'
import { CASE_FILE_MAX_BYTES, type TestCase, parseCase } from './case-file.js'
import { didYouMean } from '../protocol/did-you-mean.js'

/** The folder of a hook that holds its cases. */
export const TESTS_FOLDER = 'tests'

/** The most case files read from one hook. */
const MAX_CASES_PER_HOOK = 1000

export interface CaseProblem {
  /** The case file, as shown. */
  file: string
  message: string
}

export interface Suite {
  cases: TestCase[]
  problems: CaseProblem[]
}

/**
 * The cases of the hooks `selected` in the hooks folder `root`. `show` turns a path relative to the root
 * ("guard/tests/x.json") into what the user sees.
 */
export async function loadSuite(root: string, selected: readonly string[], show: (path: string) => string): Promise<Suite> {
  const names = await hookFolderNames(root)
  const suite: Suite = { cases: [], problems: [] }
  for (const hook of selected) {
    const dir = join(root, hook, TESTS_FOLDER)
    let files: string[]
    try {
      files = (await readdir(dir, { withFileTypes: true }))
        .filter((d) => d.isFile() && d.name.endsWith('.json') && !d.name.startsWith('.'))
        .map((d) => d.name)
        .sort()
    } catch {
      continue
    }
    if (files.length > MAX_CASES_PER_HOOK) {
      suite.problems.push({ file: show(`${hook}/${TESTS_FOLDER}`), message: `holds ${files.length} case files; hookd test reads at most ${MAX_CASES_PER_HOOK} per hook` })
      files = files.slice(0, MAX_CASES_PER_HOOK)
    }
    for (const name of files) {
      const file = show(`${hook}/${TESTS_FOLDER}/${name}`)
      const read = await readRegularFile(join(dir, name), CASE_FILE_MAX_BYTES)
      if (!read.ok) {
        suite.problems.push({ file, message: `the case file ${read.why}` })
        continue
      }
      const parsed = parseCase(read.text, file, hook)
      if (!parsed.ok) {
        suite.problems.push({ file, message: parsed.message.slice(file.length + 2) })
        continue
      }
      const missing = parsed.testCase.hooks.find((h) => !names.includes(h))
      if (missing !== undefined) {
        const near = didYouMean(missing, names)
        suite.problems.push({ file, message: `hooks: there is no hook '${missing}' in the hooks folder${near ? `; did you mean '${near}'?` : ''}` })
        continue
      }
      suite.cases.push(parsed.testCase)
    }
  }
  return suite
}
