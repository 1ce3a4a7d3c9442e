/**
 * hookd as npm installs it, for tests: this checkout packed with `npm pack` (the tarball `npm publish`
 * would upload) and installed by npm itself into a project, in npm's default layout (which hoists the
 * dependencies beside hookd-sandbox) or the nested one (which keeps them inside it). npm runs with its
 * download cache under .cache/package-test/npm, never the user's, and this machine's other settings.
 *
 * Installing compiles isolated-vm from source (60-90 s of CPU here). `freshInstall` does that in a new
 * project every time, as a user's first install does. `reinstall` installs the tarball into a copy of a
 * project that npm itself built earlier for the same dependencies, layout, Node and npm (kept under
 * .cache/package-test/): npm replaces hookd-sandbox from the tarball and runs its install script, and
 * leaves the dependencies that did not change, isolated-vm's build among them, where they are (its
 * package-lock.json says they did not). Without that copy (a cold machine), it installs fresh and keeps
 * the result for next time.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { chmod, copyFile, mkdir, mkdtemp, readFile, readdir, rename, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { ROOT } from './processes.js'

const exec = promisify(execFile)

/** Where the npm cache and the reinstall copies live. */
export const PACKAGE_CACHE = join(ROOT, '.cache', 'package-test')

/** A whole install, on a machine busy with the rest of the suite. */
export const INSTALL_TIMEOUT_MS = 15 * 60_000

/** The packages whose install scripts hookd needs run (docs/agents.md, the allowScripts warning). */
export const SCRIPTED_PACKAGES = ['hookd-sandbox', 'isolated-vm', 'esbuild', 'protobufjs'] as const

export interface Ran {
  code: number | null
  stdout: string
  stderr: string
}

/**
 * The environment a user's shell would give npm, npx and hookd here: PATH, HOME (npm reads its user
 * config there: on this machine `nodedir`, which lets node-gyp build offline), a temp folder, and npm's
 * cache under .cache/. Nothing of the test process's own (vitest's variables, HOOKD_*).
 */
export function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: process.env.HOME ?? '/root',
    LANG: 'C.UTF-8',
    TMPDIR: tmpdir(),
    npm_config_cache: join(PACKAGE_CACHE, 'npm'),
    npm_config_update_notifier: 'false',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    ...extra,
  }
}

/**
 * Runs `file args...` to completion in `cwd` with the user's environment (`env` added; `exactEnv`: that
 * environment and nothing else); never rejects.
 */
export function run(
  file: string,
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string>; exactEnv?: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<Ran> {
  return new Promise((resolve) => {
    const env = options.exactEnv ?? userEnv(options.env)
    const child = spawn(file, args, { cwd: options.cwd, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: options.timeoutMs ?? 120_000 })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('error', (err) => resolve({ code: null, stdout, stderr: `${stderr}${String(err)}` }))
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

/** Fails with what the command printed unless it exited 0. */
export function succeeded(what: string, ran: Ran): Ran {
  if (ran.code !== 0) throw new Error(`${what} exited ${ran.code}:\n${ran.stdout}\n${ran.stderr}`)
  return ran
}

/** A new folder under the temp folder that any user may enter (a dropped worker uid must read hookd in it). */
export async function openTempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  await chmod(dir, 0o755)
  return dir
}

/**
 * `npm pack` of this checkout into `into`; returns the tarball's path. dist/ is already built from these
 * sources (test/support/global-setup.ts), so the prepack build is skipped (--ignore-scripts): it would
 * rewrite dist/ under the other test files' running workers.
 *
 * npm packs once per content: the tarball is kept under the temp folder (under vitest, the run's own,
 * which global-setup.ts removes at the end), keyed by the path, size and modification time of every
 * file npm would pack (packKey), and each caller gets a copy in its own `into`, so that npm sees a new
 * `file:` spec there and installs it as new. The test files of a run (installed, docs-run, the image
 * replay) share one pack.
 */
export async function pack(into: string): Promise<string> {
  const kept = join(tmpdir(), 'hookd-packs', await packKey())
  let name = (await readdir(kept).catch(() => [])).find((f) => f.endsWith('.tgz'))
  if (!name) {
    await mkdir(dirname(kept), { recursive: true })
    const work = await mkdtemp(`${kept}.tmp-`)
    const ran = succeeded('npm pack', await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: ROOT }))
    const [packed] = JSON.parse(ran.stdout) as Array<{ filename: string }>
    if (!packed) throw new Error(`npm pack printed no file: ${ran.stdout}`)
    name = packed.filename
    // Another test process may have kept the same pack first: then its copy serves, and this one goes.
    await rename(work, kept).catch(() => rm(work, { recursive: true, force: true }))
  }
  const tarball = join(into, name)
  await copyFile(join(kept, name), tarball)
  return tarball
}

/**
 * What a pack is made from: package.json's `files` (every file under each entry; its `!` exclusions are
 * hashed too, which only costs a pack when they change) and the top-level files npm always packs.
 */
async function packKey(): Promise<string> {
  const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { files?: string[] }
  const top = (await readdir(ROOT)).filter((f) => /^(package\.json|readme|license|licence|changelog)/i.test(f))
  const roots = [...top, ...(manifest.files ?? []).filter((f) => !f.startsWith('!'))]
  const hash = createHash('sha256')
  const visit = async (path: string): Promise<void> => {
    const info = await stat(join(ROOT, path)).catch(() => undefined)
    if (!info) return
    if (info.isDirectory()) {
      for (const entry of (await readdir(join(ROOT, path))).sort()) await visit(join(path, entry))
    } else hash.update(`${path}\0${info.size}\0${info.mtimeMs}\n`)
  }
  for (const root of roots.sort()) await visit(root)
  return hash.digest('hex').slice(0, 16)
}

export type Layout = 'hoisted' | 'nested'

export interface Installed {
  /** The project folder: package.json, package-lock.json, node_modules. */
  project: string
  /** What `npm install` printed. */
  install: Ran
  /** Whether a copy npm built earlier was reinstalled (false: installed fresh, isolated-vm compiled). */
  reused: boolean
}

/** The npm arguments that install `tarball` in `layout`. */
function installArgs(tarball: string, layout: Layout, extra: readonly string[]): string[] {
  return ['install', ...(layout === 'nested' ? ['--install-strategy=nested'] : []), ...extra, tarball]
}

export interface InstallOptions {
  /** npm's flags beside the layout's (`--omit=dev`). */
  extra?: readonly string[]
  /** The project's package.json before the install. Default: a new project's; null: none (npm writes one). */
  manifest?: Record<string, unknown> | null
}

const NEW_PROJECT = { name: 'my-project', version: '1.0.0', private: true }

/** A project folder holding only its package.json, as `npm init` leaves it (or nothing at all). */
async function newProject(manifest: Record<string, unknown> | null): Promise<string> {
  const project = await openTempDir('hookd-project-')
  if (manifest) await writeFile(join(project, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`)
  return project
}

/** `npm install <tarball>` in a new project, in `layout`: what a user's first install does. */
export async function freshInstall(tarball: string, layout: Layout, options: InstallOptions = {}): Promise<Installed> {
  const extra = options.extra ?? []
  const project = await newProject(options.manifest === undefined ? NEW_PROJECT : options.manifest)
  const install = await run('npm', installArgs(tarball, layout, extra), { cwd: project, timeoutMs: INSTALL_TIMEOUT_MS })
  return { project, install: succeeded('npm install', install), reused: false }
}

/**
 * What a kept project is valid for: its family (the layout and npm's flags, which name the folder, so
 * that a new key replaces its family's old copy only), and the package's dependencies, Node's ABI, npm.
 */
async function cacheKey(layout: Layout, options: InstallOptions): Promise<{ family: string; key: string }> {
  const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { dependencies?: unknown }
  const npm = (await exec('npm', ['--version'], { env: userEnv() })).stdout.trim()
  const family = `${layout}-${createHash('sha256').update(JSON.stringify([options.extra ?? [], options.manifest === undefined ? NEW_PROJECT : options.manifest])).digest('hex').slice(0, 8)}-`
  const hash = createHash('sha256').update(JSON.stringify([manifest.dependencies, process.version, process.arch, npm]))
  return { family, key: `${family}${hash.digest('hex').slice(0, 16)}` }
}

/**
 * `npm install <tarball>` in a copy of a project npm built earlier with the same key (cacheKey), or,
 * without one, in a new project whose result is then kept.
 */
export async function reinstall(tarball: string, layout: Layout, options: InstallOptions = {}): Promise<Installed> {
  const extra = options.extra ?? []
  const { family, key } = await cacheKey(layout, options)
  const kept = join(PACKAGE_CACHE, key)
  if (!existsSync(join(kept, '.complete'))) {
    const fresh = await freshInstall(tarball, layout, options)
    await keep(fresh.project, kept, family)
    return fresh
  }
  const project = await openTempDir('hookd-project-')
  await exec('cp', ['-a', `${join(kept, 'project')}/.`, project])
  const install = await run('npm', installArgs(tarball, layout, extra), { cwd: project, timeoutMs: INSTALL_TIMEOUT_MS })
  return { project, install: succeeded('npm install (over a kept project)', install), reused: true }
}

/** Keeps a copy of `project` as `kept` (another test process may have kept one first), and drops its family's older copies. */
async function keep(project: string, kept: string, family: string): Promise<void> {
  await mkdir(PACKAGE_CACHE, { recursive: true })
  const work = await mkdtemp(join(PACKAGE_CACHE, 'tmp-'))
  try {
    await exec('cp', ['-a', project, join(work, 'project')])
    await writeFile(join(work, '.complete'), '')
    await chmod(work, 0o755)
    await rename(work, kept).catch(() => rm(work, { recursive: true, force: true }))
  } catch (err) {
    await rm(work, { recursive: true, force: true })
    throw err
  }
  for (const old of await readdir(PACKAGE_CACHE)) {
    if (old.startsWith(family) && join(PACKAGE_CACHE, old) !== kept) await rm(join(PACKAGE_CACHE, old), { recursive: true, force: true })
  }
}

export interface Started {
  child: ChildProcess
  /** All it has printed so far; it keeps growing while it runs. */
  output: { stdout: string; stderr: string }
}

/**
 * Starts `file args...` in `cwd` with the user's environment and resolves once its stderr matches
 * `ready` (`hookd serve`: its listening line); rejects with what it printed if it exits first or is not
 * ready within `timeoutMs`.
 */
export function start(file: string, args: readonly string[], options: { cwd: string; ready: RegExp; timeoutMs?: number }): Promise<Started> {
  const child = spawn(file, args, { cwd: options.cwd, env: userEnv(), stdio: ['ignore', 'pipe', 'pipe'] })
  const output = { stdout: '', stderr: '' }
  child.stdout.on('data', (d: Buffer) => (output.stdout += d.toString()))
  return new Promise((resolve, reject) => {
    const fail = (why: string): void => {
      clearTimeout(timer)
      reject(new Error(`${file} ${args.join(' ')} ${why}:\n${output.stderr}`))
    }
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      fail(`was not ready within ${options.timeoutMs ?? 60_000} ms`)
    }, options.timeoutMs ?? 60_000)
    child.stderr.on('data', (d: Buffer) => {
      output.stderr += d.toString()
      if (options.ready.test(output.stderr)) {
        clearTimeout(timer)
        resolve({ child, output })
      }
    })
    child.once('error', (err) => fail(`could not start (${err.message})`))
    child.once('exit', (code, signal) => fail(`exited (${code ?? signal})`))
  })
}
