/**
 * A hook whose new version's hook.json "permissions" ask for more than the version serving now is held
 * until `hookd trust` approves it, "with or without --locked" (docs/operations.md, "Pinning, signing and
 * bundles"; src/sidecar/pinning/admission.ts). The user's own hookd (`hookd up`, `hookd serve
 * --projects`) serves each repository's committed hooks folder, the very files a `git pull` changes; its
 * registry (src/sidecar/projects/projects.ts) is made without an Admission, so a project's hook that
 * adds "approve" (approving permission dialogs for the person) serves at once, and the repository's
 * committed hookd.lock is never read. The control: the same change in a sidecar's own hooks folder is
 * held, and the version serving keeps its permissions.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { checkProject } from '../../../src/sidecar/http/project-ref.js'
import { Sidecar } from '../../../src/sidecar/sidecar.js'
import { addFiles, hook } from '../../support/sidecar.js'

const GUARD = hook({ 'permission:request': `function (ctx, event) { if (/rm -rf/.test(String(event.arguments.command))) return { decision: 'deny', reason: 'no' } }` })
const NARROW = JSON.stringify({ permissions: { decide: { refuse: true } } })
const WIDE = JSON.stringify({ permissions: { decide: { refuse: true, approve: true } } })

const dirs: string[] = []
const sidecars: Sidecar[] = []
afterAll(async () => {
  for (const s of sidecars) await s.stop()
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

async function folder(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'hookd-project-perms-'))
  dirs.push(dir)
  await addFiles(dir, files)
  return dir
}

describe('a served hook whose new version adds "approve"', () => {
  it("in a sidecar's own hooks folder, is held: the version serving keeps its permissions (the control)", async () => {
    const root = await folder({ 'hooks/guard/index.js': GUARD, 'hooks/guard/hook.json': NARROW })
    const sidecar = await Sidecar.create({ hooks: join(root, 'hooks'), workers: 1, watch: false })
    sidecars.push(sidecar)
    expect(sidecar.registry.get('guard')?.permissions?.decide.approve).toBe(false)
    await writeFile(join(root, 'hooks', 'guard', 'hook.json'), WIDE)
    const held = await sidecar.registry.loadOne('guard')
    expect(held?.message).toContain("hook 'guard' is held: this version asks for more permissions than its serving version: approves calls the agent would ask its person about")
    expect(sidecar.registry.get('guard')?.permissions?.decide.approve).toBe(false)
  }, 60_000)

  it("in a project's committed hooks folder, is held the same way", async () => {
    const root = await folder({ 'hooks/guard/index.js': GUARD, 'hooks/guard/hook.json': NARROW })
    const sidecar = await Sidecar.create({ projects: { report: () => {} }, watch: false })
    sidecars.push(sidecar)
    const projects = sidecar.projects
    if (!projects) throw new Error('not a projects sidecar')
    const lease = await projects.project(await checkProject(root, 'hooks'))
    const registry = lease.tenant.registry
    lease.release()
    expect(registry.get('guard')?.permissions?.decide.approve).toBe(false)
    // The repository's next commit: the same hook, now approving dialogs for the person.
    await writeFile(join(root, 'hooks', 'guard', 'hook.json'), WIDE)
    const held = await registry.loadOne('guard')
    // Got: no diagnostic, and the new version serves with "approve".
    expect(held?.message ?? `nothing held; serving now: approve ${String(registry.get('guard')?.permissions?.decide.approve)}`).toContain("hook 'guard' is held")
    expect(registry.get('guard')?.permissions?.decide.approve).toBe(false)
  }, 60_000)
})
