/**
 * hookd as users get it: this checkout packed with `npm pack` and installed by npm from the tarball,
 * then run as a user runs it, from the install. Paths that hold in the checkout (dist/ next to
 * node_modules/) need not hold there: npm's default layout hoists every dependency beside
 * hookd-sandbox in the project's node_modules, so hookd must find isolated-vm, its own files and the
 * worker bundle where Node resolved them (src/sidecar/worker/pool/worker-folders.ts).
 *
 * - **npm's default layout**, `npm install <tarball>` in a fresh project: the install (isolated-vm
 *   compiles), npm 11's allowScripts warning and the command docs/agents.md gives for it, then `new` +
 *   `test`, `check`, `invoke`, `serve --http` (its walls line, and a worker escaped from its isolate
 *   that tries to read the project's files), `setup claude-code`, and the real Claude Code CLI guarded
 *   by it; last, a dependency removed from node_modules.
 * - **the nested layout**, `npm install --install-strategy=nested <tarball>`: isolated-vm inside
 *   hookd-sandbox; `serve` and `invoke` through it; hookd's own files damaged.
 * - **a linked checkout**, `npm link` with a temp global prefix: `hookd check` through the link.
 *
 * The docs' own command blocks (README's install and quickstart, docs/agents.md's start here) and
 * docs/writing-hooks.md's type check run from the install in docs-run.test.ts.
 *
 * Not here: `npm install -g <tarball>` and `npx --package <tarball> hookd`. Each compiles isolated-vm
 * every time (60-90 s of CPU): a global tree keeps no lockfile, so npm reinstalls every dependency of a
 * new hookd-sandbox (measured: "changed 105 packages" over a copy of an earlier global install), and npx
 * installed the tarball into its cache folder again on each run. Both put hookd where this file's
 * layouts do: a global install nests the dependencies in lib/node_modules/hookd-sandbox/node_modules
 * like the nested layout, and npx hoists them in its cache folder like the default layout. Run by hand
 * from the same tarball: global `check` and `serve` (walls: "reads only
 * <prefix>/lib/node_modules/hookd-sandbox"), npx `--help`, `check` and `serve` (walls: its cache
 * folder's hookd-sandbox and isolated-vm), and `--allow-scripts=file:<tarball>,isolated-vm,esbuild,
 * protobufjs` left npm -g with nothing to warn about.
 *
 * What it costs (2 cores, the rest of the suite beside it): the fresh install compiles isolated-vm every
 * run, 60-90 s of CPU and 1-3 minutes of wall time. The nested install reuses a project npm built
 * before for the same dependencies, Node and npm (test/support/packed.ts, under .cache/package-test/):
 * npm replaces hookd-sandbox from the tarball in ~2 s; on a cold machine it compiles too, once. npm's
 * download cache is .cache/package-test/npm. The commands and the Claude Code run add ~20 s.
 */
import { existsSync } from 'node:fs'
import { cp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startAnthropicApi } from '../agents/support/anthropic-api.js'
import { type BashCall, oneCallPerTurn, resultOf, survived } from '../agents/support/bash-calls.js'
import { agentCli } from '../agents/support/cli.js'
import { runClaude } from '../agents/support/claude-run.js'
import { INSTALL_TIMEOUT_MS, type Installed, SCRIPTED_PACKAGES, type Started, freshInstall, openTempDir, pack, reinstall, run, start, succeeded, userEnv } from '../support/packed.js'
import { LISTENING_LINE, ROOT, stopProcess } from '../support/processes.js'

const RM = JSON.stringify({ id: 'c1', name: 'shell', arguments: { command: 'rm -rf /tmp/x' } })
const REFUSED = { allow: false, reason: "'rm -rf' is blocked by the guard hook", refusedBy: 'guard', arguments: { command: 'rm -rf /tmp/x' } }
const ESCAPED = join(ROOT, 'test', 'walls', 'fixtures', 'escaped.mjs')

let work: string
let tarball: string

beforeAll(async () => {
  work = await openTempDir('hookd-pack-')
  tarball = await pack(work)
}, 120_000)

afterAll(async () => {
  await rm(work, { recursive: true, force: true })
})

/** The walls line `hookd serve` prints. */
function wallsOf(stderr: string): string {
  const line = /^hookd: walls: (.*)$/m.exec(stderr)?.[1]
  if (!line) throw new Error(`hookd serve printed no walls line:\n${stderr}`)
  return line
}

describe("npm's default layout: npm install <tarball> in a fresh project", () => {
  let a: Installed
  let hookd: string
  let serving: Started | undefined
  /** `npx hookd-sandbox ARGS` in the project (--no: never fetched from the registry should npx not find it). */
  const npx = (args: string[]) => run('npx', ['--no', 'hookd-sandbox', ...args], { cwd: a.project })

  beforeAll(async () => {
    a = await freshInstall(tarball, 'hoisted')
    hookd = join(a.project, 'node_modules', 'hookd-sandbox')
  }, INSTALL_TIMEOUT_MS)

  afterAll(async () => {
    if (serving) await stopProcess(serving.child)
    if (a) await rm(a.project, { recursive: true, force: true })
  })

  it('hoists isolated-vm beside hookd-sandbox and compiles it; npm 11 names the install scripts it ran that no allowScripts covers', async () => {
    expect(a.install.stdout).toMatch(/^added \d+ packages in /m)
    await stat(join(a.project, 'node_modules', 'isolated-vm', 'out', 'isolated_vm.node'))
    await expect(stat(join(hookd, 'node_modules'))).rejects.toThrow(/ENOENT/)
    // The install script compiled the command shim too.
    await stat(join(hookd, 'build', 'hookd-hook'))
    const npm = (await run('npm', ['--version'], { cwd: a.project })).stdout.trim()
    if (npm.startsWith('11.')) {
      expect(a.install.stderr).toMatch(/^npm warn install-scripts 4 packages have install scripts not yet covered by allowScripts:$/m)
      const named = [...a.install.stderr.matchAll(/^npm warn install-scripts {3}(\S+)@\S+ \(/gm)].map((m) => m[1]).sort()
      expect(named).toEqual([...SCRIPTED_PACKAGES].sort())
    }
  })

  it('`npm install-scripts approve hookd-sandbox isolated-vm esbuild protobufjs` covers exactly those: npm then has nothing to warn about', async () => {
    succeeded('npm install-scripts approve', await run('npm', ['install-scripts', 'approve', ...SCRIPTED_PACKAGES], { cwd: a.project }))
    const manifest = JSON.parse(await readFile(join(a.project, 'package.json'), 'utf8')) as { allowScripts: Record<string, boolean> }
    // From a tarball, npm records hookd-sandbox by where it came from; from the registry, by name.
    expect(manifest.allowScripts).toEqual({ [`file:${tarball}`]: true, 'isolated-vm': true, esbuild: true, protobufjs: true })
    expect(succeeded('npm install-scripts ls', await run('npm', ['install-scripts', 'ls'], { cwd: a.project })).stdout.trim()).toBe('No packages with unreviewed install scripts.')
    const again = succeeded('npm install', await run('npm', ['install'], { cwd: a.project }))
    expect(again.stdout).toMatch(/^up to date in /m)
    expect(again.stderr).not.toContain('not yet covered by allowScripts')
  })

  it('hookd new writes a guard, and hookd test runs its cases in the sandbox', async () => {
    const made = await npx(['new', 'guard'])
    expect(made.code, made.stderr).toBe(0)
    expect(made.stdout).toMatch(/^created hooks\/guard\/$/m)
    const tested = await npx(['test', 'hooks/guard'])
    expect(tested.code, tested.stderr).toBe(0)
    expect(tested.stdout).toMatch(/^2 cases: 2 passed, 0 failed$/m)
  })

  it("OpenCode's plugin is in the package as hookd-sandbox/opencode, the file hookd setup opencode names", async () => {
    const imported = succeeded('node', await run('node', ['--input-type=module', '-e', "const m = await import('hookd-sandbox/opencode'); console.log(typeof m.HookdPlugin, m.default === m.HookdPlugin)"], { cwd: a.project }))
    expect(imported.stdout.trim()).toBe('function true')
    expect(existsSync(join(hookd, 'dist', 'agents', 'opencode', 'plugin.js'))).toBe(true)
  })

  it('hookd check loads the hooks as the sidecar would', async () => {
    const checked = await npx(['check', 'hooks'])
    expect(checked.code, checked.stderr).toBe(0)
    expect(`${checked.stdout}${checked.stderr}`).toContain(`checked 1 hook in ${join(a.project, 'hooks')}: 1 would load, 0 would not; 0 warnings`)
  })

  it('hookd invoke runs the guard in its own sandbox: rm -rf is refused', async () => {
    const invoked = await npx(['invoke', '--hook', 'guard', '--point', 'beforeToolExecute', '--payload', RM])
    expect(invoked.code, invoked.stderr).toBe(0)
    expect((JSON.parse(invoked.stdout) as { result: unknown }).result).toEqual(REFUSED)
  })

  it("hookd serve --http: every wall up, the workers reading exactly hookd's folder and isolated-vm's", async () => {
    serving = await start(join(a.project, 'node_modules', '.bin', 'hookd-sandbox'), ['serve', '--hooks', 'hooks', '--http', '0', '--workers', '1'], {
      cwd: a.project,
      ready: LISTENING_LINE,
    })
    expect(serving.output.stderr).toMatch(/^hookd: http on http:\/\/127\.0\.0\.1:\d+$/m)
    const walls = wallsOf(serving.output.stderr)
    expect(walls).toContain(`; permission model: reads only ${hookd} and ${join(a.project, 'node_modules', 'isolated-vm')}; no writes, no child processes, no threads; `)
    if (process.getuid?.() === 0) expect(walls).toContain('; user: an unprivileged uid/gid per worker (from 1900000000), no capabilities, no-new-privs')
    const invoked = await npx(['invoke', '--addr', 'unix:.hookd/hookd.sock', '--hook', 'guard', '--point', 'beforeToolExecute', '--payload', RM])
    expect(invoked.code, invoked.stderr).toBe(0)
    expect((JSON.parse(invoked.stdout) as { result: unknown }).result).toEqual(REFUSED)
  })

  it("a hook escaped from its isolate reads hookd's and isolated-vm's files, and nothing of the project's: not its token, package.json or other packages", async () => {
    // The escaped-hook fixture, started exactly as this install starts a worker (its walls.ts), from
    // inside hookd's folder as a worker's bundle is.
    const entry = join(hookd, 'escaped.mjs')
    await cp(ESCAPED, entry)
    const { walls } = (await import(pathToFileURL(join(hookd, 'dist', 'sidecar', 'worker', 'pool', 'walls.js')).href)) as typeof import('../../src/sidecar/worker/pool/walls.js')
    const command = walls({}).command(entry, [], 4343)
    const token = join(a.project, '.hookd', 'http-token')
    const reads = [
      join(hookd, 'package.json'),
      join(a.project, 'node_modules', 'isolated-vm', 'package.json'),
      token,
      join(a.project, 'package.json'),
      join(a.project, 'node_modules', 'zod', 'package.json'),
      join(a.project, 'node_modules', '.package-lock.json'),
    ]
    const ran = await run(command.file, [...command.args, token, a.project, '1', String(process.pid), '0', JSON.stringify(reads)], { cwd: command.cwd, exactEnv: command.env })
    expect(ran.code, ran.stderr).toBe(0)
    const report = JSON.parse(ran.stdout.split('\n')[0] as string) as { readSecret: unknown; write: unknown; reads: Array<{ path: string; ok: boolean; error?: string }> }
    expect(report.reads.map((r) => [r.path, r.ok ? 'read' : r.error])).toEqual([
      [reads[0], 'read'],
      [reads[1], 'read'],
      [token, 'ERR_ACCESS_DENIED'],
      [reads[3], 'ERR_ACCESS_DENIED'],
      [reads[4], 'ERR_ACCESS_DENIED'],
      [reads[5], 'ERR_ACCESS_DENIED'],
    ])
    expect(report.write).toMatchObject({ ok: false, error: 'ERR_ACCESS_DENIED' })
    await rm(entry)
    // The sidecar still serves.
    const invoked = await npx(['invoke', '--addr', 'unix:.hookd/hookd.sock', '--hook', 'guard', '--point', 'beforeToolExecute', '--payload', RM])
    expect((JSON.parse(invoked.stdout) as { result: unknown }).result).toEqual(REFUSED)
  })

  it(
    'hookd setup claude-code points the project at it, and the real Claude Code is guarded: rm -rf is refused, its folder survives, the model reads why',
    async () => {
      const claude = await agentCli('claude')
      const setup = await npx(['setup', 'claude-code', '--hooks', 'guard'])
      expect(setup.code, setup.stderr).toBe(0)
      const settings = JSON.parse(await readFile(join(a.project, '.claude', 'settings.local.json'), 'utf8')) as { hooks: Record<string, unknown> }
      expect(Object.keys(settings.hooks)).toContain('PreToolUse')
      await writeFile(join(a.project, 'keep.txt'), 'keep me\n')
      for (const victim of ['victim', 'victim-free']) {
        await cp(join(a.project, 'keep.txt'), join(a.project, victim, 'keep.txt'), { recursive: true })
      }
      const calls = [
        { id: 'toolu_pkg_rm', command: 'rm -rf victim' },
        { id: 'toolu_pkg_free', command: 'rm -r victim-free' },
      ] as const satisfies readonly BashCall[]
      const stand = await startAnthropicApi({ script: oneCallPerTurn(calls) })
      try {
        const ran = await runClaude({ claude, apiUrl: stand.url, cwd: a.project })
        await rm(ran.home, { recursive: true, force: true })
        expect(ran.code, ran.stderr).toBe(0)
        expect(survived(a.project, 'victim')).toBe(true)
        expect(resultOf(stand, calls, 'toolu_pkg_rm')).toEqual({ tool_use_id: 'toolu_pkg_rm', is_error: true, text: "PreToolUse:Bash hook error: 'rm -rf' is blocked by the guard hook" })
        // The call no hook objects to runs: the folder above survived the hook, not the tool.
        expect(survived(a.project, 'victim-free')).toBe(false)
        expect(resultOf(stand, calls, 'toolu_pkg_free').is_error).toBe(false)
      } finally {
        await stand.stop()
      }
    },
    5 * 60_000,
  )

  it('a dependency gone from node_modules: hookd says, in readable lines, that its install is incomplete and to reinstall', async () => {
    const zod = join(a.project, 'node_modules', 'zod')
    await rename(zod, `${zod}.away`)
    try {
      const checked = await npx(['check', 'hooks'])
      expect(checked.code).toBe(1)
      const lines = checked.stderr.trimEnd().split('\n')
      expect(lines[0]).toMatch(new RegExp(`^hookd check: unexpected failure: Error \\[ERR_MODULE_NOT_FOUND\\]: Cannot find package 'zod' imported from ${hookd}/dist/`))
      expect(lines.at(-1)).toMatch(/^hookd check: hookd \S+ \(Node v\S+, linux \S+\) is missing a module it needs: reinstall hookd-sandbox \(npm install hookd-sandbox\) so that npm installs all of its dependencies; if that does not help, please report it, with the lines above, to the maintainers of the hookd-sandbox package$/)
    } finally {
      await rename(`${zod}.away`, zod)
    }
  })
})

describe('the nested layout: npm install --install-strategy=nested <tarball>', () => {
  let b: Installed
  let hookd: string
  const bin = (): string => join(b.project, 'node_modules', '.bin', 'hookd')

  beforeAll(async () => {
    b = await reinstall(tarball, 'nested')
    hookd = join(b.project, 'node_modules', 'hookd-sandbox')
  }, INSTALL_TIMEOUT_MS)

  afterAll(async () => {
    if (b) await rm(b.project, { recursive: true, force: true })
  })

  it('keeps isolated-vm inside hookd-sandbox, and hookd-sandbox is this tarball', async () => {
    console.info(`nested layout: ${b.reused ? 'npm reinstalled hookd-sandbox over a project it built before' : 'installed fresh (isolated-vm compiled), kept for next time'}`)
    if (b.reused) expect(b.install.stdout).toMatch(/^changed 1 package in /m)
    await stat(join(hookd, 'node_modules', 'isolated-vm', 'out', 'isolated_vm.node'))
    await expect(stat(join(b.project, 'node_modules', 'isolated-vm'))).rejects.toThrow(/ENOENT/)
    const manifest = JSON.parse(await readFile(join(b.project, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }
    expect(manifest.dependencies['hookd-sandbox']).toMatch(/^file:.*\.tgz$/)
    // What npm extracted is what this checkout packed: the built CLI, byte for byte.
    expect(await readFile(join(hookd, 'dist', 'cli', 'main.js'), 'utf8')).toBe(await readFile(join(ROOT, 'dist', 'cli', 'main.js'), 'utf8'))
  })

  it("hookd serve: the workers read hookd's folder alone (isolated-vm is inside it), and invoke through it refuses rm -rf", async () => {
    const hooks = join(b.project, 'hooks')
    await cp(join(ROOT, 'hooks', 'guard', 'index.js'), join(hooks, 'guard', 'index.js'), { recursive: true })
    const serving = await start(bin(), ['serve', '--hooks', 'hooks', '--workers', '1'], { cwd: b.project, ready: LISTENING_LINE })
    try {
      expect(wallsOf(serving.output.stderr)).toContain(`; permission model: reads only ${hookd}; no writes, no child processes, no threads; `)
      const invoked = await run(bin(), ['invoke', '--addr', 'unix:.hookd/hookd.sock', '--hook', 'guard', '--point', 'beforeToolExecute', '--payload', RM, '--auto-approve'], { cwd: b.project })
      expect(invoked.code, invoked.stderr).toBe(0)
      expect((JSON.parse(invoked.stdout) as { result: unknown }).result).toMatchObject({ allow: true })
      const refused = await run(bin(), ['invoke', '--addr', 'unix:.hookd/hookd.sock', '--hook', 'guard', '--point', 'beforeToolExecute', '--payload', RM], { cwd: b.project })
      expect((JSON.parse(refused.stdout) as { result: unknown }).result).toEqual({ ...REFUSED, reason: 'refused by the user' })
    } finally {
      expect(await stopProcess(serving.child)).toBe(0)
    }
  })

  it("hookd's own code damaged (a file of dist/ gone): the command says, in readable lines, to reinstall", async () => {
    const text = join(hookd, 'dist', 'protocol', 'text.js')
    await rename(text, `${text}.away`)
    try {
      const ran = await run(bin(), ['--version'], { cwd: b.project })
      expect(ran.code).toBe(1)
      const lines = ran.stderr.trimEnd().split('\n')
      expect(lines[0]).toBe(`hookd: could not load its own code (${join(hookd, 'dist', 'cli', 'bin.js')}): Error [ERR_MODULE_NOT_FOUND]: Cannot find module '${text}' imported from ${join(hookd, 'dist', 'cli', 'main.js')}`)
      expect(lines.slice(1, -1).every((line) => /^ {4}at /.test(line))).toBe(true)
      expect(lines.at(-1)).toBe(
        'hookd: reinstall the package (npm install hookd-sandbox) so that npm installs all of its dependencies; if that does not help, please report it, with the lines above, to the maintainers of the hookd-sandbox package',
      )
    } finally {
      await rename(`${text}.away`, text)
    }
  })
})

describe('a linked checkout: npm link', () => {
  let prefix: string

  beforeAll(async () => {
    prefix = await openTempDir('hookd-link-')
  })

  afterAll(async () => {
    await rm(prefix, { recursive: true, force: true })
  })

  it("hookd check runs through the link npm made in a global prefix (this checkout's node_modules untouched)", async () => {
    const modules = await stat(join(ROOT, 'node_modules'))
    // npm_config_prefix in the environment, not --prefix, which would also make the checkout's own prefix the temp folder.
    const linked = succeeded('npm link', await run('npm', ['link'], { cwd: ROOT, env: { npm_config_prefix: prefix } }))
    expect(linked.stdout).toMatch(/^added 1 package in /m)
    expect((await stat(join(ROOT, 'node_modules'))).mtimeMs).toBe(modules.mtimeMs)
    const hooks = await openTempDir('hookd-link-hooks-')
    try {
      await cp(join(ROOT, 'hooks', 'guard'), join(hooks, 'guard'), { recursive: true, filter: (src) => !src.endsWith('.test.ts') })
      const checked = await run(join(prefix, 'bin', 'hookd'), ['check', hooks], { cwd: hooks })
      expect(checked.code, checked.stderr).toBe(0)
      expect(`${checked.stdout}${checked.stderr}`).toContain(`checked 1 hook in ${hooks}: 1 would load, 0 would not; 0 warnings`)
    } finally {
      await rm(hooks, { recursive: true, force: true })
    }
  })
})

// userEnv is the environment every command above runs with; a test of it keeps it from drifting into the user's cache.
it("npm here uses the cache under .cache/package-test/, never the user's", async () => {
  expect(userEnv().npm_config_cache).toBe(join(ROOT, '.cache', 'package-test', 'npm'))
  const ran = succeeded('npm config get cache', await run('npm', ['config', 'get', 'cache'], { cwd: work }))
  expect(ran.stdout.trim()).toBe(join(ROOT, '.cache', 'package-test', 'npm'))
})
