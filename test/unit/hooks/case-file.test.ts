/**
 * The test-case format (src/testing/case-file.ts), the comparison of expected and actual values
 * (match.ts) and the JUnit output (report.ts): what an author sees when a case file is wrong, or a
 * result differs.
 */
import { describe, expect, it } from 'vitest'
import { parseCase } from '../../../src/testing/case-file.js'
import { differences } from '../../../src/testing/match.js'
import { junitXml } from '../../../src/testing/report.js'

const FILE = 'hooks/guard/tests/x.json'
const CALL = { id: 'c1', name: 'shell', arguments: { command: 'ls' } }

function problem(value: unknown): string {
  const parsed = parseCase(typeof value === 'string' ? value : JSON.stringify(value), FILE, 'guard')
  if (parsed.ok) throw new Error('parsed, but should not have')
  return parsed.message
}

describe('parseCase', () => {
  it('fills in the defaults: the owner hook, the file name, no diagnostics expected', () => {
    const parsed = parseCase(JSON.stringify({ point: 'beforeToolExecute', payload: CALL }), FILE, 'guard')
    if (!parsed.ok) throw new Error(parsed.message)
    expect(parsed.testCase).toMatchObject({
      file: FILE,
      name: 'x',
      owner: 'guard',
      hooks: ['guard'],
      point: 'beforeToolExecute',
      payload: CALL,
      ctx: { files: {}, env: {}, confirm: [], http: {}, autoApprove: false, configs: {}, policy: {}, session: {} },
      expect: { match: 'exact', diagnostics: [] },
    })
    expect(parsed.testCase.ctx.interactive).toBeUndefined()
    expect(parsed.testCase.expect.result).toBeUndefined()
  })

  it('names the file and the field of every problem', () => {
    expect(problem({ point: 'beforeToolExecut', payload: CALL })).toBe(`${FILE}: point: 'beforeToolExecut' is not a hook point; did you mean 'beforeToolExecute'?`)
    expect(problem({ point: 'beforeToolExecute', payload: { id: 'c1', name: 'shell' } })).toBe(
      `${FILE}: payload.arguments: Invalid input: expected record, received undefined (beforeToolExecute: Before a tool runs. Receives {id, name, arguments}; may return {allow, reason, arguments, defer}.)`,
    )
    expect(problem({ point: 'beforeToolExecute', payload: CALL, expect: { match: 'loose' } })).toBe(`${FILE}: expect.match: Invalid option: expected one of "exact"|"partial"`)
    expect(problem({ point: 'beforeToolExecute', payload: CALL, expect: { diagnostics: [{ kind: 'thrown' }] } })).toMatch(
      /^hooks\/guard\/tests\/x\.json: expect\.diagnostics\[0\]\.kind: Invalid option: expected one of "load"\|"throw"/,
    )
    expect(problem({ point: 'beforeToolExecute', payload: CALL, ctx: { confirms: [true] } })).toBe(`${FILE}: ctx: Unrecognized key: "confirms"`)
    expect(problem({ point: 'beforeToolExecute', payload: CALL, ctx: { files: { '../escape.txt': 'x' } } })).toBe(
      `${FILE}: ctx.files: '../escape.txt' must be a path relative to the workdir, and stay inside it (no leading /, no .. that leads out)`,
    )
    expect(problem({ point: 'beforeToolExecute', payload: CALL, ctx: { http: { 'ftp://x/y': { body: 'z' } } } })).toBe(
      `${FILE}: ctx.http: 'ftp://x/y' is not "URL" or "METHOD URL" with an absolute http(s) URL`,
    )
    expect(problem({ point: 'beforeToolExecute', payload: CALL, ctx: { configs: { audit: {} } } })).toBe(`${FILE}: ctx.configs.audit: 'audit' is not one of the case's hooks (guard)`)
  })

  it('says what is wrong with text that is not JSON', () => {
    expect(problem('{"point": "beforeRun",')).toMatch(/^hooks\/guard\/tests\/x\.json: the case is not valid JSON \(/)
  })
})

describe('differences', () => {
  it('lists each differing field with its path, what was expected and what was there', () => {
    const expected = { allow: false, reason: 'no', arguments: { command: 'ls', 'dry-run': true } }
    const actual = { allow: true, arguments: { command: 'ls -la', 'dry-run': true, force: 1 }, refusedBy: 'x' }
    expect(differences(expected, actual, 'exact', 'result')).toEqual([
      'result.allow: expected false, got true',
      'result.reason: expected "no", but it is missing',
      'result.arguments.command: expected "ls", got "ls -la"',
      'result.arguments.force: not expected, got 1',
      'result.refusedBy: not expected, got "x"',
    ])
    expect(differences(expected, actual, 'partial', 'result')).toEqual([
      'result.allow: expected false, got true',
      'result.reason: expected "no", but it is missing',
      'result.arguments.command: expected "ls", got "ls -la"',
    ])
  })

  it('compares arrays item by item, and says when their lengths differ', () => {
    expect(differences(['a', 'b'], ['a', 'c'], 'exact', 'logs')).toEqual(['logs[1]: expected "b", got "c"'])
    expect(differences(['a'], ['a', 'b'], 'partial', 'logs')).toEqual(['logs: expected 1 item, got 2: ["a","b"]'])
    expect(differences({ 'a b': 1 }, { 'a b': 2 }, 'exact', 'result')).toEqual(['result["a b"]: expected 1, got 2'])
    expect(differences({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }, 'exact', 'result')).toEqual([])
  })
})

describe('junitXml', () => {
  it('writes one testsuite per hook, a failure per failed case, and escapes what XML cannot hold', () => {
    const xml = junitXml({
      hooksShown: 'hooks',
      passed: 1,
      failed: 2,
      outcomes: [
        { file: 'hooks/guard/tests/a.json', name: 'a <ok>', owner: 'guard', hooks: ['guard'], point: 'beforeRun', ok: true, failures: [], durationMs: 12 },
        { file: 'hooks/guard/tests/b.json', name: 'b', owner: 'guard', hooks: ['guard'], point: 'beforeRun', ok: false, failures: ['result.allow: expected "x" & \u0001'], durationMs: 3 },
      ],
      problems: [{ file: 'hooks/audit/tests/c.json', message: 'point: bad' }],
    })
    expect(xml).toBe(
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<testsuites name="hookd test" tests="3" failures="2">',
        '  <testsuite name="audit" tests="1" failures="1" time="0.000">',
        '    <testcase name="hooks/audit/tests/c.json" classname="audit" file="hooks/audit/tests/c.json" time="0.000">',
        '      <failure message="point: bad">point: bad</failure>',
        '    </testcase>',
        '  </testsuite>',
        '  <testsuite name="guard" tests="2" failures="1" time="0.015">',
        '    <testcase name="a &lt;ok&gt;" classname="guard" file="hooks/guard/tests/a.json" time="0.012"/>',
        '    <testcase name="b" classname="guard" file="hooks/guard/tests/b.json" time="0.003">',
        '      <failure message="result.allow: expected &quot;x&quot; &amp; ">result.allow: expected &quot;x&quot; &amp; </failure>',
        '    </testcase>',
        '  </testsuite>',
        '</testsuites>',
        '',
      ].join('\n'),
    )
  })
})
