/**
 * The operator's floor (`hookd serve --floor DIR`; docs/operations.md, "Layers"): a hooks folder of the
 * operator's own, loaded and hot-reloaded like any other (a registry of its own), whose hooks run first
 * at every point they serve, in every session of every tenant and project, in the order of their folder
 * names. A session's hook list, a tenant's or a project's folder, a profile or a route cannot name,
 * drop, reorder or shadow them: the session's step planner (session/step-planner.ts) puts them ahead of
 * the declared hooks at each call, a declared name that is a floor hook's is the floor's (it runs once,
 * first), and a floor refusal ends the chain (chain.ts). A floor hook's failure at a gate refuses the
 * call unless its own hook.json says `"onError": "skip"`.
 *
 * The floor's sandboxed hooks run on the workers of the tenant (or project) whose call it is, never on
 * a pool shared between tenants; a remote floor hook runs on its own server's client.
 */
import type { HookInfoData } from '../../protocol/wire.js'
import type { Registry } from './registry.js'

export class Floor {
  constructor(readonly registry: Registry) {}

  /** The folder the floor's hooks are read from. */
  get root(): string {
    return this.registry.root
  }

  /** The floor's hooks now (loaded or not), in the order they run: by folder name. */
  hooks(): HookInfoData[] {
    return this.registry.list()
  }

  /** True when `name` is a floor hook's (its folder is there, loaded or not). */
  has(name: string): boolean {
    return this.registry.has(name)
  }

  close(): Promise<void> {
    return this.registry.close()
  }
}
