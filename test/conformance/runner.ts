/**
 * The TypeScript conformance runner: runs one case (case.ts) through the host library (hookd-sandbox/host)
 * against a sidecar serving the case's hooks folder, and says how what it saw differs from the case.
 */
import { CapabilityError, type HookdClient, HookdError, type HostSession, type PointCallResult, type PointName } from '../../src/host/index.js'
import { type Case, type Seen, type Step, judge, pushedKeys } from './case.js'

/** Every problem met running `c`, one line each; empty when the sidecar conforms. */
export async function runCase(client: HookdClient, c: Case): Promise<string[]> {
  const problems: string[] = []
  const answers = [...c.answers.confirm]
  const pushed: Array<{ hook: string; kind: string }> = []
  let seen: Omit<Seen, 'result' | 'diagnostics' | 'trace'> = { logs: [], confirms: [], notifications: [] }
  const message = (hook: string, m: { title: string; body?: string }) => ({ hook, title: m.title, ...(m.body !== undefined ? { body: m.body } : {}) })

  let session: HostSession
  try {
    session = await client.openSession({
      sessionId: c.open.sessionId ?? `conformance-${c.name}`,
      agentId: c.open.agentId ?? 'conformance',
      modelId: c.open.modelId ?? 'conformance-model',
      hooks: c.open.hooks,
      interactive: c.open.interactive,
      autoApprove: c.open.autoApprove,
      capabilities: {
        confirm: (m, origin) => {
          seen.confirms.push(message(origin.hook, m))
          const answer = answers.shift()
          if (answer === undefined) {
            problems.push(`hook '${origin.hook}' asked to confirm '${m.title}' after the case's scripted answers ran out`)
            throw new CapabilityError('failed', 'the conformance case has no answer left')
          }
          return answer
        },
        notify: (m, origin) => void seen.notifications.push(message(origin.hook, m)),
        log: (line) => seen.logs.push({ hook: line.hook, message: line.message }),
        diagnostic: (d) => pushed.push({ hook: d.hook, kind: d.kind }),
      },
    })
  } catch (err) {
    if (!c.expectOpen) return [`open failed: ${String(err)}`]
    const code = err instanceof HookdError ? err.code : 'not a HookdError'
    const text = err instanceof Error ? err.message : String(err)
    if (code !== c.expectOpen.error) problems.push(`open: expected error ${c.expectOpen.error}, got ${code}: ${text}`)
    if (!text.includes(c.expectOpen.messageContains)) problems.push(`open: expected a message containing ${JSON.stringify(c.expectOpen.messageContains)}, got ${JSON.stringify(text)}`)
    return problems
  }
  if (c.expectOpen) {
    session.abandon()
    return [`open: expected error ${c.expectOpen.error}, but the session opened`]
  }

  let closed = false
  for (const [i, step] of c.steps.entries()) {
    seen = { logs: [], confirms: [], notifications: [] }
    const what = 'call' in step ? `step ${i + 1} (${step.call})` : `step ${i + 1} (close ${step.close})`
    let out: PointCallResult<PointName>
    try {
      out = await run(session, step)
    } catch (err) {
      problems.push(`${what}: ${String(err)}`)
      break
    }
    if ('close' in step) closed = true
    const result: Seen = {
      ...seen,
      result: out.result,
      diagnostics: out.diagnostics.map((d) => ({ hook: d.hook, point: d.point, kind: d.kind, message: d.message })),
      trace: out.trace.map((t): [string, string] => [t.hook, t.outcome]),
    }
    problems.push(...judge(step.expect, result).map((p) => `${what}: ${p}`))
  }
  if (!closed) session.abandon()
  const want = pushedKeys(c.pushed)
  const got = pushedKeys(pushed)
  if (JSON.stringify(want) !== JSON.stringify(got)) problems.push(`pushed diagnostics: expected ${JSON.stringify(want)}, got ${JSON.stringify(got)}`)
  if (answers.length) problems.push(`${answers.length} scripted confirm answer(s) were never asked for`)
  return problems
}

function run(session: HostSession, step: Step): Promise<PointCallResult<PointName>> {
  if ('close' in step) return session.close(step.close) as Promise<PointCallResult<PointName>>
  // The case's payload is data: the point and payload are checked by the sidecar, not by the compiler.
  return session.call(step.call as PointName, step.payload as never)
}
