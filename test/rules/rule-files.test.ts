/**
 * The starter rules in rules/ as shipped: each a complete hook folder (index.js, hook.json with a
 * description and "onError": "refuse", test cases), the shell reader each carries the same in every
 * folder, the folder in the package's files, and every rule's own cases passing under `hookd test`
 * in the real sandbox (run in-process, main(argv, io)).
 */
import { execFile } from 'node:child_process'
import { readFile, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { checkHookJson } from '../../src/sidecar/hooks/hook-files.js'
import { ROOT, runInProcess } from '../support/processes.js'

const RULES_DIR = join(ROOT, 'rules')
const RULES = ['egress-allowlist', 'force-with-lease', 'no-pipe-to-shell', 'protect-secrets', 'stay-in-repo']
/** The shell reader every rule carries. */
const LIB = ['commands.js', 'shell.js']

const caseFiles = async (rule: string): Promise<string[]> => (await readdir(join(RULES_DIR, rule, 'tests'))).filter((f) => f.endsWith('.json')).sort()

describe('the starter rules', { timeout: 120_000 }, () => {
  it('are the five folders of rules/, each a hook folder with a description, onError refuse and cases', async () => {
    expect((await readdir(RULES_DIR)).sort()).toEqual(RULES)
    for (const rule of RULES) {
      expect((await readdir(join(RULES_DIR, rule))).sort(), rule).toEqual(['hook.json', 'index.js', 'lib', 'tests'])
      const hookJson = checkHookJson(await readFile(join(RULES_DIR, rule, 'hook.json'), 'utf8'))
      expect(hookJson, rule).toMatchObject({ ok: true, onError: 'refuse', description: expect.stringMatching(/^(refuses|rewrites) /) })
      expect((await caseFiles(rule)).length, rule).toBeGreaterThanOrEqual(8)
      // Each case is a beforeToolExecute call: the gate the rule guards.
      for (const file of await caseFiles(rule)) {
        const testCase = JSON.parse(await readFile(join(RULES_DIR, rule, 'tests', file), 'utf8')) as { point: string }
        expect(testCase.point, `${rule}/tests/${file}`).toBe('beforeToolExecute')
      }
      expect(await readFile(join(RULES_DIR, rule, 'index.js'), 'utf8')).toMatch(new RegExp(`^// @ts-check\\n// ${rule}, a starter rule of hookd: `))
    }
  })

  it('carry the same shell reader, byte for byte', async () => {
    for (const file of LIB) {
      const first = await readFile(join(RULES_DIR, RULES[0] as string, 'lib', file), 'utf8')
      for (const rule of RULES) {
        expect((await readdir(join(RULES_DIR, rule, 'lib'))).sort(), rule).toEqual(LIB)
        expect(await readFile(join(RULES_DIR, rule, 'lib', file), 'utf8'), `${rule}/lib/${file}`).toBe(first)
      }
    }
  })

  it('ship in the package: every file of rules/ is in what npm packs', async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { files: string[] }
    expect(pkg.files).toContain('rules')
    const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, maxBuffer: 32 * 1024 * 1024 })
    const packed = new Set(((JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>)[0]?.files ?? []).map((f) => f.path))
    for (const rule of RULES) {
      for (const file of ['index.js', 'hook.json', ...LIB.map((f) => `lib/${f}`), ...(await caseFiles(rule)).map((f) => `tests/${f}`)]) {
        expect(packed.has(`rules/${rule}/${file}`), `rules/${rule}/${file}`).toBe(true)
      }
    }
  })

  it("pass their own cases under hookd test, in the sandbox", async () => {
    const total = (await Promise.all(RULES.map(caseFiles))).reduce((n, files) => n + files.length, 0)
    const ran = await runInProcess(['test', 'rules'], { cwd: ROOT })
    expect(ran.stderr).toBe('')
    const lines = ran.stdout.trimEnd().split('\n')
    expect(lines.filter((l) => l.startsWith('FAIL')), ran.stdout).toEqual([])
    expect(lines.filter((l) => l.startsWith('PASS '))).toHaveLength(total)
    expect(lines.at(-1)).toBe(`${total} cases: ${total} passed, 0 failed`)
    expect(ran.code).toBe(0)
  })
})
