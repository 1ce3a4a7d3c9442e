/**
 * Test support for bundling's esbuild process (src/sidecar/hooks/esbuild-supervisor.ts): the esbuild
 * service processes that are children of this test process, how much CPU one has used, and hook files
 * that keep esbuild parsing long enough to be killed mid-build without being refused or crashing it.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { expect, vi } from 'vitest'

/** The pids of this process's children that are esbuild service processes. */
export function esbuildChildren(): number[] {
  const pids: number[] = []
  for (const task of readdirSync(`/proc/${process.pid}/task`)) {
    const text = readFileSync(`/proc/${process.pid}/task/${task}/children`, 'utf8').trim()
    for (const pid of text === '' ? [] : text.split(/\s+/).map(Number)) {
      try {
        if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').some((arg) => arg.startsWith('--service='))) pids.push(pid)
      } catch {
        // It ended while we looked.
      }
    }
  }
  return pids
}

/** User and system CPU time a process has used, in clock ticks. */
export function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return Number(fields[11]) + Number(fields[12])
}

/** Waits until `pid` has used `ticks` more CPU than now: esbuild is parsing what it was given. */
export async function untilBusy(pid: number, ticks = 5): Promise<void> {
  const start = cpuTicks(pid)
  await vi.waitFor(() => expect(cpuTicks(pid) - start).toBeGreaterThanOrEqual(ticks), { timeout: 30_000, interval: 5 })
}

/** Waits until `pid` is gone (and reaped). */
export async function untilGone(pid: number): Promise<void> {
  await vi.waitFor(() => expect(existsSync(`/proc/${pid}`)).toBe(false), { timeout: 10_000, interval: 20 })
}

/**
 * Files that keep esbuild busy for a second or more of CPU: three, each a function that reads a chain of
 * 100,000 properties (esbuild parses one in ~0.6 s; the nesting check counts no level for it, and
 * esbuild's stack holds it). Nothing calls the functions, so the bundle leaves them out.
 */
export function slowFiles(prefix = ''): Record<string, string> {
  const chain = (name: string): string => `export function ${name}() {\n  return globalThis${'.x'.repeat(100_000)}\n}\n`
  return { [`${prefix}slow-a.ts`]: chain('a'), [`${prefix}slow-b.ts`]: chain('b'), [`${prefix}slow-c.ts`]: chain('c') }
}

/** A hook that imports slowFiles(). */
export function slowHook(): Record<string, string> {
  return { 'index.ts': "import './slow-a'\nimport './slow-b'\nimport './slow-c'\n\nexport default { beforeRun() { return 1 } }\n", ...slowFiles() }
}
