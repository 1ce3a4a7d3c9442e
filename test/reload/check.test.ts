/**
 * `hookd check [DIR]`, run as a user runs it. Asserts what the user sees: the lines printed and the exit
 * code. The commands run in-process (main(argv, io)), except one check that fails, run by the built
 * command in a child process: the exit status is what CI acts on.
 */
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Ran, runHookd, runInProcess } from '../support/processes.js'
import { writeTree } from '../support/sidecar.js'
import { guard } from './support.js'

const hookd = (...args: string[]): Promise<Ran> => runInProcess(args)
const hookdProcess = (...args: string[]): Promise<Ran> => runHookd(args, { timeoutMs: 60_000 })

let good: string
let warned: string
let broken: string

beforeAll(async () => {
  good = await writeTree({
    'guard/index.js': guard('ok'),
    'guard/hook.json': JSON.stringify({ onError: 'refuse' }),
    'configured/index.js': guard('ok'),
    'configured/hook.json': JSON.stringify({ config: { level: 1 }, description: 'fine', onError: 'skip' }),
  })
  warned = await writeTree({
    'typo/index.js': `module.exports = {\n  afterRun(ctx, e) {},\n  beforeToolExecut(ctx, call) {},\n  helper() {},\n}\n`,
  })
  broken = await writeTree({
    'fine/index.js': guard('ok'),
    'fine/hook.json': JSON.stringify({ onError: 'refuse' }),
    'syntax/index.js': `module.exports = {\n  beforeToolExecute(ctx, call) {\n    return { allow: false reason: 'x' }\n  },\n}\n`,
    'throws/index.js': `module.exports = {}\n\nthrow new Error('no config here')\n`,
    'badjson/index.js': guard('ok'),
    'badjson/hook.json': '{\n  "config": 1,\n  "colour": "red"\n}\n',
    'nopoint/index.js': `module.exports = {\n  beforetoolexecute(ctx, call) {},\n}\n`,
    'empty/index.js': '',
    // Past the 1 MiB cap: a comment after a fine hook, so only the size is wrong.
    'huge/index.js': `${guard('ok')}\n// ${'x'.repeat(1024 * 1024)}\n`,
  })
})

afterAll(async () => {
  for (const dir of [good, warned, broken]) if (dir) await rm(dir, { recursive: true, force: true })
})

/** The line `hookd check` prints for a hook whose hook.json declares no permissions. */
function undeclared(root: string, name: string): string {
  return `${join(root, name, 'hook.json')}: note: no "permissions" in its hook.json, so the hook may touch and decide whatever a session allows; add a "permissions" block listing what it needs (docs/writing-hooks.md#permissions)`
}

describe('hookd check', () => {
  it('prints what each hook declares it may touch and decide, and says so of a hook that declares nothing', async () => {
    const declared = await writeTree({
      'logger/index.js': guard('ok'),
      'logger/hook.json': JSON.stringify({ onError: 'refuse', permissions: { files: 'read', paths: ['src/**'], env: ['TEAM'], decide: { refuse: true, rewriteArguments: ['write_file'] } } }),
      'observer/index.js': guard('ok'),
      'observer/hook.json': JSON.stringify({ onError: 'refuse', permissions: {} }),
    })
    try {
      const run = await hookd('check', declared)
      expect(run.code).toBe(0)
      expect(run.stdout.trim().split('\n')).toEqual([
        `${join(declared, 'logger', 'hook.json')}: permissions: files read (src/**); env TEAM; decides refuse, rewriteArguments write_file`,
        `${join(declared, 'observer', 'hook.json')}: permissions: nothing: it only observes`,
        `checked 2 hooks in ${declared}: 2 would load, 0 would not; 0 warnings`,
      ])
      const strict = await writeTree({ 'bad/index.js': guard('ok'), 'bad/hook.json': JSON.stringify({ permissions: { decide: { rewrite: true } } }) })
      try {
        const bad = await hookd('check', strict)
        expect(bad.code).toBe(1)
        expect(bad.stdout).toContain(`${join(strict, 'bad', 'hook.json')}:1: error: hook.json is invalid: permissions.decide: Unrecognized key: "rewrite"`)
      } finally {
        await rm(strict, { recursive: true, force: true })
      }
    } finally {
      await rm(declared, { recursive: true, force: true })
    }
  })

  it('exits 0 and says so when every hook loads', async () => {
    const run = await hookd('check', good)
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    expect(run.stdout).toBe(`${undeclared(good, 'configured')}\n${undeclared(good, 'guard')}\nchecked 2 hooks in ${good}: 2 would load, 0 would not; 0 warnings\n`)
  })

  it('warns about exports that are not points, with the closest point name, and still exits 0', async () => {
    const run = await hookd('check', warned)
    expect(run.code).toBe(0)
    const lines = run.stdout.trim().split('\n')
    expect(lines).toEqual([
      `${join(warned, 'typo', 'index.js')}:3: warning: 'beforeToolExecut' is exported but is not a hook point, so it never runs; did you mean 'beforeToolExecute'?`,
      `${join(warned, 'typo', 'index.js')}:4: warning: 'helper' is exported but is not a hook point, so it never runs; rename it to a point name or stop exporting it`,
      undeclared(warned, 'typo'),
      `checked 1 hook in ${warned}: 1 would load, 0 would not; 2 warnings`,
    ])
  })

  it('warns about a gate hook whose hook.json sets no onError, saying what a bug in it would do', async () => {
    const lax = await writeTree({ 'env-guard/index.js': guard('ok') })
    try {
      const run = await hookd('check', lax)
      expect(run.code).toBe(0)
      expect(run.stdout.trim().split('\n')).toEqual([
        `${join(lax, 'env-guard', 'hook.json')}: warning: the hook guards beforeToolExecute and its hook.json sets no "onError": where a host keeps the seed's rule (gRPC hosts by default), a bug in it (a throw, an invalid answer, a failed load) lets the call through`,
        `  hint: add "onError": "refuse" to its hook.json (the agents' front door already refuses then), or "skip" to let calls through whenever it fails`,
        undeclared(lax, 'env-guard'),
        `checked 1 hook in ${lax}: 1 would load, 0 would not; 1 warning`,
      ])
    } finally {
      await rm(lax, { recursive: true, force: true })
    }
  })

  it('prints every hook that would not load with its file and line, and exits 1', async () => {
    const run = await hookdProcess('check', broken)
    expect(run.code).toBe(1)
    const at = (hook: string, file = 'index.js'): string => join(broken, hook, file)
    expect(run.stdout).toContain(`${at('syntax')}:3: error: SyntaxError:`)
    expect(run.stdout).toContain(`${at('throws')}:3: error: Error: no config here`)
    expect(run.stdout).toContain(`${at('badjson', 'hook.json')}:3: error: hook.json is invalid: Unrecognized key: "colour"`)
    expect(run.stdout).toContain(`${at('nopoint')}:2: error: the hook exports no hook point; it exports 'beforetoolexecute' (did you mean 'beforeToolExecute'?)`)
    expect(run.stdout).toContain(`${at('empty')}: error: empty/index.js is empty`)
    expect(run.stdout).toMatch(new RegExp(`${at('huge')}: error: huge/index.js is \\d+ bytes, over the 1048576 bytes hookd reads; bundle or minify it`))
    expect(run.stdout).not.toContain(at('fine'))
    expect(run.stdout.trim().split('\n').at(-1)).toBe(`checked 7 hooks in ${broken}: 1 would load, 6 would not; 0 warnings`)
  })

  it('checks a single hook folder', async () => {
    const one = await hookd('check', join(broken, 'fine'))
    expect(one.code).toBe(0)
    expect(one.stdout).toBe(`${undeclared(broken, 'fine')}\nchecked 1 hook in ${broken}: 1 would load, 0 would not; 0 warnings\n`)
    const bad = await hookd('check', join(broken, 'syntax'))
    expect(bad.code).toBe(1)
    expect(bad.stdout).toContain('syntax/index.js:3: error:')
  })

  it('prints a JSON report with --json', async () => {
    const run = await hookd('check', '--json', broken)
    expect(run.code).toBe(1)
    const report = JSON.parse(run.stdout) as { errors: number; warnings: number; hooks: Array<{ name: string; ok: boolean }>; problems: Array<{ hook: string; line?: number }> }
    expect(report.errors).toBe(6)
    expect(report.hooks.filter((h) => h.ok).map((h) => h.name)).toEqual(['fine'])
    expect(report.problems.find((p) => p.hook === 'syntax')?.line).toBe(3)
  })

  it('exits 2 for usage errors, saying what to fix', async () => {
    const missing = await hookd('check', join(good, 'no-such-folder'))
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain(`hookd check: no such folder '${join(good, 'no-such-folder')}'; pass the folder that holds your hooks`)
    const flag = await hookd('check', '--frobnicate', good)
    expect(flag.code).toBe(2)
    expect(flag.stderr).toContain("Unknown option '--frobnicate'")
    expect(flag.stderr).toContain('Usage: hookd check [DIR]')
    const two = await hookd('check', good, warned)
    expect(two.code).toBe(2)
    expect(two.stderr).toContain('give one folder to check; got 2')
  })

  it('explains itself with --help, and is listed in hookd --help', async () => {
    const help = await hookd('check', '--help')
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('Usage: hookd check [DIR] [--json]')
    expect(help.stdout).toContain('Exit status: 0 when every hook would load')
    const top = await hookd('--help')
    expect(top.stdout).toMatch(/^ {2}check {5}load every hook/m)
  })
})
