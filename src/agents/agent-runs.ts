/**
 * The runs an adapter has open, one per agent session (and folder): opened at the session's first
 * event (once its folder is checked: workdir.ts), with beforeRun run once before anything else reaches it; ended by the agent's own end
 * events (afterRun with their reason), or after `idleMs` without an event (afterRun `interrupted`).
 *
 * Order: every call of a run waits until its beforeRun has finished, and ending a run waits for the
 * calls in flight, so beforeRun comes first and afterRun last whatever order the agent's requests
 * arrive in. Tool calls of one run may overlap (an agent runs independent tools in parallel); each has
 * its own point call.
 *
 * Bounded: at most `maxRuns` runs (past that the least recently used idle run is ended to make room,
 * or the new one is refused when every run is busy), at most `maxInFlight` calls per run, and at most
 * `maxCalls` calls of all runs at once, with `maxQueued` more waiting their turn (call-slots.ts): at the
 * front door, one AgentRuns serves one tenant, so that is the tenant's concurrency quota.
 *
 * A call whose agent went away (the signal given to `with` aborts) leaves the queue, or is cancelled
 * if it runs: its point call stops, and a gate that could not decide comes back refused.
 */
import { HookdError } from '../protocol/status.js'
import { inert } from '../protocol/text.js'
import type { AgentRun, ChainAnswer, OpenRun, RunEndReason, RunEndedBy, RunKey, RunStart } from './agent-run.js'
import { CallSlots } from './call-slots.js'
import { checkWorkdir } from './workdir.js'

export interface AgentRunsOptions {
  /** Ends a run after this long without an event. Default 30 minutes. */
  idleMs?: number
  /** Default 256. */
  maxRuns?: number
  /** Calls of one run at once. Default 64. */
  maxInFlight?: number
  /** Calls of all runs at once. Default 64. */
  maxCalls?: number
  /** Calls waiting for one of those to finish; past it a call is refused at once. Default 64. */
  maxQueued?: number
  /** How long a call may wait for its turn before it is refused. Default 10 s. */
  queueMs?: number
  /** Whose runs these are, in refusals: `tenant 'acme'`. Default: "this sidecar's agents". */
  who?: string
  /** News for the operator (a run reaped, one ended to make room). */
  report?(line: string): void
  /**
   * Check a run's folder on this machine's file system when it opens (workdir.ts). Default true; false
   * where the agent runs on another machine, whose folders hookd cannot see.
   */
  checkWorkdir?: boolean
}

interface Entry {
  start: RunStart
  ready: Promise<AgentRun>
  inFlight: number
  lastUsed: number
  drained: Array<() => void>
}

export const DEFAULT_IDLE_MS = 30 * 60_000

/** The concurrency quota's defaults: 64 calls at once, 64 more waiting at most 10 s (docs/agents.md#endpoints). */
export const DEFAULT_CALLS = { maxCalls: 64, maxQueued: 64, queueMs: 10_000 } as const

export class AgentRuns {
  private readonly entries = new Map<string, Entry>()
  private readonly endings = new Set<Promise<unknown>>()
  private readonly idleMs: number
  private readonly maxRuns: number
  private readonly maxInFlight: number
  private readonly report: (line: string) => void
  private readonly checkWorkdir: boolean
  private readonly slots: CallSlots
  private readonly reaper: NodeJS.Timeout
  private closed = false

  constructor(
    private readonly open: OpenRun,
    options: AgentRunsOptions = {},
  ) {
    this.idleMs = options.idleMs ?? DEFAULT_IDLE_MS
    this.maxRuns = options.maxRuns ?? 256
    this.maxInFlight = options.maxInFlight ?? 64
    this.report = options.report ?? (() => {})
    this.checkWorkdir = options.checkWorkdir ?? true
    this.slots = new CallSlots({
      size: options.maxCalls ?? DEFAULT_CALLS.maxCalls,
      queued: options.maxQueued ?? DEFAULT_CALLS.maxQueued,
      waitMs: options.queueMs ?? DEFAULT_CALLS.queueMs,
      who: options.who ?? "this sidecar's agents",
    })
    this.reaper = setInterval(() => this.reap(), Math.max(10, Math.min(this.idleMs / 2, 60_000)))
    this.reaper.unref()
  }

  get size(): number {
    return this.entries.size
  }

  isOpen(key: RunKey): boolean {
    return this.entries.has(keyOf(key))
  }

  /** Calls running now under the concurrency quota, and calls waiting their turn. */
  get calls(): { running: number; waiting: number } {
    return this.slots.counts
  }

  /**
   * Runs `fn` with the run of `start.key`, opening it first (and running its beforeRun) when none is
   * open, once the concurrency quota lets it. When `signal` aborts (the agent went away), a call still
   * waiting for its turn is refused, and the point calls `fn` makes through the run are cancelled.
   */
  async with<T>(start: RunStart, fn: (run: AgentRun) => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.closed) throw new HookdError('unavailable', 'hookd is shutting down; no new calls are taken')
    const k = keyOf(start.key)
    let entry = this.entries.get(k)
    if (!entry) entry = this.create(k, start)
    if (entry.inFlight >= this.maxInFlight) {
      throw new HookdError('resource-exhausted', `session ${label(start.key.sessionId)} already has ${this.maxInFlight} calls in flight; retry when one has finished`)
    }
    // In flight from now, so that an end of the run that arrives while this call waits for its turn
    // waits for it too.
    entry.inFlight += 1
    entry.lastUsed = Date.now()
    try {
      const run = await entry.ready
      // The turn is taken once the run is ready (its beforeRun took one of its own): a call never
      // holds a turn while it waits for another.
      await this.slots.take(signal)
      try {
        return await fn(cancelledBy(run, signal))
      } finally {
        this.slots.give()
      }
    } finally {
      entry.inFlight -= 1
      entry.lastUsed = Date.now()
      if (entry.inFlight === 0) for (const done of entry.drained.splice(0)) done()
    }
  }

  /**
   * Ends the run of `key` with afterRun(reason), once its calls in flight are done. Undefined when no
   * run is open (e.g. SessionEnd after Stop already ended it). `by` says whether the agent's own end
   * event ended it (the default) or hookd did (idle, shutdown, room for another run).
   */
  end(key: RunKey, reason: RunEndReason, by: RunEndedBy = 'agent'): Promise<ChainAnswer | undefined> {
    const k = keyOf(key)
    const entry = this.entries.get(k)
    if (!entry) return Promise.resolve(undefined)
    this.entries.delete(k)
    const ending = (async () => {
      const run = await entry.ready.catch(() => undefined)
      if (!run) return undefined
      if (entry.inFlight > 0) await new Promise<void>((resolve) => entry.drained.push(resolve))
      return run.close(reason, by)
    })()
    this.endings.add(ending)
    void ending.catch(() => {}).finally(() => this.endings.delete(ending))
    return ending
  }

  /** Ends every run with afterRun(reason), waiting at most `waitMs` for them; then aborts what is left. */
  async closeAll(reason: RunEndReason, waitMs = 5000): Promise<void> {
    this.closed = true
    clearInterval(this.reaper)
    this.slots.close(new HookdError('unavailable', 'hookd is shutting down; no new calls are taken'))
    const entries = [...this.entries.values()]
    for (const entry of entries) void this.end(entry.start.key, reason, 'hookd').catch(() => {})
    const all = Promise.allSettled([...this.endings])
    let timer: NodeJS.Timeout | undefined
    await Promise.race([all, new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)))])
    clearTimeout(timer)
    for (const entry of entries) void entry.ready.then((run) => run.abort(), () => {})
  }

  private create(k: string, start: RunStart): Entry {
    if (this.entries.size >= this.maxRuns) this.makeRoom(start)
    const entry: Entry = { start, ready: this.begin(start), inFlight: 0, lastUsed: Date.now(), drained: [] }
    this.entries.set(k, entry)
    // A run that failed to open is forgotten, so the session's next event tries again.
    entry.ready.catch(() => {
      if (this.entries.get(k) === entry) this.entries.delete(k)
    })
    return entry
  }

  private async begin(start: RunStart): Promise<AgentRun> {
    const checked = this.checkWorkdir ? await checkWorkdir(start.key.workdir, 'cwd', start.key.peer ? { peer: start.key.peer } : {}) : undefined
    const run = await this.open(checked ? { ...start, checked } : start)
    if (run.serves('beforeRun')) {
      try {
        await this.slots.take()
        try {
          await run.call('beforeRun', { sessionId: start.key.sessionId, agentId: start.agentId, modelId: start.modelId })
        } finally {
          this.slots.give()
        }
      } catch (err) {
        run.abort()
        throw err
      }
    }
    return run
  }

  private makeRoom(start: RunStart): void {
    let oldest: Entry | undefined
    for (const entry of this.entries.values()) {
      if (entry.inFlight === 0 && (!oldest || entry.lastUsed < oldest.lastUsed)) oldest = entry
    }
    if (!oldest) {
      throw new HookdError('resource-exhausted', `hookd already holds ${this.maxRuns} sessions, all busy; session ${label(start.key.sessionId)} cannot start now, retry shortly`)
    }
    this.report(`session ${label(oldest.start.key.sessionId)} ended (afterRun: interrupted) to make room: ${this.maxRuns} sessions are open`)
    void this.end(oldest.start.key, 'interrupted', 'hookd').catch(() => {})
  }

  private reap(): void {
    const now = Date.now()
    for (const entry of [...this.entries.values()]) {
      if (entry.inFlight > 0 || now - entry.lastUsed < this.idleMs) continue
      this.report(`session ${label(entry.start.key.sessionId)} ended (afterRun: interrupted): no event for ${Math.round(this.idleMs / 1000)} s`)
      void this.end(entry.start.key, 'interrupted', 'hookd').catch(() => {})
    }
  }
}

/** The run with its point calls cancelled when `signal` aborts. */
function cancelledBy(run: AgentRun, signal: AbortSignal | undefined): AgentRun {
  if (!signal) return run
  const wrapped: AgentRun = {
    serves: (point) => run.serves(point),
    call: (point, payload) => run.call(point, payload, signal),
    close: (reason, by) => run.close(reason, by),
    abort: () => run.abort(),
  }
  if (run.awaitOutcome) wrapped.awaitOutcome = (key, decisionId) => run.awaitOutcome?.(key, decisionId)
  if (run.outcome) wrapped.outcome = (key, outcome, via, by) => run.outcome?.(key, outcome, via, by)
  if (run.awaitsOutcomes) wrapped.awaitsOutcomes = () => run.awaitsOutcomes?.() ?? false
  return wrapped
}

/** An agent's session id as lines and messages show it: event text, so inert and short. */
export function label(sessionId: string): string {
  return inert(sessionId, 128)
}

function keyOf(key: RunKey): string {
  return JSON.stringify([key.sessionId, key.workdir, key.channel ?? '', key.peer ? (key.peer.uid ?? 'unknown') : ''])
}
