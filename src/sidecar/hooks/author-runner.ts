/**
 * The runner a registry gives its sandboxed hooks: the worker pool's, with what a hook's author needs
 * added to each failure. A bundled hook's line is mapped through its source map to the author's own
 * file and line (`index.ts:12`, `lib/rules.ts:3`, not line 4,031 of a script they never wrote), and the
 * usual first mistakes (`require`, `process`, ... author-hints.ts) get one line saying what to write
 * instead. One instance serves all of a registry's sandboxed hooks, so a session still runs a chain of
 * them in one trip (session/step-planner.ts plans one only when every hook has the same runner).
 */
import type { ChainRequest, ChainRun, HookRunner, InvocationReport, InvocationRequest, RunnableHook } from '../runners/hook-runner.js'
import { hintFor } from './author-hints.js'
import { type SourceMap, mapPosition } from './source-map.js'

/** The source map of a hook version, when it was bundled. */
export type SourceMapOf = (name: string, version: string) => SourceMap | undefined

export class AuthorRunner implements HookRunner {
  readonly invokeChain?: (request: ChainRequest) => ChainRun

  constructor(
    readonly inner: HookRunner,
    private readonly sourceMapOf: SourceMapOf,
  ) {
    if (inner.invokeChain) {
      // Looked up at each call, not bound once: what runs is whatever the inner runner has then.
      this.invokeChain = (request) => {
        const run = (inner.invokeChain as NonNullable<HookRunner['invokeChain']>).call(inner, request)
        return {
          report: async (step) => {
            const report = await run.report(step)
            const hook = request.steps[step]?.hook
            return report && hook ? this.authored(report, hook, request.point) : report
          },
          lost: (step) => run.lost(step),
          done: run.done,
        }
      }
    }
  }

  async invoke(request: InvocationRequest): Promise<InvocationReport> {
    return this.authored(await this.inner.invoke(request), request.hook, request.point)
  }

  private authored(report: InvocationReport, hook: RunnableHook, point: string): InvocationReport {
    const { outcome } = report
    if (outcome.ok) return report
    const out = { ...outcome }
    const map = out.line !== undefined ? this.sourceMapOf(hook.name, hook.version) : undefined
    if (map && out.line !== undefined) {
      const at = mapPosition(map, out.line)
      delete out.line
      if (at) {
        out.line = at.line
        out.file = `${hook.name}/${at.file}`
      }
    }
    const hint = hintFor({ kind: out.kind, message: out.message, point })
    if (hint !== undefined) out.message = `${out.message}; ${hint}`
    return { ...report, outcome: out }
  }
}
