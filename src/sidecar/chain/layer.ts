/**
 * The two facts of a hook that change how the chain (chain.ts) treats its answer, beside its onError:
 * its layer (where it comes from; a floor hook's refusal ends the chain) and its mode (hook.json
 * "mode": a shadow hook's answer is recorded, not applied). docs/operations.md ("Layers") and
 * docs/writing-hooks.md ("Shadow mode") say what each means to users.
 */

/**
 * Where a hook comes from: the operator's floor (`hookd serve --floor`), a tenant's hooks folder, a
 * project's (the user's hookd), or the one hooks folder of a sidecar without tenants, whose session
 * chose it (`session`).
 */
export type Layer = 'floor' | 'tenant' | 'project' | 'session'

/** hook.json "mode": `enforce` (the default) or `shadow`. */
export const HOOK_MODES = ['enforce', 'shadow'] as const
export type HookMode = (typeof HOOK_MODES)[number]
