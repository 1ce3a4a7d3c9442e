/**
 * Finds the test cases of some hooks: every `*.json` file in each hook's `tests/` folder, in name order,
 * parsed and validated (case-file.ts, or agent-case.ts for a case that names an agent). A case that
 * cannot be read or is invalid is a problem to report, not a reason to stop: the others still run.
 * `hookd test --cases DIR` reads a folder of cases instead (case-folder.ts), through the same parse.
 */
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { parseJson } from '../protocol/bounded-json.js'
import { hookFolderNames } from '../sidecar/hooks/hook-folder.js'
import { resolveProfile } from '../sidecar/http/agent-route.js'
import { readRegularFile } from '../sidecar/hooks/read-regular-file.js'
import { type AgentCase, isAgentCaseJson, parseAgentCase } from './agent-case.js'
import { CASE_FILE_MAX_BYTES, type TestCase, parseCase } from './case-file.js'
import { didYouMean } from '../protocol/did-you-mean.js'

/** A case of either kind: a point call, or an agent's event. */
export type AnyCase = TestCase | AgentCase

export function isAgentCase(c: AnyCase): c is AgentCase {
  return 'kind' in c && c.kind === 'agent'
}

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
  cases: AnyCase[]
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
      const parsed = await parseAnyCase(read.text, file, hook, root, names)
      if (parsed.ok) suite.cases.push(parsed.testCase)
      else suite.problems.push({ file, message: parsed.message })
    }
  }
  return suite
}

/**
 * One case file of either kind, its hooks checked against the hooks folder's `names` (a profile
 * route's hooks read from its profile there). `owner` '' is a case outside any hook's tests/ folder,
 * which must name its hooks (or its route). The problem's message leaves out the file.
 */
export async function parseAnyCase(
  text: string,
  file: string,
  owner: string,
  root: string,
  names: readonly string[],
): Promise<{ ok: true; testCase: AnyCase } | { ok: false; message: string }> {
  const json = parseJson(text, 'the case', { maxDepth: 64, maxBytes: CASE_FILE_MAX_BYTES })
  const agent = json.ok && isAgentCaseJson(json.value)
  const own = (message: string): { ok: false; message: string } => ({ ok: false, message: message.startsWith(`${file}: `) ? message.slice(file.length + 2) : message })
  let testCase: AnyCase
  if (agent) {
    if (owner === '' && !(json.value as Record<string, unknown>).route) return own("route: name the route the event came by (e.g. \"guard\"): a case outside a hook's tests/ folder has no hook of its own")
    const parsed = parseAgentCase(text, file, owner)
    if (!parsed.ok) return own(parsed.message)
    let hooks = parsed.testCase.hooks
    if (hooks === undefined) {
      try {
        hooks = (await resolveProfile(parsed.testCase.route, root)).hooks
      } catch (err) {
        return own(`route: ${(err as Error).message}`)
      }
    }
    testCase = { ...parsed.testCase, hooks }
  } else {
    const parsed = parseCase(text, file, owner)
    if (!parsed.ok) return own(parsed.message)
    if (parsed.testCase.hooks.includes('')) return own("hooks: name the hooks to run: a case outside a hook's tests/ folder has no hook of its own")
    testCase = parsed.testCase
  }
  const missing = testCase.hooks.find((h) => !names.includes(h))
  if (missing !== undefined) {
    const near = didYouMean(missing, names)
    return own(`hooks: there is no hook '${missing}' in the hooks folder${near ? `; did you mean '${near}'?` : ''}`)
  }
  return { ok: true, testCase }
}
