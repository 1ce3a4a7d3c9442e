/**
 * `hookd test --cases DIR`: the cases in a folder of their own, such as the one `hookd serve --capture
 * DIR` wrote (DIR/AGENT/ROUTE/*.json for the front door's), run against a hooks folder without moving
 * them into its hooks' tests/ folders first. Every `*.json` file under DIR, at most MAX_DEPTH folders
 * down and MAX_CASES in all, in path order; each names its hooks (or its route), as captured cases do.
 * Links are not followed, and a file that is not a regular one is a problem to report.
 */
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { hookFolderNames } from '../sidecar/hooks/hook-folder.js'
import { readRegularFile } from '../sidecar/hooks/read-regular-file.js'
import { CASE_FILE_MAX_BYTES } from './case-file.js'
import { type Suite, parseAnyCase } from './load-cases.js'

const MAX_DEPTH = 4
export const MAX_FOLDER_CASES = 10_000

/** The cases under `folder`, for the hooks of `root`; `show` turns a path relative to the folder into what the user sees. */
export async function loadCaseFolder(folder: string, root: string, show: (path: string) => string): Promise<Suite> {
  const names = await hookFolderNames(root)
  const suite: Suite = { cases: [], problems: [] }
  const files: string[] = []
  let over = false
  const walk = async (rel: string, depth: number): Promise<void> => {
    const entries = (await readdir(join(folder, rel), { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue
      const path = rel === '' ? entry.name : `${rel}/${entry.name}`
      if (entry.isDirectory() && depth < MAX_DEPTH) await walk(path, depth + 1)
      else if (entry.name.endsWith('.json') && !entry.isDirectory()) {
        if (files.length >= MAX_FOLDER_CASES) over = true
        else files.push(path)
      }
    }
  }
  await walk('', 0)
  if (over) suite.problems.push({ file: show('.'), message: `holds more than ${MAX_FOLDER_CASES} case files; hookd test --cases reads the first ${MAX_FOLDER_CASES}` })
  for (const path of files) {
    const file = show(path)
    const read = await readRegularFile(join(folder, path), CASE_FILE_MAX_BYTES)
    if (!read.ok) {
      suite.problems.push({ file, message: `the case file ${read.why}` })
      continue
    }
    const parsed = await parseAnyCase(read.text, file, '', root, names)
    // Its folder stands for the hook a tests/ folder would name (JUnit's suite): `claude-code/guard`.
    if (parsed.ok) suite.cases.push({ ...parsed.testCase, owner: path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '.' })
    else suite.problems.push({ file, message: parsed.message })
  }
  return suite
}
