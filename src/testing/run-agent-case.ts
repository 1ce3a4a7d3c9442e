/**
 * Replays an agent-event case (agent-case.ts) through the agent's own dialect, as the front door would
 * answer it: the one adapter (agents/agent-adapter.ts) reads the event, runs the points on a run over
 * the embedded sidecar (HostRun, the host library's run, with the route's profile: its hooks, policy,
 * confirm mode and onError, and the case's files and HTTP answers), and has the dialect answer; the
 * answer is compared with `expect.answer`. The run opens for the event (beforeRun first, as at an
 * agent's first event) and ends after it.
 *
 * The event's folder (`ctx.workdir`) is the case's temporary workdir on replay: each path under it in
 * the event is moved there, and back in the answer, so a case replays the same on any machine.
 */
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { AgentAdapter } from '../agents/agent-adapter.js'
import { AgentRuns } from '../agents/agent-runs.js'
import { HostRun } from '../agents/claude-agent-sdk/host-run.js'
import { agentById } from '../agents/registry.js'
import type { Diagnostic } from '../protocol/diagnostic.js'
import { type Profile, resolveProfile } from '../sidecar/http/agent-route.js'
import { NEVER_ASKS } from '../sidecar/http/sidecar-run.js'
import { type AgentCase, ownName } from './agent-case.js'
import type { CaseCtx } from './case-file.js'
import { CaseHost } from './case-host.js'
import { differences } from './match.js'
import { CASE_TIMEOUT_MS, type CaseEnvironment, type CaseOutcome, compareDiagnostics } from './run-case.js'
import { shownPath } from './shown-path.js'

export async function runAgentCase(env: CaseEnvironment & { root: string }, testCase: AgentCase): Promise<CaseOutcome> {
  const started = performance.now()
  const dialect = agentById(testCase.agent)?.dialect
  let label = testCase.eventName ?? 'event'
  try {
    const parsed = dialect?.parse(testCase.event, testCase.eventName)
    if (parsed) label = parsed.name ?? testCase.eventName ?? ownName(testCase.event) ?? parsed.event.kind
  } catch {
    // A malformed event replays as it is: the adapter answers it as the front door did.
  }
  const outcome = (failures: string[], actual?: CaseOutcome['actual']): CaseOutcome => ({
    file: testCase.file,
    name: testCase.name,
    owner: testCase.owner,
    hooks: testCase.hooks,
    point: `${testCase.agent} ${label}`,
    ok: failures.length === 0,
    failures,
    durationMs: Math.round(performance.now() - started),
    ...(actual ? { actual } : {}),
  })
  if (!dialect) return outcome([`agent: '${testCase.agent}' is not an agent of this hookd`])
  for (const hook of testCase.hooks) {
    const problem = env.stage.problemOf(hook)
    if (problem) return outcome([`hook '${hook}' cannot be loaded: ${shownPath(env.hooksShown, problem.file)}${problem.line !== undefined ? `:${problem.line}` : ''}: ${problem.message}`])
    await env.stage.configure(hook, undefined)
    await env.registry.loadOne(hook)
  }
  let profile: Profile
  try {
    profile = await resolveProfile(testCase.route, env.root)
  } catch (err) {
    return outcome([`route: ${(err as Error).message}`])
  }

  const made = await mkdtemp(join(tmpdir(), 'hookd-case-'))
  try {
    const workdir = await realpath(made)
    for (const [path, text] of Object.entries(testCase.ctx.files)) {
      await mkdir(dirname(join(workdir, path)), { recursive: true })
      await writeFile(join(workdir, path), text)
    }
    const ctx: CaseCtx = { configs: {}, files: testCase.ctx.files, env: testCase.ctx.env, autoApprove: false, confirm: [], http: testCase.ctx.http, policy: {}, session: {} }
    const host = new CaseHost(ctx, workdir)
    const { confirm: _asked, ...handlers } = host.handlers()
    const diagnostics: Diagnostic[] = []
    let collecting = true
    const runs = new AgentRuns(
      (start) => {
        // As the front door's run (sidecar-run.ts): a confirm is the agent's prompt's only where it asks.
        const asks = profile.confirm === 'ask' && start.canAsk !== false && !NEVER_ASKS.has(start.permissionMode ?? '')
        return HostRun.open(env.client, start, {
          hooks: profile.hooks,
          policy: { file: profile.policy.file, httpOrigins: profile.policy.httpOrigins, env: profile.policy.env },
          onError: profile.onError,
          env: testCase.ctx.env,
          ...(asks ? {} : { confirm: () => profile.confirm === 'allow' }),
          capabilities: handlers,
          onDiagnostic: (d) => void (collecting && diagnostics.push(d)),
        })
      },
      { checkWorkdir: false },
    )
    const recorded = testCase.ctx.workdir
    const event = recorded !== undefined ? movePaths(testCase.event, [recorded], workdir) : testCase.event
    let answer: unknown
    let timer: NodeJS.Timeout | undefined
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${CASE_TIMEOUT_MS / 1000} s`)), CASE_TIMEOUT_MS)
      })
      answer = await Promise.race([new AgentAdapter(dialect, runs).handle(event, `${testCase.agent}/${testCase.route.channel}`, testCase.eventName), timeout])
    } catch (err) {
      return outcome([`the event was not answered: ${(err as Error).message}`])
    } finally {
      clearTimeout(timer)
      collecting = false
      await runs.closeAll('interrupted', 5000)
    }
    const shown = (recorded !== undefined ? movePaths(answer, [workdir, made], recorded) : answer) ?? null
    const seen = dedupe(diagnostics.filter((d) => d.kind !== 'reload').map((d) => env.stage.mapDiagnostic(d)))
    const failures = [...host.problems]
    if (testCase.expect.answer !== undefined) failures.push(...differences(testCase.expect.answer, shown, testCase.expect.match, 'answer'))
    const diagnosticFailure = compareDiagnostics(testCase.expect.diagnostics, seen, label, env.hooksShown)
    if (diagnosticFailure) failures.push(diagnosticFailure)
    return outcome(failures, { result: shown, diagnostics: seen, logs: host.logs.map((l) => l.message), calls: host.calls })
  } finally {
    await rm(made, { recursive: true, force: true })
  }
}

/** `value` with every path under one of `from` (the folder itself, or below it) moved under `to`, in every string. */
export function movePaths(value: unknown, from: readonly string[], to: string): unknown {
  const folders = [...new Set(from)].filter((f) => f !== '' && f !== '/' && f !== to).sort((a, b) => b.length - a.length)
  if (folders.length === 0) return value
  const pattern = new RegExp(`(?:${folders.map((f) => f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})(?=$|[^A-Za-z0-9._-])`, 'g')
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return v.replace(pattern, to)
    if (Array.isArray(v)) return v.map(walk)
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {}
      for (const [key, item] of Object.entries(v)) Object.defineProperty(out, key, { value: walk(item), enumerable: true, writable: true, configurable: true })
      return out
    }
    return v
  }
  return walk(value)
}

/** Diagnostics once per kind and hook, as the case records them (agent-case.ts): one pushed and also in a result is one problem. */
function dedupe(list: Diagnostic[]): Diagnostic[] {
  const seen = new Set<string>()
  return list.filter((d) => {
    const key = `${d.kind}\u0000${d.hook}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}
