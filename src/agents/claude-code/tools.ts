/**
 * Claude Code's tools in the canonical vocabulary (../vocabulary.ts), as Claude Code 2.1.328 names them
 * in its hook events (`tool_name`, `tool_input`); measured with the real CLI (docs/agents.md keeps
 * the table for users). Every other tool (Agent, NotebookEdit, ToolSearch, MCP tools `mcp__s__t`, ...)
 * reaches hooks under its own name with its own input.
 */
import { ToolTable } from '../tool-mapping.js'

export const CLAUDE_CODE = 'claude-code'

export const CLAUDE_CODE_TOOLS = new ToolTable(CLAUDE_CODE, [
  // {command, description, timeout?, run_in_background?, dangerouslyDisableSandbox?}. Bash runs in the
  // session's folder (the event's cwd), so it names none.
  {
    native: 'Bash',
    canonical: 'shell',
    fields: [
      { canonical: 'command', native: 'command' },
      { canonical: 'unsandboxed', native: 'dangerouslyDisableSandbox', flag: true },
    ],
  },
  // {file_path, offset?, limit?}
  {
    native: 'Read',
    canonical: 'read_file',
    fields: [
      { canonical: 'path', native: 'file_path', path: true },
      { canonical: 'offset', native: 'offset' },
      { canonical: 'limit', native: 'limit' },
    ],
  },
  // {file_path, content}
  {
    native: 'Write',
    canonical: 'write_file',
    fields: [
      { canonical: 'path', native: 'file_path', path: true },
      { canonical: 'content', native: 'content' },
    ],
  },
  // {file_path, old_string, new_string, replace_all}
  {
    native: 'Edit',
    canonical: 'edit_file',
    fields: [
      { canonical: 'path', native: 'file_path', path: true },
      { canonical: 'old_string', native: 'old_string' },
      { canonical: 'new_string', native: 'new_string' },
      { canonical: 'replace_all', native: 'replace_all' },
    ],
  },
  // {url, prompt}
  {
    native: 'WebFetch',
    canonical: 'web_fetch',
    fields: [
      { canonical: 'url', native: 'url' },
      { canonical: 'prompt', native: 'prompt' },
    ],
  },
  // {query, allowed_domains?, blocked_domains?}
  { native: 'WebSearch', canonical: 'web_search', fields: [{ canonical: 'query', native: 'query' }] },
  // {pattern, path?}
  {
    native: 'Glob',
    canonical: 'find_files',
    fields: [
      { canonical: 'pattern', native: 'pattern' },
      { canonical: 'path', native: 'path', path: true },
    ],
  },
  // {pattern, path?, glob?, output_mode?, -i?, ...}
  {
    native: 'Grep',
    canonical: 'search_files',
    fields: [
      { canonical: 'pattern', native: 'pattern' },
      { canonical: 'path', native: 'path', path: true },
    ],
  },
])
