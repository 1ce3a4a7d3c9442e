/**
 * Which points a run's declared hooks serve, kept live: the answer to `serves(point)` for an Agent SDK
 * run (host-run.ts), with the front door's rule (src/sidecar/http/sidecar-run.ts): true when some
 * declared hook serves the point, and at a gate also when a declared hook is not loaded (which points
 * it would serve is unknown, so the chain decides).
 *
 * The view starts from the hooks the sidecar sent when the session opened. The session's stream then
 * pushes a diagnostic whenever one of the declared hooks changes (`reload`: a new version serves;
 * `load`: an edit failed; `hook-removed`), and the view is read again then, with one ListHooks call
 * (no new version carries its points on the stream). Until that answer is in, the view is unknown and
 * every point is served: a gate asks the chain, never the older view. So a point call costs no round
 * trip only when the view is current, every declared hook is loaded, and none serves the point.
 *
 * Bounded: one ListHooks in flight at a time, given REFRESH_MS; a change announced meanwhile reads
 * again once it ends. A read that fails or times out leaves the view unknown, and the next call tries
 * again.
 */
import type { Diagnostic } from '../../protocol/diagnostic.js'
import type { RunPoint } from '../agent-run.js'
import { type AnyPoint, getPoint, handlerFor, isGate } from '../../protocol/points/points.js'
import type { HookInfoData } from '../../protocol/wire.js'

/** How long a ListHooks read may take before the view gives up on it (and stays unknown). */
export const REFRESH_MS = 5000

/** The pushed diagnostics that say a hook's served version (and so its points) may have changed. */
const CHANGES: ReadonlySet<Diagnostic['kind']> = new Set(['reload', 'load', 'hook-removed'])

export class LiveHooks {
  /** The declared hooks the sidecar serves now, by name; a name missing here is not loaded. */
  private loaded: ReadonlyMap<string, ReadonlySet<string>>
  /** Bumped by every announced change; a read counts only if none came while it was in flight. */
  private generation = 0
  /** The generation the view is current for; below `generation` the view is unknown. */
  private current = 0
  private reading = false
  private closed = false

  constructor(
    private readonly declared: readonly string[],
    opened: readonly HookInfoData[],
    private readonly list: () => Promise<readonly HookInfoData[]>,
  ) {
    this.loaded = loadedOf(declared, opened)
  }

  /** Called with every diagnostic the session's stream pushes. */
  pushed(d: Diagnostic): void {
    if (this.closed || !CHANGES.has(d.kind) || !this.declared.includes(d.hook)) return
    this.generation += 1
    this.read()
  }

  serves(point: RunPoint): boolean {
    if (this.current !== this.generation) {
      this.read()
      return true
    }
    const spec = getPoint(point) as AnyPoint
    return this.declared.some((name) => {
      const points = this.loaded.get(name)
      if (!points) return isGate(spec)
      return handlerFor(spec, points) !== undefined
    })
  }

  /** Stops reading (the run ended). */
  close(): void {
    this.closed = true
  }

  private read(): void {
    if (this.reading || this.closed) return
    this.reading = true
    const generation = this.generation
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('ListHooks timed out')), REFRESH_MS)
      timer.unref()
    })
    void Promise.race([this.list(), timeout])
      .then(
        (infos) => {
          this.loaded = loadedOf(this.declared, infos)
          this.current = generation
        },
        () => {},
      )
      .finally(() => {
        clearTimeout(timer)
        this.reading = false
        // A change announced while this read was in flight: read again now, not at the next call.
        if (this.current !== this.generation && this.generation !== generation) this.read()
      })
  }
}

/** The served points of each declared hook that has a version loaded (ready, or stale: its older one). */
function loadedOf(declared: readonly string[], infos: readonly HookInfoData[]): Map<string, ReadonlySet<string>> {
  const loaded = new Map<string, ReadonlySet<string>>()
  for (const info of infos) {
    if (declared.includes(info.name) && info.status !== 'broken') loaded.set(info.name, new Set(info.points))
  }
  return loaded
}
