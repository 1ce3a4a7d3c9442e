/**
 * Exponential backoff, the one schedule hookd retries on (worker restarts, remote hooks' Describe, a
 * host's reconnects): `firstMs`, doubling each attempt, never above `maxMs`.
 */
export interface Backoff {
  firstMs: number
  maxMs: number
}

/** The wait before retry number `attempt` (0 for the first retry). */
export function backoffDelay(backoff: Backoff, attempt: number): number {
  return Math.min(backoff.maxMs, backoff.firstMs * 2 ** Math.max(0, attempt))
}
