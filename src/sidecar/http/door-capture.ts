/**
 * What `hookd serve --http ... --capture DIR` sees of the front door, declared here so that the front
 * door knows nothing of how it is written (src/testing/front-door-capture.ts writes it as `hookd test`
 * cases): each agent event as it arrived with the answer the agent got, and each run's point calls as
 * its Session made them (the payload, the capability calls and their answers, the log lines, the
 * result). A capture only looks: it changes nothing, and whatever goes wrong in it never reaches the
 * agent or the run.
 */
import type { DialectAnswer } from '../../agents/hook-event.js'
import type { Diagnostic } from '../../protocol/diagnostic.js'
import type { PointResultData, CapabilityCallData, LogLineData } from '../../protocol/wire.js'
import type { LinkReply } from '../session/session.js'
import type { Profile } from './agent-route.js'

/** An event as it arrived: its agent, route (`guard,audit`, `profile/strict`) and `?event=` name. */
export interface SeenEvent {
  agent: string
  route: string
  name?: string
  /** The body as parsed (within the front door's size and depth limits). */
  event: unknown
}

/** A run's Session as it was opened. */
export interface RunOpened {
  sessionId: string
  agentId: string
  modelId: string
  /** The route its events came by (`guard,audit`, `profile/strict`). */
  route: string
  /** The route's profile: its hooks, policy, confirm mode, onError. */
  profile: Profile
  /** Whether confirms came to the front door (the agent's prompt asks), and the Session's autoApprove. */
  interactive: boolean
  autoApprove: boolean
  /** The env values the Session was given (the profile's names, from the sidecar's environment). */
  env: Readonly<Record<string, string>>
}

/** One run's point calls, by seq. */
export interface RunTap {
  call(seq: number, point: string, payload: unknown): void
  capability(call: CapabilityCallData, reply: LinkReply): void
  log(line: LogLineData): void
  /** A diagnostic the Session pushed outside a result (a hook that failed to load, at open). */
  diagnostic(d: Diagnostic): void
  /** The call's result; undefined when it failed (an error, not a result). */
  result(seq: number, result: PointResultData | undefined): void
}

export interface DoorCapture {
  /** Runs `handle` (the event's whole handling) and sees its answer; rejects as `handle` does. */
  event(seen: SeenEvent, handle: () => Promise<DialectAnswer>): Promise<DialectAnswer>
  /** A tap for a run that opens now. */
  run(opened: RunOpened): RunTap
}
