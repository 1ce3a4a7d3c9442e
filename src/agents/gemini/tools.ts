/**
 * Gemini CLI's tools in the canonical vocabulary (../vocabulary.ts), as Gemini CLI 0.61.0 declares them
 * to the model and names them in its hook events (`tool_name`, `tool_input` as the model sent them),
 * measured (docs/agents.md keeps the table). `web_fetch` takes a prompt with the URLs inside it, not a
 * URL, so it keeps its own name; so do MCP tools (`mcp__server__tool`) and the rest. Paths may come
 * relative (as the model wrote them); rewritten ones go back absolute, which Gemini CLI takes.
 */
import { ToolTable } from '../tool-mapping.js'

export const GEMINI = 'gemini'

export const GEMINI_TOOLS = new ToolTable(GEMINI, [
  // {command, description?, dir_path?, is_background?, delay_ms?, additional_permissions?}. dir_path is
  // relative to the project or absolute; additional_permissions asks the sandbox for more (network,
  // paths), which is not running outside it: it stays in call.native.input.
  {
    native: 'run_shell_command',
    canonical: 'shell',
    fields: [
      { canonical: 'command', native: 'command' },
      { canonical: 'cwd', native: 'dir_path', path: true },
    ],
  },
  // {file_path, start_line?, end_line?}: a window of lines by first and last, which offset/limit are not
  { native: 'read_file', canonical: 'read_file', fields: [{ canonical: 'path', native: 'file_path', path: true }] },
  {
    native: 'write_file',
    canonical: 'write_file',
    fields: [
      { canonical: 'path', native: 'file_path', path: true },
      { canonical: 'content', native: 'content' },
    ],
  },
  // {file_path, old_string, new_string, allow_multiple?, instruction?}
  {
    native: 'replace',
    canonical: 'edit_file',
    fields: [
      { canonical: 'path', native: 'file_path', path: true },
      { canonical: 'old_string', native: 'old_string' },
      { canonical: 'new_string', native: 'new_string' },
      { canonical: 'replace_all', native: 'allow_multiple' },
    ],
  },
  { native: 'google_web_search', canonical: 'web_search', fields: [{ canonical: 'query', native: 'query' }] },
  {
    native: 'glob',
    canonical: 'find_files',
    fields: [
      { canonical: 'pattern', native: 'pattern' },
      { canonical: 'path', native: 'dir_path', path: true },
    ],
  },
  // {pattern, dir_path?, include_pattern?}
  {
    native: 'grep_search',
    canonical: 'search_files',
    fields: [
      { canonical: 'pattern', native: 'pattern' },
      { canonical: 'path', native: 'dir_path', path: true },
    ],
  },
  { native: 'list_directory', canonical: 'list_files', fields: [{ canonical: 'path', native: 'dir_path', path: true }] },
])
