/**
 * What the soak reports (./bench/out/soak.json and the printed summary) and what must hold (the checks:
 * a failed one fails the run, naming itself). Figures: calls by verdict and transport, p50/p99 per
 * minute, memory and descriptors per minute with their slopes, worker restarts, reload latencies,
 * every fault with the time until service was back, and the audit log against the decisions.
 */
import type { AuditCheck } from './audit-check.js'
import { FAULTS, type FaultRecord, SERVED_AGAIN_BOUND_MS } from './faults.js'
import { type Ledger, quantiles, round } from './ledger.js'
import { type ProcSample, pooledSlope } from './proc.js'

export interface Check {
  name: string
  ok: boolean
  detail: string
}

export interface SoakInputs {
  minutes: number
  config: Record<string, unknown>
  ledger: Ledger
  faults: FaultRecord[]
  samples: ProcSample[]
  audit: AuditCheck
  workerExits: Record<string, number>
  restarts: Array<{ signal: string; exit: string; stoppedMs: number; listeningMs: number }>
  hostErrors: string[]
  diskUnavailable: string | undefined
  /** ms of each sidecar's own warm-up left out of the memory slopes. */
  warmupMs: number
  /** Post-warm-up time needed before memory slopes are judged. */
  judgeSlopesAfterMs: number
  loadPerMinute: number[]
}

/** The largest growth per minute that still reads as flat (see docs/operations.md, "What hookd survives"). */
export const FLAT = { rssMbPerMinute: 2, fdsPerMinute: 1 }

export function report(input: SoakInputs): { json: Record<string, unknown>; summary: string; checks: Check[] } {
  const { ledger } = input
  const c = (k: string): number => ledger.count(k)
  const kinds = ['allowed', 'changed', 'refused-policy', 'refused-hookd', 'unchanged', 'host-fallback', 'lost', 'wrong'] as const
  const byTransport = Object.fromEntries(
    (['all', 'grpc', 'http'] as const).map((t) => [t, { made: c(`${t}.made`), ...Object.fromEntries(kinds.map((k) => [k, c(`${t}.${k}`)])) }]),
  )
  const answered = kinds.filter((k) => k !== 'host-fallback' && k !== 'lost').reduce((n, k) => n + c(`all.${k}`), 0)
  const perMinute = ledger.perMinute()
  const memory = memoryFigures(input.samples, input.warmupMs)
  const reloads = input.faults.flatMap((f) => f.reloadMs ?? [])
  const judgeSlopes = memory.judgedMs >= input.judgeSlopesAfterMs
  const checks: Check[] = [
    { name: 'wrong answers: 0', ok: ledger.wrongAnswers === 0, detail: `${ledger.wrongAnswers} wrong${ledger.wrong.length ? `; first: ${ledger.wrong[0]?.why}` : ''}` },
    { name: 'no gate allowed while its hooks could not decide', ok: input.audit.allowedUndecided === 0, detail: `${input.audit.allowedUndecided} audit lines allowed with a hook that failed (the hosts' answers are checked under wrong answers)` },
    { name: 'no confirm asked twice', ok: ledger.askedTwice.length === 0, detail: ledger.askedTwice.length ? `asked twice: ${ledger.askedTwice.slice(0, 5).join(', ')}` : 'each call asked at most once' },
    {
      name: 'every decision recorded, or counted as not written',
      ok: input.audit.missingUnexplained === 0 && input.audit.missing <= input.audit.saidUnwritten && input.audit.torn === 0,
      detail: `${input.audit.recorded} of ${input.audit.decisions} recorded; ${input.audit.missing} missing, the log said ${input.audit.saidUnwritten} not written; ${input.audit.missingUnexplained} missing outside the full disk; ${input.audit.torn} torn lines`,
    },
    { name: 'unchanged front-door results explained by their audit lines', ok: input.audit.unchangedButChanged === 0, detail: `${input.audit.unchangedButChanged} answered unchanged that the log says were changed` },
    ...fullDiskChecks(input),
    {
      name: 'memory and descriptors flat after warm-up',
      ok: !judgeSlopes || (memory.slopes.mainRssMb <= FLAT.rssMbPerMinute && memory.slopes.workerRssMb <= FLAT.rssMbPerMinute && memory.slopes.mainFds <= FLAT.fdsPerMinute && memory.slopes.workerFds <= FLAT.fdsPerMinute),
      detail: `${judgeSlopes ? '' : `not judged: ${Math.round(memory.judgedMs / 1000)} s after warm-ups, less than ${input.judgeSlopesAfterMs / 1000} s; `}slopes per minute: main ${memory.slopes.mainRssMb} MB, ${memory.slopes.mainFds} fds; per worker ${memory.slopes.workerRssMb} MB, ${memory.slopes.workerFds} fds (flat: at most ${FLAT.rssMbPerMinute} MB and ${FLAT.fdsPerMinute} fd)`,
    },
    ...servedAgainChecks(input.faults),
    {
      name: 'every fault kind injected',
      ok: FAULTS.every((k) => input.faults.some((f) => f.kind === k) || (k === 'fill-disk' && input.diskUnavailable)),
      detail: FAULTS.map((k) => `${k} ${input.faults.filter((f) => f.kind === k).length}`).join(', ') + (input.diskUnavailable ? `; fill-disk cannot run: ${input.diskUnavailable}` : ''),
    },
    {
      name: 'SIGTERM drains: exit 0',
      ok: input.restarts.filter((r) => r.signal === 'SIGTERM').every((r) => r.exit === 'exit 0'),
      detail: input.restarts.map((r) => `${r.signal}: ${r.exit} after ${r.stoppedMs} ms`).join('; ') || 'no restart',
    },
    { name: 'the host library never threw', ok: input.hostErrors.length === 0, detail: input.hostErrors.slice(0, 3).join(' | ') || 'none' },
  ]
  const json = {
    when: new Date().toISOString(),
    minutes: input.minutes,
    node: process.version,
    config: input.config,
    loadPerMinute: input.loadPerMinute,
    calls: { answered, ...byTransport },
    reasons: Object.fromEntries([...ledger.reasons].map(([k, v]) => [k, [...v]])),
    wrong: ledger.wrong,
    askedTwice: ledger.askedTwice,
    audit: input.audit,
    latencyPerMinute: perMinute,
    memory,
    samples: input.samples,
    workerExits: input.workerExits,
    reloadMs: { all: reloads, ...quantiles(reloads.filter((x) => x >= 0)), max: Math.max(0, ...reloads) },
    faults: input.faults.map((f, i) => ({ ...f, cost: costOf(input, f.at, input.faults[i + 1]?.at ?? Number.POSITIVE_INFINITY) })),
    byFault: Object.fromEntries(
      FAULTS.map((kind) => {
        const mine = input.faults.map((f, i) => ({ f, next: input.faults[i + 1]?.at ?? Number.POSITIVE_INFINITY })).filter((x) => x.f.kind === kind)
        const served = mine.map((x) => x.f.servedAgainMs).filter((x): x is number => x !== undefined)
        const cost: Record<string, number> = {}
        for (const x of mine) for (const [k, v] of Object.entries(costOf(input, x.f.at, x.next))) cost[k] = (cost[k] ?? 0) + v
        return [kind, { times: mine.length, servedAgainMs: { min: Math.min(...served), ...quantiles(served), max: Math.max(...served) }, boundMs: SERVED_AGAIN_BOUND_MS[kind], cost }]
      }),
    ),
    costBeforeFaults: costOf(input, 0, input.faults[0]?.at ?? Number.POSITIVE_INFINITY),
    restarts: input.restarts,
    hostErrors: input.hostErrors,
    checks,
  }
  return { json, summary: summaryText(input, byTransport as Record<string, Record<string, number>>, answered, perMinute, memory, reloads, checks), checks }
}

/** Answers not as usual between `from` and `to` (ms since the start), by verdict and transport. */
function costOf(input: SoakInputs, from: number, to: number): Record<string, number> {
  const cost: Record<string, number> = {}
  for (const i of input.ledger.incidents) if (i.t >= from && i.t < to) cost[`${i.transport}.${i.kind}`] = (cost[`${i.transport}.${i.kind}`] ?? 0) + 1
  return cost
}

function fullDiskChecks(input: SoakInputs): Check[] {
  const fills = input.faults.filter((f) => f.kind === 'fill-disk' && f.window)
  if (!fills.length) return []
  const answering = fills.map((f) => input.ledger.goodBetween((f.window as [number, number])[0] + 1000, (f.window as [number, number])[1]))
  return [
    {
      name: 'the sidecar goes on answering while the audit log cannot be written',
      ok: answering.every((n) => n > 0),
      detail: `answers as usual while the disk was full: ${answering.join(', ')}`,
    },
  ]
}

function servedAgainChecks(faults: FaultRecord[]): Check[] {
  return FAULTS.filter((k) => faults.some((f) => f.kind === k)).map((kind) => {
    const mine = faults.filter((f) => f.kind === kind)
    const bound = SERVED_AGAIN_BOUND_MS[kind]
    const late = mine.filter((f) => f.servedAgainMs === undefined || f.servedAgainMs > bound)
    const times = mine.map((f) => f.servedAgainMs).filter((x): x is number => x !== undefined)
    return {
      name: `served again within ${bound / 1000} s after ${kind}`,
      ok: late.length === 0,
      detail: `${mine.length} time(s), served again after ${times.length ? `${Math.min(...times)}-${Math.max(...times)} ms` : 'never'}${late.length ? `; ${late.length} late or never` : ''}`,
    }
  })
}

interface MemoryFigures {
  perMinute: Array<{ minute: number; mainRssMb: number; mainFds: number; workers: number; workerRssMb: number; workerFds: number; load1: number }>
  slopes: { mainRssMb: number; mainFds: number; workerRssMb: number; workerFds: number }
  /** Sampled time after each sidecar's warm-up, in all. */
  judgedMs: number
}

function memoryFigures(samples: ProcSample[], warmupMs: number): MemoryFigures {
  const byMinute = new Map<number, ProcSample[]>()
  for (const s of samples) byMinute.set(Math.floor(s.t / 60_000), [...(byMinute.get(Math.floor(s.t / 60_000)) ?? []), s])
  const mean = (xs: number[]): number => round(xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length))
  const perMinute = [...byMinute].map(([minute, list]) => ({
    minute,
    mainRssMb: mean(list.map((s) => s.main.rssMb)),
    mainFds: mean(list.map((s) => s.main.fds)),
    workers: mean(list.map((s) => s.workers.count)),
    workerRssMb: mean(list.map((s) => s.workers.rssMb / Math.max(1, s.workers.count))),
    workerFds: mean(list.map((s) => s.workers.fds / Math.max(1, s.workers.count))),
    load1: mean(list.map((s) => s.load1)),
  }))
  const series = (f: (s: ProcSample) => number): Array<{ segment: number; t: number; v: number }> => samples.map((s) => ({ segment: s.sidecar, t: s.t, v: f(s) }))
  const perWorker = (s: ProcSample, v: number): number => v / Math.max(1, s.workers.count)
  const main = pooledSlope(series((s) => s.main.rssMb), warmupMs)
  return {
    perMinute,
    slopes: {
      mainRssMb: main.perMinute,
      mainFds: pooledSlope(series((s) => s.main.fds), warmupMs).perMinute,
      workerRssMb: pooledSlope(series((s) => perWorker(s, s.workers.rssMb)), warmupMs).perMinute,
      workerFds: pooledSlope(series((s) => perWorker(s, s.workers.fds)), warmupMs).perMinute,
    },
    judgedMs: main.samples * 5000,
  }
}

function summaryText(
  input: SoakInputs,
  t: Record<string, Record<string, number>>,
  answered: number,
  perMinute: ReturnType<Ledger['perMinute']>,
  memory: MemoryFigures,
  reloads: number[],
  checks: Check[],
): string {
  const lines: string[] = []
  const a = t.all as Record<string, number>
  lines.push(`hookd soak: ${input.minutes} min, load ${input.loadPerMinute.map((l) => l.toFixed(1)).join(' ')} (1-min load average, each minute)`)
  lines.push(`calls made ${a.made} (gRPC ${t.grpc?.made}, front door ${t.http?.made}); answered by hookd ${answered}`)
  lines.push(
    `  as expected: allowed ${a.allowed}, results rewritten ${a.changed}; refused by policy ${a['refused-policy']}; refused by hookd (failed closed) ${a['refused-hookd']}; results unchanged, failure reported ${a.unchanged}`,
  )
  lines.push(`  not hookd's answer: the host's failure policy ${a['host-fallback']}, cut by the soak ${a.lost}`)
  lines.push(`  WRONG ANSWERS: ${a.wrong}`)
  const au = input.audit
  lines.push(`audit: ${au.lines} lines; ${au.recorded} of ${au.decisions} decisions recorded, ${au.missing} missing, ${au.saidUnwritten} said not written; torn ${au.torn}`)
  lines.push('latency of hookd answers to ordinary calls per minute (ms, p50/p99): ' + perMinute.map((m) => `${m.minute}: ${m.p50}/${m.p99}`).join(', '))
  lines.push('memory per minute (main MB/fds, per worker MB/fds): ' + memory.perMinute.map((m) => `${m.minute}: ${m.mainRssMb}/${m.mainFds}, ${m.workerRssMb}/${m.workerFds}`).join('; '))
  lines.push(`slopes per minute after warm-up: main ${memory.slopes.mainRssMb} MB ${memory.slopes.mainFds} fds; per worker ${memory.slopes.workerRssMb} MB ${memory.slopes.workerFds} fds`)
  lines.push(`worker exits: ${Object.entries(input.workerExits).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}`)
  const ok = reloads.filter((x) => x >= 0)
  lines.push(`reload latency (ms): ${reloads.length} reloads, p50 ${quantiles(ok).p50}, max ${Math.max(0, ...ok)}${reloads.length > ok.length ? `, ${reloads.length - ok.length} never seen` : ''}`)
  lines.push('faults (served again after, ms):')
  input.faults.forEach((f, i) => {
    const cost = Object.entries(costOf(input, f.at, input.faults[i + 1]?.at ?? Number.POSITIVE_INFINITY)).map(([k, v]) => `${k} ${v}`)
    lines.push(`  +${Math.round(f.at / 1000)}s ${f.kind}: ${f.servedAgainMs ?? 'NEVER'}; ${f.detail}${cost.length ? `; until the next fault: ${cost.join(', ')}` : ''}`)
  })
  lines.push('checks:')
  for (const c of checks) lines.push(`  ${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}`)
  return lines.join('\n')
}
