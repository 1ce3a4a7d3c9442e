/**
 * Gemini CLI, as hookd serves it: its dialect and tools (gemini-dialect.ts, tools.ts), the `hooks` of
 * its settings.json, the shim's form for it, and what it can express (docs/agents.md, "Gemini CLI").
 */
import { defineAgent } from '../agent-definition.js'
import { AGENT_POINTS } from '../hook-event.js'
import { hooksJson } from '../settings/hooks-json.js'
import { anchoredNames } from '../tool-conditions.js'
import { GEMINI_DIALECT } from './gemini-dialect.js'
import { GEMINI } from './tools.js'

export const GEMINI_AGENT = defineAgent(GEMINI_DIALECT, {
  settings: {
    // Milliseconds.
    format: hooksJson({ agent: GEMINI, shape: 'grouped', field: 'command', entry: (command, timeoutS) => ({ type: 'command', command, name: 'hookd', timeout: timeoutS * 1000 }) }),
    committed: '.gemini/settings.json',
    user: { dir: '.gemini', file: 'settings.json' },
    // Model events fail open as well: none of them is a gate, and exit 2 there would end every turn.
    failOpen: ['SessionStart', 'BeforeModel', 'BeforeToolSelection', 'AfterModel', 'PreCompress', 'Notification', 'AfterAgent', 'SessionEnd'],
    toolMatcher: { matcher: '*', events: ['BeforeTool', 'AfterTool'], names: anchoredNames },
    allEvents: GEMINI_DIALECT.eventsForPoints(AGENT_POINTS),
    projectNote: "Gemini CLI runs a project's hooks only in a trusted folder",
    initNote: "Gemini CLI runs a project's hooks only in a trusted folder (trust it when Gemini CLI asks, or GEMINI_CLI_TRUST_WORKSPACE=true), and reads .gemini/settings.json only when started in the project's folder",
    summaryColumn: 20,
  },
  shim: {
    refusal: { exit: 2 },
    // The folder Gemini CLI was started in, where it reads the project's settings (measured).
    projectVariable: 'GEMINI_PROJECT_DIR',
    docs: {
      form: 'exit 2, the reason on stderr',
      why: 'Gemini blocks on exit 2 with stderr (`Tool execution blocked: <reason>`); exit 1 is a warning and the tool runs',
    },
  },
  expresses: {
    refuse: 'yes',
    rewriteArguments: 'yes (`tool_input`, the whole input)',
    rewriteResult: 'only as an error (`decision: "deny"` + the text)',
    ask: 'no: answered no (headless Gemini hangs on `ask`)',
    run: 'BeforeAgent / AfterAgent',
    promptContext: 'yes, once per prompt',
    redact: 'no (AfterModel sees streamed chunks: model:response rewrites one chunk)',
    failsClosed: 'the shim (exit 2)',
    tested: '0.61.0',
    toolConditions: 'a matcher of the native tools, an anchored regular expression (Gemini CLI reads it unanchored)',
    agentPoints: 'compact:before (PreCompress, observed: Gemini CLI reads no answer), notification',
    defer: 'no: refused (Gemini CLI can neither defer nor ask from a hook)',
    permission: 'no (Notification says a dialog opens; it cannot answer it)',
    model: 'BeforeModel: model:request (messages, model, config, block); AfterModel: model:response (one chunk\'s text)',
    toolList: 'BeforeToolSelection: tools:select (narrow only)',
    subagents: 'no (invoke_agent\'s tool calls do not name the subagent)',
  },
})
