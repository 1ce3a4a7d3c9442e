/**
 * How a sandbox worker process starts: which entry it runs (the bundle when built, TypeScript through
 * tsx from source), with which Node.js options, through the walls' programs (walls.ts). What the pool
 * then does with the process is worker-process.ts; the process side is worker/process/main.ts.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, realpathSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Walls } from './walls.js'

const here = fileURLToPath(import.meta.url)
const inSource = here.endsWith('.ts')
/**
 * Running from TypeScript source, the sidecar may still start the built workers (dist/), when told so
 * with HOOKD_BUILT_WORKERS=1: the test suite does (vitest.config.ts), after building dist/ from the same
 * sources (test/support/global-setup.ts), so that its workers start as fast as users' and behind the
 * same walls.
 */
const builtWorkers = inSource && process.env.HOOKD_BUILT_WORKERS === '1'
/** Workers load TypeScript through tsx (development): Node's permission model cannot be on (walls.ts). */
export const fromSource = inSource && !builtWorkers
/**
 * Built, a worker starts from one bundle of its modules (`npm run build` makes it with esbuild): a worker
 * that loads them file by file spends ~50 ms more CPU on start-up, and workers start often (at start, on
 * every crash and retirement). The unbundled entry is the fallback for a dist/ that tsc alone built.
 * Its real path: the worker opens it behind Node's permission model, which allows hookd's package folder
 * by its real path (worker-folders.ts), whatever link (npm link, a global bin) this module came through.
 */
function builtEntry(dist: URL): string {
  const bundle = fileURLToPath(new URL('main.bundle.js', dist))
  const entry = existsSync(bundle) ? bundle : fileURLToPath(new URL('main.js', dist))
  return existsSync(entry) ? realpathSync(entry) : entry
}
const ENTRY = fromSource
  ? fileURLToPath(new URL('../process/main.ts', import.meta.url))
  : builtEntry(new URL(builtWorkers ? '../../../../dist/sidecar/worker/process/' : '../process/', import.meta.url))
// isolated-vm needs --no-node-snapshot on Node 20. From source, the worker loads TypeScript through tsx,
// resolved here: a bare 'tsx' would be looked up from the worker's working directory, which may be any.
// A worker's own heap holds only messages and bookkeeping (hooks run in their isolates' heaps), but
// under load V8 grew its young generation to many MB of short-lived garbage: capped at 1 MB per
// semi-space, each worker stays ~10-20 MB smaller (measured over 40k invocations) with no throughput
// lost that the noise would show (docs/performance.md).
const EXEC_ARGV = ['--no-node-snapshot', '--max-semi-space-size=1', ...(fromSource ? ['--import', import.meta.resolve('tsx')] : [])]

export interface SpawnOptions {
  /** Extra Node.js options for the worker process. */
  execArgv: readonly string[]
  /** What stands around the process (walls.ts). */
  walls: Walls
}

/** Numbers workers across every pool of this process: each gets its own uid and cgroup (walls.ts). */
let nextSlot = 0

/** Starts one worker process behind the walls; its IPC channel carries the worker/protocol.ts messages. */
export function spawnWorker(options: SpawnOptions): ChildProcess {
  const slot = nextSlot++
  const command = options.walls.command(ENTRY, [...EXEC_ARGV, ...options.execArgv], slot)
  // Not fork(): the worker starts through the walls' programs (unshare, setpriv, prlimit), which pass
  // the IPC channel's descriptor on to Node.
  const child = spawn(command.file, command.args, { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], serialization: 'json', env: command.env, cwd: command.cwd })
  if (child.pid !== undefined) {
    const detach = options.walls.attach(child.pid, slot)
    child.once('exit', detach)
  }
  return child
}
