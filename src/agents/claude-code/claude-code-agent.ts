/**
 * Claude Code, as hookd serves it: its dialect (claude-code-dialect.ts, over the events of events.ts
 * and the tools of tools.ts), its settings files (settings.ts, checked by settings-checks.ts), its own
 * `http` hooks for `hookd setup --transport http`, the shim's form for it, and what it can express
 * (docs/agents.md).
 */
import { defineAgent } from '../agent-definition.js'
import { CLAUDE_CODE_DIALECT } from './claude-code-dialect.js'
import { MAPPED_EVENTS } from './events.js'
import { warnings } from './settings-checks.js'
import { nameList } from '../tool-conditions.js'
import { CLAUDE_FAIL_OPEN, CLAUDE_SETTINGS, OBSERVE_ONLY_EVENTS, TOOL_EVENTS, httpEntry } from './settings.js'

export const CLAUDE_CODE_AGENT = defineAgent(CLAUDE_CODE_DIALECT, {
  settings: {
    format: CLAUDE_SETTINGS,
    committed: '.claude/settings.json',
    local: '.claude/settings.local.json',
    user: { dir: '.claude', file: 'settings.json' },
    failOpen: CLAUDE_FAIL_OPEN,
    // Only the native tools the route's hooks list (hook.json "tools"), as an exact list: `Bash|Write`.
    toolMatcher: { matcher: '*', events: TOOL_EVENTS, names: nameList },
    observeOnly: { events: OBSERVE_ONLY_EVENTS, fields: { async: true } },
    // Every event the adapter maps but SessionStart, which Claude Code sends to command hooks only
    // (hookd runs beforeRun at the first prompt instead).
    allEvents: MAPPED_EVENTS.filter((e) => e !== 'SessionStart'),
    initNote: "Claude Code reads a project's .claude/settings.json when it is started in the project's folder (not in a folder below it)",
    summaryColumn: 18,
    http: {
      entry: (event, url, token, timeoutS) => httpEntry(event, { url, token, timeoutS }),
      unsent: { SessionStart: 'Claude Code does not send SessionStart to http hooks; hookd runs beforeRun at the first prompt instead' },
    },
    check: (port, c) => warnings(port, c.config, c.file, c.url, { transport: c.transport, home: c.home, project: c.project }),
  },
  shim: {
    refusal: { exit: 2 },
    // The folder Claude Code was started in, where it reads the project's settings (measured).
    projectVariable: 'CLAUDE_PROJECT_DIR',
    docs: {
      form: 'exit 2, the reason on stderr',
      why: 'Claude Code blocks on exit 2 and shows stderr (`PreToolUse:Bash hook error: ...`); exit 1 or a missing command lets the call through',
    },
  },
  expresses: {
    refuse: 'yes',
    rewriteArguments: 'yes (`updatedInput`)',
    rewriteResult: "yes (`updatedToolOutput`, in the tool's shape)",
    ask: 'yes (`ask`; `-p` denies)',
    run: 'prompt / Stop',
    promptContext: 'yes, once per prompt',
    redact: 'no',
    failsClosed: '`onFailure: "block"`',
    tested: '2.1.328',
    defer: 'yes (`permissionDecision: "defer"`: -p ends the turn with the call deferred)',
    permission: 'yes (PermissionRequest: allow with `updatedInput`, deny; ask and defer open the dialog)',
    subagents: 'yes (`agent_id`/`agent_type` on every event; SubagentStart context, SubagentStop keepWorking)',
    toolConditions: 'a matcher of the native tools (`Bash`, `Write`); observe-only events `async`',
    model: 'no (its events carry neither the request nor the response)',
    toolList: 'no',
    agentPoints: 'compact:before (block), compact:after, config:change (block), notification, file:changed',
  },
})
