/**
 * Runs one test case through the real sandbox and says what differs from what it expects: the case's
 * hooks are configured in the staged folder, a session opens on the embedded sidecar with handlers built
 * from the case (case-host.ts), the point is called once (a fresh isolate per hook, as always), and the
 * result, diagnostics, logs, capability calls and files are compared with the case's `expect`.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { HookdClient } from '../host/client.js'
import type { Diagnostic } from '../protocol/diagnostic.js'
import { splitHint } from '../sidecar/hooks/author-hints.js'
import type { Registry } from '../sidecar/hooks/registry.js'
import type { ExpectedDiagnostic, TestCase } from './case-file.js'
import { CaseHost, type SeenCall } from './case-host.js'
import { differences, show } from './match.js'
import type { Stage } from './stage.js'
import { shownPath } from './shown-path.js'

/** How long one case may take in all; each hook is also held to the sidecar's own limits. */
export const CASE_TIMEOUT_MS = 120_000

export interface CaseOutcome {
  file: string
  name: string
  owner: string
  hooks: string[]
  point: string
  ok: boolean
  /** What differs, one entry per problem; entries may span lines. */
  failures: string[]
  durationMs: number
  /** What came out, for --json and for capturing a new expectation. */
  actual?: { result: unknown; diagnostics: Diagnostic[]; logs: string[]; calls: SeenCall[] }
}

export interface CaseEnvironment {
  client: HookdClient
  registry: Registry
  stage: Stage
  /** How the hooks folder is shown in messages (relative to where the command runs, when inside it). */
  hooksShown: string
}

let sessions = 0

export async function runCase(env: CaseEnvironment, testCase: TestCase): Promise<CaseOutcome> {
  const started = performance.now()
  const outcome = (failures: string[], actual?: CaseOutcome['actual']): CaseOutcome => {
    const out: CaseOutcome = {
      file: testCase.file,
      name: testCase.name,
      owner: testCase.owner,
      hooks: testCase.hooks,
      point: testCase.point,
      ok: failures.length === 0,
      failures,
      durationMs: Math.round(performance.now() - started),
    }
    if (actual) out.actual = actual
    return out
  }

  for (const hook of testCase.hooks) {
    const problem = env.stage.problemOf(hook)
    if (problem) {
      const where = `${shownPath(env.hooksShown, problem.file)}${problem.line !== undefined ? `:${problem.line}` : ''}`
      return outcome([`hook '${hook}' cannot be loaded: ${where}: ${problem.message}`])
    }
    await env.stage.configure(hook, hook === testCase.owner ? testCase.ctx.config : testCase.ctx.configs[hook])
    await env.registry.loadOne(hook)
  }

  const workdir = await mkdtemp(join(tmpdir(), 'hookd-case-'))
  try {
    for (const [path, text] of Object.entries(testCase.ctx.files)) {
      await mkdir(dirname(join(workdir, path)), { recursive: true })
      await writeFile(join(workdir, path), text)
    }
    const host = new CaseHost(testCase.ctx, workdir)
    sessions += 1
    let session
    try {
      session = await env.client.openSession(host.sessionOptions(testCase.hooks, `hookd-test-${process.pid}-${sessions}`))
    } catch (err) {
      return outcome([`the session could not open: ${(err as Error).message}`])
    }
    let timer: NodeJS.Timeout | undefined
    let out
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${CASE_TIMEOUT_MS / 1000} s`)), CASE_TIMEOUT_MS)
      })
      out = await Promise.race([session.call(testCase.point, testCase.payload as never), timeout])
    } catch (err) {
      return outcome([`the point call failed: ${(err as Error).message}`])
    } finally {
      clearTimeout(timer)
      session.abandon()
    }

    const diagnostics = [...host.pushed.filter((d) => d.kind !== 'reload'), ...out.diagnostics].map((d) => env.stage.mapDiagnostic(d))
    const logs = host.logs.map((line) => line.message)
    const { expect } = testCase
    const failures: string[] = [...host.problems]
    if (expect.result !== undefined) failures.push(...differences(expect.result, out.result, expect.match, 'result'))
    const diagnosticFailure = compareDiagnostics(expect.diagnostics, diagnostics, testCase.point, env.hooksShown)
    if (diagnosticFailure) failures.push(diagnosticFailure)
    if (expect.logs !== undefined) failures.push(...differences(expect.logs, logs, 'exact', 'logs'))
    if (expect.calls !== undefined) failures.push(...compareCalls(expect.calls, host.calls))
    if (expect.files !== undefined) failures.push(...(await compareFiles(expect.files, workdir)))
    return outcome(failures, { result: out.result, diagnostics, logs, calls: host.calls })
  } finally {
    await rm(workdir, { recursive: true, force: true })
  }
}

function diagnosticMatches(expected: ExpectedDiagnostic, actual: Diagnostic): boolean {
  return (
    expected.kind === actual.kind &&
    (expected.hook === undefined || expected.hook === actual.hook) &&
    (expected.message === undefined || actual.message.includes(expected.message)) &&
    (expected.file === undefined || expected.file === actual.file) &&
    (expected.line === undefined || expected.line === actual.line)
  )
}

/** Undefined when they match; else the expected and actual lists, each actual with a hint when hookd has one. */
export function compareDiagnostics(expected: ExpectedDiagnostic[], actual: Diagnostic[], point: string, hooksShown: string): string | undefined {
  if (expected.length === actual.length && expected.every((e, i) => diagnosticMatches(e, actual[i] as Diagnostic))) return undefined
  const wanted = expected.length === 0 ? 'none' : expected.map((e) => [e.kind, e.hook, e.message && JSON.stringify(e.message)].filter(Boolean).join(' ')).join('; ')
  const lines = [`diagnostics: expected ${wanted}; got ${actual.length === 0 ? 'none' : `${actual.length}:`}`]
  for (const d of actual) {
    const where = d.file ? ` (${shownPath(hooksShown, d.file)}${d.line !== undefined ? `:${d.line}` : ''})` : ''
    const { message, hint } = splitHint({ kind: d.kind, message: d.message, point: d.point || point })
    lines.push(`  ${d.kind} ${d.hook}: ${message}${where}`)
    if (hint) lines.push(`    hint: ${hint}`)
  }
  return lines.join('\n')
}

function compareCalls(expected: Array<{ capability: string; args?: unknown[] | undefined; hook?: string | undefined }>, actual: SeenCall[]): string[] {
  const ok =
    expected.length === actual.length &&
    expected.every((e, i) => {
      const a = actual[i] as SeenCall
      return e.capability === a.capability && (e.hook === undefined || e.hook === a.hook) && (e.args === undefined || differences(e.args, a.args, 'exact', '').length === 0)
    })
  if (ok) return []
  const list = (calls: Array<{ capability: string; args?: unknown[] | undefined }>): string =>
    calls.length === 0 ? 'none' : calls.map((c) => `${c.capability}(${c.args === undefined ? '...' : c.args.map((a) => show(a, 80)).join(', ')})`).join(', ')
  return [`calls: expected ${list(expected)}; got ${list(actual)}`]
}

async function compareFiles(expected: Record<string, string | null>, workdir: string): Promise<string[]> {
  const failures: string[] = []
  for (const [path, text] of Object.entries(expected)) {
    let found: string | undefined
    try {
      found = await readFile(join(workdir, path), 'utf8')
    } catch {
      found = undefined
    }
    const at = `files[${JSON.stringify(path)}]`
    if (text === null) {
      if (found !== undefined) failures.push(`${at}: expected no such file, got ${show(found)}`)
    } else if (found === undefined) failures.push(`${at}: expected ${show(text)}, but the hook did not write it`)
    else if (found !== text) failures.push(`${at}: expected ${show(text)}, got ${show(found)}`)
  }
  return failures
}
