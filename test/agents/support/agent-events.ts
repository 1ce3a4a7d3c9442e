/**
 * The agents' own tool-gate events, as each posts them to the front door: the shapes measured with
 * the pinned CLIs (Claude Code, Codex, Gemini CLI, Copilot CLI) and Cursor's documented payloads
 * (cursor-contract.test.ts). Each takes the session's folder (`cwd`) and id, so a test runs every
 * scenario in a session of its own.
 */

/** Claude Code's PreToolUse: `tool_name` (Bash, Read, Write, Edit, WebFetch, ...) and its `tool_input`. */
export function claudePre(cwd: string, id: string, tool: string, input: Record<string, unknown>): Record<string, unknown> {
  return { session_id: id, cwd, hook_event_name: 'PreToolUse', permission_mode: 'default', tool_name: tool, tool_input: input, tool_use_id: `toolu_${tool}` }
}

/** Codex's PreToolUse for its shell (`Bash`, the command only). */
export function codexPre(cwd: string, id: string, command: string): Record<string, unknown> {
  return {
    session_id: id,
    turn_id: 't1',
    cwd,
    hook_event_name: 'PreToolUse',
    model: 'gpt-5.5',
    permission_mode: 'default',
    tool_name: 'Bash',
    tool_input: { command },
    tool_use_id: 'call_1',
  }
}

/** Codex's PreToolUse for `apply_patch`, the patch text as `command`. */
export function codexPatch(cwd: string, id: string, patch: string): Record<string, unknown> {
  return { ...codexPre(cwd, id, ''), tool_name: 'apply_patch', tool_input: { command: patch } }
}

/** Gemini CLI's BeforeTool: `run_shell_command`, `read_file`, `write_file`, `replace`, ... */
export function geminiBefore(cwd: string, id: string, tool: string, input: Record<string, unknown>): Record<string, unknown> {
  return { session_id: id, transcript_path: '/tmp/t.jsonl', cwd, hook_event_name: 'BeforeTool', timestamp: '2026-11-30T12:00:00.000Z', tool_name: tool, tool_input: input }
}

/** Copilot CLI's preToolUse (posted with ?event=preToolUse): `bash`, `view`, `create`, `edit`, `web_fetch`, ... */
export function copilotPre(cwd: string, id: string, toolName: string, toolArgs: unknown): Record<string, unknown> {
  return { sessionId: id, timestamp: 1796053931718, cwd, toolName, toolArgs }
}

/** Cursor's documented fields common to its events, with `cwd` as the workspace. */
function cursorCommon(cwd: string, id: string): Record<string, unknown> {
  return { conversation_id: id, generation_id: 'gen-0001', model: 'default', cursor_version: '1.7.2', workspace_roots: [cwd], user_email: null }
}

/** Cursor's beforeShellExecution `{command, cwd}`. */
export function cursorShell(cwd: string, id: string, command: string): Record<string, unknown> {
  return { ...cursorCommon(cwd, id), hook_event_name: 'beforeShellExecution', command, cwd }
}

/** Cursor's beforeReadFile `{file_path, content}`. */
export function cursorRead(cwd: string, id: string, filePath: string, content = ''): Record<string, unknown> {
  return { ...cursorCommon(cwd, id), hook_event_name: 'beforeReadFile', file_path: filePath, content, attachments: [] }
}

/** Cline's payload fields common to its hook events (as Cline CLI 3.0.65 sent them, measured). */
export function clineCommon(cwd: string, id: string, hookName: string): Record<string, unknown> {
  return {
    clineVersion: '',
    hookName,
    timestamp: '2026-12-01T21:17:46.002Z',
    taskId: `conv_${id}`,
    sessionContext: { rootSessionId: id },
    workspaceRoots: [cwd],
    workspaceInfo: { rootPath: cwd, hint: 'project' },
    userId: 'unknown',
    agent_id: 'agent_1',
    parent_agent_id: null,
  }
}

/** Cline's PreToolUse `{tool_call: {id, name, input}, preToolUse: {toolName, parameters}}`. */
export function clinePre(cwd: string, id: string, name: string, input: Record<string, unknown>): Record<string, unknown> {
  const parameters = Object.fromEntries(Object.entries(input).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]))
  return { ...clineCommon(cwd, id, 'tool_call'), iteration: 1, tool_call: { id: 'call_1_0', name, input }, preToolUse: { toolName: name, parameters } }
}

/** What hookd's OpenCode plugin posts at tool.execute.before (src/agents/opencode/plugin.ts). */
export function opencodeBefore(cwd: string, id: string, tool: string, args: Record<string, unknown>): Record<string, unknown> {
  return { event: 'tool.execute.before', sessionID: id, directory: cwd, tool, callID: 'toolu_1', args }
}
