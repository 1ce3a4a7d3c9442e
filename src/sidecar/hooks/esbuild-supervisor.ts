/**
 * Runs every bundling of the sidecar in an esbuild process that hookd watches (esbuild-process.ts), so
 * that whatever ends that process, no load stays broken and one tenant's files cannot fail another's:
 *
 * - Builds share one esbuild process (a warm one costs ~2 ms a bundle, a fresh one ~15 ms). When it
 *   ends, the next build starts a new one: nothing stays broken.
 * - A build that was alone in a process when it ended fails, naming the cause (esbuild's own "fatal
 *   error: stack overflow", or the signal that killed it). One that had company may have been a
 *   bystander: it is built again in a process of its own, where only its own files can end it.
 * - A build past its deadline is stopped by ending its process (esbuild does not stop a parse when a
 *   build is cancelled: a file that costs it minutes would keep both cores busy for every tenant); the
 *   builds it shared the process with are built again, each in a process of its own.
 * - A folder whose build ended its process is built in a process of its own the next time too, until
 *   it builds cleanly, so a tenant who saves the same file again costs no one else a build.
 *
 * Builds in processes of their own run a few at a time; each wait is bounded by the builds' deadlines.
 */
import type { BuildResult } from 'esbuild'
import { Semaphore } from '../semaphore.js'
import { type EsbuildApi, type EsbuildEnd, EsbuildProcess } from './esbuild-process.js'

/**
 * Builds in processes of their own at once, across the sidecar (each may take ~1 GB as it dies): the
 * builds made again after a process ended under them, and apart from them, one at a time, those of
 * folders known to end a process, so that a tenant saving such a file again delays no one's retry.
 */
const RETRIES_AT_ONCE = 2
const SUSPECTS_AT_ONCE = 1
/** How long a build's failure waits to learn whether its process ended (the exit follows the pipe's close). */
const END_GRACE_MS = 2000
/** Folders remembered as having ended a process. */
const SUSPECTS_MAX = 1024

export type Supervised<T extends BuildResult> =
  | { kind: 'built'; result: T }
  /** esbuild refused the build (the hook's errors): `error` is what it threw. */
  | { kind: 'failed'; error: unknown }
  | { kind: 'late' }
  /** esbuild's process ended under the build; `message` says why, for the author. */
  | { kind: 'died'; message: string }

/** One bundling: what the folder is known by, and one attempt at it with a given esbuild. */
export interface BuildJob<T extends BuildResult> {
  key: string
  timeoutMs: number
  /** Makes the build from scratch (each attempt counts what it reads anew) and returns its result. */
  run(esbuild: EsbuildApi): Promise<T>
}

type Attempt<T extends BuildResult> = Exclude<Supervised<T>, { kind: 'died' }> | { kind: 'ended'; end: EsbuildEnd; alone: boolean } | { kind: 'never-ran' }

let shared: EsbuildProcess | undefined
const retrySlots = new Semaphore(RETRIES_AT_ONCE)
const suspectSlots = new Semaphore(SUSPECTS_AT_ONCE)
const suspects = new Set<string>()

/** The shared esbuild process's id, while one runs (tests kill it). */
export function sharedEsbuildPid(): number | undefined {
  return shared?.pid
}

export async function superviseBuild<T extends BuildResult>(job: BuildJob<T>): Promise<Supervised<T>> {
  const suspected = suspects.has(job.key)
  if (!suspected) {
    let first = await attempt(current(), job)
    // The process had died before this build reached it: nothing of it ran; once more, in a fresh one.
    if (first.kind === 'never-ran') first = await attempt(current(), job)
    if (first.kind !== 'ended' && first.kind !== 'never-ran') return first
    if (first.kind === 'ended' && first.alone) {
      suspect(job.key)
      return { kind: 'died', message: diedMessage(first.end) }
    }
  }
  return (suspected ? suspectSlots : retrySlots).run(async () => {
    const own = EsbuildProcess.start()
    try {
      const result = await attempt(own, job)
      if (result.kind === 'ended' || result.kind === 'never-ran') {
        suspect(job.key)
        return { kind: 'died', message: diedMessage(result.kind === 'ended' ? result.end : { kind: 'exited', code: null }) }
      }
      suspects.delete(job.key)
      return result
    } finally {
      own.stop('its build is over')
    }
  })
}

function current(): EsbuildProcess {
  if (shared === undefined || shared.dead) shared = EsbuildProcess.start()
  return shared
}

function suspect(key: string): void {
  suspects.delete(key)
  suspects.add(key)
  if (suspects.size > SUSPECTS_MAX) suspects.delete(suspects.values().next().value as string)
}

async function attempt<T extends BuildResult>(service: EsbuildProcess, job: BuildJob<T>): Promise<Attempt<T>> {
  service.builds += 1
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<{ kind: 'late' }>((resolve) => {
    timer = setTimeout(() => resolve({ kind: 'late' }), job.timeoutMs)
  })
  let unsubscribe = (): void => {}
  const ended = new Promise<{ kind: 'ended'; end: EsbuildEnd }>((resolve) => {
    unsubscribe = service.onEnd((end) => resolve({ kind: 'ended', end }))
  })
  try {
    const outcome = await Promise.race([
      job.run(service.api).then(
        (result) => ({ kind: 'built' as const, result }),
        (error: unknown) => ({ kind: 'threw' as const, error }),
      ),
      late,
      ended,
    ])
    if (outcome.kind === 'late') {
      // Ending the process is the only way to stop a parse; the builds beside it are built again.
      service.stop('a build in it ran past its deadline')
      return outcome
    }
    if (outcome.kind === 'built') return outcome
    let end: EsbuildEnd
    if (outcome.kind === 'ended') end = outcome.end
    else {
      // esbuild's own refusal names its errors; anything else may be the process ending under it.
      if (hasErrors(outcome.error)) return { kind: 'failed', error: outcome.error }
      const ending = await Promise.race([ended, delay(END_GRACE_MS)])
      if (ending === undefined) return { kind: 'failed', error: outcome.error }
      if (/no longer running/.test(messageOf(outcome.error))) return { kind: 'never-ran' }
      end = ending.end
    }
    return { kind: 'ended', end, alone: end.kind !== 'stopped' && service.buildsAtEnd <= 1 }
  } finally {
    clearTimeout(timer)
    unsubscribe()
    service.builds -= 1
  }
}

function hasErrors(error: unknown): boolean {
  const errors = (error as { errors?: unknown } | null)?.errors
  return Array.isArray(errors) && errors.length > 0
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

function delay(ms: number): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), ms).unref())
}

/** What the author reads when esbuild's process ended under their hook's build, alone. */
function diedMessage(end: EsbuildEnd): string {
  const again = 'hookd starts a fresh esbuild for the next load: save the hook again'
  switch (end.kind) {
    case 'crashed':
      return `esbuild crashed (${end.detail}) bundling this hook alone: one of its files is more than esbuild's parser can take (a chain of hundreds of thousands of operators, calls or statements, say); split it up, or keep data in a .json file read with ctx.file`
    case 'killed':
      return `esbuild's process was killed (${end.signal}) while it bundled this hook; ${again}`
    case 'exited':
      return `esbuild's process ended${end.code === null ? '' : ` (exit code ${end.code})`} while it bundled this hook; ${again}`
    case 'stopped':
      return `esbuild's process was stopped while it bundled this hook (${end.why}); ${again}`
  }
}
