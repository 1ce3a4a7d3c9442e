/**
 * `hookd new NAME`: the folder it writes loads (`hookd check`), its cases pass as written (`hookd test`),
 * its handlers type-check against hookd-sandbox/hook, a guard fails closed ("onError": "refuse"), and it
 * never overwrites anything. `hookd new NAME --from RULE` copies a starter rule the same way. The
 * commands run in-process (main(argv, io)); the type checks run the TypeScript compiler that `tsc`
 * runs, in-process.
 */
import { mkdir, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import ts from 'typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bundleHook } from '../../../src/sidecar/hooks/bundle.js'
import { ROOT, type Ran, runInProcess } from '../../support/processes.js'
import { writeTree } from '../../support/sidecar.js'

const hookd = (args: string[], cwd: string): Promise<Ran> => runInProcess(args, { cwd })
const ALL = 'beforeRun,afterRun,beforeModelRequest,afterModelResponse,beforeToolExecute,afterToolExecute'
const FAILS_CLOSED =
  'fails closed: hook.json says "onError": "refuse", so a tool call is refused when this hook throws, returns a wrong answer or does not load, instead of let through'
const RULES = ['egress-allowlist', 'force-with-lease', 'no-pipe-to-shell', 'protect-secrets', 'stay-in-repo']

let dir: string

beforeAll(async () => {
  dir = await writeTree({ 'README.md': 'a project\n' })
  // `hookd-sandbox/hook` resolves as it does in a project that installed hookd-sandbox.
  await mkdir(join(dir, 'node_modules'))
  await symlink(ROOT, join(dir, 'node_modules', 'hookd-sandbox'))
})

afterAll(() => rm(dir, { recursive: true, force: true }))

const FORMAT: ts.FormatDiagnosticsHost = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => dir, getNewLine: () => '\n' }

/**
 * What `tsc --noEmit FLAGS FILE...` reports, per file (the compiler's own text, as tsc prints it), from
 * one program: each file is a module, so checking them together reports for each what checking it
 * alone would, and the standard library is read and checked once.
 */
function typeCheck(flags: string[], files: string[]): { global: string; byFile: Map<string, string> } {
  const parsed = ts.parseCommandLine([...flags, ...files])
  expect(parsed.errors).toEqual([])
  const program = ts.createProgram(files, parsed.options)
  const global = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()]
  const byFile = new Map(files.map((file) => [file, ts.formatDiagnostics(ts.getPreEmitDiagnostics(program, program.getSourceFile(file)), FORMAT)]))
  return { global: ts.formatDiagnostics(global, FORMAT), byFile }
}

/** What `tsc -p FOLDER` reports: its tsconfig.json's problems, then the project's. */
function typeCheckProject(folder: string): string {
  const config = ts.getParsedCommandLineOfConfigFile(join(folder, 'tsconfig.json'), undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.formatDiagnostic(d, FORMAT))
    },
  })
  if (!config) throw new Error(`no project in ${folder}`)
  const program = ts.createProgram({ rootNames: config.fileNames, options: config.options, configFileParsingDiagnostics: config.errors })
  return ts.formatDiagnostics([...config.errors, ...ts.getPreEmitDiagnostics(program)], FORMAT)
}

// The commands start embedded sidecars and the type checks are seconds of CPU: allow for a busy machine.
describe('hookd new', { timeout: 120_000 }, () => {
  it('writes a JavaScript hook that loads and whose cases pass as written', async () => {
    const made = await hookd(['new', 'careful', '--points', ALL], dir)
    expect(made.code).toBe(0)
    expect(made.stdout).toBe(
      [
        'created hooks/careful/',
        `  index.js    ${ALL.split(',').join(', ')}`,
        '  hook.json   its config (ctx.config) and permissions (what it may touch and decide)',
        '  tests/beforeRun.json, tests/afterRun.json, tests/beforeModelRequest.json, tests/afterModelResponse.json, tests/beforeToolExecute-refuses.json, tests/beforeToolExecute-allows.json, tests/afterToolExecute.json',
        FAILS_CLOSED,
        'next:',
        '  hookd test hooks/careful     run its test cases in the sandbox',
        '  hookd check hooks/careful    load it as the sidecar would',
        '',
      ].join('\n'),
    )
    expect((await readdir(join(dir, 'hooks', 'careful'))).sort()).toEqual(['hook.json', 'index.js', 'tests'])
    expect(JSON.parse(await readFile(join(dir, 'hooks', 'careful', 'hook.json'), 'utf8'))).toEqual({
      description: 'careful: what this hook does',
      onError: 'refuse',
      // What its handlers touch and decide, and nothing more.
      permissions: { files: 'read-write', paths: ['logs/**'], decide: { addContext: true, rewriteModelText: true, refuse: true, rewriteResults: true } },
      config: { runLog: 'logs/runs.log', note: 'Answer in plain English.', blocked: ['rm -rf', 'git push --force'], maxChars: 20000 },
    })

    const checked = await hookd(['check', 'hooks/careful'], dir)
    expect(checked.stdout).toMatch(
      /^hooks\/careful\/hook.json: permissions: files read-write \(logs\/\*\*\); decides refuse, rewriteResults, rewriteModelText, addContext\nchecked 1 hook in .*: 1 would load, 0 would not; 0 warnings\n$/,
    )
    expect(checked.code).toBe(0)

    const tested = await hookd(['test', 'hooks/careful'], dir)
    expect(tested.stdout.replace(/ \(\d+ ms\)/g, '')).toBe(
      [
        'PASS hooks/careful/tests/afterModelResponse.json: redacts an API key in the answer',
        'PASS hooks/careful/tests/afterRun.json: appends the end of the run to the log',
        'PASS hooks/careful/tests/afterToolExecute.json: truncates a long tool result',
        "PASS hooks/careful/tests/beforeModelRequest.json: adds the note to this turn's system prompt",
        'PASS hooks/careful/tests/beforeRun.json: logs the start of a run',
        'PASS hooks/careful/tests/beforeToolExecute-allows.json: lets other commands through, and follows its config',
        'PASS hooks/careful/tests/beforeToolExecute-refuses.json: refuses a blocked shell command',
        '7 cases: 7 passed, 0 failed',
        '',
      ].join('\n'),
    )
    expect(tested.code).toBe(0)
  })

  it('writes typed JavaScript that type-checks against hookd-sandbox/hook, and catches a wrong answer', async () => {
    const file = join(dir, 'hooks', 'careful', 'index.js')
    const flags = ['--noEmit', '--allowJs', '--checkJs', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext']
    // The types are doing work: a Claude Code-style answer does not type-check.
    const wrong = join(dir, 'wrong.js')
    await writeFile(wrong, (await readFile(file, 'utf8')).replace("if (blocked) return { allow: false,", "if (blocked) return { decision: 'block',"))
    const checked = typeCheck(flags, [file, wrong])
    expect(checked.global).toBe('')
    expect(checked.byFile.get(file)).toBe('')
    expect(checked.byFile.get(wrong)).toContain("Types of property 'decision' are incompatible")
  })

  it('writes a TypeScript hook that type-checks, bundles, and passes its cases', async () => {
    const made = await hookd(['new', 'typed', '--ts', '--points', 'beforeToolExecute,afterRun'], dir)
    expect(made.code).toBe(0)
    expect(made.stdout).toContain('  index.ts    beforeToolExecute, afterRun\n')
    expect(made.stdout).toContain(`\n${FAILS_CLOSED}\n`)
    const folder = join(dir, 'hooks', 'typed')
    expect((await readdir(folder)).sort()).toEqual(['hook.json', 'index.ts', 'tests', 'tsconfig.json'])
    expect(typeCheckProject(folder)).toBe('')

    const bundled = await bundleHook(folder)
    expect(bundled).toMatchObject({ ok: true, entry: 'index.ts', inputs: ['index.ts'] })

    const tested = await hookd(['test', 'typed'], dir)
    expect(tested.stdout.replace(/ \(\d+ ms\)/g, '')).toBe(
      [
        'PASS hooks/typed/tests/afterRun.json: appends the end of the run to the log',
        'PASS hooks/typed/tests/beforeToolExecute-allows.json: lets other commands through, and follows its config',
        'PASS hooks/typed/tests/beforeToolExecute-refuses.json: refuses a blocked shell command',
        '3 cases: 3 passed, 0 failed',
        '',
      ].join('\n'),
    )
    expect(tested.code).toBe(0)
  })

  it('refuses to overwrite a folder that exists, and leaves it as it was', async () => {
    await writeFile(join(dir, 'hooks', 'careful', 'index.js'), '// mine\n')
    const again = await runInProcess(['new', 'careful'], { cwd: dir })
    expect(again).toMatchObject({ code: 1, stdout: '', stderr: 'hookd new: hooks/careful already exists; pick another name, or remove it first\n' })
    expect(await readFile(join(dir, 'hooks', 'careful', 'index.js'), 'utf8')).toBe('// mine\n')
  })

  it('checks the name and the points, with a did-you-mean for a misspelt point', async () => {
    expect(await runInProcess(['new', '../escape'], { cwd: dir })).toMatchObject({
      code: 2,
      stderr: "hookd new: '../escape' cannot be a hook name: it names a folder, so it starts with a letter or digit and holds only letters, digits, '.', '_' and '-'\n",
    })
    expect(await runInProcess(['new', 'x', '--points', 'beforeToolExecut'], { cwd: dir })).toMatchObject({
      code: 2,
      stderr: "hookd new: --points: 'beforeToolExecut' is not a hook point; did you mean 'beforeToolExecute'?\n",
    })
    expect((await runInProcess(['new', 'x', '--points', 'tool:gate'], { cwd: dir })).stderr).toContain("'tool:gate' is an event point of hookable hosts")
    expect(await runInProcess(['new'], { cwd: dir })).toMatchObject({ code: 2, stderr: 'hookd new: give the new hook\'s name, e.g. hookd new no-force-push\n' })
    await expect(readdir(join(dir, 'hooks'))).resolves.toEqual(['careful', 'typed'])
  })

  it('writes "onError": "refuse" only for a hook that guards a gate, and says so only then', async () => {
    const made = await hookd(['new', 'logger', '--points', 'afterRun,afterToolExecute', '--dir', 'observers'], dir)
    expect(made.code).toBe(0)
    expect(made.stdout).not.toContain('fails closed')
    expect(JSON.parse(await readFile(join(dir, 'observers', 'logger', 'hook.json'), 'utf8'))).toEqual({
      description: 'logger: what this hook does',
      permissions: { files: 'read-write', paths: ['logs/**'], decide: { rewriteResults: true } },
      config: { runLog: 'logs/runs.log', maxChars: 20000 },
    })
    // A guard with a bug: the scaffold's own guard, made to throw. Written by hookd new, it refuses
    // the call it cannot decide on; without "onError": "refuse" it would be skipped and the call let
    // through (`echo SECRET=1 > .env` ran under a .env guard with a bug).
    const guard = await hookd(['new', 'guard', '--dir', 'observers'], dir)
    const source = join(dir, 'observers', 'guard', 'index.js')
    await writeFile(source, (await readFile(source, 'utf8')).replace("if (call.name !== 'shell') return", "throw new Error('bug')"))
    const tested = await hookd(['test', 'observers/guard'], dir)
    expect(tested.stdout).toContain(`result.reason: expected "'rm -rf' is blocked by the guard hook", got "hookd refused the call: hook 'guard' could not decide (it threw)"`)
    expect(tested.stdout).toContain('result.allow: expected true, got false')
    expect(tested.code).toBe(1)
    expect(guard.stdout).toContain(`\n${FAILS_CLOSED}\n`)
    expect(JSON.parse(await readFile(join(dir, 'observers', 'guard', 'hook.json'), 'utf8'))).toMatchObject({ onError: 'refuse' })
  })
})

describe('hookd new --from', { timeout: 120_000 }, () => {
  it('copies a starter rule as a new hook, tests included, and its cases pass under the new name', async () => {
    const made = await hookd(['new', 'secrets', '--from', 'protect-secrets', '--dir', 'guards'], dir)
    expect(made.stderr).toBe('')
    expect(made.code).toBe(0)
    const cases = (await readdir(join(ROOT, 'rules', 'protect-secrets', 'tests'))).filter((f) => f.endsWith('.json'))
    expect(made.stdout).toBe(
      [
        'created guards/secrets/ from the starter rule protect-secrets',
        '  index.js, lib/commands.js, lib/shell.js    the rule (read its opening comment: what it sees and what it cannot)',
        '  hook.json   its description, "onError", permissions and config (ctx.config)',
        `  tests/      ${cases.length} cases`,
        FAILS_CLOSED,
        'next:',
        '  hookd test guards/secrets     run its test cases in the sandbox',
        '  hookd check guards/secrets    load it as the sidecar would',
        '',
      ].join('\n'),
    )
    const folder = join(dir, 'guards', 'secrets')
    expect((await readdir(folder)).sort()).toEqual(['hook.json', 'index.js', 'lib', 'tests'])
    expect((await readdir(join(folder, 'tests'))).sort()).toEqual(cases.sort())
    for (const file of ['index.js', 'hook.json', 'lib/commands.js', 'lib/shell.js']) {
      expect(await readFile(join(folder, file), 'utf8'), file).toBe(await readFile(join(ROOT, 'rules', 'protect-secrets', file), 'utf8'))
    }
    expect(JSON.parse(await readFile(join(folder, 'hook.json'), 'utf8'))).toMatchObject({ onError: 'refuse' })

    const tested = await hookd(['test', 'guards/secrets'], dir)
    expect(tested.stdout).toMatch(new RegExp(`\n${cases.length} cases: ${cases.length} passed, 0 failed\n$`))
    expect(tested.code).toBe(0)
  })

  it('names the hook after the rule when no name is given, and never overwrites', async () => {
    const made = await hookd(['new', '--from', 'force-with-lease', '--dir', 'guards'], dir)
    expect(made.code).toBe(0)
    expect(made.stdout.split('\n')[0]).toBe('created guards/force-with-lease/ from the starter rule force-with-lease')
    await writeFile(join(dir, 'guards', 'force-with-lease', 'index.js'), '// mine\n')
    const again = await hookd(['new', '--from', 'force-with-lease', '--dir', 'guards'], dir)
    expect(again).toMatchObject({ code: 1, stdout: '', stderr: 'hookd new: guards/force-with-lease already exists; pick another name, or remove it first\n' })
    expect(await readFile(join(dir, 'guards', 'force-with-lease', 'index.js'), 'utf8')).toBe('// mine\n')
  })

  it('every starter rule, copied, type-checks against hookd-sandbox/hook', async () => {
    const files: string[] = []
    for (const rule of RULES) {
      const made = await hookd(['new', rule, '--from', rule, '--dir', 'typed-rules'], dir)
      expect(made.code, made.stderr).toBe(0)
      files.push(join(dir, 'typed-rules', rule, 'index.js'))
    }
    const checked = typeCheck(['--noEmit', '--allowJs', '--checkJs', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022'], files)
    expect(checked.global).toBe('')
    for (const file of files) expect(checked.byFile.get(file), file).toBe('')
  })

  it('lists the rules with their descriptions when --from has no rule or an unknown one, with a did-you-mean', async () => {
    const listing = (text: string): string[] => text.split('\n').filter((l) => /^ {2}\S/.test(l)).map((l) => l.trim().split(/\s+/)[0] as string)
    const none = await hookd(['new', 'x', '--from'], dir)
    expect(none.code).toBe(2)
    expect(none.stderr.split('\n')[0]).toBe("hookd new: --from needs a starter rule's name, e.g. hookd new my-guard --from egress-allowlist")
    expect(none.stderr.split('\n')[1]).toBe('The starter rules:')
    expect(listing(none.stderr)).toEqual(RULES)
    expect(none.stderr).toContain('  protect-secrets   refuses reading and writing secrets files (.env, private keys, credential files)\n')
    expect((await hookd(['new', '--from', '--dir', 'x'], dir)).stderr.split('\n')[0]).toContain('--from needs a starter rule')
    const typo = await hookd(['new', 'x', '--from', 'protect-secret'], dir)
    expect(typo.code).toBe(2)
    expect(typo.stderr.split('\n')[0]).toBe("hookd new: --from: 'protect-secret' is not a starter rule; did you mean 'protect-secrets'?")
    expect(listing(typo.stderr)).toEqual(RULES)
    const far = await hookd(['new', 'x', '--from', 'lint'], dir)
    expect(far.stderr.split('\n')[0]).toBe("hookd new: --from: 'lint' is not a starter rule")
    const mixed = await hookd(['new', 'x', '--from', 'stay-in-repo', '--ts'], dir)
    expect(mixed).toMatchObject({ code: 2, stderr: 'hookd new: --from copies a starter rule as it is; --points and --ts are for a new hook written from scratch: give one or the other\n' })
    await expect(readdir(join(dir, 'hooks'))).resolves.not.toContain('x')
  })

  it('--help lists the starter rules with their descriptions', async () => {
    const help = await hookd(['new', '--help'], dir)
    expect(help.code).toBe(0)
    const rules = help.stdout.slice(help.stdout.indexOf('\nStarter rules'))
    for (const rule of RULES) {
      const description = JSON.parse(await readFile(join(ROOT, 'rules', rule, 'hook.json'), 'utf8')).description as string
      const at = rules.indexOf(`\n  ${rule} `)
      expect(at, rule).toBeGreaterThan(0)
      const block = rules.slice(at + 1).split(/\n {2}\S/)[0] as string
      expect(block.replace(/\s+/g, ' ').trim(), rule).toBe(`${rule} ${description}`)
    }
  })
})
