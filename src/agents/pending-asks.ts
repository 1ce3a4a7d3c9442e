/**
 * The asks of one run still waiting for their outcome: a gate's answer went to the agent as an ask
 * (its person decides), and the agent's later events say what became of the call (tool-gate.ts,
 * the adapters). Each waiting ask is its decision id under the call's key, so that the outcome can be
 * recorded as a second audit line keyed by the first.
 *
 * Bounded: at most `max` asks wait per run (past it the oldest is settled `unknown`, via `too many
 * asks`), and an ask waits at most `expiryMs` (then `unknown`, via `expired`; checked whenever the run
 * hears of an ask or an outcome, and when it ends). Every ask is settled exactly once: by its outcome,
 * by a bound, or when the run ends.
 */
import { DEFAULT_PENDING_ASKS } from '../protocol/ask-outcomes.js'
import type { AskOutcome, AskSettled, OutcomeVia, RunEndedBy } from './agent-run.js'

export interface PendingAsksOptions {
  /** Asks waiting at once. Default 64. */
  max?: number
  /** How long an ask waits for its outcome. Default 30 minutes (a run's default idle time). */
  expiryMs?: number
  /** The clock (tests). Default Date.now. */
  now?: () => number
  /** Records a settled ask (the audit line, the metrics, the operator's line). */
  settled(settled: AskSettled): void
}

interface Waiting {
  key: string
  decisionId: string
  at: number
}

export class PendingAsks {
  /** In the order asked: the oldest first. At most `max`, so a scan costs little. */
  private readonly waiting: Waiting[] = []
  private readonly max: number
  private readonly expiryMs: number
  private readonly now: () => number

  constructor(private readonly options: PendingAsksOptions) {
    this.max = Math.max(1, options.max ?? DEFAULT_PENDING_ASKS.max)
    this.expiryMs = options.expiryMs ?? DEFAULT_PENDING_ASKS.expiryMs
    this.now = options.now ?? Date.now
  }

  get size(): number {
    return this.waiting.length
  }

  /** An ask whose outcome the agent will report under `key`. */
  add(key: string, decisionId: string): void {
    this.expire()
    while (this.waiting.length >= this.max) this.drop(0, 'unknown', 'too many asks', 'hookd')
    this.waiting.push({ key, decisionId, at: this.now() })
  }

  /** The outcome of the oldest ask waiting under `key`; false when none waits there. */
  settle(key: string, outcome: AskOutcome, via: OutcomeVia, by: 'agent' | 'hookd' = 'agent'): boolean {
    this.expire()
    const i = this.waiting.findIndex((w) => w.key === key)
    if (i < 0) return false
    this.drop(i, outcome, via, by)
    return true
  }

  /**
   * The run ended: every ask still waiting is settled, `denied` when the agent ended it and would have
   * reported a call that ran (`reportsRan`), else `unknown`.
   */
  end(endedBy: RunEndedBy, reportsRan: boolean): void {
    this.expire()
    const outcome: AskOutcome = endedBy === 'agent' && reportsRan ? 'denied' : 'unknown'
    while (this.waiting.length) this.drop(0, outcome, 'run ended', endedBy)
  }

  private expire(): void {
    const cutoff = this.now() - this.expiryMs
    while (this.waiting.length && (this.waiting[0] as Waiting).at <= cutoff) this.drop(0, 'unknown', 'expired', 'hookd')
  }

  private drop(i: number, outcome: AskOutcome, via: OutcomeVia, by: 'agent' | 'hookd'): void {
    const [gone] = this.waiting.splice(i, 1)
    if (gone) this.options.settled({ decisionId: gone.decisionId, outcome, by, via })
  }
}
