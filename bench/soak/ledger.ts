/**
 * Every call the soak made and what became of it (expect.ts's verdicts): counts by verdict and
 * transport, latency per minute, the decisions hookd answered (to find in the audit log afterwards),
 * the wrong answers in full, and when each tenant was served again after a moment (a fault).
 */
import type { Verdict, VerdictKind } from './expect.js'

export type Transport = 'grpc' | 'http'

export interface CallRecord {
  transport: Transport
  tenant: string
  point: 'beforeToolExecute' | 'afterToolExecute'
  cid: string
  start: number
  end: number
  verdict: Verdict
  /** How the audit log names this decision: its decisionId (gRPC), or point and cid (front door). */
  auditKey?: string | undefined
  /** False for calls that wait on purpose (a confirm the host answers after a pause, a hook that spins). */
  ordinary: boolean
}

/** Verdicts that are hookd's own answers (as opposed to the host's fallback, or no answer). */
const ANSWERED: ReadonlySet<VerdictKind> = new Set(['allowed', 'changed', 'refused-policy', 'refused-hookd', 'unchanged', 'wrong'])
/** Verdicts that show the tenant served as usual. */
const GOOD: ReadonlySet<VerdictKind> = new Set(['allowed', 'changed', 'refused-policy'])

interface Waiter {
  since: number
  need: Set<string>
  latest: number
  done(at: number): void
}

export class Ledger {
  readonly counts = new Map<string, number>()
  /**
   * Latencies (ms) of hookd's answers to ordinary calls (no confirm waiting on the host, no hook spinning
   * on purpose), per minute since the start, per transport.
   */
  private readonly latencies: Array<Record<Transport, number[]>> = []
  /** Decisions hookd answered that its audit log must hold (or count as not written): key → when answered. */
  readonly decisions = new Map<string, number>()
  readonly wrong: Array<CallRecord & { why: string }> = []
  /** Front-door results left unchanged: the answer names no diagnostic, so the audit line must show why. */
  readonly unchangedUnexplained = new Set<string>()
  private wrongCount = 0
  private readonly waiters = new Set<Waiter>()
  /** Confirms asked per call: a call asked twice would mean a parked hook ran again. */
  private readonly confirms = new Map<string, number>()
  readonly askedTwice: string[] = []
  /** Every answer that was not as usual (but hookd's refusals of a policy's own), when: what each fault cost. */
  readonly incidents: Array<{ t: number; kind: VerdictKind; transport: Transport }> = []
  /** A few distinct reasons of each kind that has one, per transport (what failed closed, and why). */
  readonly reasons = new Map<string, Set<string>>()
  /** Answers as usual per second since the start: was hookd answering during a window? */
  private readonly goodPerSecond = new Map<number, number>()

  constructor(
    readonly t0: number,
    /** Every tenant × transport that must answer for "served again". */
    private readonly lanes: readonly string[],
  ) {}

  add(r: CallRecord): void {
    const kind = r.verdict.kind
    this.bump(`${r.transport}.${kind}`)
    this.bump(`all.${kind}`)
    this.bump(`${r.transport}.made`)
    this.bump('all.made')
    if ('why' in r.verdict) {
      if (this.incidents.length < 100_000) this.incidents.push({ t: r.end - this.t0, kind, transport: r.transport })
      const key = `${r.transport}.${kind}`
      const seen = this.reasons.get(key) ?? new Set<string>()
      this.reasons.set(key, seen)
      // Numbers (pids, ms, seqs) vary; the reason's shape is what is worth reading.
      if (seen.size < 8) seen.add(r.verdict.why.replace(/\d+/g, 'N').slice(0, 240))
    }
    if (kind === 'wrong') {
      this.wrongCount += 1
      if (this.wrong.length < 50) this.wrong.push({ ...r, why: r.verdict.why })
    }
    if (ANSWERED.has(kind)) {
      const minute = Math.floor((r.end - this.t0) / 60_000)
      while (this.latencies.length <= minute) this.latencies.push({ grpc: [], http: [] })
      if (r.ordinary) this.latencies[minute]?.[r.transport].push(r.end - r.start)
      // A front-door refusal by hookd may come before any point call (a drain, a quota): no line for it.
      if (r.auditKey && (kind !== 'refused-hookd' || r.transport === 'grpc')) this.decisions.set(r.auditKey, r.end)
      if (r.auditKey && kind === 'unchanged' && r.transport === 'http') this.unchangedUnexplained.add(r.auditKey)
    }
    if (GOOD.has(kind)) {
      const second = Math.floor((r.end - this.t0) / 1000)
      this.goodPerSecond.set(second, (this.goodPerSecond.get(second) ?? 0) + 1)
      const lane = `${r.tenant}/${r.transport}`
      for (const w of [...this.waiters]) {
        if (r.start < w.since || !w.need.has(lane)) continue
        w.need.delete(lane)
        w.latest = Math.max(w.latest, r.end)
        if (w.need.size === 0) {
          this.waiters.delete(w)
          w.done(w.latest)
        }
      }
    }
  }

  /** Counts a confirm asked for call `cid`. */
  confirmed(cid: string): void {
    const n = (this.confirms.get(cid) ?? 0) + 1
    this.confirms.set(cid, n)
    if (n === 2 && this.askedTwice.length < 50) this.askedTwice.push(cid)
  }

  /** Answers as usual that ended between `from` and `to` (ms since the start). */
  goodBetween(from: number, to: number): number {
    let n = 0
    for (const [second, count] of this.goodPerSecond) if (second * 1000 >= from && second * 1000 < to) n += count
    return n
  }

  get wrongAnswers(): number {
    return this.wrongCount
  }

  count(key: string): number {
    return this.counts.get(key) ?? 0
  }

  /**
   * Resolves with the time at which every tenant had been served as usual, on both transports, by a
   * call that started at `since` or later; undefined after `timeoutMs`.
   */
  servedAgain(since: number, timeoutMs: number): Promise<number | undefined> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters.delete(waiter)
        resolve(undefined)
      }, timeoutMs)
      const waiter: Waiter = {
        since,
        need: new Set(this.lanes),
        latest: since,
        done: (at) => {
          clearTimeout(timer)
          resolve(at)
        },
      }
      this.waiters.add(waiter)
    })
  }

  /** p50 and p99 of hookd's answers per minute, overall and per transport. */
  perMinute(): Array<{ minute: number; answers: number; p50: number; p99: number; grpc: { p50: number; p99: number }; http: { p50: number; p99: number } }> {
    return this.latencies.map((m, minute) => {
      const all = [...m.grpc, ...m.http]
      return { minute, answers: all.length, ...quantiles(all), grpc: quantiles(m.grpc), http: quantiles(m.http) }
    })
  }

  private bump(key: string): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1)
  }
}

export function quantiles(xs: number[]): { p50: number; p99: number } {
  if (!xs.length) return { p50: 0, p99: 0 }
  const sorted = [...xs].sort((a, b) => a - b)
  const at = (p: number): number => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))] as number
  return { p50: round(at(0.5)), p99: round(at(0.99)) }
}

export const round = (n: number, digits = 1): number => Math.round(n * 10 ** digits) / 10 ** digits
