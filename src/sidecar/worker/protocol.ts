/**
 * The sidecar <-> sandbox worker boundary. Every message that crosses the process boundary between the
 * sidecar's main process and a worker process is declared here and nowhere else. Messages travel over
 * the Node IPC channel as JSON; the `$` prefix on the tag marks a value that was copied across.
 *
 * The worker runs hook code, so the sidecar treats what a worker sends as untrusted and validates it with
 * the schemas below. The worker trusts the sidecar.
 */
import type { HookMode, Layer } from '../chain/layer.js'
import * as z from 'zod'
import type { HookPermissions } from '../../protocol/hook-permissions.js'
import type { OnError } from '../../protocol/wire.js'
import type { Limits } from '../limits.js'
import { type CapabilityReply, type CtxData, invokeOutcome } from '../runners/hook-runner.js'

/**
 * A hook's code. `source` is sent the first time a worker sees a version, then omitted; the supervisor
 * tells a worker to `forget` versions it will not send again (see WorkerPool).
 */
export interface HookCode {
  name: string
  version: string
  /** Shown in stack traces and diagnostics, e.g. "guard/index.js". */
  filename: string
  source?: string
}

/**
 * How both sides name one hook's code: by name and version, since two hooks with the same files have
 * the same version (a content hash) but different names and file names.
 */
export function hookCodeKey(code: { name: string; version: string }): string {
  return `${code.name}\0${code.version}`
}

// ------------------------------------------------------------------------------------------------
// Sidecar -> worker
// ------------------------------------------------------------------------------------------------

export type ToWorker =
  | {
      $: 'invoke'
      id: number
      hook: HookCode
      /** The export to call: a point name. */
      point: string
      /** JSON text of the arguments after ctx. */
      args: string
      /**
       * What the hook answers with: absent, its return value (step points); a number, the argument
       * at that index after the handler ran (event points, whose handlers mutate their event).
       */
      resultArg?: number
      ctx: CtxData
      limits: Limits
    }
  | {
      /** Compile and evaluate a hook in a throwaway isolate and report its exports. */
      $: 'load'
      id: number
      hook: HookCode & { source: string }
      limits: Limits
    }
  | {
      /**
       * Run consecutive sandboxed hooks of one point call in this worker, one after the other, each in
       * its own fresh isolate with its own limits, chained with the catalog's rules (chain.ts, run here
       * too). It saves one sidecar<->worker round trip per hook after the first. The worker reports each
       * step as it ends ('step'), then 'chained'; capability calls and log lines carry the step's index.
       * The sidecar runs the same chain on those reports and stays the judge of the result.
       */
      $: 'chain'
      id: number
      /** The catalog point (its name) the chain runs. */
      point: string
      /** JSON text of the chain's initial state (the point's validated payload). */
      initial: string
      steps: ChainStepData[]
      limits: Limits
      /** A person can be asked at this gate: a shell rewrite being asked about is kept (chain.ts ChainOptions.ask). */
      canAsk?: boolean
    }
  | { $: 'capabilityResult'; id: number; callId: number; reply: CapabilityReply }
  | { $: 'cancel'; id: number }
  /** Drop the compiled code kept for this hookCodeKey; the next use sends the source again. */
  | { $: 'forget'; key: string }

/** One hook of a 'chain' message. */
export interface ChainStepData {
  hook: HookCode
  /** The points the hook's exports serve (its LoadedHook.points), to pick the handler as chain.ts does. */
  points: string[]
  ctx: CtxData
  /** What the hook's failure does at a gate, as the sidecar's chain judges it. */
  onError: OnError
  /** A shadow hook (its answer is not applied) or a floor hook (its refusal ends the chain), as chain.ts reads them. */
  mode?: HookMode
  layer?: Layer
  /** hook.json "permissions": the decisions it may make, as the sidecar's chain judges them. */
  permissions?: HookPermissions
}

// ------------------------------------------------------------------------------------------------
// Worker -> sidecar
// ------------------------------------------------------------------------------------------------

const u32 = z.number().int().nonnegative()

export const fromWorker = z.discriminatedUnion('$', [
  z.object({ $: z.literal('ready'), pid: u32 }),
  /**
   * isolated-vm lost control of an isolate (a "catastrophic error"): the worker takes no new work, ends
   * once what it runs has finished (bounded by their limits) and is replaced.
   */
  z.object({ $: z.literal('retire'), reason: z.string().max(2000) }),
  z.object({
    $: z.literal('capability'),
    id: u32,
    callId: u32,
    capability: z.string(),
    args: z.unknown(),
    /** In a 'chain': the index of the step that made the call. */
    step: u32.optional(),
    /**
     * What the calling isolate holds as it starts to wait, in MB (its heap's resident pages and its
     * external ArrayBuffers, rounded up): the pool counts the more of this and its memory limit against
     * the worker's parked memory (WorkerPool, --parked-mb).
     */
    heldMb: u32,
  }),
  z.object({ $: z.literal('log'), id: u32, message: z.string(), step: u32.optional() }),
  /** One step of a 'chain' ended (it ran; steps the chain skipped are not reported). */
  z.object({ $: z.literal('step'), id: u32, step: u32, outcome: invokeOutcome, wallUs: u32, cpuUs: u32 }),
  /** A 'chain' is over: no more steps of it will run. */
  z.object({ $: z.literal('chained'), id: u32 }),
  z.object({ $: z.literal('done'), id: u32, outcome: invokeOutcome, wallUs: u32, cpuUs: u32 }),
  z.object({
    $: z.literal('loaded'),
    id: u32,
    outcome: z.discriminatedUnion('ok', [
      z.object({ ok: z.literal(true), exports: z.array(z.string()) }),
      z.object({ ok: z.literal(false), message: z.string(), line: u32.optional() }),
    ]),
  }),
])
export type FromWorker = z.infer<typeof fromWorker>
export type LoadOutcome = Extract<FromWorker, { $: 'loaded' }>['outcome']
