/**
 * How a session reaches its host: the seam between a session and whatever carries it (the Session
 * stream, the unary Invoke, the front door's runs). A session knows nothing of gRPC; its link does.
 */
import type { Diagnostic } from '../../protocol/diagnostic.js'
import type { CapabilityCallData, LogLineData } from '../../protocol/wire.js'
import type { CapabilityReply } from '../runners/hook-runner.js'

/**
 * A link's own answer to a capability call. `deferred` marks a ctx.confirm at a gate answered yes for
 * the chain's sake and left to the agent's own prompt (the front door's `ask`): the decision is then
 * recorded as asked, not allowed, and the link's owner records its outcome (`Session.outcome`). A
 * host's answer says it with CapabilityResult.deferred, checked (capability-broker.ts
 * `answerFromHost`), and its host reports the outcome (`Session.reportOutcome`).
 */
export type LinkReply = CapabilityReply & { deferred?: true }

/** How a session reaches its host. */
export interface SessionLink {
  /**
   * Forwards an allowed capability call. A link that can answer at once (the unary Invoke, the front
   * door) returns the reply; a stream link sends the call and the answer comes back through `Session.answer`.
   */
  capability(call: CapabilityCallData): Promise<LinkReply> | undefined
  log(line: LogLineData): void
  diagnostic(d: Diagnostic): void
  /**
   * True for the unary Invoke: a call over the tenant's quota fails with RESOURCE_EXHAUSTED. A stream
   * is not ended for it: the call is answered with a `quota` diagnostic instead (see quota-result.ts).
   */
  quotaFails?: boolean
}
