/**
 * Copilot CLI's tools in the canonical vocabulary (../vocabulary.ts), as Copilot CLI 1.0.102 names them
 * in its camelCase hook events (`toolName`, `toolArgs`), measured (docs/agents.md keeps the table). The
 * tool set depends on the model: GPT-5 models get `apply_patch` (raw patch text, read as Codex's:
 * ../codex/apply-patch.ts), others `create` and `edit`. Copilot wants absolute paths, which rewritten
 * paths are. `paths` of glob and grep may be a list; then the call keeps its own name.
 */
import { ToolTable } from '../tool-mapping.js'
import { APPLY_PATCH } from '../codex/apply-patch.js'

export const COPILOT = 'copilot'

const search = (native: string, canonical: 'find_files' | 'search_files') => ({
  native,
  canonical,
  fields: [
    { canonical: 'pattern', native: 'pattern' },
    { canonical: 'path', native: 'paths', path: true },
  ],
})

export const COPILOT_TOOLS = new ToolTable(COPILOT, [
  // {command, description, shellId?, mode?, detach?, initial_wait?}
  { native: 'bash', canonical: 'shell', fields: [{ canonical: 'command', native: 'command' }] },
  { native: 'powershell', canonical: 'shell', fields: [{ canonical: 'command', native: 'command' }] },
  // {path, view_range?, forceReadLargeFiles?}
  { native: 'view', canonical: 'read_file', fields: [{ canonical: 'path', native: 'path', path: true }] },
  {
    native: 'create',
    canonical: 'write_file',
    fields: [
      { canonical: 'path', native: 'path', path: true },
      { canonical: 'content', native: 'file_text' },
    ],
  },
  {
    native: 'edit',
    canonical: 'edit_file',
    fields: [
      { canonical: 'path', native: 'path', path: true },
      { canonical: 'old_string', native: 'old_str' },
      { canonical: 'new_string', native: 'new_str' },
    ],
  },
  // Copilot passes the patch as a bare string: the dialect holds it as {command} (copilot-dialect.ts).
  APPLY_PATCH,
  search('glob', 'find_files'),
  search('grep', 'search_files'),
  search('rg', 'search_files'),
  { native: 'web_fetch', canonical: 'web_fetch', fields: [{ canonical: 'url', native: 'url' }] },
])
