/**
 * `hookd test --shadow NEW_DIR`: replays the cases of the serving hooks folder (HOOK/tests/*.json, the
 * cases `hookd serve --capture` writes once moved there) against the serving versions and against the
 * candidate versions in NEW_DIR, and says case by case whether the candidate would change what the
 * call gets. Each side is its own embedded sidecar on the real sandbox (test-runner.ts); a hook that
 * NEW_DIR does not hold is the serving one on both sides. A candidate's hook.json "mode" is dropped: it
 * runs as it would once it enforces, which is what shadow mode is for finding out.
 *
 * A case's `expect` is not checked here: the serving version's answer is the expectation.
 */
import { join } from 'node:path'
import { HookdClient } from '../host/client.js'
import type { Diagnostic } from '../protocol/diagnostic.js'
import { sameJson } from '../protocol/json.js'
import { hookFolderNames } from '../sidecar/hooks/hook-folder.js'
import { Sidecar } from '../sidecar/sidecar.js'
import { type AnyCase, type CaseProblem, isAgentCase, loadSuite } from './load-cases.js'
import { show } from './match.js'
import { runAgentCase } from './run-agent-case.js'
import { type CaseOutcome, runCase } from './run-case.js'
import { shownPath } from './shown-path.js'
import { Stage } from './stage.js'

/** One case, on both sides. */
export interface ShadowCase {
  file: string
  name: string
  point: string
  /** `same`: the candidate answers as the serving version does; `changed`: it would not; `error`: a side could not run it. */
  status: 'same' | 'changed' | 'error'
  /** What changes, one line each ("result: from X to Y", "diagnostics: from ... to ..."). */
  changes: string[]
  /** Why a side could not run the case. */
  error?: string
  serving?: { result: unknown; diagnostics: string[] }
  candidate?: { result: unknown; diagnostics: string[] }
}

export interface ShadowReport {
  hooksShown: string
  candidateShown: string
  cases: ShadowCase[]
  problems: CaseProblem[]
  changed: number
}

export interface ShadowOptions {
  /** The serving hooks folder, whose cases are replayed. */
  root: string
  hooksShown: string
  /** The candidate hooks folder. */
  candidate: string
  candidateShown: string
  onCase?: ((c: ShadowCase) => void) | undefined
}

/** One side: its staged folder, its sidecar and the client that drives it. */
interface Side {
  stage: Stage
  sidecar: Sidecar
  client: HookdClient
}

async function startSide(): Promise<Side> {
  const stage = await Stage.create()
  let sidecar: Sidecar | undefined
  try {
    sidecar = await Sidecar.create({ hooks: stage.root, workers: 1, watch: false })
    const address = await sidecar.listen(`unix:${join(stage.root, '..', 'hookd.sock')}`)
    return { stage, sidecar, client: await HookdClient.connect(address) }
  } catch (err) {
    await sidecar?.stop()
    await stage.close()
    throw err
  }
}

async function stopSide(side: Side | undefined): Promise<void> {
  if (!side) return
  side.client.close()
  await side.sidecar.stop()
  await side.stage.close()
}

/** Runs the cases of the hooks `selected` (all when undefined) on both sides. */
export async function compareShadow(options: ShadowOptions, selected: readonly string[] | undefined): Promise<ShadowReport> {
  const { root, hooksShown, candidate, candidateShown } = options
  const names = selected ?? (await hookFolderNames(root))
  const suite = await loadSuite(root, names, (path) => shownPath(hooksShown, path))
  const candidates = new Set(await hookFolderNames(candidate).catch(() => []))
  let serving: Side | undefined
  let trying: Side | undefined
  try {
    serving = await startSide()
    trying = await startSide()
    const involved = [...new Set(suite.cases.flatMap((c) => c.hooks))].sort()
    for (const hook of involved) {
      await serving.stage.stage(root, hook)
      await trying.stage.stage(candidates.has(hook) ? candidate : root, hook, { enforce: true })
    }
    const cases: ShadowCase[] = []
    for (const testCase of suite.cases) {
      // An agent-event case (what --capture wrote at the front door) replays through the agent's
      // dialect on both sides: what changes is the answer the agent would get.
      const run = (side: Side, shownAs: string): Promise<CaseOutcome> => {
        const env = { client: side.client, registry: side.sidecar.registry, stage: side.stage, hooksShown: shownAs, root }
        return isAgentCase(testCase) ? runAgentCase(env, testCase) : runCase(env, testCase)
      }
      const [was, would] = [await run(serving, hooksShown), await run(trying, candidateShown)]
      const c = compared(testCase, was, would)
      cases.push(c)
      options.onCase?.(c)
    }
    return { hooksShown, candidateShown, cases, problems: suite.problems, changed: cases.filter((c) => c.status !== 'same').length }
  } finally {
    await stopSide(trying)
    await stopSide(serving)
  }
}

/** A diagnostic as the comparison reads it: its kind and hook (messages carry versions and timings). */
function diagnosticKey(d: Diagnostic): string {
  return d.hook ? `${d.kind} ${d.hook}` : d.kind
}

function compared(testCase: AnyCase, was: CaseOutcome, would: CaseOutcome): ShadowCase {
  const base = { file: testCase.file, name: testCase.name, point: isAgentCase(testCase) ? `${testCase.agent} ${testCase.eventName ?? 'event'}` : testCase.point }
  const missing = !was.actual ? ['serving', was] : !would.actual ? ['candidate', would] : undefined
  if (missing) {
    const [side, outcome] = missing as [string, CaseOutcome]
    return { ...base, status: 'error', changes: [], error: `the ${side} version could not run it: ${outcome.failures[0] ?? 'no answer'}` }
  }
  const before = was.actual as NonNullable<CaseOutcome['actual']>
  const after = would.actual as NonNullable<CaseOutcome['actual']>
  const serving = { result: before.result, diagnostics: before.diagnostics.map(diagnosticKey) }
  const candidate = { result: after.result, diagnostics: after.diagnostics.map(diagnosticKey) }
  const changes: string[] = []
  if (!sameJson(serving.result, candidate.result)) changes.push(`result: from ${show(serving.result)} to ${show(candidate.result)}`)
  if (!sameJson(serving.diagnostics, candidate.diagnostics)) {
    const list = (d: string[]): string => (d.length ? d.join(', ') : 'none')
    changes.push(`diagnostics: from ${list(serving.diagnostics)} to ${list(candidate.diagnostics)}`)
  }
  return { ...base, status: changes.length ? 'changed' : 'same', changes, serving, candidate }
}

/** The line (and, for a change, the indented lines of what changes) of one case. */
export function shadowCaseLines(c: ShadowCase): string {
  const head = `${c.status === 'same' ? 'SAME   ' : c.status === 'changed' ? 'CHANGED' : 'ERROR  '} ${c.file}: ${c.name} (${c.point})`
  const under = c.status === 'error' ? [c.error ?? ''] : c.changes
  return `${head}\n${under.map((line) => `        ${line}\n`).join('')}`
}

export function shadowSummary(report: ShadowReport): string {
  const total = report.cases.length
  const errors = report.cases.filter((c) => c.status === 'error').length
  const changed = report.changed - errors
  const broken = report.problems.length ? `, ${report.problems.length} could not be read` : ''
  return `${total} ${total === 1 ? 'case' : 'cases'} against ${report.candidateShown}: ${changed} would change, ${total - changed - errors} the same${errors ? `, ${errors} could not run` : ''}${broken}\n`
}
