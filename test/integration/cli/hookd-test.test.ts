/**
 * `hookd test`, run as a user runs it: real sandbox workers, the hooks' own test cases. Asserts what the
 * user sees: one line per case, the differences under a failed one, the summary, the exit code, the JSON
 * and JUnit reports, and a run again after a save. The command runs in-process (main(argv, io)) except
 * under --watch, which runs the built command as its own process: Ctrl-C ends it with the last status.
 */
import { spawn } from 'node:child_process'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CLI_ARGS, ROOT, type Ran, runInProcess, stopProcess } from '../../support/processes.js'
import { EXAMPLE_HOOKS, writeTree } from '../../support/sidecar.js'

const hookd = (args: string[], cwd: string): Promise<Ran> => runInProcess(args, { cwd })
const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`

const RM = { id: 'c1', name: 'shell', arguments: { command: 'rm -rf /tmp/x' } }

/** Uses every part of a case's ctx: config, files, env, confirm, http; writes and appends files. */
const WORKER = `module.exports = {
  beforeToolExecute(ctx, call) {
    const notes = ctx.file.read('notes.txt')
    const weather = ctx.http.fetch('https://api.example.com/weather?city=' + ctx.config.city)
    const ok = ctx.confirm({ title: 'Go on?', body: call.name })
    ctx.file.write('out/seen.txt', call.id)
    ctx.file.append('log.txt', call.name + '\\n')
    ctx.log('weather', weather.status, JSON.parse(weather.body).sky)
    return { arguments: { notes, ci: ctx.env.CI, sky: JSON.parse(weather.body).sky, ok } }
  },
}
`

let dir: string
let hooks: string

beforeAll(async () => {
  dir = await writeTree({
    'hooks/guard/index.js': await readFile(join(EXAMPLE_HOOKS, 'guard', 'index.js'), 'utf8'),
    'hooks/guard/tests/refuses.json': json({
      name: 'refuses rm -rf when the human says no',
      point: 'beforeToolExecute',
      payload: RM,
      ctx: { confirm: [false] },
      expect: {
        result: { allow: false, reason: 'refused by the user', refusedBy: 'guard', arguments: RM.arguments },
        calls: [{ capability: 'confirm', args: [{ title: 'Dangerous command', body: 'rm -rf /tmp/x' }] }],
      },
    }),
    'hooks/guard/tests/wrong.json': json({
      name: 'expects the wrong answer',
      point: 'beforeToolExecute',
      payload: RM,
      ctx: { confirm: [true] },
      expect: { result: { allow: false, reason: 'refused by the user' }, match: 'partial' },
    }),
    'hooks/guard/tests/run-end.json': json({
      point: 'afterRun',
      payload: { reason: 'end_turn' },
      expect: { result: {}, calls: [{ capability: 'notify', args: [{ title: 'rienda', body: 'run finished: end_turn' }] }] },
    }),
    'hooks/worker/index.js': WORKER,
    'hooks/worker/hook.json': json({ config: { city: 'Paris' } }),
    'hooks/worker/tests/everything.json': json({
      name: 'reads, fetches, asks, writes and appends',
      point: 'beforeToolExecute',
      payload: { id: 'c7', name: 'deploy', arguments: {} },
      ctx: {
        config: { city: 'Oslo' },
        files: { 'notes.txt': 'the notes', 'log.txt': 'before\n' },
        env: { CI: 'true' },
        confirm: [true],
        http: { 'GET https://api.example.com/weather?city=Oslo': { body: { sky: 'snow' } } },
      },
      expect: {
        result: { allow: true, arguments: { notes: 'the notes', ci: 'true', sky: 'snow', ok: true } },
        logs: ['weather 200 snow'],
        calls: [
          { capability: 'file.read', args: ['notes.txt'] },
          { capability: 'http.fetch', args: ['https://api.example.com/weather?city=Oslo'] },
          { capability: 'confirm' },
          { capability: 'file.write', args: ['out/seen.txt', 'c7'] },
          { capability: 'file.append', args: ['log.txt', 'deploy\n'], hook: 'worker' },
        ],
        files: { 'out/seen.txt': 'c7', 'log.txt': 'before\ndeploy\n', 'never.txt': null },
      },
    }),
    // A chain: the first hook's arguments are what the second sees.
    'hooks/upper/index.js': "module.exports = { beforeToolExecute: (ctx, call) => ({ arguments: { command: String(call.arguments.command).toUpperCase() } }) }\n",
    'hooks/upper/tests/chain.json': json({
      name: 'upper then guard',
      hooks: ['upper', 'guard'],
      point: 'beforeToolExecute',
      payload: { id: 'c1', name: 'shell', arguments: { command: 'ls' } },
      expect: { result: { allow: true, arguments: { command: 'LS' } } },
    }),
  })
  hooks = join(dir, 'hooks')
})

afterAll(() => rm(dir, { recursive: true, force: true }))

// Each run starts an embedded sidecar and its worker process: allow for a busy machine.
describe('hookd test', { timeout: 120_000 }, () => {
  it('runs every case in the sandbox: a line per case, the differences under a failure, a summary, exit 1', async () => {
    const ran = await hookd(['test'], dir)
    expect(ran.stderr).toBe('')
    const lines = ran.stdout.replace(/ \(\d+ ms\)/g, '').split('\n')
    expect(lines).toEqual([
      'PASS hooks/guard/tests/refuses.json: refuses rm -rf when the human says no',
      'PASS hooks/guard/tests/run-end.json: run-end',
      'FAIL hooks/guard/tests/wrong.json: expects the wrong answer',
      '       result.allow: expected false, got true',
      '       result.reason: expected "refused by the user", but it is missing',
      'PASS hooks/upper/tests/chain.json: upper then guard [upper -> guard]',
      'PASS hooks/worker/tests/everything.json: reads, fetches, asks, writes and appends',
      '5 cases: 4 passed, 1 failed',
      '',
    ])
    expect(ran.code).toBe(1)
  })

  it("passes the example guard hook's own cases, in this repository", async () => {
    const ran = await hookd(['test', 'guard'], ROOT)
    expect(ran.stdout).toMatch(/^(PASS hooks\/guard\/tests\/.*\n){4}4 cases: 4 passed, 0 failed\n$/)
    expect(ran.code).toBe(0)
  })

  it('runs one hook, by folder or by name, and exits 0 when its cases pass', async () => {
    const byFolder = await hookd(['test', 'hooks/worker'], dir)
    expect(byFolder.stdout).toMatch(/^PASS hooks\/worker\/tests\/everything\.json: reads, fetches, asks, writes and appends \(\d+ ms\)\n1 case: 1 passed, 0 failed\n$/)
    expect(byFolder.code).toBe(0)
    const byName = await hookd(['test', 'upper'], dir)
    expect(byName.stdout).toContain('PASS hooks/upper/tests/chain.json')
    expect(byName.code).toBe(0)
  })

  it('says what a case failed to provide, and shows each diagnostic with a hint', async () => {
    const root = await writeTree({
      'needy/index.js': "module.exports = {\n  beforeRun(ctx) {\n    ctx.http.fetch('https://api.example.com/x')\n  },\n  afterRun(ctx) {\n    return process.env.HOME\n  },\n}\n",
      'needy/tests/fetch.json': json({ point: 'beforeRun', payload: { sessionId: 's', agentId: 'a', modelId: 'm' }, ctx: { policy: { httpOrigins: ['https://api.example.com'] } } }),
      'needy/tests/process.json': json({ point: 'afterRun', payload: { reason: 'end_turn' } }),
    })
    try {
      const ran = await hookd(['test', '.'], root)
      expect(ran.code).toBe(1)
      const out = ran.stdout.replace(/ \(\d+ ms\)/g, '')
      expect(out).toContain(
        [
          'FAIL needy/tests/fetch.json: fetch',
          '       the hook fetched GET https://api.example.com/x, which the case does not answer; add "GET https://api.example.com/x" (or "https://api.example.com/x") to ctx.http',
          "       diagnostics: expected none; got 1:",
          "         throw needy: hook 'needy' beforeRun: Error: ctx.http.fetch('https://api.example.com/x') failed: the test case has no response for GET https://api.example.com/x (needy/index.js:3)",
        ].join('\n'),
      )
      expect(out).toContain(
        [
          'FAIL needy/tests/process.json: process',
          '       diagnostics: expected none; got 1:',
          "         throw needy: hook 'needy' afterRun: ReferenceError: process is not defined (needy/index.js:6)",
          '           hint: hooks have no process: read allowed environment variables from ctx.env, the platform from ctx.system and the working directory from ctx.workdir; to stop, return (or throw)',
        ].join('\n'),
      )
    } finally {
      await rm(root, { recursive: true, force: true })
    }
  })

  it('bundles a TypeScript hook with an npm package, and points diagnostics at its own lines', async () => {
    const root = await writeTree({
      'typed/index.ts': [
        "import words from 'count-words'",
        '',
        'export default {',
        '  afterToolExecute(ctx: unknown, call: { name: string }, result: { text: string }) {',
        "    if (result.text === '') throw new Error('empty result')",
        '    return { text: `${call.name}: ${words(result.text)} words` }',
        '  },',
        '}',
        '',
      ].join('\n'),
      'typed/package.json': json({ dependencies: { 'count-words': '1.0.0' } }),
      'typed/node_modules/count-words/package.json': json({ name: 'count-words', version: '1.0.0', main: 'index.js' }),
      'typed/node_modules/count-words/index.js': 'module.exports = (text) => text.split(/\\s+/).filter(Boolean).length\n',
      'typed/tests/counts.json': json({
        point: 'afterToolExecute',
        payload: { call: { id: 'c1', name: 'read_file', arguments: {} }, result: { text: 'one two three', isError: false } },
        expect: { result: { text: 'read_file: 3 words', isError: false } },
      }),
      'typed/tests/empty.json': json({
        point: 'afterToolExecute',
        payload: { call: { id: 'c1', name: 'read_file', arguments: {} }, result: { text: '', isError: false } },
        expect: { diagnostics: [{ kind: 'throw', hook: 'typed', message: 'empty result', file: 'typed/index.ts', line: 5 }] },
      }),
      'fsy/index.ts': "import { readFileSync } from 'fs'\nexport default { beforeRun: () => void readFileSync('x') }\n",
      'fsy/tests/any.json': json({ point: 'beforeRun', payload: { sessionId: 's', agentId: 'a', modelId: 'm' } }),
    })
    try {
      const ran = await hookd(['test', '.'], root)
      const out = ran.stdout.replace(/ \(\d+ ms\)/g, '')
      expect(out).toContain('PASS typed/tests/counts.json: counts\nPASS typed/tests/empty.json: empty\n')
      expect(out).toContain(
        "FAIL fsy/tests/any.json: any\n       hook 'fsy' cannot be loaded: fsy/index.ts:1: 'fs' is a Node built-in module, and hooks run in a sandbox without Node: read and write files in the workdir with ctx.file.read/write/append/exists/list\n",
      )
      expect(out).toMatch(/3 cases: 2 passed, 1 failed\n$/)
      expect(ran.code).toBe(1)
    } finally {
      await rm(root, { recursive: true, force: true })
    }
  })

  it('prints the report as JSON with --json, and writes JUnit XML with --junit', async () => {
    const ran = await hookd(['test', 'hooks/guard', '--json', '--junit', 'report.xml'], dir)
    expect(ran.code).toBe(1)
    const report = JSON.parse(ran.stdout) as { hooks: string; passed: number; failed: number; cases: Array<{ file: string; ok: boolean; failures: string[] }> }
    expect(report).toMatchObject({ hooks: 'hooks', passed: 2, failed: 1 })
    expect(report.cases.map((c) => [c.file, c.ok])).toEqual([
      ['hooks/guard/tests/refuses.json', true],
      ['hooks/guard/tests/run-end.json', true],
      ['hooks/guard/tests/wrong.json', false],
    ])
    expect(report.cases[2]?.failures).toEqual(['result.allow: expected false, got true', 'result.reason: expected "refused by the user", but it is missing'])
    const xml = await readFile(join(dir, 'report.xml'), 'utf8')
    expect(xml).toMatch(/^<\?xml version="1\.0" encoding="UTF-8"\?>\n<testsuites name="hookd test" tests="3" failures="1">\n {2}<testsuite name="guard" tests="3" failures="1" time="[\d.]+">\n/)
    expect(xml).toContain('<failure message="result.allow: expected false, got true">result.allow: expected false, got true\nresult.reason: expected &quot;refused by the user&quot;, but it is missing</failure>')
  })

  it('reports a case file it cannot use, naming the file and the field, and runs the others', async () => {
    const root = await writeTree({
      'ok/index.js': 'module.exports = { beforeRun() {} }\n',
      'ok/tests/good.json': json({ point: 'beforeRun', payload: { sessionId: 's', agentId: 'a', modelId: 'm' } }),
      'ok/tests/typo.json': json({ point: 'beforRun', payload: {} }),
      'ok/tests/chain.json': json({ hooks: ['ok', 'gaurd'], point: 'beforeRun', payload: { sessionId: 's', agentId: 'a', modelId: 'm' } }),
    })
    try {
      const ran = await hookd(['test', '.'], root)
      const out = ran.stdout.replace(/ \(\d+ ms\)/g, '')
      expect(out).toBe(
        [
          'PASS ok/tests/good.json: good',
          "FAIL ok/tests/chain.json: hooks: there is no hook 'gaurd' in the hooks folder",
          "FAIL ok/tests/typo.json: point: 'beforRun' is not a hook point; did you mean 'beforeRun'?",
          '3 cases: 1 passed, 0 failed, 2 could not be read',
          '',
        ].join('\n'),
      )
      expect(ran.code).toBe(1)
    } finally {
      await rm(root, { recursive: true, force: true })
    }
  })

  it('exits 1 when there is no case to run, saying where cases go', async () => {
    const root = await writeTree({ 'bare/index.js': 'module.exports = { beforeRun() {} }\n' })
    try {
      const ran = await hookd(['test', '.'], root)
      expect(ran.stdout).toMatch(/^no test cases in .*: add one JSON file per case to a hook's tests\/ folder \('hookd new NAME' makes a hook with its cases\)\n$/)
      expect(ran.code).toBe(1)
    } finally {
      await rm(root, { recursive: true, force: true })
    }
  })

  it('exits 2 for usage errors, with a did-you-mean for a misspelt hook', async () => {
    const typo = await runInProcess(['test', 'gaurd'], { cwd: dir })
    expect(typo).toMatchObject({ code: 2, stderr: "hookd test: 'gaurd' is neither a folder nor a hook in hooks; did you mean 'guard'?\n" })
    const option = await runInProcess(['test', '--colour'], { cwd: dir })
    expect(option.code).toBe(2)
    expect(option.stderr).toMatch(/^hookd test: Unknown option '--colour'/)
    const help = await runInProcess(['test', '--help'], { cwd: dir })
    expect(help.code).toBe(0)
    expect(help.stdout).toMatch(/^Usage: hookd test \[DIR \| HOOK\.\.\.\] \[--json\] \[--junit FILE\] \[--watch\]/)
  })

  it('runs again after a save with --watch', { timeout: 120_000 }, async () => {
    const root = await writeTree({
      'w/index.js': "module.exports = { beforeModelRequest: (ctx, r) => ({ system: r.system + '!' }) }\n",
      'w/tests/bang.json': json({ point: 'beforeModelRequest', payload: { system: 'hi', model: 'm', messages: [] }, expect: { result: { system: 'hi!' } } }),
    })
    const child = spawn(process.execPath, [...CLI_ARGS, 'test', '.', '--watch'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    const until = async (what: () => boolean, label: string): Promise<void> => {
      const deadline = Date.now() + 90_000
      while (!what()) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`never saw ${label}; stdout: ${stdout}; stderr: ${stderr}`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
    try {
      await until(() => stderr.includes('watching'), 'the watch start')
      expect(stdout).toMatch(/^PASS w\/tests\/bang\.json: bang \(\d+ ms\)\n1 case: 1 passed, 0 failed\n$/)
      await writeFile(join(root, 'w', 'index.js'), "module.exports = { beforeModelRequest: (ctx, r) => ({ system: r.system + '?' }) }\n")
      await until(() => stdout.includes('0 passed, 1 failed'), 'the second run')
      expect(stderr).toContain('hookd test: w/index.js changed; running again')
      expect(stdout).toContain('FAIL w/tests/bang.json: bang')
      expect(stdout).toContain('result.system: expected "hi!", got "hi?"')
      expect(await stopProcess(child, 'SIGINT')).toBe(1)
    } finally {
      child.kill('SIGKILL')
      await rm(root, { recursive: true, force: true })
    }
  })
})
