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
 * or the new one is refused when every run is busy) and at most `maxInFlight` calls per run.
 */
import { HookdError } from '../protocol/status.js'
import type { AgentRun, ChainAnswer, OpenRun, RunEndReason, RunKey, RunStart } from './agent-run.js'
import { checkWorkdir } from './workdir.js'

export interface AgentRunsOptions {
  /** Ends a run after this long without an event. Default 30 minutes. */
  idleMs?: number
  /** Default 256. */
  maxRuns?: number
  /** Calls of one run at once. Default 64. */
  maxInFlight?: number
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

export class AgentRuns {
  private readonly entries = new Map<string, Entry>()
  private readonly endings = new Set<Promise<unknown>>()
  private readonly idleMs: number
  private readonly maxRuns: number
  private readonly maxInFlight: number
  private readonly report: (line: string) => void
  private readonly checkWorkdir: boolean
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
    this.reaper = setInterval(() => this.reap(), Math.max(10, Math.min(this.idleMs / 2, 60_000)))
    this.reaper.unref()
  }

  get size(): number {
    return this.entries.size
  }

  isOpen(key: RunKey): boolean {
    return this.entries.has(keyOf(key))
  }

  /** Runs `fn` with the run of `start.key`, opening it first (and running its beforeRun) when none is open. */
  async with<T>(start: RunStart, fn: (run: AgentRun) => Promise<T>): Promise<T> {
    if (this.closed) throw new HookdError('unavailable', 'hookd is shutting down; no new calls are taken')
    const k = keyOf(start.key)
    let entry = this.entries.get(k)
    if (!entry) entry = this.create(k, start)
    if (entry.inFlight >= this.maxInFlight) {
      throw new HookdError('resource-exhausted', `session ${start.key.sessionId} already has ${this.maxInFlight} calls in flight; retry when one has finished`)
    }
    entry.inFlight += 1
    entry.lastUsed = Date.now()
    try {
      return await fn(await entry.ready)
    } finally {
      entry.inFlight -= 1
      entry.lastUsed = Date.now()
      if (entry.inFlight === 0) for (const done of entry.drained.splice(0)) done()
    }
  }

  /**
   * Ends the run of `key` with afterRun(reason), once its calls in flight are done. Undefined when no
   * run is open (e.g. SessionEnd after Stop already ended it).
   */
  end(key: RunKey, reason: RunEndReason): Promise<ChainAnswer | undefined> {
    const k = keyOf(key)
    const entry = this.entries.get(k)
    if (!entry) return Promise.resolve(undefined)
    this.entries.delete(k)
    const ending = (async () => {
      const run = await entry.ready.catch(() => undefined)
      if (!run) return undefined
      if (entry.inFlight > 0) await new Promise<void>((resolve) => entry.drained.push(resolve))
      return run.close(reason)
    })()
    this.endings.add(ending)
    void ending.catch(() => {}).finally(() => this.endings.delete(ending))
    return ending
  }

  /** Ends every run with afterRun(reason), waiting at most `waitMs` for them; then aborts what is left. */
  async closeAll(reason: RunEndReason, waitMs = 5000): Promise<void> {
    this.closed = true
    clearInterval(this.reaper)
    const entries = [...this.entries.values()]
    for (const entry of entries) void this.end(entry.start.key, reason).catch(() => {})
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
        await run.call('beforeRun', { sessionId: start.key.sessionId, agentId: start.agentId, modelId: start.modelId })
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
      throw new HookdError('resource-exhausted', `hookd already holds ${this.maxRuns} sessions, all busy; session ${start.key.sessionId} cannot start now, retry shortly`)
    }
    this.report(`session ${oldest.start.key.sessionId} ended (afterRun: interrupted) to make room: ${this.maxRuns} sessions are open`)
    void this.end(oldest.start.key, 'interrupted').catch(() => {})
  }

  private reap(): void {
    const now = Date.now()
    for (const entry of [...this.entries.values()]) {
      if (entry.inFlight > 0 || now - entry.lastUsed < this.idleMs) continue
      this.report(`session ${entry.start.key.sessionId} ended (afterRun: interrupted): no event for ${Math.round(this.idleMs / 1000)} s`)
      void this.end(entry.start.key, 'interrupted').catch(() => {})
    }
  }
}

function keyOf(key: RunKey): string {
  return JSON.stringify([key.sessionId, key.workdir, key.channel ?? '', key.peer ? (key.peer.uid ?? 'unknown') : ''])
}
