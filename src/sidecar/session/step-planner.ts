/**
 * A session's step planner: what the chain (chain/chain.ts) runs for one point call. First the
 * operator's floor hooks (src/sidecar/floor.ts), read at each call, in the order of their folder names;
 * then one ChainStep per declared hook that serves the point (directly, or through the step point it
 * aliases), in declared order, a declared name that is a floor hook's being the floor's (it already
 * ran). At a tool call, a hook whose hook.json "tools" does not list the call's tool is skipped. Each
 * runs by its hook's runner with the ctx data it sees (a sandboxed floor hook on the tenant's own
 * workers); a removed hook, or one that never loaded and must not be skipped, becomes a step that
 * reports its failure. It also says what a hook's failure does at a gate (`onErrorFor`: the
 * operator's floor, the session's choice, the hook's own; a floor hook's refuses unless it says skip).
 */
import { arch, platform } from 'node:os'
import { type AnyPoint, type PointName, handlerFor, isGate } from '../../protocol/points/points.js'
import { callNameAt, isToolName } from '../../protocol/tool-names.js'
import { HOOKD_VERSION } from '../../protocol/version.js'
import type { OnError, OpenSessionWire } from '../../protocol/wire.js'
import type { HookPermissions } from '../../protocol/hook-permissions.js'
import { envRefusals, grantedEnv } from './permission-rules.js'
import type { ChainHook, ChainStep, Layer } from '../chain/chain.js'
import type { LoadedHook, Registry } from '../hooks/registry.js'
import { type ChainRun, type CtxData, type HookRunner, type InvocationHost, type InvocationReport, failedReport } from '../runners/hook-runner.js'
import type { Tenant } from '../tenant.js'

/** What the planner reads of its session. */
export interface PlannerSession {
  readonly tenant: Tenant
  readonly open: OpenSessionWire
  /** The declared hooks, in order. */
  readonly hooks: readonly string[]
  /** The env values the session's hooks see (the policy's and the tenant's allowlists applied). */
  readonly env: Record<string, string>
  /**
   * What a hook's invocation during point call `seq` reaches: its capability calls (judged by
   * `granted`, its declared permissions, when it declares any; a `shadow` hook's calls that would change
   * anything outside it are refused: shadow-policy.ts) and log lines.
   */
  host(seq: number, hook: string, point: string, granted: HookPermissions | undefined, shadow: boolean): InvocationHost
}

/** One step's run by itself (a retry, `retries` 0, is the rerun of a chain step lost with its worker). */
type StepRun = (handler: string, args: readonly unknown[], resultArg: number | undefined, retries?: number) => Promise<InvocationReport>

export class StepPlanner {
  constructor(private readonly session: PlannerSession) {}

  /**
   * One ChainStep per declared hook that serves the point, each run by its hook's runner. When two or
   * more run and every one has the same runner, and that runner can run a chain in one trip (the worker
   * pool: one worker message for the whole chain), they go as one chain: the runner reports each step as
   * it ends, and the chain (runChain) awaits those reports instead of one round trip per hook, so it
   * still judges every answer with the catalog's rules. A step the runner did not run (its worker died
   * mid-chain, or a cancel raced it) is invoked on its own, as always.
   */
  steps(seq: number, point: AnyPoint, initial: unknown, signal: AbortSignal, canAsk = false): ChainStep[] {
    const { tenant } = this.session
    const pointName = point.name
    const steps: ChainStep[] = []
    const served: Array<{ hook: LoadedHook; layer: Layer; runner: HookRunner; ctx: CtxData; host: InvocationHost }> = []
    /** Each step's run, by itself (the chain's fallback), in step order; undefined for removed hooks. */
    const runs: Array<StepRun | undefined> = []
    let removed = false
    /** The tool call the point is about, if it is about one (hook.json "tools" narrows the hooks it reaches). */
    const about = callNameAt(pointName, initial)
    const floor = tenant.floor
    const floorNames = floor ? floor.hooks().map((h) => h.name) : []
    const own = this.layer
    const layered: Array<{ name: string; layer: Layer; registry: Registry }> = [
      ...floorNames.map((name) => ({ name, layer: 'floor' as const, registry: (floor as NonNullable<typeof floor>).registry })),
      // A declared name that is a floor hook's is the floor's: it ran first already.
      ...this.session.hooks.filter((name) => !floorNames.includes(name)).map((name) => ({ name, layer: own, registry: tenant.registry })),
    ]
    for (const { name, layer, registry } of layered) {
      // The version current when the call started is the one that runs.
      const hook = registry.get(name)
      if (!hook) {
        // Removed while this session used it: a `hook-removed` diagnostic on each point it handled.
        // (A floor hook removed is no longer the floor's: the operator took it away.)
        const gone = layer === 'floor' ? undefined : registry.removed(name)
        if (gone && handlerFor(point, gone.points)) {
          steps.push({ hook: { ...gone, layer }, invoke: () => Promise.resolve(removedReport(registry.root, name)) })
          runs.push(undefined)
          removed = true
        }
        // Declared, but it never loaded: which points it would serve is unknown. A hook that must not be
        // skipped (onError "refuse", and a floor hook unless it says "skip") refuses every gate call meanwhile.
        const broken = registry.list().find((h) => h.name === name)
        const stub: ChainHook = { name, version: '', filename: `${name}/index.js`, points: new Set([point.name as PointName]), onError: registry.onErrorOf(name), layer }
        if (!gone && broken && isGate(point) && this.onErrorFor(stub) === 'refuse') {
          const message = `it did not load (${broken.lastError?.message ?? 'no version of it ever loaded'})`
          steps.push({ hook: { ...stub, onError: 'refuse' }, invoke: () => Promise.resolve(failedReport('load', message)) })
          runs.push(undefined)
          removed = true
        }
        continue
      }
      if (!handlerFor(point, hook.points)) continue
      // A hook whose hook.json lists its tools is not called for another canonical tool's call. A call
      // under any other name (a native tool whose call has no canonical reading: a Codex patch of two
      // files, a host's own tool names over gRPC, a name that is not a string) reaches every hook: what
      // it does is not known to be outside what the hook guards.
      if (hook.tools && about !== undefined && isToolName(about) && !hook.tools.has(about)) continue
      const ctx = this.ctxFor(hook, pointName)
      const host = this.session.host(seq, name, pointName, hook.permissions, hook.mode === 'shadow')
      // A sandboxed floor hook runs on the tenant's own workers (its lane), never on a pool tenants share.
      const runner = layer === 'floor' && hook.remote === undefined ? tenant.runner : hook.runner
      served.push({ hook, layer, runner, ctx, host })
      const code = { name, version: hook.version, filename: hook.filename, source: hook.source }
      const limits = tenant.limits
      const run: StepRun = (handler, args, resultArg, retries) =>
        runner.invoke({
          ...host,
          hook: code,
          ctx,
          limits,
          signal,
          point: handler,
          args,
          ...(resultArg !== undefined ? { resultArg } : {}),
          ...(retries !== undefined ? { retries, alone: true } : {}),
        })
      runs.push(run)
      steps.push({ hook: { ...hook, layer }, invoke: (handler, args, resultArg) => run(handler, args, resultArg) })
    }
    const runner: HookRunner | undefined = served[0]?.runner
    if (removed || served.length < 2 || !runner?.invokeChain || served.some((s) => s.runner !== runner)) return steps

    // Started by the first step the chain invokes: the runner's chain skips the same steps before it.
    let run: ChainRun | undefined
    const start = (): ChainRun =>
      (run ??= (runner.invokeChain as NonNullable<HookRunner['invokeChain']>).call(runner, {
        point: pointName,
        initial,
        steps: served.map(({ hook, layer, ctx, host }) => ({
          ...host,
          hook: { name: hook.name, version: hook.version, filename: hook.filename, source: hook.source },
          points: [...hook.points],
          ctx,
          onError: this.onErrorFor({ ...hook, layer }),
          ...(hook.mode === 'shadow' ? { mode: hook.mode } : {}),
          layer,
          ...(hook.permissions ? { permissions: hook.permissions } : {}),
        })),
        limits: tenant.limits,
        signal,
        ...(canAsk ? { canAsk: true } : {}),
      }))
    // A step the chain's runner did not run goes on its own; the step that was running when the runner
    // lost the chain (a worker died) runs once more, and that is its retry.
    return steps.map((step, i) => ({
      hook: step.hook,
      invoke: async (handler, args, resultArg) => {
        const chain = start()
        const report = await chain.report(i)
        if (report) return report
        const run = runs[i] as StepRun
        return run(handler, args, resultArg, chain.lost(i) ? 0 : undefined)
      },
    }))
  }

  /** The layer of the session's declared hooks (chain/layer.ts): its tenant's, a project's, or its own. */
  get layer(): Layer {
    const { tenant } = this.session
    return tenant.layer ?? (tenant.id === undefined ? 'session' : 'tenant')
  }

  /**
   * What a failure of `hook` does at a gate. A shadow hook's never refuses (chain.ts skips it). A floor
   * hook's refuses (fail closed) unless its own hook.json says "skip", and then only the operator or
   * the session can make it refuse again: nothing below the floor loosens it. Any other hook's is
   * `onErrorOf` its hook.json "onError".
   */
  onErrorFor(hook: Pick<ChainHook, 'name' | 'onError' | 'layer' | 'mode'>): OnError {
    if (hook.mode === 'shadow') return 'skip'
    const { tenant } = this.session
    if (hook.layer === 'floor') {
      const own = hook.onError ?? tenant.floor?.registry.onErrorOf(hook.name) ?? 'default'
      if (own !== 'skip') return 'refuse'
      const session = this.session.open.onError
      return tenant.onError === 'refuse' || session === 'refuse' ? 'refuse' : 'skip'
    }
    return this.onErrorOf(hook.onError ?? tenant.registry.onErrorOf(hook.name))
  }

  /**
   * What a failure of a hook with `hook` (its hook.json "onError") does at a gate: `refuse` from the
   * operator, the session or the hook wins; a session that guards an agent (`refuse-unless-skip`)
   * refuses unless the hook itself says `skip`; else `skip` from either; else the seed's rule.
   */
  onErrorOf(hook: OnError): OnError {
    const session = this.session.open.onError
    if (this.session.tenant.onError === 'refuse' || session === 'refuse' || hook === 'refuse') return 'refuse'
    if (session === 'refuse-unless-skip') return hook === 'skip' ? 'skip' : 'refuse'
    if (session === 'skip' || hook === 'skip') return 'skip'
    return 'default'
  }

  /**
   * The ctx data `hook` sees at `point`: the run's, the system's, its own config and name. A hook that
   * declares its permissions sees only the env names it declared; reading another name the session
   * would show throws (CtxData.envRefusals).
   */
  ctxFor(hook: LoadedHook, point: string): CtxData {
    const { open } = this.session
    const granted = hook.permissions
    const env = grantedEnv(granted, this.session.env)
    const refusals = envRefusals(granted, hook.name, [...(open.policy?.env ?? []), ...Object.keys(this.session.env)])
    return {
      workdir: open.workdir,
      session: { id: open.sessionId, interactive: open.interactive, autoApprove: open.autoApprove },
      agent: { id: open.agentId, modelId: open.modelId },
      config: hook.config,
      system: { platform: platform(), arch: arch(), hookdVersion: HOOKD_VERSION },
      env,
      hook: { name: hook.name, version: hook.version, point },
      ...(refusals !== undefined ? { envRefusals: refusals } : {}),
    }
  }
}

function removedReport(root: string, name: string): InvocationReport {
  return failedReport(
    'hook-removed',
    `the hook's folder ${root}/${name} was removed while this session used it; skipped. Restore the folder, or drop '${name}' from the agent's hooks`,
  )
}
