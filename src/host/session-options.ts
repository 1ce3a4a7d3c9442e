/** What a host declares when a run starts, and the OpenSession message it becomes on the wire. */
import type { FileAccess } from '../protocol/wire.js'
import { type OpenSessionOut, type SessionOnError, fileAccessToWire, onErrorToWire } from '../protocol/wire.js'
import { PROTOCOL_VERSION } from '../protocol/version.js'
import type { CapabilityHandlers } from './capabilities.js'

/** What a host declares when a run starts. */
export interface SessionOptions {
  sessionId: string
  agentId?: string
  modelId?: string
  /** The hooks this run uses, in execution order. */
  hooks: readonly string[]
  /**
   * The run's folder, as an absolute path (a relative one fails the open with INVALID_ARGUMENT: hookd
   * does not guess what it is relative to). Default: process.cwd().
   */
  workdir?: string
  /** True when a human can answer ctx.confirm. Default false. */
  interactive?: boolean
  /** How ctx.confirm is answered when not interactive. Default false. */
  autoApprove?: boolean
  policy?: {
    /** Default 'read-write' (always confined to the workdir). */
    file?: FileAccess
    /** Origins ctx.http.fetch may reach. Default none. */
    httpOrigins?: readonly string[]
    /** Environment variable names visible in ctx.env. Default none. */
    env?: readonly string[]
    /** Default true. */
    confirm?: boolean
  }
  /**
   * What a hook's failure does at a gate point (beforeToolExecute, tool:gate, ...). `default`: a hook
   * that throws, returns an invalid value or did not load is skipped, and one that could not decide (a
   * limit, a crash, a lost server, a cancel) refuses the call. `refuse`: every failure refuses (fail
   * closed). `skip`: none does (fail open). `refuse-unless-skip`: every failure refuses, except a
   * hook's whose hook.json says "onError": "skip" (what hosts that guard an agent use). A hook's own
   * hook.json "onError" and the operator's setting can only make it stricter. Default `default` (the
   * seed's rule).
   */
  onError?: SessionOnError
  /** Where the allowlisted env names' values are read (only those; unset ones are left out). Default: process.env. */
  env?: Record<string, string | undefined>
  /** Capability handlers; anything left out gets the defaults in capabilities.ts. */
  capabilities?: CapabilityHandlers
}


/** The OpenSession message for `options`. */
export function openMessage(options: SessionOptions): OpenSessionOut {
  const policy = options.policy ?? {}
  const envNames = policy.env ?? []
  const env: Record<string, string> = {}
  for (const name of envNames) {
    const value = (options.env ?? process.env)[name]
    if (value !== undefined) env[name] = value
  }
  return {
    protocolVersion: PROTOCOL_VERSION,
    sessionId: options.sessionId,
    agentId: options.agentId ?? '',
    modelId: options.modelId ?? '',
    hooks: [...options.hooks],
    workdir: options.workdir ?? process.cwd(),
    interactive: options.interactive ?? false,
    autoApprove: options.autoApprove ?? false,
    policy: {
      file: fileAccessToWire(policy.file ?? 'read-write'),
      httpOrigins: [...(policy.httpOrigins ?? [])],
      env: [...envNames],
      denyConfirm: policy.confirm === false,
    },
    env,
    onError: onErrorToWire(options.onError ?? 'default'),
  }
}
