/**
 * How a test run is shown: one line per case (and the differences under a failed one), a summary line,
 * and JUnit XML for CI systems.
 */
import type { RunReport } from './test-runner.js'
import type { CaseOutcome } from './run-case.js'

/** The line (and, for a failure, the indented differences) of one case. */
export function caseLines(outcome: CaseOutcome): string {
  const chain = outcome.hooks.length > 1 || outcome.hooks[0] !== outcome.owner ? ` [${outcome.hooks.join(' -> ')}]` : ''
  const head = `${outcome.ok ? 'PASS' : 'FAIL'} ${outcome.file}: ${outcome.name}${chain} (${outcome.durationMs} ms)`
  if (outcome.ok) return `${head}\n`
  return `${head}\n${outcome.failures.map((f) => indent(f, '       ')).join('\n')}\n`
}

export function problemLines(report: RunReport): string {
  return report.problems.map((p) => `FAIL ${p.file}: ${p.message}\n`).join('')
}

export function summaryLine(report: RunReport): string {
  const total = report.outcomes.length + report.problems.length
  const broken = report.problems.length ? `, ${report.problems.length} could not be read` : ''
  return `${total} ${total === 1 ? 'case' : 'cases'}: ${report.passed} passed, ${report.failed - report.problems.length} failed${broken}\n`
}

function indent(text: string, by: string): string {
  return text
    .split('\n')
    .map((line) => by + line)
    .join('\n')
}

/** The run as JUnit XML: one testsuite per hook, one testcase per case file. */
export function junitXml(report: RunReport): string {
  type Entry = { name: string; file: string; seconds: number; failure?: string }
  const suites = new Map<string, Entry[]>()
  const add = (hook: string, entry: Entry): void => {
    const list = suites.get(hook) ?? []
    list.push(entry)
    suites.set(hook, list)
  }
  for (const o of report.outcomes) {
    const entry: Entry = { name: o.name, file: o.file, seconds: o.durationMs / 1000 }
    if (!o.ok) entry.failure = o.failures.join('\n')
    add(o.owner, entry)
  }
  for (const p of report.problems) add(hookOf(p.file, report.hooksShown), { name: p.file, file: p.file, seconds: 0, failure: p.message })

  const total = report.outcomes.length + report.problems.length
  const time = (s: number): string => s.toFixed(3)
  const out = ['<?xml version="1.0" encoding="UTF-8"?>', `<testsuites name="hookd test" tests="${total}" failures="${report.failed}">`]
  for (const [hook, entries] of [...suites].sort((a, b) => a[0].localeCompare(b[0]))) {
    const failures = entries.filter((e) => e.failure !== undefined).length
    const seconds = entries.reduce((sum, e) => sum + e.seconds, 0)
    out.push(`  <testsuite name="${xml(hook)}" tests="${entries.length}" failures="${failures}" time="${time(seconds)}">`)
    for (const e of entries) {
      const attributes = `name="${xml(e.name)}" classname="${xml(hook)}" file="${xml(e.file)}" time="${time(e.seconds)}"`
      if (e.failure === undefined) {
        out.push(`    <testcase ${attributes}/>`)
      } else {
        const first = e.failure.split('\n')[0] ?? ''
        out.push(`    <testcase ${attributes}>`, `      <failure message="${xml(first)}">${xml(e.failure)}</failure>`, '    </testcase>')
      }
    }
    out.push('  </testsuite>')
  }
  out.push('</testsuites>')
  return `${out.join('\n')}\n`
}

/** "hooks/guard/tests/x.json" -> "guard". */
function hookOf(file: string, hooksShown: string): string {
  const rest = hooksShown !== '.' && file.startsWith(`${hooksShown}/`) ? file.slice(hooksShown.length + 1) : file
  return rest.split('/')[0] ?? rest
}

/** Text as XML character data or an attribute value; characters XML 1.0 cannot hold are dropped. */
export function xml(text: string): string {
  return text
    .replace(/[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/gu, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;')
}
