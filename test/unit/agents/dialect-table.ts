/**
 * The dialects' table tests (test/unit/agents/*-dialect.test.ts), in memory: no sidecar, no worker, no
 * socket. Each row is one agent session: its events go, as the front door hands them over (the route's
 * channel, Copilot's `?event=`), through the one adapter (src/agents/agent-adapter.ts) over real
 * AgentRuns to a fake run (`FakeRun`) that records every point call with its payload, every ask and
 * outcome, the end of the run, and answers each point call from the row (`Reply`). What the adapter
 * answers comes back as the front door sends it (src/sidecar/http/front-door.ts: 204 for no opinion,
 * 200 and the agent's JSON, an error's status and `{error}`), and as the shim then gives it to the agent
 * (`shimSays`: bin/hookd-hook and native/hookd-hook.c print a 200's body, nothing for a 204, and refuse
 * any other status in the agent's own form, the ShimForm of its definition, which
 * test/unit/shim-forms.test.ts checks both shims hold).
 */
import { expect, it } from 'vitest'
import type { AgentDefinition } from '../../../src/agents/agent-definition.js'
import { REASON } from '../../../src/agents/agent-definition.js'
import { AgentAdapter } from '../../../src/agents/agent-adapter.js'
import type { AgentRun, Ask, AskOutcome, AskSettled, ChainAnswer, OutcomeVia, RunEndReason, RunEndedBy, RunStart } from '../../../src/agents/agent-run.js'
import { AgentRuns } from '../../../src/agents/agent-runs.js'
import { AGENT_POINTS } from '../../../src/agents/hook-event.js'
import { PendingAsks } from '../../../src/agents/pending-asks.js'
import type { Diagnostic, DiagnosticKind } from '../../../src/protocol/diagnostic.js'
import type { AgentPointName, StepPointName } from '../../../src/protocol/points/points.js'
import { type ErrorCode, HookdError } from '../../../src/protocol/status.js'
import { couldNotDecide } from '../../../src/sidecar/chain/chain.js'
import { httpStatus } from '../../../src/sidecar/http/http-exchange.js'

/** Every row's session and folder (AgentRuns runs without its file-system check here: the folder need not exist). */
export const SESSION = 'sess-1'
export const CWD = '/home/me/project'
/** The route every row posts to (its channel), and the hook the fake chain's answers name. */
export const HOOK = 'guard'

// ------------------------------------------------------------------------------------------------
// The chain's answers
// ------------------------------------------------------------------------------------------------

/** A point call's payload, as the fake run receives it. */
type Payload = Record<string, unknown>

/** How the fake chain answers a point call, from its point and payload; it may throw (the run failed). */
export type Reply = (point: StepPointName, payload: Payload) => ChainAnswer

const answer = (result: unknown, rest: Partial<ChainAnswer> = {}): ChainAnswer => ({ result, diagnostics: [], asks: [], ...rest })

/** No hook changes anything: what the chain answers then, per point. */
export const same: Reply = (point, p) => {
  switch (point) {
    case 'beforeToolExecute':
      return answer({ allow: true, arguments: p.arguments })
    case 'afterToolExecute':
      return answer(p.result)
    case 'beforeModelRequest':
      return answer({ system: p.system })
    default:
      return answer({})
  }
}

/** The gate's hook refuses the call. */
export const refuse =
  (reason: string): Reply =>
  (_point, p) =>
    answer({ allow: false, reason, refusedBy: HOOK, arguments: p.arguments })

/** The hooks rewrite the call's canonical arguments (from the ones they saw). */
export const rewrite =
  (change: (args: Payload) => Payload): Reply =>
  (_point, p) =>
    answer({ allow: true, arguments: change(p.arguments as Payload) })

/** The decision id the fake chain gives an ask. */
export const ASKED = 'dec-ask-1'

/**
 * A hook's ctx.confirm left to the agent's prompt: the chain allows (with `change`, rewritten), and the
 * run hands back the question and the decision recorded as asked.
 */
export const ask =
  (title: string, body?: string, change?: (args: Payload) => Payload): Reply =>
  (_point, p) => {
    const question: Ask = { hook: HOOK, title, ...(body !== undefined ? { body } : {}) }
    const args = change ? change(p.arguments as Payload) : p.arguments
    return answer({ allow: true, arguments: args }, { asks: [question], decisionId: ASKED })
  }

/** The gate's hook could not decide (a limit, a crash): the chain refuses in hookd's words, with its diagnostic. */
export const couldNot =
  (kind: DiagnosticKind): Reply =>
  (point, p) => {
    const diagnostic: Diagnostic = { hook: HOOK, point, kind, message: `${kind} in ${HOOK}` }
    return answer({ allow: false, reason: couldNotDecide(HOOK, kind), refusedBy: 'hookd', arguments: p.arguments }, { diagnostics: [diagnostic] })
  }

/** The hooks rewrite the text the model reads after a tool (and, with `isError`, whether it failed). */
export const text =
  (newText: string | ((old: string) => string), isError?: boolean): Reply =>
  (_point, p) => {
    const result = p.result as { text: string; isError: boolean }
    return answer({ text: typeof newText === 'string' ? newText : newText(result.text), isError: isError ?? result.isError })
  }

/** The hooks add `added` to the (empty) system prompt they see at a prompt. */
export const system =
  (added: string): Reply =>
  (_point, p) =>
    answer({ system: `${String(p.system)}${added}` })

/** The run's point call fails: its Session is gone, its workers are down, ... */
export const fails =
  (code: ErrorCode, message: string): Reply =>
  () => {
    throw new HookdError(code, message)
  }

// ------------------------------------------------------------------------------------------------
// What the run was asked
// ------------------------------------------------------------------------------------------------

/** One thing the adapter (or AgentRuns) asked of the run, in order. */
export type Logged =
  | { call: StepPointName | AgentPointName; payload: unknown }
  | { ask: string; decisionId: string }
  | { outcome: AskOutcome; key: string; via: OutcomeVia; by: 'agent' | 'hookd' }
  | { close: RunEndReason; by: RunEndedBy }
  | { abort: true }

/** A run that records what it is asked and answers from the row; its asks wait in a real PendingAsks. */
class FakeRun implements AgentRun {
  private readonly pending: PendingAsks

  constructor(private readonly world: World) {
    this.pending = new PendingAsks({ settled: (s) => world.settled.push(s) })
  }

  serves(point: StepPointName): boolean {
    return this.world.serves.has(point)
  }

  async call(point: StepPointName, payload: unknown): Promise<ChainAnswer> {
    // A copy: what the hooks saw, whatever the adapter does with the object later.
    this.world.log.push({ call: point, payload: structuredClone(payload) })
    const reply = point === 'beforeRun' ? this.world.beforeRun : (this.world.reply ?? same)
    return reply(point, payload as Payload)
  }

  awaitOutcome(key: string, decisionId: string): void {
    this.world.log.push({ ask: key, decisionId })
    this.pending.add(key, decisionId)
  }

  outcome(key: string, outcome: AskOutcome, via: OutcomeVia, by: 'agent' | 'hookd' = 'agent'): void {
    this.world.log.push({ outcome, key, via, by })
    this.pending.settle(key, outcome, via, by)
  }

  awaitsOutcomes(): boolean {
    return this.pending.size > 0
  }

  async close(reason: RunEndReason, endedBy: RunEndedBy = 'agent'): Promise<ChainAnswer> {
    this.world.log.push({ close: reason, by: endedBy })
    // As a SidecarRun whose hooks may ask: the agent's after-tool events are registered, so a call
    // with no report by the end of the run did not run.
    this.pending.end(endedBy, true)
    return answer({})
  }

  abort(): void {
    this.world.log.push({ abort: true })
    this.pending.end('hookd', false)
  }
}

interface World {
  serves: ReadonlySet<StepPointName>
  beforeRun: Reply
  /** The current step's reply to its event's point call. */
  reply: Reply | undefined
  log: Logged[]
  settled: AskSettled[]
  opened: RunStart[]
}

// ------------------------------------------------------------------------------------------------
// What the agent gets back
// ------------------------------------------------------------------------------------------------

/** The front door's answer: 200 and the agent's JSON, 204 for no opinion, or an error's status and message. */
export type Got = { status: 200; json: Record<string, unknown> } | { status: 204 } | { status: number; error: string }

export const ok = (json: Record<string, unknown>): Got => ({ status: 200, json })
export const quiet: Got = { status: 204 }
export const error = (status: number, message: string): Got => ({ status, error: message })

/** What the agent reads from the shim (bin/hookd-hook) for an answer. */
export interface ShimOutput {
  exit: number
  stdout: string
  stderr: string
}

/**
 * What the shim prints for the front door's answer `got`: a 200's body, nothing for a 204, and for
 * any other status a refusal in the agent's own form (its definition's ShimForm) that quotes hookd's
 * message. (Messages here hold no control characters, which the shim would blank.)
 */
export function shimSays(agent: AgentDefinition, got: Got): ShimOutput {
  if ('json' in got) return { exit: 0, stdout: `${JSON.stringify(got.json)}\n`, stderr: '' }
  if (!('error' in got)) return { exit: 0, stdout: '', stderr: '' }
  const reason = `hookd-hook: hookd answered HTTP ${got.status}: ${got.error}; the call is refused (hookd-hook fails closed)`
  const { exit, stdout } = agent.shim.refusal
  if (stdout === undefined) return { exit, stdout: '', stderr: `${reason}\n` }
  return { exit, stdout: `${stdout.replaceAll(REASON, JSON.stringify(reason).slice(1, -1))}\n`, stderr: '' }
}

// ------------------------------------------------------------------------------------------------
// Rows
// ------------------------------------------------------------------------------------------------

export interface Step {
  /** The event's JSON, as the agent sends it. */
  event: unknown
  /** The route's `?event=` name (Copilot's events do not name themselves). */
  name?: string
  /** How the chain answers this event's point call. Default: no hook changes anything (`same`). */
  reply?: Reply
  /** What the front door answers. */
  gets: Got
  /** What the agent reads from the shim, where that is the shim's own refusal (an error status). */
  shim?: ShimOutput
}

export interface Row {
  row: string
  /** The points the route's hooks serve. Default: every point an agent's events reach. */
  serves?: readonly StepPointName[]
  /** The run's Session cannot open (an unknown hook, a bad profile). */
  opens?: HookdError
  /** How the chain answers beforeRun. Default: nothing to say. */
  beforeRun?: Reply
  steps: Step[]
  /** Everything the run was asked, in order (beforeRun, each point with its payload, asks, outcomes, its end). */
  log: Logged[]
  /** The asks settled, as the audit log's second lines would record them, in order. Default: none. */
  settled?: AskSettled[]
  /** What the run opened with, beyond what every run of the agent has (its model, its permission mode). */
  opensWith?: Partial<RunStart>
}

/** Plays a row's steps through the adapter, one session, and answers what each step got and what the run was asked. */
export async function play(agent: AgentDefinition, row: Row): Promise<{ got: Got[]; world: World }> {
  const world: World = {
    serves: new Set(row.serves ?? ([...AGENT_POINTS] as StepPointName[])),
    beforeRun: row.beforeRun ?? same,
    reply: undefined,
    log: [],
    settled: [],
    opened: [],
  }
  const runs = new AgentRuns(
    async (start) => {
      world.opened.push(start)
      if (row.opens) throw row.opens
      return new FakeRun(world)
    },
    { checkWorkdir: false },
  )
  const adapter = new AgentAdapter(agent.dialect, runs)
  const got: Got[] = []
  try {
    for (const step of row.steps) {
      world.reply = step.reply
      // As the front door: the route's agent and hooks are the channel; the answer is sent as JSON (a
      // round trip), or as no body.
      try {
        const answered = await adapter.handle(structuredClone(step.event), `${agent.id}/${HOOK}`, step.name)
        got.push(answered === undefined ? quiet : ok(JSON.parse(JSON.stringify(answered)) as Record<string, unknown>))
      } catch (err) {
        const e = HookdError.from(err)
        got.push(error(httpStatus(e), e.message))
      }
    }
  } finally {
    // What the steps asked of the run; what hookd's own end of the row's run adds is not the row's.
    const [log, settled] = [world.log.length, world.settled.length]
    await runs.closeAll('interrupted')
    world.log.splice(log)
    world.settled.splice(settled)
  }
  return { got, world }
}

/**
 * One test per row: the answers, the shim's form of them where stated, what the run was asked, the asks
 * settled, and that every run opened as this agent (its id, whether it can ask, the route's channel).
 * A run still open when the row ends is ended by hookd (closeAll) after what the row compares.
 */
export function table(agent: AgentDefinition, rows: readonly Row[]): void {
  it.each(rows)('$row', async (row) => {
    const { got, world } = await play(agent, row)
    expect(got).toEqual(row.steps.map((s) => s.gets))
    for (const [i, step] of row.steps.entries()) {
      if (step.shim) expect(shimSays(agent, got[i] as Got)).toEqual(step.shim)
    }
    expect(world.log).toEqual(row.log)
    expect(world.settled).toEqual(row.settled ?? [])
    for (const start of world.opened) {
      expect(start).toMatchObject({ agentId: agent.id, canAsk: agent.dialect.canAsk, key: { sessionId: SESSION, workdir: CWD, channel: `${agent.id}/${HOOK}` }, ...row.opensWith })
    }
  })
}

/** The beforeRun every run opens with: this session, this agent, the model its first event names. */
export function beforeRun(agent: AgentDefinition, modelId = ''): Logged {
  return { call: 'beforeRun', payload: { sessionId: SESSION, agentId: agent.id, modelId } }
}
