/**
 * The sidecar's processes as Linux shows them in /proc: its sandbox workers (its children running the
 * worker bundle), resident memory and open file descriptors of each, CPU time (to find a worker that is
 * running a hook now), and the slope of a series across sidecar restarts (a leak shows as a slope).
 */
import { readFile, readdir } from 'node:fs/promises'
import { loadavg } from 'node:os'

export interface ProcSample {
  /** ms since the soak began. */
  t: number
  sidecar: number
  main: { rssMb: number; fds: number }
  workers: { count: number; rssMb: number; fds: number }
  load1: number
}

export async function childrenOf(pid: number): Promise<number[]> {
  const out: number[] = []
  for (const task of await readdir(`/proc/${pid}/task`).catch(() => [] as string[])) {
    const text = await readFile(`/proc/${pid}/task/${task}/children`, 'utf8').catch(() => '')
    for (const c of text.trim().split(/\s+/)) if (c) out.push(Number(c))
  }
  return out
}

/** The sidecar's sandbox workers: its children that run the worker's entry. */
export async function workersOf(pid: number): Promise<number[]> {
  const out: number[] = []
  for (const child of await childrenOf(pid)) {
    const cmdline = await readFile(`/proc/${child}/cmdline`, 'utf8').catch(() => '')
    if (cmdline.includes('worker/process/main')) out.push(child)
  }
  return out
}

async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '')
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024
}

async function fds(pid: number): Promise<number> {
  return (await readdir(`/proc/${pid}/fd`).catch(() => [] as string[])).length
}

/** utime + stime, in clock ticks. */
export async function cpuTicks(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return Number(fields[11] ?? 0) + Number(fields[12] ?? 0)
}

export async function sample(sidecar: number, t: number): Promise<ProcSample> {
  const workers = await workersOf(sidecar)
  const w = await Promise.all(workers.map(async (pid) => ({ rss: await rssMb(pid), fds: await fds(pid) })))
  return {
    t,
    sidecar,
    main: { rssMb: round(await rssMb(sidecar)), fds: await fds(sidecar) },
    workers: { count: workers.length, rssMb: round(w.reduce((a, b) => a + b.rss, 0)), fds: w.reduce((a, b) => a + b.fds, 0) },
    load1: loadavg()[0] ?? 0,
  }
}

/** The worker that used the most CPU over `ms` (one that is running a hook), or undefined if none did. */
export async function busiestWorker(sidecar: number, ms = 60): Promise<number | undefined> {
  const workers = await workersOf(sidecar)
  const before = await Promise.all(workers.map(cpuTicks))
  await new Promise((resolve) => setTimeout(resolve, ms))
  const after = await Promise.all(workers.map(cpuTicks))
  let best: number | undefined
  let most = 0
  workers.forEach((pid, i) => {
    const used = (after[i] ?? 0) - (before[i] ?? 0)
    if (used > most) {
      most = used
      best = pid
    }
  })
  return best
}

/**
 * The slope of `value` per minute, fitted within each segment (one sidecar process: a restart starts
 * a new one) and pooled, with each segment's first `warmupMs` left out: restarts and warm-ups do not
 * read as leaks, and a leak inside any segment does.
 */
export function pooledSlope(points: Array<{ segment: number; t: number; v: number }>, warmupMs: number): { perMinute: number; samples: number } {
  const bySegment = new Map<number, Array<{ t: number; v: number }>>()
  for (const p of points) bySegment.set(p.segment, [...(bySegment.get(p.segment) ?? []), p])
  let sxy = 0
  let sxx = 0
  let n = 0
  for (const list of bySegment.values()) {
    const first = Math.min(...list.map((p) => p.t))
    const kept = list.filter((p) => p.t - first >= warmupMs)
    if (kept.length < 3) continue
    const mt = kept.reduce((a, p) => a + p.t, 0) / kept.length
    const mv = kept.reduce((a, p) => a + p.v, 0) / kept.length
    for (const p of kept) {
      sxy += (p.t - mt) * (p.v - mv)
      sxx += (p.t - mt) ** 2
    }
    n += kept.length
  }
  return { perMinute: sxx > 0 ? round((sxy / sxx) * 60_000, 3) : 0, samples: n }
}

const round = (n: number, digits = 1): number => Math.round(n * 10 ** digits) / 10 ** digits
