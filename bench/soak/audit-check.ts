/**
 * Decisions against audit records, once every sidecar has stopped: the audit log is read line by line
 * and every decision hookd answered during the soak (Ledger.decisions) must have its line, or fall
 * inside a time the log said it could not write, and be counted in what it said it did not write.
 * Also: every line must parse (no torn line), no gate recorded allowed may show a hook that could not
 * decide, and a front-door result left unchanged must show its rewriter failing.
 */
import { createReadStream, existsSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { cidOf } from './expect.js'
import type { Ledger } from './ledger.js'

export interface AuditCheck {
  lines: number
  /** Lines that are not JSON (a torn write). */
  torn: number
  /** Decisions hookd answered during the soak. */
  decisions: number
  /** ... of which the log holds a line. */
  recorded: number
  /** ... of which it does not. */
  missing: number
  /** ... of which it does not, answered outside any time the log said it could not write. */
  missingUnexplained: number
  /** Lines the log said it could not write (its own gap lines, and what sidecars said as they stopped). */
  saidUnwritten: number
  /** Gates recorded allowed with a hook that failed, was cancelled or did not run. */
  allowedUndecided: number
  /** Front-door results answered unchanged whose line shows the rewriter changed them. */
  unchangedButChanged: number
  examples: string[]
}

/** A line the audit log writes once it can write again, saying how many it could not. */
interface GapLine {
  unwritten: number
}

export async function checkAudit(
  path: string,
  ledger: Ledger,
  /** Times (ms since the soak began) when the log could not write: the full disk, with slack. */
  unwritable: Array<[number, number]>,
  /** What the sidecars said, as they stopped, they had not written. */
  saidAtStop: number,
): Promise<AuditCheck> {
  const out: AuditCheck = { lines: 0, torn: 0, decisions: ledger.decisions.size, recorded: 0, missing: 0, missingUnexplained: 0, saidUnwritten: saidAtStop, allowedUndecided: 0, unchangedButChanged: 0, examples: [] }
  const keys = new Set<string>()
  const rewriterOutcome = new Map<string, string>()
  if (existsSync(path)) {
    for await (const line of createInterface({ input: createReadStream(path), crlfDelay: Infinity })) {
      if (!line) continue
      out.lines += 1
      let record: Record<string, unknown>
      try {
        record = JSON.parse(line) as Record<string, unknown>
      } catch {
        out.torn += 1
        if (out.examples.length < 10) out.examples.push(`torn line: ${line.slice(0, 160)}`)
        continue
      }
      if (typeof (record as unknown as GapLine).unwritten === 'number') {
        out.saidUnwritten += (record as unknown as GapLine).unwritten
        continue
      }
      if (typeof record.decisionId === 'string') keys.add(record.decisionId)
      const point = String(record.point)
      const cid = record.payload !== undefined ? cidOf(JSON.stringify(record.payload)) : undefined
      if (cid) keys.add(`${point}:${cid}`)
      const hooks = Array.isArray(record.hooks) ? (record.hooks as Array<{ hook: string; outcome: string }>) : []
      const decision = record.decision as { outcome?: string } | undefined
      if (decision?.outcome === 'allowed' && hooks.some((h) => h.outcome !== 'changed' && h.outcome !== 'no-opinion')) {
        out.allowedUndecided += 1
        if (out.examples.length < 10) out.examples.push(`allowed while undecided: ${line.slice(0, 300)}`)
      }
      if (cid && point === 'afterToolExecute') rewriterOutcome.set(`${point}:${cid}`, hooks.find((h) => h.hook === 'rewriter')?.outcome ?? 'absent')
    }
  }
  const within = (t: number): boolean => unwritable.some(([a, b]) => t >= a && t <= b)
  for (const [key, at] of ledger.decisions) {
    if (keys.has(key)) {
      out.recorded += 1
      continue
    }
    out.missing += 1
    if (!within(at - ledger.t0)) {
      out.missingUnexplained += 1
      if (out.examples.length < 10) out.examples.push(`no audit line for ${key}, answered at +${at - ledger.t0} ms, outside the full disk's windows`)
    }
  }
  for (const key of ledger.unchangedUnexplained) {
    const outcome = rewriterOutcome.get(key)
    if (outcome === 'changed') {
      out.unchangedButChanged += 1
      if (out.examples.length < 10) out.examples.push(`${key}: answered unchanged, but its audit line says the rewriter changed it`)
    }
  }
  return out
}
