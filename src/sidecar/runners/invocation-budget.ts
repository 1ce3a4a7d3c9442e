/**
 * What one invocation may spend of what it sends out, the same for a sandboxed hook (the worker's
 * runner) and a remote one (remote-invocation.ts): capability calls, the size of each one's arguments
 * and of all of them together, and ctx.log volume in bytes and in lines, after which one truncation
 * marker is sent and the rest dropped.
 */
import { FAILURE_TEXT } from './failure-text.js'
import type { CapabilityReply } from './hook-runner.js'
import type { Limits } from '../limits.js'

export class InvocationBudget {
  private capabilityCalls = 0
  private capabilityBytes = 0
  private logBytes = 0
  private logLines = 0
  private logClosed = false

  constructor(private readonly limits: Limits) {}

  /** Counts a capability call; the refusal to send back when it is over budget, else undefined. */
  capability(name: string, argsBytes: number): Extract<CapabilityReply, { ok: false }> | undefined {
    this.capabilityCalls += 1
    if (this.capabilityCalls > this.limits.capabilityCalls) {
      return { ok: false, code: 'limit', message: FAILURE_TEXT.capabilityCalls(this.limits, name) }
    }
    if (argsBytes > this.limits.resultBytes) {
      return { ok: false, code: 'limit', message: FAILURE_TEXT.capabilityArgs(this.limits, name, argsBytes) }
    }
    if (this.capabilityBytes + argsBytes > this.limits.capabilityBytes) {
      // Once over, every later call is refused too: a hook cannot trickle past the total.
      this.capabilityBytes = this.limits.capabilityBytes
      return { ok: false, code: 'limit', message: FAILURE_TEXT.capabilityBytesTotal(this.limits, name) }
    }
    this.capabilityBytes += argsBytes
    return undefined
  }

  /** The line to pass on: the line itself, the truncation marker (once), or undefined to drop it. */
  log(line: string): string | undefined {
    if (this.logClosed) return undefined
    const cost = Buffer.byteLength(line) + 1
    if (this.logBytes + cost > this.limits.logBytes) {
      this.logClosed = true
      return FAILURE_TEXT.logTruncated(this.limits)
    }
    if (this.logLines + 1 > this.limits.logLines) {
      this.logClosed = true
      return FAILURE_TEXT.logLinesTruncated(this.limits)
    }
    this.logBytes += cost
    this.logLines += 1
    return line
  }
}
