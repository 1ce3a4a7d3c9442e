/**
 * What a session of a multi-tenant sidecar knows of its tenant: the tenant's policy (a ceiling on what
 * the session may grant), its quotas and its lane in the fair queue. A session of a sidecar without
 * tenants has no scope and behaves as it always did.
 *
 * The effective capability policy is the intersection of the session's requested policy and the
 * tenant's: a call must pass both. The tenant's side is read at every call, so a tenants-file edit that
 * narrows a policy applies to open sessions at once.
 */
import type { CapabilityArgs, CapabilityName } from '../../protocol/capabilities.js'
import { type SessionPolicy, refusal } from '../session/policy.js'
import type { Admission } from './quota.js'
import type { ChainRequest, ChainRun, InvocationReport, InvocationRequest } from '../worker/pool/worker-pool.js'

export interface TenantScope {
  readonly id: string
  /** The tenant's capability policy as the tenants file says now. */
  policy(): SessionPolicy
  /** Counts a point call against the tenant's quotas, or says which one it is over. */
  admit(): Admission
  /** Runs one hook invocation through the tenant's lane of the fair queue. */
  invoke(request: InvocationRequest): Promise<InvocationReport>
  /**
   * Runs consecutive sandboxed hooks of one point call in one worker message (WorkerPool.invokeChain)
   * through the tenant's lane: the whole chain holds one slot, freed while a step waits on its host.
   */
  invokeChain(request: ChainRequest): ChainRun
}

/** Why the tenant's policy refuses a call (that the session's own policy allowed), in the same words. */
export function tenantRefusal<N extends CapabilityName>(tenant: TenantScope, name: N, args: CapabilityArgs<N>): string | undefined {
  const why = refusal(tenant.policy(), name, args)
  if (!why) return undefined
  const who = `tenant '${tenant.id}'`
  return why.replace('this session', who).replace(' is not allowed (', ` is not allowed for ${who} (`)
}

/** The env values a tenant's hooks may see: the session's, narrowed to the tenant's allowlist. */
export function tenantEnv(tenant: TenantScope | undefined, env: Record<string, string>): Record<string, string> {
  if (!tenant) return env
  const allowed = tenant.policy().env
  return Object.fromEntries(Object.entries(env).filter(([name]) => allowed.includes(name)))
}
