/**
 * Cursor's tools in the canonical vocabulary (../vocabulary.ts). Cursor's documented hook events are
 * per kind of action rather than per tool, so the dialect (cursor-dialect.ts) names the call after the
 * action: `Shell {command, cwd}` (beforeShellExecution), `Read {file_path, content}` (beforeReadFile), `Edit
 * {file_path, old_string, new_string}` (afterFileEdit with one edit), `MCP:<tool_name>` with the MCP
 * parameters. `Shell`, `Read` and `Edit` are also the names Cursor's newer preToolUse uses for those
 * tools in published configurations (not in Cursor's documentation; unverified).
 */
import { ToolTable } from '../tool-mapping.js'

export const CURSOR = 'cursor'

export const CURSOR_TOOLS = new ToolTable(CURSOR, [
  {
    native: 'Shell',
    canonical: 'shell',
    fields: [
      { canonical: 'command', native: 'command' },
      { canonical: 'cwd', native: 'cwd', path: true },
    ],
  },
  { native: 'Read', canonical: 'read_file', fields: [{ canonical: 'path', native: 'file_path', path: true }] },
  {
    native: 'Edit',
    canonical: 'edit_file',
    fields: [
      { canonical: 'path', native: 'file_path', path: true },
      { canonical: 'old_string', native: 'old_string' },
      { canonical: 'new_string', native: 'new_string' },
    ],
  },
])
