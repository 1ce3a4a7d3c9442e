/**
 * The invocation contract: what runs one hook invocation, whatever the hook is. A sandboxed hook runs in
 * a fresh isolate in a worker process (worker/pool); a remote hook runs in its own server, reached over
 * hookd.v1.Hook (runners/remote). Both are `HookRunner`s; a registry entry carries the runner that serves
 * it, so a session dispatches without knowing which kind it holds.
 *
 * A runner never rejects: whatever happens (a throw, a limit, a crash, an unreachable server) becomes an
 * `InvokeOutcome` with a diagnostic kind, which the chain judges with the point catalog's rules.
 */
import * as z from 'zod'
import type { CapabilityCode } from '../../protocol/capability-errors.js'
import { DIAGNOSTIC_KINDS } from '../../protocol/diagnostic.js'
import type { HookPermissions } from '../../protocol/hook-permissions.js'
import type { OnError } from '../../protocol/wire.js'
import type { HookMode, Layer } from '../chain/layer.js'
import type { Limits } from '../limits.js'

/** The plain data from which the hook's `ctx` is built (see worker/isolate/surface.ts). */
export interface CtxData {
  workdir: string
  session: { id: string; interactive: boolean; autoApprove: boolean }
  agent: { id: string; modelId: string }
  config: unknown
  system: { platform: string; arch: string; hookdVersion: string }
  env: Record<string, string>
  /** The hook's own name and the point it runs for. */
  hook: { name: string; version: string; point: string }
  /**
   * For a hook that declares its permissions: each env name the session would show it but it did not
   * declare, with the message reading `ctx.env.NAME` throws (code 'denied'). Absent: no such names.
   */
  envRefusals?: Record<string, string>
}

/** A hook as a runner runs it: its name and version, and, for a sandboxed hook, its code. */
export interface RunnableHook {
  name: string
  version: string
  /** Shown in stack traces and diagnostics, e.g. "guard/index.js". */
  filename: string
  /** The script a sandbox runs; '' for a remote hook, whose code is its server's. */
  source: string
}

const u32 = z.number().int().nonnegative()

/** How one invocation ended, as every runner reports it. */
export const invokeOutcome = z.discriminatedUnion('ok', [
  /** `value` is the returned value's JSON text, absent when the hook returned undefined. */
  z.object({ ok: z.literal(true), value: z.string().optional() }),
  z.object({
    ok: z.literal(false),
    kind: z.enum(DIAGNOSTIC_KINDS),
    message: z.string(),
    line: u32.optional(),
    /** The file of `line` when it is not the hook's `filename` (a bundled hook's other files). */
    file: z.string().optional(),
  }),
])
export type InvokeOutcome = z.infer<typeof invokeOutcome>
export type InvokeFailure = Extract<InvokeOutcome, { ok: false }>

/** What a hook's capability call gets back: its value, or an error whose code is hookd's or passed on (capability-errors.ts). */
export type CapabilityReply = { ok: true; value: unknown } | { ok: false; code: CapabilityCode; message: string }

/** Where a running hook's capability calls and log lines go (the session: policy, then the host). */
export interface InvocationHost {
  onCapability(capability: string, args: unknown): Promise<CapabilityReply>
  onLog(message: string): void
}

export interface InvocationRequest extends InvocationHost {
  hook: RunnableHook
  /** The export to call: a point name (the point itself, or the step point that serves it). */
  point: string
  args: readonly unknown[]
  /** Answer with this argument as the handler left it (mutating points) instead of the return value. */
  resultArg?: number
  ctx: CtxData
  limits: Limits
  signal?: AbortSignal
  /**
   * Runs left after this one if it is lost to something that was not its doing (its worker died while
   * another invocation's hook crashed it): re-run on a fresh worker, unless it had already made a
   * capability call (a human may have answered; it must not be asked twice). Default 1.
   */
  retries?: number
  /**
   * Run with nothing else on its worker: this is the retry of a run lost with its worker (one of the
   * runs on it crashed it; if this one did, it must not take others down a second time).
   */
  alone?: boolean
}

export interface InvocationReport {
  outcome: InvokeOutcome
  wallUs: number
  cpuUs: number
}

/** Consecutive hooks of one point call that one runner can run in one trip (see WorkerPool). */
export interface ChainRequest {
  /** The catalog point the chain runs. */
  point: string
  /** The chain's initial state: the point's validated payload. */
  initial: unknown
  steps: ReadonlyArray<
    InvocationHost & {
      hook: RunnableHook
      /** The points the hook's exports serve (chain.ts picks the handler from them). */
      points: readonly string[]
      ctx: CtxData
      /** What the hook's failure does at a gate (chain.ts OnError), so the runner's chain agrees. */
      onError: OnError
      /** hook.json "mode" and the hook's layer (chain.ts), so the runner's chain agrees. */
      mode?: HookMode
      layer?: Layer
      /** hook.json "permissions" (the decisions it may make), so the runner's chain agrees. */
      permissions?: HookPermissions | undefined
    }
  >
  /**
   * A person can be asked at this gate (chain.ts ChainOptions.ask): the runner's chain keeps a shell
   * rewrite that is being asked about, as the caller's does until the person says no.
   */
  canAsk?: boolean
  /** Per invocation, for each step. */
  limits: Limits
  signal?: AbortSignal
}

/**
 * A chain on its way. The caller runs the same chain (chain.ts) on its reports: `report(i)` settles with
 * step i's report once it ran, or with undefined when the runner ended the chain without running it (its
 * worker died, or it judged the step should not run); the caller then invokes that step on its own.
 */
export interface ChainRun {
  report(step: number): Promise<InvocationReport | undefined>
  /**
   * True for the step that was running when the runner lost the chain (its worker died) and that made
   * no capability call: its report is undefined, and the run the caller gives it on its own is its
   * retry (`retries: 0, alone: true`).
   */
  lost(step: number): boolean
  /** Settles when the runner is done with the chain (or it ended without one). */
  readonly done: Promise<void>
}

export interface HookRunner {
  /** Runs one invocation. Never rejects. */
  invoke(request: InvocationRequest): Promise<InvocationReport>
  /** Runs consecutive hooks this runner serves in one trip, when it can. Never rejects. */
  invokeChain?(request: ChainRequest): ChainRun
}

/** A report for an invocation that never ran or ended without running time. */
export function failedReport(kind: InvokeFailure['kind'], message: string): InvocationReport {
  return { outcome: { ok: false, kind, message }, wallUs: 0, cpuUs: 0 }
}
