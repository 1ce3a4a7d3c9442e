/**
 * The canonical mapping in memory, both ways, for what the front-door tests (test/hostile/
 * canonical-calls.test.ts) do not spell out: which native form a rewrite keeps, which rewrites
 * refuse, and how a dialect reads tool arguments sent as a JSON string.
 */
import { describe, expect, it } from 'vitest'
import { readPath, toWorkdirPath } from '../../src/agents/canonical-path.js'
import { CLAUDE_CODE_TOOLS } from '../../src/agents/claude-code/tools.js'
import { CODEX_TOOLS } from '../../src/agents/codex/tools.js'
import { COPILOT_DIALECT } from '../../src/agents/copilot/copilot-dialect.js'
import { jsonArguments } from '../../src/agents/event-fields.js'
import { GEMINI_TOOLS } from '../../src/agents/gemini/tools.js'

const W = '/home/me/project'

describe('paths', () => {
  it('resolve . and .. lexically: inside the workdir relative, outside absolute', () => {
    expect(toWorkdirPath('src/../../x', W)).toBe('/home/me/x')
    expect(toWorkdirPath('./a//b/', W)).toBe('a/b')
    expect(toWorkdirPath(`${W}/../project/c`, W)).toBe('c')
    expect(toWorkdirPath('..', W)).toBe('/home/me')
    expect(toWorkdirPath('/../etc/passwd', W)).toBe('/etc/passwd')
    expect(toWorkdirPath('', W)).toBe('.')
    expect(toWorkdirPath('x', `${W}/`)).toBe('x')
  })

  it('have no canonical form with a NUL byte or a leading ~', () => {
    expect(readPath('a\0b', W, "Read's file_path")).toEqual({ ok: false, problem: "Read's file_path holds a NUL byte, which no file name can" })
    expect(readPath('~', W, 'x')).toMatchObject({ ok: false })
    expect(readPath('~root/.ssh', W, 'x')).toMatchObject({ ok: false })
    expect(readPath('a/~b', W, 'x')).toEqual({ ok: true, path: 'a/~b' })
  })
})

describe('rewrites', () => {
  it('keep the native form of every field the hooks left as it was', () => {
    const call = GEMINI_TOOLS.toCanonical('t', 'run_shell_command', { command: 'ls', dir_path: 'sub/', description: 'd' }, W)
    expect(call.arguments).toEqual({ command: 'ls', cwd: 'sub' })
    expect(GEMINI_TOOLS.toNative(call, { ...call.arguments, command: 'ls -la' }, W)).toEqual({ ok: true, input: { command: 'ls -la', dir_path: 'sub/', description: 'd' }, ignored: [] })
    const bash = CLAUDE_CODE_TOOLS.toCanonical('t', 'Bash', { command: 'ls', dangerouslyDisableSandbox: 'true' }, W)
    expect(CLAUDE_CODE_TOOLS.toNative(bash, { ...bash.arguments, command: 'pwd' }, W)).toEqual({ ok: true, input: { command: 'pwd', dangerouslyDisableSandbox: 'true' }, ignored: [] })
  })

  it('that change nothing native are no rewrite: unsandboxed false where the call had none', () => {
    const call = CODEX_TOOLS.toCanonical('t', 'Bash', { command: 'ls' }, W)
    expect(CODEX_TOOLS.toNative(call, { command: 'ls', unsandboxed: false }, W)).toBeUndefined()
    expect(CODEX_TOOLS.toNative(call, { command: 'ls', unsandboxed: true }, W)).toEqual({
      ok: false,
      message: "the rewritten shell arguments set 'unsandboxed', which the tool has no field for",
    })
  })

  it('refuse a path with a NUL byte, and a patch path no header can carry', () => {
    const read = GEMINI_TOOLS.toCanonical('t', 'read_file', { file_path: 'a.txt' }, W)
    expect(GEMINI_TOOLS.toNative(read, { path: 'b\0.txt' }, W)).toEqual({ ok: false, message: 'the rewritten read_file path holds a NUL byte' })
    const add = CODEX_TOOLS.toCanonical('t', 'apply_patch', { command: '*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch\n' }, W)
    expect(add.name).toBe('write_file')
    expect(CODEX_TOOLS.toNative(add, { path: 'a.txt ', content: 'x\n' }, W)).toEqual({ ok: false, message: 'the rewritten write_file path ends with a space, which a patch header cannot carry' })
    expect(CODEX_TOOLS.toNative(add, { path: 'a\u202e.txt', content: 'x\n' }, W)).toMatchObject({ ok: false, message: expect.stringContaining('holds U+202E (an invisible format character)') })
  })
})

describe('arguments sent as a JSON string', () => {
  it('are read as an object, or not at all', () => {
    expect(jsonArguments(' {"command":"ls"}', "Copilot CLI's toolArgs", 'bash')).toEqual({ ok: true, value: { command: 'ls' } })
    expect(jsonArguments('"ls"', "Copilot CLI's toolArgs", 'bash')).toEqual({ ok: false, problem: "Copilot CLI's toolArgs for 'bash' is not a JSON object" })
    expect(jsonArguments('{"a":1}{', "Copilot CLI's toolArgs", 'bash')).toEqual({ ok: false, problem: "Copilot CLI's toolArgs for 'bash' is not valid JSON" })
  })

  it("Copilot's: a bare patch string for apply_patch, JSON for the rest", () => {
    const event = (toolName: string, toolArgs: unknown) => COPILOT_DIALECT.parse({ sessionId: 's', cwd: W, toolName, toolArgs }, 'preToolUse').event
    expect(event('apply_patch', '*** Begin Patch\n*** End Patch')).toEqual({ kind: 'beforeTool', call: { id: '', tool: 'apply_patch', input: { command: '*** Begin Patch\n*** End Patch' } } })
    expect(event('bash', '{"command":"ls"}')).toEqual({ kind: 'beforeTool', call: { id: '', tool: 'bash', input: { command: 'ls' } } })
    expect(event('bash', 'ls')).toEqual({ kind: 'beforeTool', call: { id: '', tool: 'bash', input: {}, unreadable: "Copilot CLI's toolArgs for 'bash' is not a JSON object" } })
    expect(event('apply_patch', '{"command": ')).toEqual({ kind: 'beforeTool', call: { id: '', tool: 'apply_patch', input: {}, unreadable: "Copilot CLI's toolArgs for 'apply_patch' is not valid JSON" } })
  })
})
