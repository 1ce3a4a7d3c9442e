/**
 * The Session streams a sidecar has open, and its drain (docs/operations.md, "Upgrading without
 * dropping sessions"). While it drains the listener stays open, so health checks keep reaching it and
 * read NOT_SERVING; what arrives new is refused with UNAVAILABLE and a message that says why, and each
 * open session ends with that status as soon as it has no point call running.
 */
import { HookdError } from '../../protocol/status.js'

/** One Session stream, as the drain sees it. */
export interface OpenStream {
  /** The sidecar drains: end now if idle, else once the running calls finished; run no new call. */
  drain(err: HookdError): void
  /** The grace period is over: stop what still runs and end the stream with `err`. */
  abort(err: HookdError): void
}

/** What a draining sidecar answers to new sessions and calls. */
export const DRAINING = 'hookd is shutting down (draining after SIGINT/SIGTERM) and takes no new sessions or calls; connect to a sidecar that is serving'

/** What a session still open when the grace period ends gets. */
export const CUT = 'hookd shut down: its grace period (--grace-ms) ended before this session did, and its running calls were abandoned; reopen the session on a sidecar that is serving'

export class OpenStreams {
  private readonly streams = new Set<OpenStream>()
  private drainError: HookdError | undefined
  private emptied: (() => void) | undefined

  /** The error new sessions and calls get while the sidecar drains; undefined while it serves. */
  get draining(): HookdError | undefined {
    return this.drainError
  }

  add(stream: OpenStream): void {
    this.streams.add(stream)
    if (this.drainError) stream.drain(this.drainError)
  }

  delete(stream: OpenStream): void {
    this.streams.delete(stream)
    if (this.streams.size === 0) this.emptied?.()
  }

  get size(): number {
    return this.streams.size
  }

  /** Starts the drain; resolves once every stream has ended. */
  drain(): Promise<void> {
    this.drainError ??= new HookdError('unavailable', DRAINING)
    const ended = new Promise<void>((resolve) => {
      this.emptied = resolve
    })
    for (const stream of [...this.streams]) stream.drain(this.drainError)
    if (this.streams.size === 0) this.emptied?.()
    return ended
  }

  /** Ends every stream that is still open, with UNAVAILABLE (CUT). */
  abortAll(): void {
    const err = new HookdError('unavailable', CUT)
    for (const stream of [...this.streams]) stream.abort(err)
    this.streams.clear()
    this.emptied?.()
  }
}
