/**
 * Codex CLI's tools in the canonical vocabulary (../vocabulary.ts), as Codex 0.169.0 names them in its
 * hook events, measured (docs/agents.md keeps the table): the model's `exec_command {cmd, workdir?,
 * sandbox_permissions?, ...}` reaches hooks as `Bash {command}`: Codex puts only the command in the
 * event (and takes only the command back), so hooks cannot see, or set, where it runs or whether it
 * asks to leave the sandbox. `apply_patch` arrives as `{command: <patch>}` (apply-patch.ts). Codex
 * has no read or fetch tool of its own (it reads with `cat` through the shell); `view_image`, MCP
 * tools (`mcp__server__tool`) and the rest keep their own names.
 */
import { ToolTable } from '../tool-mapping.js'
import { APPLY_PATCH } from './apply-patch.js'

export const CODEX = 'codex'

export const CODEX_TOOLS = new ToolTable(CODEX, [
  { native: 'Bash', canonical: 'shell', fields: [{ canonical: 'command', native: 'command' }] },
  APPLY_PATCH,
])
