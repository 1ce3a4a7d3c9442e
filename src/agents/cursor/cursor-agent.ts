/**
 * Cursor, as hookd serves it from Cursor's documented contract and its hook engine as @cursor/sdk
 * ships it (Cursor cannot run in hookd's tests): its dialect and tools (cursor-dialect.ts,
 * cursor-points.ts, tools.ts), its hooks.json, the shim's form for it, and what it can express
 * (docs/agents.md, "Cursor").
 */
import { REASON, defineAgent } from '../agent-definition.js'
import { AGENT_POINTS } from '../hook-event.js'
import { hooksJson } from '../settings/hooks-json.js'
import { CURSOR_DIALECT } from './cursor-dialect.js'
import { CURSOR } from './tools.js'

export const CURSOR_AGENT = defineAgent(CURSOR_DIALECT, {
  settings: {
    // Cursor's timeout units are not documented consistently: the shim's own --timeout bounds the wait.
    format: hooksJson({ agent: CURSOR, shape: 'flat', field: 'command', entry: (command) => ({ command }) }),
    committed: '.cursor/hooks.json',
    user: { dir: '.cursor', file: 'hooks.json' },
    failOpen: ['sessionStart', 'stop', 'sessionEnd'],
    fresh: { version: 1 },
    allEvents: CURSOR_DIALECT.eventsForPoints(AGENT_POINTS),
    projectNote: "Cursor runs a project's hooks only in a trusted workspace",
    initNote: "Cursor runs a project's hooks only in a trusted workspace (hookd follows Cursor's documented contract here: Cursor cannot run in hookd's tests)",
    summaryColumn: 20,
  },
  shim: {
    // Cursor documents both: a deny answer, and exit code 2 as a refusal.
    refusal: { exit: 2, stdout: JSON.stringify({ continue: false, permission: 'deny', user_message: REASON, agent_message: REASON }) },
    projectVariable: 'CURSOR_PROJECT_DIR',
    docs: {
      form: 'exit 2 and `{"permission": "deny", "user_message", "agent_message"}` on stdout',
      why: 'Cursor documents exit 2 as a refusal and `permission` as the answer (not measured)',
    },
  },
  expresses: {
    defer: 'asked instead where Cursor can ask (shell, MCP, preToolUse), else refused',
    permission: 'no permission event: the gates\' allow, deny and ask',
    toolList: 'no',
    subagents: 'subagent:start (context), subagent:stop (keepWorking); preToolUse names the call that started one',
    agentPoints: 'compact:before, observed',
    refuse: 'shell, MCP and file reads (and every tool at `preToolUse`)',
    rewriteArguments: 'at `preToolUse` only (`updated_input`), the fields Cursor applies; elsewhere the call is refused, saying what the hooks would run',
    rewriteResult: 'no: observed only',
    ask: 'yes (`ask`) for shell, MCP and `preToolUse`; not for file reads',
    run: 'beforeSubmitPrompt / stop',
    promptContext: 'yes, once per prompt (`additional_context`)',
    redact: 'no',
    failsClosed: 'the shim (exit 2), per the docs',
    tested: 'no: from its documentation',
    toolConditions: 'no: setup registers every gate; the sidecar skips the hooks that do not list it',
    model: 'no',
  },
})
