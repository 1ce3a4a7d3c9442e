/**
 * The docs run (issue 28, item 7): every command block of README.md's "Installing it in your project"
 * and "Quickstart" and of docs/agents.md's "Claude Code users start here" is read from the doc when
 * the test runs (test/support/doc-blocks.ts) and run, in order, in a fresh project where npm installed
 * this checkout's packed tarball, as a user runs it: in bash, from the project's folder, with a home
 * folder of the test's own. What the doc shows the user (a JSON answer, a line on stderr, a file it
 * writes, Claude Code refusing `rm -rf`) is compared with what really came out. A command no step
 * below knows fails its block, naming it, so that no block drifts past the test untested.
 *
 * Commands run as written, except where a user's machine differs from a test's; each such step says
 * so (SUBSTITUTED below):
 * - `npm install [flags] hookd-sandbox` installs the packed tarball, the same package, with the same
 *   flags (test/support/packed.ts reinstall: over a project npm built earlier for the same flags, so
 *   that isolated-vm is not compiled again);
 * - `--http 7390` becomes `--http 0` (the system picks a free port; 7390 may be taken here) and every
 *   `7390` the doc shows is read as that port;
 * - `claude` (interactive) is the pinned real Claude Code in `-p` mode against the Messages API
 *   stand-in (test/agents/support/), whose model asks for the doc's `rm -rf build`;
 * - `npx hookd-sandbox up` gets `--service process` (no systemd --user here) and runs with HOME, and so
 *   its state folder, in the test's temp folder;
 * - a command ending in `&` runs in the background until its ready line, and is stopped at the end.
 * Besides, the project is made a git repository (a user's project is one: the team path commits it),
 * and holds the `build/` folder the model asks to delete.
 *
 * The README's `make run` and `make test` are the clone's commands, not the package's: `make test` is
 * CI itself, and test/integration/cli/make-run.test.ts runs `make run` in this checkout (the address and
 * the command it prints, and that command's answer against the README). Here, the Quickstart's invoke
 * runs against what `make run` starts (the Makefile's own `serve` line, dry-run with `make -n`) from
 * the installed package, in the project, with the clone's example hooks. The README's sections run
 * Installing first: the quickstart's commands need hookd installed, which a clone gets from `make run`
 * and a project from the install.
 *
 * docs/agents.md's blocks after the install are alternatives ("choose how hookd reaches Claude Code"):
 * each runs in its own copy of the project as the first block left it, with a home of its own. Last,
 * docs/writing-hooks.md's type-check advice, `npx --package typescript tsc -p ...`, runs exactly as the
 * doc gives it in a project without TypeScript (npx fetches it into npm's cache under .cache/), on the
 * `hookd new --ts` scaffold and on the tutorial's hook, and fails on the type error the doc names.
 *
 * Time: the pack is shared with the run's other package tests; each project is a copy of one npm built
 * before (~2 s of npm); the two Claude Code runs take seconds each.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { cp, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startAnthropicApi } from '../agents/support/anthropic-api.js'
import { type BashCall, oneCallPerTurn, resultOf, survived } from '../agents/support/bash-calls.js'
import { agentCli } from '../agents/support/cli.js'
import { runClaude } from '../agents/support/claude-run.js'
import { type DocBlock, type DocCommand, blockName, blocks, commands, differences, quoted, readDoc, shownJson, words } from '../support/doc-blocks.js'
import { INSTALL_TIMEOUT_MS, type Ran, openTempDir, pack, reinstall, run, succeeded, userEnv } from '../support/packed.js'
import { LISTENING_LINE, ROOT } from '../support/processes.js'

const README = 'README.md'
const AGENTS = 'docs/agents.md'
const WRITING = 'docs/writing-hooks.md'
const START_HERE = 'Claude Code users start here'

let work: string
let tarball: string

beforeAll(async () => {
  work = await openTempDir('hookd-docs-')
  tarball = await pack(work)
}, 120_000)

/** A user of the docs: a home folder, and the projects and background commands they started. */
interface User {
  home: string
  env: NodeJS.ProcessEnv
  project: string
  /** The last command's output, for a JSON block that shows it. */
  last?: { command: DocCommand; ran: Ran }
  /** What the last `npm install` printed. */
  install?: Ran
  /** The front door's port, once `serve --http` runs. */
  port?: number
}

const background: Array<{ child: ChildProcess; what: string }> = []
const cleanups: Array<() => Promise<unknown>> = []

afterAll(async () => {
  for (const { child } of background.splice(0)) await stopGroup(child)
  // Last made, first undone: a user's hookd is stopped before its project goes.
  const failures: unknown[] = []
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch((err: unknown) => failures.push(err))
  if (work) await rm(work, { recursive: true, force: true })
  if (failures.length > 0) throw new AggregateError(failures, 'cleaning up after the docs failed')
}, 120_000)

/** A new user: a home folder of their own under the test's folder, and the environment their shell gives. */
async function newUser(project = ''): Promise<User> {
  const home = await mkdtemp(join(work, 'home-'))
  // The user's shell: PATH, HOME, a temp folder, npm's cache under .cache/ (packed.ts userEnv). npm reads
  // no user config in the new home, as for a user who never configured npm.
  return { home, env: userEnv({ HOME: home }), project }
}

/** `text` in bash, in the user's project folder (or `cwd`), with the user's environment. */
function bash(user: User, text: string, options: { cwd?: string; timeoutMs?: number } = {}): Promise<Ran> {
  return run('bash', ['-c', text], { cwd: options.cwd ?? user.project, exactEnv: user.env, timeoutMs: options.timeoutMs ?? 180_000 })
}

/** Starts `text` in bash in the background (its own process group) and resolves once `ready` holds for what it printed. */
function startBackground(user: User, text: string, ready: (output: string) => boolean): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn('bash', ['-c', `exec ${text}`], { cwd: user.project, env: user.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  background.push({ child, what: text })
  let out = ''
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()))
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`\`${text}\` was not ready within 60 s:\n${out}`)), 60_000)
    child.stderr?.on('data', () => {
      if (ready(out)) {
        clearTimeout(timer)
        resolve({ child, output: () => out })
      }
    })
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`\`${text}\` exited (${code ?? signal}) before it was ready:\n${out}`))
    })
  })
}

/** Stops a background command's process group (npx and the hookd it runs): SIGTERM, then SIGKILL after 20 s. */
async function stopGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()))
  const signal = (name: NodeJS.Signals): void => {
    try {
      process.kill(-(child.pid as number), name)
    } catch {
      // The group is gone already.
    }
  }
  signal('SIGTERM')
  const timer = setTimeout(() => signal('SIGKILL'), 20_000)
  await exited
  clearTimeout(timer)
}

/** Fails, saying which command of which block, unless it exited 0. */
function ok(command: DocCommand, ran: Ran): Ran {
  return succeeded(`${blockName(command.block)}: \`${command.head}\``, ran)
}

/** The packages npm's allowScripts warning names. */
function warned(install: Ran): string[] {
  return [...install.stderr.matchAll(/^npm warn install-scripts {3}(\S+?)@\S+ \(/gm)].map((m) => m[1] as string).sort()
}

/** A step: the commands it runs (matched on their first line, comment left out), and what the user sees. */
interface Step {
  match: RegExp
  run(command: DocCommand, user: User): Promise<void>
}

/** `mkdir -p DIR && cat > FILE <<'EOF'`: a file the doc writes, its text in the here-document. */
const WRITE_FILE = /^mkdir -p (\S+) && cat > (\S+) <<'EOF'$/

const STEPS: Step[] = [
  {
    // The clone's: test/integration/cli/make-run.test.ts runs it in this checkout. Here, what it starts,
    // from the installed package: the Makefile's own serve line (make -n prints it; -o keeps make from
    // planning the install and build rules, which would be npm ci and npm run build), its program
    // `node bin/hookd.js` (the clone's hookd) replaced by the project's `npx hookd-sandbox`, serving
    // the clone's example hooks.
    match: /^make run$/,
    async run(_command, user) {
      const plan = succeeded('make -n run', await run('make', ['-n', '-s', '-o', 'node_modules/.installed', '-o', 'dist/.built', '-o', 'build/hookd-hook', 'run'], { cwd: ROOT }))
      const serve = /^exec node bin\/hookd\.js (serve .*)$/m.exec(plan.stdout)?.[1]
      if (!serve) throw new Error(`the Makefile's run target runs no \`exec node bin/hookd.js serve ...\`:\n${plan.stdout}`)
      await cp(join(ROOT, 'hooks'), join(user.project, 'hooks'), { recursive: true })
      const started = await startBackground(user, `npx hookd-sandbox ${serve}`, (s) => LISTENING_LINE.test(s))
      // README: "`make run` prints the address (`unix:.hookd/hookd.sock`)" (make-run.test.ts checks
      // that line); the sidecar listens there, in the folder it runs in.
      const address = quoted(README, 'Quickstart', /^unix:/)
      expect(LISTENING_LINE.exec(started.output())?.[1]).toBe(`unix:${join(user.project, address.slice('unix:'.length))}`)
    },
  },
  {
    // The clone's: `make test` is the whole suite, which CI runs; this test is part of it.
    match: /^make test$/,
    async run() {},
  },
  {
    match: /^npx hookd-sandbox invoke /,
    async run(command, user) {
      const ran = ok(command, await bash(user, command.text))
      user.last = { command, ran }
    },
  },
  {
    // SUBSTITUTED: the package named is this checkout's packed tarball, installed with the doc's flags.
    match: /^npm install (--\S+ )*hookd-sandbox$/,
    async run(command, user) {
      const flags = words(command.head).slice(2, -1)
      const installed = await reinstall(tarball, 'hoisted', { extra: flags })
      cleanups.push(() => rm(installed.project, { recursive: true, force: true }))
      user.project = installed.project
      user.install = installed.install
      // The user's project is a git repository (the team path commits it); here it becomes one.
      succeeded('git init', await bash(user, 'git init -q'))
      // Both docs say npm warns that scripts are `not yet covered by allowScripts`, and what the warning says.
      const doc = command.block.doc
      expect(installed.install.stderr).toContain(quoted(doc, command.block.section, /not yet covered by allowScripts/))
      const manifest = JSON.parse(await readFile(join(user.project, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>
      const where = flags.includes('--save-dev') ? 'devDependencies' : 'dependencies'
      expect(manifest[where]?.['hookd-sandbox'], `hookd-sandbox in ${where}`).toMatch(/^file:.*\.tgz$/)
      // "compiled isolated-vm": its addon is built.
      await stat(join(user.project, 'node_modules', 'isolated-vm', 'out', 'isolated_vm.node'))
    },
  },
  {
    match: /^npm install-scripts approve( [\w@/.-]+)+$/,
    async run(command, user) {
      const named = words(command.head).slice(3)
      // README: "To allow exactly these four, and nothing else": the packages the install's warning named.
      expect(warned(user.install as Ran)).toEqual([...named].sort())
      ok(command, await bash(user, command.text))
      const manifest = JSON.parse(await readFile(join(user.project, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> }
      // From a tarball npm records hookd-sandbox by where it came from (from the registry: by its name).
      const recorded = named.map((name) => (name === 'hookd-sandbox' ? `file:${tarball}` : name))
      expect(manifest.allowScripts).toEqual(Object.fromEntries(recorded.map((name) => [name, true])))
      // "later installs stop warning, and pass even with npm's strict-allow-scripts".
      const later = succeeded('npm install --strict-allow-scripts', await bash(user, 'npm install --strict-allow-scripts'))
      expect(later.stderr).not.toContain('allowScripts')
    },
  },
  {
    match: WRITE_FILE,
    async run(command, user) {
      ok(command, await bash(user, command.text))
      const file = (WRITE_FILE.exec(command.head) as RegExpExecArray)[2] as string
      const body = command.text.split('\n').slice(1, -1).join('\n')
      expect(await readFile(join(user.project, file), 'utf8')).toBe(`${body}\n`)
    },
  },
  {
    match: /^npx hookd-sandbox init claude-code --hooks \S+$/,
    async run(command, user) {
      ok(command, await bash(user, command.text))
      const text = await readFile(join(user.project, '.claude', 'settings.json'), 'utf8')
      // "no token, no port, no path of anyone's machine".
      for (const local of [user.project, user.home, work, ROOT]) expect(text).not.toContain(local)
      expect(text).not.toMatch(/hkd_|Bearer|127\.0\.0\.1/)
      // "Each entry runs the shim `hookd up` installs, `${HOOKD_STATE_DIR:-...}/bin/hookd-hook --hooks-dir hooks /claude-code/guard`".
      const [shim, ...args] = quoted(AGENTS, START_HERE, /^\$\{HOOKD_STATE_DIR:-\$HOME\/\.local\/state\/hookd\}\/bin\/hookd-hook /).split(' ')
      const entries = Object.values((JSON.parse(text) as { hooks: Record<string, Array<{ hooks: Array<{ type: string; command: string }> }>> }).hooks).flat().flatMap((m) => m.hooks)
      expect(entries.length).toBeGreaterThan(0)
      for (const entry of entries) {
        expect(entry.type).toBe('command')
        expect(entry.command).toContain(`"${shim}"`)
        expect(entry.command).toMatch(new RegExp(args.map((a) => a.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join(' (?:.* )?')))
        // "Where hookd is not set up, the entry itself refuses the call" ... "except at the events that
        // begin or end a run, whose entries say `--fail-open`".
        if (entry.command.includes(' --fail-open ')) expect(entry.command).toMatch(/\[ -x "\$h" \] \|\| exit 0; exec "\$h" --fail-open /)
        else expect(entry.command).toContain(quoted(AGENTS, START_HERE, /^hookd is not set up for this user: /))
      }
      // The guard is a gate: its PreToolUse entry refuses.
      const gate = (JSON.parse(text) as { hooks: Record<string, Array<{ hooks: Array<{ command: string }> }>> }).hooks['PreToolUse']?.flatMap((m) => m.hooks) ?? []
      expect(gate.length).toBeGreaterThan(0)
      for (const entry of gate) expect(entry.command).not.toContain('--fail-open')
    },
  },
  {
    match: /^git add( \S+)+$/,
    async run(command, user) {
      ok(command, await bash(user, command.text))
      // Each path named is staged, whole: nothing of it left untracked or unstaged.
      for (const path of words(command.head).slice(2)) {
        const status = succeeded('git status', await bash(user, `git status --porcelain --untracked-files=all -- ${path}`))
        const lines = status.stdout.split('\n').filter(Boolean)
        expect(lines.length, `${path} is staged`).toBeGreaterThan(0)
        for (const line of lines) expect(line).toMatch(/^A {2}/)
      }
    },
  },
  {
    // SUBSTITUTED: --service process (systemd --user is not available here); HOME is the user's temp home.
    match: /^npx hookd-sandbox up$/,
    async run(command, user) {
      cleanups.push(async () => succeeded('npx hookd-sandbox down', await bash(user, 'npx hookd-sandbox down')))
      const ran = ok(command, await bash(user, `${command.text} --service process`, { timeoutMs: 120_000 }))
      expect(ran.stdout).toContain('is up for this user')
      // "installed the shim in your state folder (`~/.local/state/hookd`, mode 0700)".
      const state = quoted(AGENTS, START_HERE, /^~\/\.local\/state\/hookd$/).replace(/^~/, user.home)
      expect((await stat(state)).mode & 0o777).toBe(0o700)
      await stat(join(state, 'bin', 'hookd-hook'))
    },
  },
  {
    // SUBSTITUTED: --http 0 for --http 7390, in the background until hookd says where it listens.
    match: /^npx hookd-sandbox serve --hooks \S+ --http 7390$/,
    async run(command, user) {
      if (!command.background) throw new Error(`${blockName(command.block)}: \`${command.head}\` without \`&\` would hold the terminal: the doc runs it in the background`)
      const started = await startBackground(user, command.text.replace(/--http 7390\b/, '--http 0'), (s) => LISTENING_LINE.test(s) && /^hookd: http on /m.test(s))
      const port = Number(/^hookd: http on http:\/\/127\.0\.0\.1:(\d+)$/m.exec(started.output())?.[1])
      user.port = port
      // "prints `hookd: http on http://127.0.0.1:7390`".
      expect(started.output()).toContain(`${quoted(AGENTS, START_HERE, /^hookd: http on /).replace('7390', String(port))}\n`)
      // "makes a token, `.hookd/http-token` (folder 0700, file 0600 ...), and records the URL in `.hookd/http-url`".
      const token = join(user.project, quoted(AGENTS, START_HERE, /^\.hookd\/http-token$/))
      expect((await stat(join(user.project, '.hookd'))).mode & 0o777).toBe(0o700)
      expect((await stat(token)).mode & 0o777).toBe(0o600)
      expect((await readFile(join(user.project, quoted(AGENTS, START_HERE, /^\.hookd\/http-url$/)), 'utf8')).trim()).toBe(`http://127.0.0.1:${port}`)
      // "`.hookd/.gitignore` keeps it out of git".
      await stat(join(user.project, quoted(AGENTS, START_HERE, /^\.hookd\/\.gitignore$/)))
    },
  },
  {
    match: /^npx hookd-sandbox setup claude-code --hooks \S+$/,
    async run(command, user) {
      ok(command, await bash(user, command.text))
      // "Each runs hookd's shim with the token's file: `hookd-hook --token-file /path/to/.hookd/http-token --timeout 30 http://127.0.0.1:7390/claude-code/guard`".
      const shown = quoted(AGENTS, START_HERE, /^hookd-hook --token-file /)
        .replace('/path/to/.hookd/http-token', join(user.project, '.hookd', 'http-token'))
        .replace('7390', String(user.port))
      const settings = JSON.parse(await readFile(join(user.project, '.claude', 'settings.local.json'), 'utf8')) as { hooks: Record<string, Array<{ hooks: Array<{ type: string; command: string }> }>> }
      const entries = Object.values(settings.hooks).flat().flatMap((m) => m.hooks)
      expect(entries.length).toBeGreaterThan(0)
      // Entries at the events that begin or end a run say `--fail-open` first; the rest are as shown.
      for (const entry of entries) {
        expect(entry.command.replace(/\/hookd-hook --fail-open /, '/hookd-hook ')).toMatch(new RegExp(`^\\S*/${shown.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`))
      }
      const gate = settings.hooks['PreToolUse']?.flatMap((m) => m.hooks) ?? []
      expect(gate.length).toBeGreaterThan(0)
      for (const entry of gate) expect(entry.command).not.toContain('--fail-open')
    },
  },
  {
    // SUBSTITUTED: the pinned Claude Code in -p mode (nobody at a terminal) against the Messages API
    // stand-in, whose model asks for the doc's `rm -rf build`, then for an ordinary `ls build`.
    // `--allowedTools Bash` (claude-run.ts) stands for the user letting Claude Code run commands.
    match: /^claude$/,
    async run(_command, user) {
      const claude = await agentCli('claude')
      await mkdir(join(user.project, 'build'), { recursive: true })
      await writeFile(join(user.project, 'build', 'keep.txt'), 'keep me\n')
      const calls = [
        { id: 'toolu_docs_dangerous', command: quoted(AGENTS, START_HERE, /^rm -rf /) },
        { id: 'toolu_docs_ordinary', command: 'ls build' },
      ] as const satisfies readonly BashCall[]
      const stand = await startAnthropicApi({ script: oneCallPerTurn(calls) })
      try {
        const ran = await runClaude({ claude, apiUrl: stand.url, cwd: user.project, env: { HOME: user.home } })
        await rm(ran.home, { recursive: true, force: true })
        expect(ran.code, ran.stderr).toBe(0)
        // "In `claude -p` nobody can answer, so the call is refused and the model reads the question as
        // the refusal": `Dangerous command: rm -rf build (asked by hookd hook 'guard')`.
        expect(resultOf(stand, calls, 'toolu_docs_dangerous')).toEqual({ tool_use_id: 'toolu_docs_dangerous', is_error: true, text: quoted(AGENTS, START_HERE, /^Dangerous command: /) })
        expect(survived(user.project, 'build')).toBe(true)
        // A call the guard has no opinion on runs.
        expect(resultOf(stand, calls, 'toolu_docs_ordinary')).toMatchObject({ is_error: false, text: expect.stringContaining('keep.txt') })
      } finally {
        await stand.stop()
      }
    },
  },
]

/** Runs one block: its commands through their steps, or a shown JSON answer against the last command's output. */
async function runBlock(block: DocBlock, user: User): Promise<void> {
  if (block.lang === 'json') {
    const last = user.last
    if (!last) throw new Error(`${blockName(block)}: a JSON answer the doc shows, after no command whose answer the test kept`)
    const printed = JSON.parse(last.ran.stdout) as unknown
    expect(differences(shownJson(block.text), printed), `${blockName(block)} against what \`${last.command.head}\` printed:\n${last.ran.stdout}`).toEqual([])
    return
  }
  if (!['', 'sh'].includes(block.lang)) throw new Error(`${blockName(block)}: a \`${block.lang}\` block, which this test neither runs nor compares: teach test/package/docs-run.test.ts what it is`)
  const all = commands(block)
  expect(all.length, `${blockName(block)} has commands`).toBeGreaterThan(0)
  for (const command of all) {
    const step = STEPS.find((s) => s.match.test(command.head))
    if (!step) throw new Error(`${blockName(block)}: no step of test/package/docs-run.test.ts runs \`${command.head}\`: teach it how a user runs it and what they see`)
    delete user.last
    await step.run(command, user)
  }
}

/** Runs a section's blocks in order, one test each; after a failure the later blocks say so instead of failing on its leftovers. */
function runSection(doc: string, heading: string, user: () => User, options: { alternatives?: boolean } = {}): void {
  const all = blocks(doc, heading)
  let failed: string | undefined
  let base: User | undefined
  it(`${doc} "${heading}" has blocks`, () => expect(all.length).toBeGreaterThan(0))
  for (const block of all) {
    it(
      `${blockName(block)}: ${commands(block)[0]?.head ?? block.lang}`,
      async () => {
        if (failed) throw new Error(`not run: ${failed} failed first`)
        try {
          let who = user()
          if (options.alternatives && block.index > 1) {
            // An alternative: a copy of the project as the first block left it, and a user of its own.
            const from = base as User
            who = await newUser(await openTempDir('hookd-docs-alt-'))
            cleanups.push(() => rm(who.project, { recursive: true, force: true }))
            await cp(from.project, who.project, { recursive: true, verbatimSymlinks: true })
          }
          await runBlock(block, who)
          if (block.index === 1) base = who
        } catch (err) {
          // Later blocks build on this one, unless they are alternatives to each other (then only on the first).
          if (!options.alternatives || block.index === 1) failed = blockName(block)
          throw err
        }
      },
      INSTALL_TIMEOUT_MS,
    )
  }
}

describe('README.md, as a user of the package reads it', () => {
  let reader: User
  beforeAll(async () => {
    reader = await newUser()
  })
  describe('Installing it in your project', () => runSection(README, 'Installing it in your project', () => reader))
  describe('Quickstart', () => runSection(README, 'Quickstart', () => reader))
})

describe(`docs/agents.md, "${START_HERE}"`, () => {
  let reader: User
  beforeAll(async () => {
    reader = await newUser()
  })
  runSection(AGENTS, START_HERE, () => reader, { alternatives: true })
})

describe('docs/writing-hooks.md: the type check, in a project without TypeScript', () => {
  /** The tutorial up to the type-check advice: its `$` commands and the files it has the reader write, in order. */
  function tutorial(text: string): Array<{ file: string; body: string } | { command: string }> {
    const out: Array<{ file: string; body: string } | { command: string }> = []
    for (const block of text.matchAll(/^```[a-z]*\n([\s\S]*?)^```$/gm)) {
      const lines = (block[1] as string).replace(/\n$/, '').split('\n')
      const file = /^\/\/ (\S+)$/.exec(lines[0] as string)?.[1]
      if (file) out.push({ file, body: `${lines.slice(1).join('\n')}\n` })
      else for (const line of lines) if (line.startsWith('$ ')) out.push({ command: line.slice(2) })
    }
    return out
  }

  it(
    "the doc's `npx --package typescript tsc -p` passes on the `hookd new --ts` scaffold and on the tutorial's hook, and fails on the answer the doc says does not compile",
    async () => {
      const doc = readDoc(WRITING)
      const advice = /Type-check with `([^`]+)`/.exec(doc)
      if (!advice) throw new Error(`${WRITING} no longer says "Type-check with \`...\`": update the test with the doc`)
      const typeCheck = (advice[1] as string).replace(/\s+/g, ' ')
      expect(typeCheck).toMatch(/^npx --package typescript tsc -p \S+$/)
      // "npm install --save-dev hookd-sandbox in your project" (SUBSTITUTED: the packed tarball, as above).
      expect(doc).toContain('`npm install --save-dev hookd-sandbox`')
      const user = await newUser()
      const installed = await reinstall(tarball, 'hoisted', { extra: ['--save-dev'] })
      cleanups.push(() => rm(installed.project, { recursive: true, force: true }))
      user.project = installed.project
      expect(existsSync(join(user.project, 'node_modules', 'typescript')) || existsSync(join(user.project, 'node_modules', '.bin', 'tsc'))).toBe(false)
      // npx asks before it fetches TypeScript (the doc says so); with no terminal to ask on, it fetches
      // it, saying so, as it does for a user who answers yes.
      const check = async (): Promise<Ran> => bash(user, typeCheck, { timeoutMs: 300_000 })

      let cwd = user.project
      let checkedScaffold = false
      for (const step of tutorial(doc.slice(0, advice.index))) {
        if ('file' in step) {
          await mkdir(join(user.project, step.file, '..'), { recursive: true })
          await writeFile(join(user.project, step.file), step.body)
          continue
        }
        const cd = /^cd (\S+)$/.exec(step.command)
        if (cd) {
          cwd = join(cwd, cd[1] as string)
          continue
        }
        succeeded(`${WRITING}: \`${step.command}\``, await bash(user, step.command, { cwd }))
        if (/^npx hookd-sandbox new \S+ --ts\b/.test(step.command)) {
          const scaffold = await check()
          expect(scaffold.code, `${typeCheck} on the scaffold:\n${scaffold.stdout}${scaffold.stderr}`).toBe(0)
          checkedScaffold = true
        }
      }
      expect(checkedScaffold, 'the tutorial makes a TypeScript hook with hookd new --ts before the advice').toBe(true)
      expect(cwd).toBe(user.project)
      const hook = await check()
      expect(hook.code, `${typeCheck} on the tutorial's hook:\n${hook.stdout}${hook.stderr}`).toBe(0)

      // "The types refuse answers written for other agents: `return { decision: 'block' }` (Claude Code's) does not compile".
      const wrong = /The types refuse answers written for other\s+agents: `([^`]+)`/.exec(doc)?.[1]
      expect(wrong).toBe("return { decision: 'block' }")
      const dir = typeCheck.split(' ').at(-1) as string
      const source = join(user.project, dir, 'index.ts')
      const before = await readFile(source, 'utf8')
      const after = before.replace(/return \{ allow: false, reason: [^\n]*\}/, wrong as string)
      expect(after).not.toBe(before)
      await writeFile(source, after)
      const refused = await check()
      expect(refused.code).not.toBe(0)
      expect(refused.stdout).toMatch(new RegExp(`^${dir.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}/index\\.ts\\(\\d+,\\d+\\): error TS2322: `, 'm'))
    },
    INSTALL_TIMEOUT_MS,
  )
})
