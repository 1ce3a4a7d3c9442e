/**
 * The operator's lines about refused requests (401, 404, 413, 421, 429, ...), limited per kind: a burst
 * of lines, then one per interval, and at the end of each interval in which some were held back, one
 * line saying how many: `N more like this (401) were not shown in the last 10 s`. A flood of requests
 * nobody authorized can then neither fill the log nor keep the main thread writing it, and the first
 * lines of each kind, the ones that explain a wrong token or URL, are always shown.
 *
 * Kinds are a closed set (the HTTP statuses the front door answers, and its connection refusals), so
 * the counters are bounded whatever the requests say.
 */

export interface LineLimits {
  /** Lines of one kind shown at once before the limit applies. Default 10. */
  burst: number
  /** One more line of a kind per interval, and the count of those not shown. Default 10 s. */
  intervalMs: number
}

export const DEFAULT_LINE_LIMITS: LineLimits = { burst: 10, intervalMs: 10_000 }

interface Kind {
  tokens: number
  refilledAt: number
  held: number
  timer: NodeJS.Timeout | undefined
}

export class LineLimiter {
  private readonly kinds = new Map<string, Kind>()
  private readonly limits: LineLimits
  private closed = false

  constructor(
    private readonly write: (line: string) => void,
    limits: Partial<LineLimits> = {},
  ) {
    this.limits = { ...DEFAULT_LINE_LIMITS, ...limits }
    for (const [name, value] of Object.entries(this.limits)) {
      if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`the front door's error lines: ${name} must be a positive integer; got ${value}`)
    }
  }

  /** Writes `line` unless its kind is over the limit; then counts it. */
  line(kind: string, line: string): void {
    const k = this.kind(kind)
    const now = performance.now()
    const { burst, intervalMs } = this.limits
    k.tokens = Math.min(burst, k.tokens + (now - k.refilledAt) / intervalMs)
    k.refilledAt = now
    if (k.tokens >= 1) {
      k.tokens -= 1
      this.write(line)
      return
    }
    k.held += 1
    if (k.timer || this.closed) return
    k.timer = setTimeout(() => this.flush(kind), intervalMs)
    k.timer.unref()
  }

  /** Writes the counts still held back, and stops the timers. */
  close(): void {
    this.closed = true
    for (const kind of this.kinds.keys()) this.flush(kind)
  }

  private kind(kind: string): Kind {
    let k = this.kinds.get(kind)
    if (!k) {
      k = { tokens: this.limits.burst, refilledAt: performance.now(), held: 0, timer: undefined }
      this.kinds.set(kind, k)
    }
    return k
  }

  private flush(kind: string): void {
    const k = this.kinds.get(kind)
    if (!k) return
    clearTimeout(k.timer)
    k.timer = undefined
    if (k.held === 0) return
    const seconds = Math.max(1, Math.round(this.limits.intervalMs / 1000))
    this.write(`${k.held} more like this (${kind}) were not shown in the last ${seconds} s`)
    k.held = 0
  }
}
