/**
 * The agents whose hooks are commands, by the first segment of their front-door routes: each one's
 * dialect (hook-event.ts). Claude Code, whose hooks post JSON themselves, has its own adapter
 * (claude-code/); the Claude Agent SDK speaks gRPC (claude-agent-sdk/).
 */
import { CODEX_DIALECT } from './codex/codex-dialect.js'
import { COPILOT_DIALECT } from './copilot/copilot-dialect.js'
import { CURSOR_DIALECT } from './cursor/cursor-dialect.js'
import { GEMINI_DIALECT } from './gemini/gemini-dialect.js'
import type { Dialect } from './hook-event.js'

export const COMMAND_AGENTS = ['codex', 'gemini', 'copilot', 'cursor'] as const
export type CommandAgent = (typeof COMMAND_AGENTS)[number]

export const DIALECTS: Readonly<Record<CommandAgent, Dialect<unknown>>> = {
  codex: CODEX_DIALECT as Dialect<unknown>,
  gemini: GEMINI_DIALECT as Dialect<unknown>,
  copilot: COPILOT_DIALECT as Dialect<unknown>,
  cursor: CURSOR_DIALECT as Dialect<unknown>,
}

export function isCommandAgent(name: string): name is CommandAgent {
  return (COMMAND_AGENTS as readonly string[]).includes(name)
}
