/** Claude Code's tools in the canonical vocabulary, both ways, and its tool outputs as text and back. */
import { describe, expect, it } from 'vitest'
import { CLAUDE_CODE_TOOLS } from '../../../src/agents/claude-code/tools.js'
import { outputText, withOutputText } from '../../../src/agents/claude-code/tool-output.js'
import { toWorkdirPath } from '../../../src/agents/canonical-path.js'

const W = '/home/me/project'

describe('native -> canonical', () => {
  it.each([
    ['Bash', { command: 'ls', description: 'list' }, 'shell', { command: 'ls' }],
    ['Read', { file_path: `${W}/src/a.ts`, offset: 10, limit: 5 }, 'read_file', { path: 'src/a.ts', offset: 10, limit: 5 }],
    ['Read', { file_path: '/etc/passwd' }, 'read_file', { path: '/etc/passwd' }],
    ['Write', { file_path: `${W}/b.txt`, content: 'x' }, 'write_file', { path: 'b.txt', content: 'x' }],
    ['Edit', { file_path: `${W}/b.txt`, old_string: 'a', new_string: 'b', replace_all: false }, 'edit_file', { path: 'b.txt', old_string: 'a', new_string: 'b', replace_all: false }],
    ['WebFetch', { url: 'http://x.example', prompt: 'p' }, 'web_fetch', { url: 'http://x.example', prompt: 'p' }],
    ['WebSearch', { query: 'q' }, 'web_search', { query: 'q' }],
    ['Glob', { pattern: '**/*.ts' }, 'find_files', { pattern: '**/*.ts' }],
    ['Grep', { pattern: 'TODO', path: W, output_mode: 'content' }, 'search_files', { pattern: 'TODO', path: '.' }],
  ])('%s %j is %s %j, with the native call beside it', (native, input, name, args) => {
    const call = CLAUDE_CODE_TOOLS.toCanonical('t1', native, input, W)
    expect(call).toEqual({ id: 't1', name, arguments: args, native: { agent: 'claude-code', name: native, input } })
  })

  it('a tool with no mapping, or an input its mapping cannot read, keeps its own name and input', () => {
    expect(CLAUDE_CODE_TOOLS.toCanonical('t', 'mcp__db__query', { sql: 'select 1' }, W)).toMatchObject({ name: 'mcp__db__query', arguments: { sql: 'select 1' } })
    expect(CLAUDE_CODE_TOOLS.toCanonical('t', 'Bash', { command: ['rm', '-rf'] }, W)).toMatchObject({ name: 'Bash', arguments: { command: ['rm', '-rf'] } })
  })
})

describe('canonical -> native', () => {
  it('unchanged arguments are no rewrite', () => {
    const call = CLAUDE_CODE_TOOLS.toCanonical('t', 'Read', { file_path: `${W}/a.txt` }, W)
    expect(CLAUDE_CODE_TOOLS.toNative(call, { ...call.arguments }, W)).toBeUndefined()
  })

  it('writes the canonical fields over the native input, keeps the others, absolutizes paths, drops removed fields', () => {
    const call = CLAUDE_CODE_TOOLS.toCanonical('t', 'Read', { file_path: `${W}/a.txt`, offset: 3, limit: 9 }, W)
    expect(CLAUDE_CODE_TOOLS.toNative(call, { path: 'docs/b.txt', limit: 9 }, W)).toEqual({ ok: true, input: { file_path: `${W}/docs/b.txt`, limit: 9 }, ignored: [] })
    const bash = CLAUDE_CODE_TOOLS.toCanonical('t', 'Bash', { command: 'ls', description: 'd', timeout: 5000 }, W)
    expect(CLAUDE_CODE_TOOLS.toNative(bash, { command: 'ls -la', checked: 1 }, W)).toEqual({
      ok: true,
      input: { command: 'ls -la', description: 'd', timeout: 5000 },
      ignored: ['checked'],
    })
  })

  it('arguments of the wrong type are no input at all, and say which field is wrong', () => {
    const call = CLAUDE_CODE_TOOLS.toCanonical('t', 'Write', { file_path: `${W}/a`, content: 'x' }, W)
    expect(CLAUDE_CODE_TOOLS.toNative(call, { path: 'a', content: 7 }, W)).toEqual({
      ok: false,
      message: 'the rewritten write_file arguments.content: Invalid input: expected string, received number',
    })
  })

  it("an unmapped tool's rewritten arguments are its input", () => {
    const call = CLAUDE_CODE_TOOLS.toCanonical('t', 'mcp__db__query', { sql: 'drop table x' }, W)
    expect(CLAUDE_CODE_TOOLS.toNative(call, { sql: 'select 1' }, W)).toEqual({ ok: true, input: { sql: 'select 1' }, ignored: [] })
  })
})

describe('paths', () => {
  it('are workdir-relative inside the workdir, absolute outside it', () => {
    expect(toWorkdirPath(`${W}/a/b`, W)).toBe('a/b')
    expect(toWorkdirPath(W, W)).toBe('.')
    expect(toWorkdirPath('/home/me/projector/x', W)).toBe('/home/me/projector/x')
    expect(toWorkdirPath('/home/me', W)).toBe('/home/me')
    expect(toWorkdirPath('rel/x', W)).toBe('rel/x')
  })
})

describe('tool output', () => {
  it('is text for hooks, and goes back in the shapes that carry text', () => {
    const bash = { stdout: 'out', stderr: 'err', interrupted: false, isImage: false, noOutputExpected: false }
    expect(outputText('Bash', bash)).toBe('out\nerr')
    expect(withOutputText('Bash', bash, 'X')).toEqual({ ...bash, stdout: 'X', stderr: '' })
    const read = { type: 'text', file: { filePath: '/a', content: 'a\nb\n', numLines: 2, startLine: 1, totalLines: 2 } }
    expect(outputText('Read', read)).toBe('a\nb\n')
    expect(withOutputText('Read', read, 'one\ntwo\nthree\n')).toEqual({ type: 'text', file: { filePath: '/a', content: 'one\ntwo\nthree\n', numLines: 3, startLine: 1, totalLines: 3 } })
    const glob = { filenames: ['/a', '/b'], durationMs: 1, numFiles: 2, truncated: false }
    expect(outputText('Glob', glob)).toBe('/a\n/b')
    expect(withOutputText('Glob', glob, '/a\n')).toEqual({ ...glob, filenames: ['/a'], numFiles: 1 })
    const fetched = { bytes: 3, code: 200, codeText: 'OK', result: 'page', durationMs: 1, url: 'https://x' }
    expect(withOutputText('WebFetch', fetched, 'PAGE')).toEqual({ ...fetched, result: 'PAGE' })
    expect(withOutputText('mcp__s__t', 'plain', 'PLAIN')).toBe('PLAIN')
  })

  it('shapes without a text give none back', () => {
    const write = { type: 'create', filePath: '/a', content: 'x', structuredPatch: [], originalFile: null, userModified: false }
    expect(outputText('Write', write)).toBe('File created successfully at: /a')
    expect(withOutputText('Write', write, 'X')).toBeUndefined()
    expect(withOutputText('Bash', { stdout: '', stderr: '', isImage: true }, 'X')).toBeUndefined()
    expect(withOutputText('Read', { type: 'notebook', file: { cells: [] } }, 'X')).toBeUndefined()
    expect(withOutputText('mcp__s__t', [{ type: 'text', text: 'a' }], 'X')).toBeUndefined()
    expect(outputText('mcp__s__t', [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }])).toBe('a\nb')
  })
})
