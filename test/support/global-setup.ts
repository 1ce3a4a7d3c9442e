/**
 * Before any test: the compiled CLI in dist/ must match the sources, because the tests that run hookd as
 * a program run the built command, as users do (tsx would cost seconds per process on 2 cores).
 * `make test` builds first; this builds when dist/ is missing or older than a source file, and the
 * compiled command shim likewise.
 */
import { execFileSync } from 'node:child_process'
import { accessSync, chmodSync, constants, existsSync, mkdtempSync, readdirSync, rmSync, statSync, statfsSync } from 'node:fs'
import { join } from 'node:path'

const ROOT = join(import.meta.dirname, '..', '..')

function newest(dir: string): number {
  let latest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs)
  }
  return latest
}

/** The compiled command shim (scripts/build-shim.sh), when it is missing or older than its source. */
function buildShim(): void {
  const binary = join(ROOT, 'build', 'hookd-hook')
  const source = join(ROOT, 'native', 'hookd-hook.c')
  if (existsSync(binary) && statSync(binary).mtimeMs >= statSync(source).mtimeMs) return
  execFileSync('sh', [join(ROOT, 'scripts', 'build-shim.sh')], { cwd: ROOT, stdio: 'inherit' })
}

const TMPFS_MAGIC = 0x01021994

/**
 * The suite's temp files (hook folders, sockets, agents' homes, logs) go to a folder of their own on
 * /dev/shm when it is a writable tmpfs and TMPDIR is not already set: on a disk the kernel's block
 * work for them cost ~10 s of CPU per run, the whole suite ~7 % more (docs/architecture.md, Tests).
 * Test processes and everything they start inherit TMPDIR. Returns the folder, to remove at the end.
 */
function tmpfsTmpdir(): string | undefined {
  if (process.env.TMPDIR) return undefined
  try {
    if (statfsSync('/dev/shm').type !== TMPFS_MAGIC) return undefined
    accessSync('/dev/shm', constants.W_OK | constants.X_OK)
    const dir = mkdtempSync('/dev/shm/hookd-suite-')
    // As open as /tmp: some tests run programs as other users (the image's user, dropped privileges).
    chmodSync(dir, 0o1777)
    process.env.TMPDIR = dir
    return dir
  } catch {
    return undefined
  }
}

/**
 * hookd's per-user state folder (setup's backups, `hookd up`'s sidecar) for the whole run, in a temp
 * folder of its own, so that no test writes into the real user's ~/.local/state/hookd. Tests that are
 * about where that folder is pass HOOKD_STATE_DIR or HOME themselves.
 */
function stateDir(): string | undefined {
  if (process.env.HOOKD_STATE_DIR) return undefined
  const dir = mkdtempSync(join(process.env.TMPDIR ?? '/tmp', 'hookd-suite-state-'))
  process.env.HOOKD_STATE_DIR = join(dir, 'state')
  return dir
}

/**
 * The run's temp folder and per-user state folder (above); returns the teardown that removes them.
 * `npm run test:unit` uses these alone (vitest.unit.config.ts: it builds nothing).
 */
export function runFolders(): () => void {
  const tmp = tmpfsTmpdir()
  const state = stateDir()
  return (): void => {
    if (state) {
      rmSync(state, { recursive: true, force: true })
      delete process.env.HOOKD_STATE_DIR
    }
    if (!tmp) return
    rmSync(tmp, { recursive: true, force: true })
    delete process.env.TMPDIR
  }
}

export default function setup(): () => void {
  const teardown = runFolders()
  buildShim()
  const stamp = join(ROOT, 'dist', '.built')
  const built = existsSync(stamp) ? statSync(stamp).mtimeMs : 0
  if (built < Math.max(newest(join(ROOT, 'src')), newest(join(ROOT, 'proto')))) {
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' })
    execFileSync('touch', [stamp])
  }
  return teardown
}
