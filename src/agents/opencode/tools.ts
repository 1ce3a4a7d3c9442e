/**
 * OpenCode's tools in the canonical vocabulary (../vocabulary.ts), as OpenCode 1.18.33 names them in
 * its plugins' `tool.execute.before` and `tool.execute.after` (`input.tool`, `output.args`), measured
 * with the real CLI (docs/agents.md keeps the table). Paths are `filePath`, absolute or relative to
 * the project; `task` (a subagent), `todowrite`, `skill` keep their own names.
 */
import { ToolTable } from '../tool-mapping.js'

export const OPENCODE = 'opencode'

export const OPENCODE_TOOLS = new ToolTable(OPENCODE, [
  // {command, timeout?, workdir?, description?}
  {
    native: 'bash',
    canonical: 'shell',
    fields: [
      { canonical: 'command', native: 'command' },
      { canonical: 'cwd', native: 'workdir', path: true },
    ],
  },
  // {filePath, offset?, limit?}
  {
    native: 'read',
    canonical: 'read_file',
    fields: [
      { canonical: 'path', native: 'filePath', path: true },
      { canonical: 'offset', native: 'offset' },
      { canonical: 'limit', native: 'limit' },
    ],
  },
  {
    native: 'write',
    canonical: 'write_file',
    fields: [
      { canonical: 'path', native: 'filePath', path: true },
      { canonical: 'content', native: 'content' },
    ],
  },
  {
    native: 'edit',
    canonical: 'edit_file',
    fields: [
      { canonical: 'path', native: 'filePath', path: true },
      { canonical: 'old_string', native: 'oldString' },
      { canonical: 'new_string', native: 'newString' },
      { canonical: 'replace_all', native: 'replaceAll', flag: true },
    ],
  },
  {
    native: 'glob',
    canonical: 'find_files',
    fields: [
      { canonical: 'pattern', native: 'pattern' },
      { canonical: 'path', native: 'path', path: true },
    ],
  },
  {
    native: 'grep',
    canonical: 'search_files',
    fields: [
      { canonical: 'pattern', native: 'pattern' },
      { canonical: 'path', native: 'path', path: true },
    ],
  },
  // {url, format?, timeout?}
  { native: 'webfetch', canonical: 'web_fetch', fields: [{ canonical: 'url', native: 'url' }] },
])
