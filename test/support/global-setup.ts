/**
 * Before any test: the compiled CLI in dist/ must match the sources, because the tests that run hookd as
 * a program run the built command, as users do (tsx would cost seconds per process on 2 cores).
 * `make test` builds first; this builds when dist/ is missing or older than a source file, and the
 * compiled command shim likewise.
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
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

export default function setup(): void {
  buildShim()
  const stamp = join(ROOT, 'dist', '.built')
  const built = existsSync(stamp) ? statSync(stamp).mtimeMs : 0
  if (built >= Math.max(newest(join(ROOT, 'src')), newest(join(ROOT, 'proto')))) return
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' })
  execFileSync('touch', [stamp])
}
