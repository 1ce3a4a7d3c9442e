/**
 * What every soak answer must be, and what it was: each call's expected decision follows from its
 * command and the hooks' sources (hooks.ts), so an answer is one of
 *
 *   allowed          a gate let through, with every rewrite applied once, for this tenant and session
 *   changed          a result rewritten once
 *   refused-policy   refused by the hook that must refuse it (guard for DENY, parker for PARKNO)
 *   refused-hookd    refused by hookd because a hook could not decide (failed closed)
 *   host-fallback    answered by the host's own failure policy because hookd was unreachable, too slow
 *                    or answered an HTTP error: a gate refused, a result left as it was
 *   unchanged        a result left as it was, and the answer says which hook failed (or hookd was away)
 *   lost             no answer read: the soak cut the connection mid-call (a fault)
 *   wrong            anything else: a gate allowed that must be refused, a rewrite lost or applied
 *                    twice, another tenant's or session's tag, a generation that was never served
 *
 * Pure: no sockets, no clock; the soak's agents (grpc-agent.ts, http-agent.ts) call it per answer.
 */
import { guardReason, outTag, parkerReason, rewriteTag, sessionTag } from './hooks.js'

export type Verdict =
  | { kind: 'allowed'; gen: number }
  | { kind: 'changed'; gen: number }
  | { kind: 'refused-policy'; by: 'guard' | 'parker' }
  | { kind: 'refused-hookd'; why: string }
  | { kind: 'host-fallback'; why: string }
  | { kind: 'unchanged'; why: string }
  | { kind: 'lost'; why: string }
  | { kind: 'wrong'; why: string }

export type VerdictKind = Verdict['kind']

/** What a command asks the chain for (the words the hooks look for). */
export type Intent = 'plain' | 'deny' | 'park' | 'parkno' | 'spin'

/** One tool call as the soak made it. */
export interface CallSpec {
  tenant: string
  session: string
  /** Unique in the run; part of the command, so that audit lines can be matched to answers. */
  cid: string
  command: string
  intent: Intent
}

export function commandFor(cid: string, intent: Intent): string {
  const word = { plain: '', deny: ' DENY', park: ' PARK', parkno: ' PARKNO', spin: ' SPIN' }[intent]
  return `echo cid=${cid}${word}`
}

/** The cid in a command or result text (`cid=...`), for matching audit lines. */
export function cidOf(text: string): string | undefined {
  return /cid=([A-Za-z0-9-]+)/.exec(text)?.[1]
}

/**
 * The rewriter's generations of each tenant: which were written (and when, and whether they load), and
 * when each was first seen in an answer. A call may be answered by any generation that loads, was
 * written before the call ended, and is not older than one already seen in an answer that ended before
 * the call started (hot reload never goes back).
 */
export class Generations {
  private readonly written = new Map<string, Array<{ gen: number; at: number; loads: boolean }>>()
  private readonly firstSeen = new Map<string, Map<number, number>>()

  write(tenant: string, gen: number, at: number, loads: boolean): void {
    const list = this.written.get(tenant) ?? []
    list.push({ gen, at, loads })
    this.written.set(tenant, list)
  }

  latest(tenant: string): number {
    return Math.max(0, ...(this.written.get(tenant) ?? []).map((w) => w.gen))
  }

  /** Why `gen` cannot have answered a call of `tenant` from `start` to `end`; undefined when it can. */
  refuse(tenant: string, gen: number, start: number, end: number): string | undefined {
    const w = (this.written.get(tenant) ?? []).find((x) => x.gen === gen)
    if (!w) return `generation ${gen} of ${tenant}'s rewriter was never written`
    if (!w.loads) return `generation ${gen} of ${tenant}'s rewriter does not load, yet it answered`
    if (w.at > end) return `generation ${gen} of ${tenant}'s rewriter was written after the call ended`
    const floor = this.floor(tenant, start)
    if (gen < floor) return `generation ${gen} of ${tenant}'s rewriter answered after generation ${floor} had (hot reload went back)`
    return undefined
  }

  /** Records that `gen` answered a call that ended at `end`; returns true the first time it is seen. */
  seen(tenant: string, gen: number, end: number): boolean {
    const seen = this.firstSeen.get(tenant) ?? new Map<number, number>()
    this.firstSeen.set(tenant, seen)
    const before = seen.get(gen)
    if (before === undefined || end < before) seen.set(gen, end)
    return before === undefined
  }

  /** When `gen` of `tenant` first answered a call, if it has. */
  firstSeenAt(tenant: string, gen: number): number | undefined {
    return this.firstSeen.get(tenant)?.get(gen)
  }

  private floor(tenant: string, start: number): number {
    let floor = 0
    for (const [gen, at] of this.firstSeen.get(tenant) ?? []) if (at < start && gen > floor) floor = gen
    return floor
  }
}

/** The generation in a rewritten text's tag for `tenant`, or why the tags are wrong. */
function tagGen(text: string, original: string, tenant: string, tag: (t: string, g: number) => string, suffix = ''): { gen: number } | { why: string } {
  if (!text.startsWith(original)) return { why: `the text lost its original: ${JSON.stringify(text.slice(0, 120))}` }
  const added = text.slice(original.length)
  const m = new RegExp(`^ #(rw|out):([a-z]+):g(\\d+)(.*)$`).exec(added)
  if (!m) return { why: `no rewriter tag, or not where it belongs: ${JSON.stringify(added.slice(0, 120))}` }
  const [, , owner, genText, rest] = m as unknown as [string, string, string, string, string]
  const gen = Number(genText)
  if (owner !== tenant) return { why: `tenant ${owner}'s rewriter answered a call of ${tenant}` }
  if (added !== `${tag(tenant, gen)}${suffix}`) {
    return { why: rest.includes('#rw:') || rest.includes('#out:') ? `the rewrite was applied twice: ${JSON.stringify(added)}` : `expected${JSON.stringify(tag(tenant, gen) + suffix)}, got ${JSON.stringify(added)}` }
  }
  return { gen }
}

/** A gate's answer (beforeToolExecute), as the host library gives it. */
export interface GateAnswer {
  allow: boolean
  reason?: string | undefined
  refusedBy?: string | undefined
  command?: string | undefined
}

/** Classifies a gate's answer; `gens` checks the rewriter's generation (with the call's start and end). */
export function judgeGate(spec: CallSpec, answer: GateAnswer, gens: Generations, start: number, end: number): Verdict {
  const refusing = spec.intent === 'deny' ? 'guard' : spec.intent === 'parkno' ? 'parker' : undefined
  if (!answer.allow) {
    if (answer.refusedBy === 'hookd') return { kind: 'refused-hookd', why: answer.reason ?? '' }
    if (refusing && answer.refusedBy === refusing) {
      const want = refusing === 'guard' ? guardReason(spec.tenant) : parkerReason(spec.tenant)
      if (answer.reason !== want) return { kind: 'wrong', why: `refused by ${refusing} with ${JSON.stringify(answer.reason)}, expected ${JSON.stringify(want)}` }
      return { kind: 'refused-policy', by: refusing }
    }
    return { kind: 'wrong', why: `refused by ${answer.refusedBy ?? '?'} (${answer.reason ?? ''}), expected ${refusing ? `a refusal by ${refusing}` : 'the call allowed'}` }
  }
  if (refusing) return { kind: 'wrong', why: `a gate allowed that ${refusing} refuses (${spec.intent})` }
  const got = tagGen(answer.command ?? '', spec.command, spec.tenant, rewriteTag, sessionTag(spec.session))
  if ('why' in got) return { kind: 'wrong', why: `allowed, but ${got.why}` }
  const stale = gens.refuse(spec.tenant, got.gen, start, end)
  if (stale) return { kind: 'wrong', why: stale }
  return { kind: 'allowed', gen: got.gen }
}

/**
 * Classifies a tool result's answer (afterToolExecute): rewritten once, or left as it was with a
 * failure the answer reports (`reported`: the hooks or kinds the answer's diagnostics name).
 */
export function judgeResult(spec: CallSpec, original: string, text: string, reported: string | undefined, gens: Generations, start: number, end: number): Verdict {
  if (text === original) return reported ? { kind: 'unchanged', why: reported } : { kind: 'wrong', why: 'the result was not rewritten, and nothing says why' }
  const got = tagGen(text, original, spec.tenant, outTag)
  if ('why' in got) return { kind: 'wrong', why: got.why }
  const stale = gens.refuse(spec.tenant, got.gen, start, end)
  if (stale) return { kind: 'wrong', why: stale }
  return { kind: 'changed', gen: got.gen }
}
