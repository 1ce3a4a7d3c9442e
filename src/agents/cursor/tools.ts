/**
 * Cursor's tools in the canonical vocabulary (../vocabulary.ts). Cursor's documented hook events are
 * per kind of action rather than per tool, so the dialect (cursor-dialect.ts) names the call after the
 * action: `Shell {command, cwd}` (beforeShellExecution), `Read {file_path, content}` (beforeReadFile), `Edit
 * {file_path, old_string, new_string}` (afterFileEdit with one edit), `MCP:<tool_name>` with the MCP
 * parameters. preToolUse and postToolUse name the tool and its input as Cursor's hook engine builds
 * them (@cursor/sdk 1.0.32): `Shell {command, cwd}`, `Read {file_path}`, `Write {file_path, content}`,
 * `Grep {pattern, file_path, glob, output_mode}`, `List {file_path, ignore}`, `Fetch {url}`; `Delete
 * {file_path}` and the rest have no canonical tool and keep their own names.
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
    native: 'Write',
    canonical: 'write_file',
    fields: [
      { canonical: 'path', native: 'file_path', path: true },
      { canonical: 'content', native: 'content' },
    ],
  },
  {
    native: 'Edit',
    canonical: 'edit_file',
    fields: [
      { canonical: 'path', native: 'file_path', path: true },
      { canonical: 'old_string', native: 'old_string' },
      { canonical: 'new_string', native: 'new_string' },
    ],
  },
  {
    native: 'Grep',
    canonical: 'search_files',
    fields: [
      { canonical: 'pattern', native: 'pattern' },
      { canonical: 'path', native: 'file_path', path: true },
    ],
  },
  { native: 'List', canonical: 'list_files', fields: [{ canonical: 'path', native: 'file_path', path: true }] },
  { native: 'Fetch', canonical: 'web_fetch', fields: [{ canonical: 'url', native: 'url' }] },
])
