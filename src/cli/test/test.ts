/**
 * `hookd test [DIR | HOOK...]`: runs the hooks' test cases (HOOK/tests/*.json, docs/writing-hooks.md)
 * through an embedded sidecar, the same sandbox `hookd serve` runs them in, and reports each case.
 */
import { writeFile } from 'node:fs/promises'
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path'
import { hookFolderNames } from '../../sidecar/hooks/hook-folder.js'
import { watchChanges } from '../../testing/change-watcher.js'
import { didYouMean } from '../../protocol/did-you-mean.js'
import { TESTS_FOLDER } from '../../testing/load-cases.js'
import { caseLines, junitXml, problemLines, summaryLine } from '../../testing/report.js'
import { type RunReport, TestRunner } from '../../testing/test-runner.js'
import { UsageError, parse } from '../common/args.js'
import type { CliIo } from '../common/io.js'
import { isDirectory, isHookFolder } from '../common/hook-paths.js'
import { CASES_HELP, captureFolderArgs, casesRun } from './case-folder-flag.js'

export const TEST_HELP = `Usage: hookd test [DIR | HOOK...] [--json] [--junit FILE] [--watch]
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
${CASES_HELP}
  -h, --help    show this help

Prints one line per case (PASS or FAIL, the case file, its name), what differs under a failed case,
and a summary. Exit status: 0 when every case passed, 1 when any failed (or no case was found), 2 for
a usage error.`

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
  const fromFolder = await casesRun(given.cases, selected, io.cwd)
  const rel = relative(io.cwd, root)
  const hooksShown = rel === '' ? '.' : rel.startsWith('..') || isAbsolute(rel) ? root : rel

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
