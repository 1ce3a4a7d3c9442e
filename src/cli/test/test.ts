/**
 * `hookd test [DIR | HOOK...]`: runs the hooks' test cases (HOOK/tests/*.json, docs/writing-hooks.md)
 * through an embedded sidecar, the same sandbox `hookd serve` runs them in, and reports each case.
 * With `--shadow NEW_DIR` it replays the same cases against the candidate versions in NEW_DIR too, and
 * says case by case what would change (testing/shadow-compare.ts).
 */
import { writeFile } from 'node:fs/promises'
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path'
import { hookFolderNames } from '../../sidecar/hooks/hook-folder.js'
import { watchChanges } from '../../testing/change-watcher.js'
import { didYouMean } from '../../protocol/did-you-mean.js'
import { TESTS_FOLDER } from '../../testing/load-cases.js'
import { caseLines, junitXml, problemLines, summaryLine } from '../../testing/report.js'
import { type RunReport, TestRunner } from '../../testing/test-runner.js'
import { type ShadowReport, compareShadow, shadowCaseLines, shadowSummary } from '../../testing/shadow-compare.js'
import { UsageError, parse } from '../common/args.js'
import type { CliIo } from '../common/io.js'
import { isDirectory, isHookFolder } from '../common/hook-paths.js'
import { CASES_HELP, captureFolderArgs, casesRun } from './case-folder-flag.js'

export const TEST_HELP = `Usage: hookd test [DIR | HOOK...] [--json] [--junit FILE] [--watch]
       hookd test --shadow NEW_DIR [DIR | HOOK...] [--json]
       hookd test [DIR] --cases CAPTURED, or hookd test CAPTURED

Runs the test cases of hooks: every HOOK/tests/*.json file, one case each (the format is in
docs/writing-hooks.md). Each case runs in the real sandbox, as 'hookd serve' would run it: an embedded
sidecar, a fresh isolate per hook, capabilities served from what the case sets up (files in a
temporary workdir, confirm answers, HTTP responses). TypeScript hooks and hooks with npm packages are
bundled first.

  DIR           a hooks folder (default: ./hooks), or one hook's folder
  HOOK          hook names in the hooks folder (--hooks, default ./hooks)
  --hooks DIR   the hooks folder that HOOK names are looked up in
  --json        print the report as JSON instead of lines
  --junit FILE  also write the report as JUnit XML to FILE
  --watch       run again whenever a file in the hooks folder changes (Ctrl-C stops)
  --shadow NEW_DIR
                replay the cases (those of the hooks folder, where captured cases go: 'hookd serve
                --capture') against the serving hooks and against the candidate versions in the
                hooks folder NEW_DIR (a hook it does not hold is the serving one; its hook.json
                "mode" is ignored: it runs as it would once it enforces), and print per case SAME or
                CHANGED with what would change (result from X to Y, diagnostics), or ERROR. The
                cases' "expect" is not checked: the serving answer is the expectation
${CASES_HELP}
  -h, --help    show this help

Prints one line per case (PASS or FAIL, the case file, its name), what differs under a failed case,
and a summary. Exit status: 0 when every case passed, 1 when any failed (or no case was found), 2 for
a usage error. With --shadow: 0 when every case answers the same with the candidate, 1 when any
would change or could not run (or no case was found), 2 for a usage error.`

export async function test(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(TEST_HELP, {
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      hooks: { type: 'string' },
      json: { type: 'boolean', default: false },
      junit: { type: 'string' },
      watch: { type: 'boolean', default: false },
      shadow: { type: 'string' },
      cases: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) {
    io.stdout.write(`${TEST_HELP}\n`)
    return 0
  }
  if (values.junit === '') throw new UsageError('--junit needs a file name, e.g. --junit hookd-tests.xml')
  const given = await captureFolderArgs(values.cases, positionals, io.cwd)
  const { root, selected } = await targets(given.positionals, values.hooks, io.cwd)
  const hooksShown = shown(io.cwd, root)
  if (values.shadow !== undefined) {
    if (values.watch || values.junit !== undefined) throw new UsageError('--shadow compares two versions once: it takes --json, not --watch or --junit')
    if (given.cases !== undefined) throw new UsageError('--shadow replays the hooks folder\'s own cases; it does not take --cases')
    const candidate = resolve(io.cwd, values.shadow)
    if (values.shadow === '' || !(await isDirectory(candidate))) throw new UsageError(`--shadow needs the candidate hooks folder; '${values.shadow}' is not a folder`)
    if (candidate === root) throw new UsageError(`--shadow ${values.shadow} is the hooks folder itself; give the folder that holds the new versions`)
    const report = await compareShadow(
      { root, hooksShown, candidate, candidateShown: shown(io.cwd, candidate), onCase: values.json ? undefined : (c) => io.stdout.write(shadowCaseLines(c)) },
      selected,
    )
    shadowOutput(report, values.json, io)
    return report.cases.length === 0 || report.changed > 0 || report.problems.length > 0 ? 1 : 0
  }
  const fromFolder = await casesRun(given.cases, selected, io.cwd)

  const runner = await TestRunner.start({
    root,
    hooksShown,
    onCase: values.json ? undefined : (outcome) => io.stdout.write(caseLines(outcome)),
  })
  const once = async (): Promise<number> => {
    const report = fromFolder ? await fromFolder(runner) : await runner.run(selected ?? (await hookFolderNames(root)))
    await output(report, values.json, values.junit, io)
    return report.outcomes.length + report.problems.length === 0 || report.failed > 0 ? 1 : 0
  }
  try {
    let status = await once()
    if (!values.watch) return status
    status = await watchAndRun(
      root,
      once,
      // Said once the watcher is ready: a save after this line is never missed.
      () => io.stderr.write(`hookd test: watching ${hooksShown} for changes (Ctrl-C stops)\n`),
      (path) => io.stderr.write(`\nhookd test: ${relative(root, path) || '.'} changed; running again\n`),
      () => status,
    )
    return status
  } finally {
    await runner.close()
  }
}

/** A folder as the user sees it: relative to where the command runs when inside it. */
function shown(cwd: string, dir: string): string {
  const rel = relative(cwd, dir)
  return rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? dir : rel
}

function shadowOutput(report: ShadowReport, json: boolean, io: CliIo): void {
  if (json) {
    const { hooksShown, candidateShown, cases, problems, changed } = report
    io.stdout.write(`${JSON.stringify({ hooks: hooksShown, candidate: candidateShown, changed, cases, problems }, null, 2)}\n`)
    return
  }
  io.stdout.write(report.problems.map((p) => `ERROR   ${p.file}: ${p.message}\n`).join(''))
  if (report.cases.length === 0) io.stdout.write(`no test cases in ${report.hooksShown} to replay: move captured cases ('hookd serve --capture DIR') into a hook's ${TESTS_FOLDER}/ folder\n`)
  else io.stdout.write(shadowSummary(report))
}

async function output(report: RunReport, json: boolean, junit: string | undefined, io: CliIo): Promise<void> {
  const total = report.outcomes.length + report.problems.length
  if (json) {
    io.stdout.write(`${JSON.stringify({ hooks: report.hooksShown, passed: report.passed, failed: report.failed, cases: report.outcomes, problems: report.problems }, null, 2)}\n`)
  } else {
    io.stdout.write(problemLines(report))
    if (total === 0) {
      io.stdout.write(`no test cases in ${report.hooksShown}: add one JSON file per case to a hook's ${TESTS_FOLDER}/ folder ('hookd new NAME' makes a hook with its cases)\n`)
    } else {
      io.stdout.write(summaryLine(report))
    }
  }
  if (junit !== undefined) await writeFile(resolve(io.cwd, junit), junitXml(report))
}

/** Runs `once` after each change until SIGINT or SIGTERM; returns the last run's status. */
async function watchAndRun(root: string, once: () => Promise<number>, ready: () => void, announce: (path: string) => void, initial: () => number): Promise<number> {
  let status = initial()
  let running: Promise<void> | undefined
  let pending: string | undefined
  const trigger = (path: string): void => {
    if (running) {
      pending = path
      return
    }
    announce(path)
    running = once()
      .then((s) => void (status = s))
      .finally(() => {
        running = undefined
        if (pending !== undefined) {
          const next = pending
          pending = undefined
          trigger(next)
        }
      })
  }
  const stop = await watchChanges(root, trigger)
  ready()
  await new Promise<void>((done) => {
    process.once('SIGINT', done)
    process.once('SIGTERM', done)
  })
  await stop()
  await running
  return status
}

/** Which hooks folder, and which of its hooks (undefined: all), the arguments name. */
async function targets(positionals: string[], hooksFlag: string | undefined, cwd: string): Promise<{ root: string; selected: string[] | undefined }> {
  const defaultRoot = resolve(cwd, hooksFlag ?? 'hooks')
  if (positionals.length === 0) {
    if (!(await isDirectory(defaultRoot))) throw new UsageError(`no hooks folder '${hooksFlag ?? 'hooks'}'; pass the folder that holds your hooks, or a hook's folder`)
    return { root: defaultRoot, selected: undefined }
  }
  let root: string | undefined
  const selected = new Set<string>()
  let all = false
  for (const arg of positionals) {
    const full = resolve(cwd, arg)
    let here: string
    if (await isDirectory(full)) {
      if (await isHookFolder(full)) {
        here = dirname(full)
        selected.add(basename(full))
      } else {
        here = full
        all = true
      }
    } else if (/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(arg) && (await isDirectory(join(defaultRoot, arg)))) {
      here = defaultRoot
      selected.add(arg)
    } else {
      const names = (await isDirectory(defaultRoot)) ? await hookFolderNames(defaultRoot) : []
      const near = didYouMean(arg, names)
      throw new UsageError(`'${arg}' is neither a folder nor a hook in ${hooksFlag ?? 'hooks'}${near ? `; did you mean '${near}'?` : ''}`)
    }
    if (root !== undefined && root !== here) throw new UsageError(`give hooks of one hooks folder; '${arg}' is in ${here}, not ${root}`)
    root = here
  }
  return { root: root as string, selected: all ? undefined : [...selected] }
}
