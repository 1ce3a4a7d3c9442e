/**
 * The agents hookd serves, in the order help and docs list them: one definition each
 * (agent-definition.ts), each in its agent's folder. The front door's routes, `hookd setup`, `hookd
 * init`, their help, the shim's table and docs/agents.md's tables come from this list; adding an agent
 * is its folder, one line here, its tests and its docs section (docs/architecture.md).
 */
import type { AgentDefinition } from './agent-definition.js'
import { CLAUDE_CODE_AGENT } from './claude-code/claude-code-agent.js'
import { CLINE_AGENT } from './cline/cline-agent.js'
import { CODEX_AGENT } from './codex/codex-agent.js'
import { COPILOT_AGENT } from './copilot/copilot-agent.js'
import { CURSOR_AGENT } from './cursor/cursor-agent.js'
import { GEMINI_AGENT } from './gemini/gemini-agent.js'
import { OPENCODE_AGENT } from './opencode/opencode-agent.js'

export const AGENTS: readonly AgentDefinition[] = [CLAUDE_CODE_AGENT, CODEX_AGENT, GEMINI_AGENT, COPILOT_AGENT, CURSOR_AGENT, OPENCODE_AGENT, CLINE_AGENT]

/** The agents' ids: the first segments of the front door's routes. */
export const AGENT_IDS: readonly string[] = AGENTS.map((a) => a.id)

/** The agent with this id, or undefined. */
export function agentById(id: string): AgentDefinition | undefined {
  return AGENTS.find((a) => a.id === id)
}
