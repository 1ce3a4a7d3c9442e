/**
 * The user's own hookd serving many projects (src/sidecar/projects/projects.ts), with real workers:
 * a project opens once however many of its first events arrive at once, the least recently used one
 * makes room past the cap, an idle one is retired, and refusals name the project.
 */
import { rm } from 'node:fs/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { MAX_HOOKS_FOLDERS_PER_PROJECT, Projects } from '../../src/sidecar/projects/projects.js'
import type { Tenant } from '../../src/sidecar/tenant.js'
import { DEFAULT_LIMITS, DEFAULT_WAITS } from '../../src/sidecar/limits.js'
import { hook, writeTree } from '../support/sidecar.js'

const open: Projects[] = []
const folders: string[] = []

afterEach(async () => {
  await Promise.all(open.splice(0).map((p) => p.close()))
  await Promise.all(folders.splice(0).map((f) => rm(f, { recursive: true, force: true })))
})

function projects(options: { maxProjects?: number; idleMs?: number } = {}): { projects: Projects; lines: string[] } {
  const lines: string[] = []
  const p = new Projects({ pool: {}, limits: DEFAULT_LIMITS, waits: DEFAULT_WAITS, watch: false, report: (line) => lines.push(line), ...options })
  open.push(p)
  return { projects: p, lines }
}

/** One event's use of a project: its tenant, released at once (its answer sent). */
async function use(p: Projects, ref: { root: string; hooks: string }): Promise<Tenant> {
  const lease = await p.project(ref)
  lease.release()
  return lease.tenant
}

async function project(name: string): Promise<{ root: string; hooks: string }> {
  const hooks = await writeTree({ [`${name}/index.js`]: hook({ beforeToolExecute: 'function () {}' }) })
  folders.push(hooks)
  return { root: hooks, hooks }
}

describe("the user's hookd and its projects", () => {
  it('opens a project once when its first events arrive together, and names it in refusals', async () => {
    const { projects: p, lines } = projects()
    const ref = await project('guard')
    const tenants = (await Promise.all([p.project(ref), p.project(ref), p.project(ref)])).map((lease) => lease.tenant)
    expect(new Set(tenants).size).toBe(1)
    expect(lines.filter((l) => l.startsWith('serving project'))).toEqual([`serving project ${ref.hooks} (hooks: guard)`])
    expect(tenants[0]?.who).toBe(`project ${ref.hooks}`)
    expect(p.ids()).toEqual([ref.hooks])
  }, 60_000)

  it('past its cap retires the project whose last event is oldest, and says so', async () => {
    const { projects: p, lines } = projects({ maxProjects: 2 })
    const retired: string[] = []
    p.onRetire((id) => retired.push(id))
    const [a, b, c] = [await project('a'), await project('b'), await project('c')]
    await use(p, a)
    await use(p, b)
    await use(p, a)
    await use(p, c)
    expect(retired).toEqual([b.hooks])
    expect(p.ids().sort()).toEqual([a.hooks, c.hooks].sort())
    expect(lines).toContain(`project ${b.hooks} retired to make room: 2 projects are served`)
    // Its next event opens it again.
    await use(p, b)
    expect(retired).toEqual([b.hooks, a.hooks])
    // A project with a call in flight is never retired for another: with both busy, a newcomer is refused.
    const held = [await p.project(b), await p.project(c)]
    await expect(p.project(a)).rejects.toThrow('hookd serves at most 2 projects at once, and each has a call in flight; retry when one has finished')
    held[0]?.release()
    await use(p, a)
    expect(retired).toEqual([b.hooks, a.hooks, b.hooks])
    held[1]?.release()
  }, 60_000)

  it(`serves at most ${MAX_HOOKS_FOLDERS_PER_PROJECT} hooks folders of one project: past them it makes room among its own`, async () => {
    const { projects: p, lines } = projects()
    const root = await writeTree(Object.fromEntries([1, 2, 3, 4, 5].map((n) => [`hooks${n}/guard/index.js`, hook({ beforeToolExecute: 'function () {}' })])))
    folders.push(root)
    const other = await project('other')
    await use(p, other)
    const refs = [1, 2, 3, 4, 5].map((n) => ({ root, hooks: `${root}/hooks${n}` }))
    for (const ref of refs.slice(0, 4)) await use(p, ref)
    await use(p, refs[4] as { root: string; hooks: string })
    expect(p.ids()).toHaveLength(5)
    expect(p.ids()).toContain(other.hooks)
    expect(p.ids()).not.toContain(refs[0]?.hooks)
    expect(lines).toContain(`project ${refs[0]?.hooks} retired to make room: project ${root} may have ${MAX_HOOKS_FOLDERS_PER_PROJECT} hooks folders served at once`)
  }, 60_000)

  it('retires a project with no event for idleMs', async () => {
    const { projects: p, lines } = projects({ idleMs: 100 })
    const ref = await project('idle')
    await use(p, ref)
    await expect.poll(() => p.ids(), { timeout: 20_000 }).toEqual([])
    expect(lines.some((l) => l.startsWith(`project ${ref.hooks} retired: no event for`))).toBe(true)
  }, 60_000)
})
