/**
 * A gRPC session's outcome reports: what its host says became of the decisions it left to its agent's
 * prompt (AskOutcomeReport). A report is checked (an outcome given, a `via` that may be recorded, the
 * session not closing) and recorded once through the session's asked decisions (asked-decisions.ts);
 * any other is refused with a message saying why. Refusals are counted: past MAX_REFUSED_REPORTS in one
 * session the host is misbehaving, and the next one ends the stream.
 */
import { DEFAULT_PENDING_ASKS, viaProblem } from '../../protocol/ask-outcomes.js'
import { HookdError } from '../../protocol/status.js'
import { quoted } from '../../protocol/text.js'
import type { OutcomeReportData } from '../../protocol/wire.js'
import type { OutcomeReport } from '../observability/observer.js'
import { AskedDecisions, type ReportAnswer } from './asked-decisions.js'

/** Refused outcome reports a host may send in one session; one more ends the stream. */
export const MAX_REFUSED_REPORTS = DEFAULT_PENDING_ASKS.max

export class OutcomeReports {
  /** The asked decisions whose outcome the host is to report (bounded). */
  private readonly asks: AskedDecisions
  private refused = 0

  /** `settled` records each outcome (the audit line, the observer's count). */
  constructor(settled: (report: OutcomeReport) => void) {
    this.asks = new AskedDecisions({ settled })
  }

  /** A decision recorded asked whose outcome the host is to report. */
  add(decisionId: string): void {
    this.asks.add(decisionId)
  }

  /**
   * The host's report: recorded once, for an asked decision still waiting; refused otherwise, saying
   * why. Past MAX_REFUSED_REPORTS refusals a HookdError (INVALID_ARGUMENT), which ends the stream.
   * `closing`: the session is closing, and its asks were settled.
   */
  report(report: OutcomeReportData, closing: boolean): ReportAnswer {
    const answer = this.check(report, closing)
    if (answer.recorded) return answer
    this.refused += 1
    if (this.refused > MAX_REFUSED_REPORTS) {
      throw new HookdError(
        'invalid-argument',
        `the host sent ${this.refused} outcome reports hookd refused (the last: ${answer.message}); a host reports the outcome of each decision it left to its agent once, with that result's decision_id`,
      )
    }
    return answer
  }

  /** The session ends: the asks still waiting are settled unknown (run ended); nothing more can say. */
  end(): void {
    this.asks.end()
  }

  private check(report: OutcomeReportData, closing: boolean): ReportAnswer {
    const refused = (why: string): ReportAnswer => ({ recorded: false, message: `the outcome report of decision ${quoted(report.decisionId, 64)}: ${why}` })
    if (closing) return refused('the session is closing, and its asks still waiting were recorded unknown (run ended); report outcomes before close')
    if (report.outcome === undefined) return refused('outcome is unspecified; report ASK_OUTCOME_ALLOWED, ASK_OUTCOME_DENIED or ASK_OUTCOME_UNKNOWN')
    const via = viaProblem(report.via)
    if (via) return refused(via)
    return this.asks.report(report.decisionId, report.outcome, report.via, report.by)
  }
}
