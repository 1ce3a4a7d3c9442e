/**
 * The asked decisions of one gRPC session whose outcome its host is to report: a gate whose ctx.confirm
 * the host answered `deferred` (left to its agent's own prompt) was recorded asked, and the host later
 * says what became of the call (AskOutcomeReport). Each outcome is recorded once, as the audit log's
 * second line for the decision (session.ts).
 *
 * Bounded like the front door's runs (agents/pending-asks.ts, the same limits): at most `max`
 * decisions wait at once (past it the oldest is settled `unknown` by hookd, via `too many asks`), each
 * at most `expiryMs` (then `unknown`, via `expired`; checked whenever a decision is added or a report
 * arrives), and those still waiting when the session ends (or decided after it) are settled `unknown`,
 * via `run ended`. A
 * report for anything else is refused with a message saying why; the last `max` settled ids are kept,
 * so that a second report of one says it was already settled.
 */
import { type AskOutcome, DEFAULT_PENDING_ASKS } from '../../protocol/ask-outcomes.js'
import { quoted } from '../../protocol/text.js'
import type { OutcomeReport } from '../observability/observer.js'

export interface AskedDecisionsOptions {
  /** Decisions waiting at once. Default 64. */
  max?: number
  /** How long a decision waits for its outcome. Default 30 minutes. */
  expiryMs?: number
  /** The clock (tests). Default Date.now. */
  now?: () => number
  /** Records a settled decision (the audit line, the metrics, the operator's line). */
  settled(report: OutcomeReport): void
}

interface Waiting {
  decisionId: string
  at: number
}

/** A host's report: recorded, or refused with what was wrong. */
export type ReportAnswer = { recorded: true } | { recorded: false; message: string }

export class AskedDecisions {
  /** In the order asked, the oldest first; at most `max`. */
  private readonly waiting: Waiting[] = []
  /** The last `max` decisions settled, with how, the oldest first. */
  private readonly settledIds: Array<{ decisionId: string; how: string }> = []
  private readonly max: number
  private readonly expiryMs: number
  private readonly now: () => number
  private ended = false

  constructor(private readonly options: AskedDecisionsOptions) {
    this.max = Math.max(1, options.max ?? DEFAULT_PENDING_ASKS.max)
    this.expiryMs = options.expiryMs ?? DEFAULT_PENDING_ASKS.expiryMs
    this.now = options.now ?? Date.now
  }

  get size(): number {
    return this.waiting.length
  }

  /**
   * A decision the session recorded asked, whose outcome the host is to report. One decided after the
   * session ended (a call that was running when it closed) is settled at once: nothing can report it.
   */
  add(decisionId: string): void {
    this.expire()
    while (this.waiting.length >= this.max) this.drop(0, 'unknown', 'too many asks', 'hookd')
    this.waiting.push({ decisionId, at: this.now() })
    if (this.ended) this.drop(this.waiting.length - 1, 'unknown', 'run ended', 'hookd')
  }

  /** The host's report of a decision's outcome (already checked for its outcome and via). */
  report(decisionId: string, outcome: AskOutcome, via: string, by: 'agent' | 'host'): ReportAnswer {
    this.expire()
    const i = this.waiting.findIndex((w) => w.decisionId === decisionId)
    if (i >= 0) {
      this.drop(i, outcome, via, by)
      return { recorded: true }
    }
    const id = quoted(decisionId, 64)
    const settled = this.settledIds.find((s) => s.decisionId === decisionId)
    if (settled) return { recorded: false, message: `decision ${id} was already settled (${settled.how}); each outcome is recorded once` }
    return {
      recorded: false,
      message: `decision ${id} is no asked decision of this session waiting for its outcome: report only the decision_id of a result this session recorded asked (a confirm answered with deferred at a gate), once`,
    }
  }

  /** The session ended: every decision still waiting is settled `unknown`, via `run ended`. */
  end(): void {
    this.ended = true
    while (this.waiting.length) this.drop(0, 'unknown', 'run ended', 'hookd')
  }

  private expire(): void {
    const cutoff = this.now() - this.expiryMs
    while (this.waiting.length && (this.waiting[0] as Waiting).at <= cutoff) this.drop(0, 'unknown', 'expired', 'hookd')
  }

  private drop(i: number, outcome: AskOutcome, via: string, by: OutcomeReport['by']): void {
    const [gone] = this.waiting.splice(i, 1)
    if (!gone) return
    this.settledIds.push({ decisionId: gone.decisionId, how: `${outcome} by ${by === 'agent' ? 'the agent' : by === 'host' ? 'the host' : 'hookd'}, via ${via}` })
    if (this.settledIds.length > this.max) this.settledIds.shift()
    this.options.settled({ decisionId: gone.decisionId, outcome, by, via })
  }
}
