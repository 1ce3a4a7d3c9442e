/**
 * One esbuild service process that hookd started and watches: esbuild's JS API (a copy of its module of
 * our own) talking to one child process, whose end hookd sees and can explain.
 *
 * esbuild's API keeps one service process per loaded module and never replaces it: once that process
 * has died (a stack overflow on a deeply nested file, a kill from outside), every later call fails with
 * "The service is no longer running", and its `stop()` leaves builds in flight waiting forever. So each
 * EsbuildProcess loads its own copy of the module (`require` with the cache entry removed), and is
 * thrown away when its process ends; esbuild-supervisor.ts starts the next one.
 *
 * esbuild spawns its process when `initialize` is called, synchronously; for exactly that call
 * `child_process.spawn` is wrapped, so hookd holds the child itself: its pid, its exit code or signal,
 * and its stderr, taken through a pipe instead of the sidecar's own (a Go crash prints ~36 KB of
 * goroutine stacks), of which the first bytes are kept to name the cause ("fatal error: stack
 * overflow"). Nothing else can run during that synchronous window.
 */
import type { ChildProcess, SpawnOptions } from 'node:child_process'
import { createRequire } from 'node:module'
import type * as Esbuild from 'esbuild'

const require = createRequire(import.meta.url)
const ESBUILD = require.resolve('esbuild')
/** The CommonJS view of the module, whose `spawn` esbuild looks up when it starts its process. */
const childProcess = require('node:child_process') as typeof import('node:child_process')

/** The most of esbuild's stderr kept, to name why it ended. */
const STDERR_KEPT = 8192

/** The part of esbuild's API hookd uses. */
export type EsbuildApi = Pick<typeof Esbuild, 'context'>

/** Why an esbuild process ended. */
export type EsbuildEnd =
  /** It failed on its own: the runtime's own words ("fatal error: stack overflow"). */
  | { kind: 'crashed'; detail: string }
  /** Something outside hookd sent it a signal. */
  | { kind: 'killed'; signal: string }
  /** It exited with no word of why. */
  | { kind: 'exited'; code: number | null }
  /** hookd stopped it, saying why. */
  | { kind: 'stopped'; why: string }

export class EsbuildProcess {
  /** Builds running in this process now. */
  builds = 0
  /** Builds that were running in it when it ended. */
  buildsAtEnd = 0
  /** Set once its output stream closed or it exited: no new build is started in it. */
  dead = false
  /** Why the process ended, once it has (its stderr read). */
  end: EsbuildEnd | undefined
  private readonly listeners = new Set<(end: EsbuildEnd) => void>()
  private stoppedWhy: string | undefined
  private stderr = ''

  private constructor(
    readonly api: EsbuildApi,
    private readonly child: ChildProcess,
    private readonly stopApi: () => Promise<void>,
  ) {
    child.stderr?.setEncoding('utf8')
    child.stderr?.on('data', (chunk: string) => {
      if (this.stderr.length < STDERR_KEPT) this.stderr += chunk.slice(0, STDERR_KEPT - this.stderr.length)
    })
    // Like esbuild's own streams: an idle esbuild never keeps the sidecar (or `hookd check`) running.
    ;(child.stderr as { unref?: () => void } | null)?.unref?.()
    child.stdout?.once('end', () => this.dying())
    child.once('exit', () => this.dying())
    child.once('close', (code: number | null, signal: NodeJS.Signals | null) => {
      this.ended(this.endOf(code, signal))
      // Releases esbuild's side of the channel; the process is gone.
      void this.stopApi()
    })
    child.once('error', () => this.ended({ kind: 'exited', code: null }))
  }

  /**
   * Calls `listener` once, when the process has ended (at once if it has); returns what unsubscribes
   * it. A listener, not a promise: a build that ends first leaves nothing behind in a process that may
   * run for days.
   */
  onEnd(listener: (end: EsbuildEnd) => void): () => void {
    if (this.end !== undefined) {
      listener(this.end)
      return () => {}
    }
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Starts a new esbuild process with a copy of the API of its own. Throws when esbuild cannot start. */
  static start(): EsbuildProcess {
    delete require.cache[ESBUILD]
    const api = require(ESBUILD) as typeof Esbuild
    // Never shared: the next start loads the module again.
    delete require.cache[ESBUILD]
    const spawn = childProcess.spawn
    let child: ChildProcess | undefined
    childProcess.spawn = ((command: string, args: readonly string[], options: SpawnOptions) => {
      child = spawn(command, args, { ...options, stdio: ['pipe', 'pipe', 'pipe'] })
      return child
    }) as typeof spawn
    try {
      void api.initialize({})
    } finally {
      childProcess.spawn = spawn
    }
    if (child === undefined) throw new Error('esbuild did not start its service process')
    return new EsbuildProcess(api, child, api.stop)
  }

  /** The process id, while it runs. */
  get pid(): number | undefined {
    return this.dead ? undefined : this.child.pid
  }

  /** Ends the process (SIGKILL: a parse in progress never looks at a cancel); builds in it fail. */
  stop(why: string): void {
    if (this.stoppedWhy === undefined) this.stoppedWhy = why
    if (!this.dead) this.child.kill('SIGKILL')
  }

  private dying(): void {
    if (this.dead) return
    this.dead = true
    this.buildsAtEnd = this.builds
  }

  private ended(end: EsbuildEnd): void {
    this.dying()
    if (this.end !== undefined) return
    this.end = end
    for (const listener of this.listeners) listener(end)
    this.listeners.clear()
  }

  private endOf(code: number | null, signal: NodeJS.Signals | null): EsbuildEnd {
    if (this.stoppedWhy !== undefined) return { kind: 'stopped', why: this.stoppedWhy }
    const said = /^(?:fatal error|panic): .*$/m.exec(this.stderr)?.[0]
    if (said !== undefined) return { kind: 'crashed', detail: printable(said) }
    if (signal !== null) return { kind: 'killed', signal }
    return { kind: 'exited', code }
  }
}

/** A line of the child's stderr fit for a message: printable ASCII, at most 160 characters. */
function printable(line: string): string {
  const clean = line.replace(/[^\x20-\x7e]/g, '?')
  return clean.length > 160 ? `${clean.slice(0, 160)}...` : clean
}
