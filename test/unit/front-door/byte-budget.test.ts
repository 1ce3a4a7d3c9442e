/** The front door's byte budget, in memory: per tenant, in all, and what a refusal says. */
import { describe, expect, it } from 'vitest'
import { ByteBudget } from '../../../src/sidecar/http/byte-budget.js'

const MiB = 1024 * 1024

describe('ByteBudget', () => {
  it("counts each tenant's bytes apart, and all of them against the total", () => {
    const budget = new ByteBudget({ tenantBytes: 4 * MiB, totalBytes: 6 * MiB })
    const a = budget.hold('acme')
    expect(a.add(3 * MiB)).toBeUndefined()
    const over = budget.hold('acme').add(2 * MiB)
    expect(over?.code).toBe('resource-exhausted')
    expect(over?.message).toBe(
      "over the byte budget per tenant: the events of tenant 'acme' waiting on their hooks hold 3.0 MiB, and this one's 2.0 MiB would pass the budget of 4.0 MiB; retry when calls have finished (slow hooks hold their events), or raise it (hookd serve --http-tenant-mb)",
    )
    // Another tenant is not held up by acme's bytes, until the total is reached.
    const b = budget.hold('globex')
    expect(b.add(3 * MiB)).toBeUndefined()
    const total = budget.hold('initech').add(1 * MiB)
    expect(total?.code).toBe('unavailable')
    expect(total?.message).toBe(
      "over the sidecar's byte budget: the events of all tenants waiting on their hooks hold 6.0 MiB, and this one's 1.0 MiB would pass the budget of 6.0 MiB for all requests; retry shortly, or raise it (hookd serve --http-total-mb)",
    )
    expect(budget.bytes.total).toBe(6 * MiB)
  })

  it('gives every byte of a hold back once, however often it is released; a released hold takes nothing more', () => {
    const budget = new ByteBudget({ tenantBytes: 4 * MiB, totalBytes: 6 * MiB })
    const a = budget.hold(undefined)
    a.add(1000)
    a.add(24)
    a.release()
    a.release()
    expect(a.add(10)).toBeUndefined()
    expect(budget.bytes.total).toBe(0)
    expect(budget.bytes.tenants.size).toBe(0)
    expect(budget.hold(undefined).add(4 * MiB + 1)?.message).toContain("the events of this sidecar's agents waiting on their hooks hold 0 bytes")
  })

  it('refuses a budget that is not a positive integer', () => {
    expect(() => new ByteBudget({ tenantBytes: 0, totalBytes: 1 })).toThrow("the front door's tenantBytes must be a positive integer; got 0")
  })
})
