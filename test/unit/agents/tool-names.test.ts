/**
 * The canonical tools' names kept for hook.json "tools" (src/protocol/tool-names.ts) against the one
 * list of canonical tools (src/agents/vocabulary.ts), and what setup makes of a route's "tools"
 * (src/agents/tool-conditions.ts): the union over the hooks that serve a tool point, every tool as soon
 * as one lists none or did not load, and the agent's matcher naming exactly its native tools for them.
 */
import { describe, expect, it } from 'vitest'
import { CLAUDE_CODE_TOOLS } from '../../../src/agents/claude-code/tools.js'
import { CODEX_AGENT } from '../../../src/agents/codex/codex-agent.js'
import { GEMINI_AGENT } from '../../../src/agents/gemini/gemini-agent.js'
import { anchoredNames, nameList, nativeTools, routeTools } from '../../../src/agents/tool-conditions.js'
import { CANONICAL_TOOL_NAMES } from '../../../src/agents/vocabulary.js'
import { TOOL_NAMES, callNameAt } from '../../../src/protocol/tool-names.js'
import { placementsFor } from '../../../src/cli/setup/setup-shared.js'

describe('hook.json "tools"', () => {
  it('names exactly the canonical tools, in the vocabulary\'s order', () => {
    expect([...TOOL_NAMES]).toEqual(CANONICAL_TOOL_NAMES)
  })

  it("a route's tools: the union over the hooks at a tool point; every tool when one lists none or did not load", () => {
    const guard = { points: ['beforeToolExecute'], tools: ['shell'] }
    const files = { points: ['afterToolExecute'], tools: ['write_file', 'edit_file'] }
    const audit = { points: ['afterRun'] }
    expect(routeTools([guard, files, audit])).toEqual(new Set(['shell', 'write_file', 'edit_file']))
    expect(routeTools([guard, { points: ['beforeToolExecute'] }])).toBeUndefined()
    expect(routeTools([guard, { points: [], status: 'broken' }])).toBeUndefined()
    // tool:gate is served through beforeToolExecute; permission:request is a tool point of its own.
    expect(routeTools([{ points: ['permission:request'] }])).toBeUndefined()
    expect(routeTools([audit])).toEqual(new Set())
  })

  it("Claude Code's matcher names its native tools for them, as an exact list", () => {
    expect(nameList(nativeTools(CLAUDE_CODE_TOOLS, new Set(['shell', 'read_file'])))).toBe('Bash|Read')
    expect(nativeTools(CLAUDE_CODE_TOOLS, new Set(['list_files']))).toEqual([])
    expect(nameList(['a.b', 'c'])).toBe('^(?:a\\.b|c)$')
  })

  it("Gemini CLI's matcher is an anchored regular expression (it tests an unanchored one against the name)", () => {
    expect(anchoredNames(nativeTools(GEMINI_AGENT.dialect.tools, new Set(['shell'])))).toBe('^(?:run_shell_command)$')
    expect(new RegExp(anchoredNames(['write_file'])).test('write_file_extra')).toBe(false)
  })

  it("Codex's matcher is an exact list of the names its events carry (Bash, apply_patch), on its tool events alone; none for every tool", () => {
    const events = ['SessionStart', 'PreToolUse', 'PermissionRequest', 'PostToolUse', 'Stop']
    const matchers = (tools?: ReadonlySet<string>) =>
      Object.fromEntries(placementsFor(CODEX_AGENT, events, () => ({ type: 'command', command: 'shim', timeout: 35 }), { tools, transport: 'command' }).placements.map((p) => [p.event, p.matcher]))
    const tool = { PreToolUse: 'Bash', PermissionRequest: 'Bash', PostToolUse: 'Bash' }
    expect(matchers(new Set(['shell']))).toEqual({ SessionStart: undefined, ...tool, Stop: undefined })
    // apply_patch is the one native tool for both file tools, named once.
    expect(matchers(new Set(['write_file', 'edit_file'])).PreToolUse).toBe('apply_patch')
    expect(matchers(new Set(['shell', 'write_file'])).PostToolUse).toBe('Bash|apply_patch')
    // Codex reads a matcher of letters, digits, _ and | alone as exact names, so no longer name matches.
    expect(matchers(new Set(['shell', 'write_file'])).PreToolUse).toMatch(/^[A-Za-z0-9_|]+$/)
    // Every tool: no matcher at all, as before (Codex hashes the matcher into its trust).
    expect(matchers(undefined)).toEqual({ SessionStart: undefined, PreToolUse: undefined, PermissionRequest: undefined, PostToolUse: undefined, Stop: undefined })
    // None of Codex's tools: no tool event.
    expect(Object.keys(matchers(new Set(['web_fetch'])))).toEqual(['SessionStart', 'Stop'])
  })

  it('the call a point is about, as the session hands the payload over', () => {
    expect(callNameAt('beforeToolExecute', { id: '1', name: 'shell', arguments: {} })).toBe('shell')
    expect(callNameAt('afterToolExecute', { call: { name: 'read_file' }, result: {} })).toBe('read_file')
    expect(callNameAt('permission:request', { initial: { name: 'shell' }, current: { name: 'write_file' } })).toBe('shell')
    expect(callNameAt('tool:gate', { initial: { name: 'edit_file' }, current: {} })).toBe('edit_file')
    expect(callNameAt('beforeToolExecute', { initial: { name: 'shell' } })).toBe('')
    expect(callNameAt('beforeRun', { name: 'shell' })).toBeUndefined()
  })
})
