/**
 * What became of an asked decision: a gate whose ctx.confirm was left to the agent's own prompt (the
 * front door's `ask`, or a host's `deferred` confirm answer) is recorded asked, and its outcome comes
 * later, as the audit log's second line for the decision. The words and bounds shared by the parts
 * that follow asks: the front door's runs (agents/pending-asks.ts), a session's asks reported by its
 * host over gRPC (sidecar/session/asked-decisions.ts), and the host library's reports (host/session.ts).
 */
import { inert } from './text.js'

/** `allowed` (the call ran), `denied` (it did not), or `unknown` (nobody can tell). */
export const ASK_OUTCOMES = ['allowed', 'denied', 'unknown'] as const
export type AskOutcome = (typeof ASK_OUTCOMES)[number]

/**
 * Who said it: `agent` (one of the agent's events, or its end of the run), `host` (a gRPC host
 * concluded it), `hookd` (the sidecar did: a bound, or the run ended without a word).
 */
export type OutcomeBy = 'agent' | 'host' | 'hookd'

/**
 * How many asks wait for their outcome at once per run (past it the oldest is settled `unknown`, via
 * `too many asks`), and how long each waits (then `unknown`, via `expired`): 30 minutes, a run's
 * default idle time.
 */
export const DEFAULT_PENDING_ASKS = { max: 64, expiryMs: 30 * 60_000 } as const

/** The longest `via` a host may report. */
export const MAX_VIA_CHARS = 64

/**
 * What is wrong with a `via` a host reports, or undefined when it may be recorded: 1 to MAX_VIA_CHARS
 * characters, none of them a control character (it lands in the audit log, the operator's log and a
 * metrics label).
 */
export function viaProblem(via: string): string | undefined {
  if (via === '') return 'via is empty; name what told the host (the agent\'s event, e.g. "PostToolUse")'
  if ([...via].length > MAX_VIA_CHARS) return `via is longer than ${MAX_VIA_CHARS} characters`
  if (inert(via, Infinity) !== via) return 'via holds a control character'
  return undefined
}
