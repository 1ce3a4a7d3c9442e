/**
 * The folders a sandbox worker runs from, found where Node finds them, wherever npm put them: hookd's
 * own package folder (the one this module was loaded from) and isolated-vm's package folder, as Node's
 * resolution from hookd's code finds it. npm's default layout hoists isolated-vm beside hookd (in the
 * project's node_modules), the nested layout and a global install keep it inside hookd's folder, and a
 * checkout's node_modules may be a link to another folder. walls.ts lets a worker read these folders
 * and nothing else (docs/containment.md, the second wall).
 */
import { existsSync, realpathSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { HookdError } from '../../../protocol/status.js'

export interface WorkerFolders {
  /** hookd's package folder, its real path: the worker's bundle, the prelude, package.json. */
  hookd: string
  /** isolated-vm's package folder, its real path: its loader and its compiled addon. */
  isolatedVm: string
  /**
   * What a worker may read, each folder once and none inside another: hookd's and isolated-vm's folders,
   * and the path through which the worker's import finds isolated-vm when that is a link outside both
   * (Node's permission model checks the path a file is opened by, not where a link leads).
   */
  readable: string[]
}

/** isolated-vm's compiled addon, relative to its folder (isolated-vm.js requires './out/isolated_vm'). */
export const ISOLATED_VM_ADDON = join('out', 'isolated_vm.node')

/** This module's folder: src/ or dist/ sidecar/worker/pool/, four levels below hookd's package folder. */
const HERE = dirname(fileURLToPath(import.meta.url))

let found: WorkerFolders | undefined

/**
 * The worker's folders, found once per process. Throws a HookdError saying what to do when isolated-vm
 * cannot be found from hookd's folder, or was installed without its compiled addon (npm skipped its
 * install script).
 */
export function workerFolders(): WorkerFolders {
  found ??= find(HERE)
  return found
}

/** Exported for tests: the folders as seen from a module in `from` (hookd's sidecar/worker/pool/). */
export function find(from: string): WorkerFolders {
  // Node loads modules by their real paths, so the worker's imports resolve from the real folder too.
  const real = realpathSync(from)
  const hookd = realpathSync(join(real, '..', '..', '..', '..'))
  const require = createRequire(join(real, 'worker-folders.js'))
  let manifest: string
  try {
    manifest = require.resolve('isolated-vm/package.json')
  } catch {
    throw new HookdError(
      'failed-precondition',
      `hookd cannot find isolated-vm, which its sandbox workers run on, from ${hookd}; reinstall hookd-sandbox (npm install hookd-sandbox) so that npm installs its dependencies`,
    )
  }
  const isolatedVm = realpathSync(dirname(manifest))
  if (!existsSync(join(isolatedVm, ISOLATED_VM_ADDON))) {
    throw new HookdError(
      'failed-precondition',
      `isolated-vm in ${isolatedVm} is not built (${ISOLATED_VM_ADDON} is missing): npm skipped its install script, which compiles it. Run 'npm rebuild isolated-vm' (about 90 s), and let npm run it on later installs: 'npm install-scripts approve isolated-vm' in a project, '--allow-scripts=isolated-vm' for npx and npm install -g (docs/agents.md)`,
    )
  }
  // The path the worker's import opens: the first node_modules up from hookd's code that holds it.
  const lookup = (require.resolve.paths('isolated-vm') ?? []).map((dir) => join(dir, 'isolated-vm')).find((dir) => existsSync(join(dir, 'package.json')))
  const readable: string[] = []
  for (const dir of [hookd, isolatedVm, ...(lookup ? [lookup] : [])]) {
    if (!readable.some((outer) => inside(dir, outer))) readable.push(dir)
  }
  return { hookd, isolatedVm, readable }
}

/** True when `dir` is `outer` or below it. */
function inside(dir: string, outer: string): boolean {
  const rel = relative(outer, dir)
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !rel.startsWith(sep))
}
