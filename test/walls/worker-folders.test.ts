/**
 * Where a worker's folders are found (worker-folders.ts), in each layout npm (or a checkout, or a
 * linking package manager) leaves: the read allowlist of the second wall is exactly hookd's folder and
 * isolated-vm's, by real path, plus the path through which the worker's import reaches isolated-vm when
 * that is a link outside both. Fake package folders in a temp folder; test/package/installed.test.ts
 * runs the real thing from npm's own installs.
 */
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HookdError } from '../../src/protocol/status.js'
import { find, workerFolders } from '../../src/sidecar/worker/pool/worker-folders.js'
import { ROOT } from '../support/processes.js'

let base: string

beforeAll(async () => {
  base = await realpath(await mkdtemp(join(tmpdir(), 'hookd-folders-')))
})

afterAll(async () => {
  await rm(base, { recursive: true, force: true })
})

/** A package folder at `dir`: its package.json and, for isolated-vm, the compiled addon unless `built` is false. */
async function pkg(dir: string, name: string, built = true): Promise<void> {
  await mkdir(dir, { recursive: true })
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name, version: '0.0.0' }))
  if (name === 'isolated-vm' && built) {
    await mkdir(join(dir, 'out'), { recursive: true })
    await writeFile(join(dir, 'out', 'isolated_vm.node'), '')
  }
}

/** hookd at `dir`; returns the folder its pool modules are in. */
async function hookd(dir: string): Promise<string> {
  await pkg(dir, 'hookd-sandbox')
  const pool = join(dir, 'dist', 'sidecar', 'worker', 'pool')
  await mkdir(pool, { recursive: true })
  return pool
}

describe("a worker's folders, wherever npm put them", () => {
  it("npm's default layout: isolated-vm hoisted beside hookd in the project's node_modules", async () => {
    const modules = join(base, 'hoisted', 'node_modules')
    const from = await hookd(join(modules, 'hookd-sandbox'))
    await pkg(join(modules, 'isolated-vm'), 'isolated-vm')
    expect(find(from)).toEqual({
      hookd: join(modules, 'hookd-sandbox'),
      isolatedVm: join(modules, 'isolated-vm'),
      readable: [join(modules, 'hookd-sandbox'), join(modules, 'isolated-vm')],
    })
  })

  it('the nested layout and a global install: isolated-vm inside hookd, one folder to read', async () => {
    const folder = join(base, 'nested', 'node_modules', 'hookd-sandbox')
    const from = await hookd(folder)
    await pkg(join(folder, 'node_modules', 'isolated-vm'), 'isolated-vm')
    // Another isolated-vm higher up is not the one Node resolves.
    await pkg(join(base, 'nested', 'node_modules', 'isolated-vm'), 'isolated-vm')
    expect(find(from)).toEqual({ hookd: folder, isolatedVm: join(folder, 'node_modules', 'isolated-vm'), readable: [folder] })
  })

  it("a checkout whose node_modules links elsewhere: isolated-vm's real folder, not the link's", async () => {
    const checkout = join(base, 'checkout')
    const from = await hookd(checkout)
    const shared = join(base, 'shared-modules')
    await pkg(join(shared, 'isolated-vm'), 'isolated-vm')
    await pkg(join(shared, 'zod'), 'zod')
    await symlink(shared, join(checkout, 'node_modules'))
    expect(find(from)).toEqual({ hookd: checkout, isolatedVm: join(shared, 'isolated-vm'), readable: [checkout, join(shared, 'isolated-vm')] })
  })

  it('a package manager that links each package from a store: the link the import opens, and where it leads', async () => {
    const store = join(base, 'store')
    const folder = join(store, 'hookd-sandbox@0.1.0', 'node_modules', 'hookd-sandbox')
    const from = await hookd(folder)
    const ivm = join(store, 'isolated-vm@5.0.4', 'node_modules', 'isolated-vm')
    await pkg(ivm, 'isolated-vm')
    const link = join(store, 'hookd-sandbox@0.1.0', 'node_modules', 'isolated-vm')
    await symlink(ivm, link)
    // The project sees hookd through a link too; the folders found are real paths all the same.
    await mkdir(join(base, 'linking', 'node_modules'), { recursive: true })
    await symlink(folder, join(base, 'linking', 'node_modules', 'hookd-sandbox'))
    const through = join(base, 'linking', 'node_modules', 'hookd-sandbox', 'dist', 'sidecar', 'worker', 'pool')
    expect(find(through)).toEqual({ hookd: folder, isolatedVm: ivm, readable: [folder, ivm, link] })
    expect(find(from).readable).toEqual([folder, ivm, link])
  })

  it('isolated-vm installed without its build (npm skipped its install script): says what to run', async () => {
    const modules = join(base, 'unbuilt', 'node_modules')
    const from = await hookd(join(modules, 'hookd-sandbox'))
    await pkg(join(modules, 'isolated-vm'), 'isolated-vm', false)
    const err = (() => {
      try {
        find(from)
      } catch (e) {
        return e
      }
    })()
    expect(err).toBeInstanceOf(HookdError)
    expect((err as HookdError).code).toBe('failed-precondition')
    expect((err as HookdError).message).toBe(
      `isolated-vm in ${join(modules, 'isolated-vm')} is not built (out/isolated_vm.node is missing): npm skipped its install script, which compiles it. Run 'npm rebuild isolated-vm' (about 90 s), and let npm run it on later installs: 'npm install-scripts approve isolated-vm' in a project, '--allow-scripts=isolated-vm' for npx and npm install -g (docs/agents.md)`,
    )
  })

  it('isolated-vm missing altogether: says to reinstall', async () => {
    const from = await hookd(join(base, 'missing', 'node_modules', 'hookd-sandbox'))
    expect(() => find(from)).toThrow(
      `hookd cannot find isolated-vm, which its sandbox workers run on, from ${join(base, 'missing', 'node_modules', 'hookd-sandbox')}; reinstall hookd-sandbox (npm install hookd-sandbox) so that npm installs its dependencies`,
    )
  })

  it("this checkout's: its own folder and isolated-vm's real folder", async () => {
    const isolatedVm = await realpath(join(ROOT, 'node_modules', 'isolated-vm'))
    const own = await realpath(ROOT)
    expect(workerFolders()).toEqual({ hookd: own, isolatedVm, readable: isolatedVm.startsWith(`${own}/`) ? [own] : [own, isolatedVm] })
  })
})
