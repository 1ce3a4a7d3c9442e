/**
 * Label values with a ceiling. Hook names are folder names and tenant ids come from the tenants file,
 * both chosen by the operator, but a hooks folder that grows (or a hook renamed over and over under hot
 * reload) must not grow the number of series without bound: past `max` distinct values, new ones are
 * folded into OTHER. Values already seen keep their own series.
 */
export const OTHER = 'other'

export class BoundedLabels {
  private readonly seen = new Set<string>()

  constructor(private readonly max: number) {}

  /** `value` itself while there is room (or it was seen before), else OTHER. */
  of(value: string): string {
    if (this.seen.has(value)) return value
    if (this.seen.size >= this.max) return OTHER
    this.seen.add(value)
    return value
  }
}

/** Hook names, bounded per tenant, and tenant ids, bounded across the sidecar. */
export class TenantHookLabels {
  private readonly tenants: BoundedLabels
  private readonly hooks = new Map<string, BoundedLabels>()

  constructor(
    maxTenants: number,
    private readonly maxHooksPerTenant: number,
  ) {
    this.tenants = new BoundedLabels(maxTenants)
  }

  /** The tenant label: '' on a sidecar without tenants. */
  tenant(id: string | undefined): string {
    return id === undefined ? '' : this.tenants.of(id)
  }

  /** The hook label of `hook` in the tenant labelled `tenant` (a value from `tenant()`). */
  hook(tenant: string, hook: string): string {
    let labels = this.hooks.get(tenant)
    if (!labels) {
      labels = new BoundedLabels(this.maxHooksPerTenant)
      this.hooks.set(tenant, labels)
    }
    return labels.of(hook)
  }
}
