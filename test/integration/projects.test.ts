/**
 * The user's own hookd serving many projects (src/sidecar/projects/projects.ts), with real workers:
 * a project opens once however many of its first events arrive at once, the least recently used one
 * makes room past the cap, an idle one is retired, and refusals name the project.
 */
import { rm } from 'node:fs/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { Projects } from '../../src/sidecar/projects/projects.js'
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

async function project(name: string): Promise<{ root: string; hooks: string }> {
  const hooks = await writeTree({ [`${name}/index.js`]: hook({ beforeToolExecute: 'function () {}' }) })
  folders.push(hooks)
  return { root: hooks, hooks }
}

describe("the user's hookd and its projects", () => {
  it('opens a project once when its first events arrive together, and names it in refusals', async () => {
    const { projects: p, lines } = projects()
    const ref = await project('guard')
    const tenants = await Promise.all([p.project(ref), p.project(ref), p.project(ref)])
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
    await p.project(a)
    await p.project(b)
    await p.project(a)
    await p.project(c)
    expect(retired).toEqual([b.hooks])
    expect(p.ids().sort()).toEqual([a.hooks, c.hooks].sort())
    expect(lines).toContain(`project ${b.hooks} retired to make room: 2 projects are served`)
    // Its next event opens it again.
    await p.project(b)
    expect(retired).toEqual([b.hooks, a.hooks])
  }, 60_000)

  it('retires a project with no event for idleMs', async () => {
    const { projects: p, lines } = projects({ idleMs: 100 })
    const ref = await project('idle')
    await p.project(ref)
    await expect.poll(() => p.ids(), { timeout: 20_000 }).toEqual([])
    expect(lines.some((l) => l.startsWith(`project ${ref.hooks} retired: no event for`))).toBe(true)
  }, 60_000)
})
