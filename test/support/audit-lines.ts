/**
 * Reading what a test's sidecar recorded: the audit log's JSON lines (a decision's line, its outcome
 * lines) and one series of its metrics, as the ask and decision tests check them.
 */
import { readFile } from 'node:fs/promises'
import { expect } from 'vitest'

export type AuditLine = Record<string, unknown>

/** Every line of the audit log at `path` (none while it does not exist yet). */
export async function auditLines(path: string): Promise<AuditLine[]> {
  const text = await readFile(path, 'utf8').catch(() => '')
  return text.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as AuditLine)
}

/** The decision line of `decisionId`, waited for (the log is written as the result is sent). */
export async function decisionLine(path: string, decisionId: unknown): Promise<AuditLine> {
  let line: AuditLine | undefined
  await expect.poll(async () => (line = (await auditLines(path)).find((l) => l.decisionId === decisionId && 'point' in l)), { timeout: 10_000 }).toBeDefined()
  return line as AuditLine
}

/** The outcome lines of decision `decisionId` (an ask's second line). */
export async function outcomeLines(path: string, decisionId: unknown): Promise<AuditLine[]> {
  return (await auditLines(path)).filter((l) => l.decisionId === decisionId && 'outcome' in l)
}

/** The value of one metrics series (`name{labels}`) in a scrape; 0 when it is not there yet. */
export async function metricSample(metrics: { scrape(): Promise<{ text: string }> } | undefined, series: string): Promise<number> {
  const text = (await metrics?.scrape())?.text ?? ''
  const line = text.split('\n').find((l) => l.startsWith(`${series} `))
  return line ? Number(line.slice(series.length + 1)) : 0
}
