/**
 * Copilot CLI, as hookd serves it: its dialect and tools (copilot-dialect.ts, copilot-points.ts,
 * tools.ts), its hooks files (`.github/hooks/*.json`, its settings.json), its own `http` hooks for
 * `hookd setup copilot --transport http` (copilot-http.ts), the shim's form for it, and what it can
 * express (docs/agents.md, "Copilot CLI").
 */
import { REASON, defineAgent } from '../agent-definition.js'
import { AGENT_POINTS } from '../hook-event.js'
import { hooksJson } from '../settings/hooks-json.js'
import { COPILOT_DIALECT } from './copilot-dialect.js'
import { httpEntry, httpSecrets, httpWarning, isHttpEntry } from './copilot-http.js'
import { copilotDeny } from './copilot-points.js'
import { COPILOT } from './tools.js'

/** Copilot's camelCase events do not name themselves: each entry's route says `?event=EVENT`. */
const NAMED_EVENTS = true

const FORMAT = hooksJson({
  agent: COPILOT,
  namedEvents: NAMED_EVENTS,
  shape: 'flat',
  field: 'bash',
  entry: (command, timeoutS) => ({ type: 'command', bash: command, timeoutSec: timeoutS }),
  isHttpEntry,
})

export const COPILOT_AGENT = defineAgent(COPILOT_DIALECT, {
  settings: {
    format: { ...FORMAT, secrets: httpSecrets },
    committed: '.github/hooks/hookd.json',
    user: { dir: '.copilot', file: 'settings.json' },
    // The events that begin or end a run, or only observe: nothing to refuse there.
    failOpen: ['sessionStart', 'userPromptSubmitted', 'userPromptTransformed', 'subagentStart', 'subagentStop', 'preCompact', 'notification', 'agentStop', 'sessionEnd'],
    fresh: { version: 1 },
    namedEvents: NAMED_EVENTS,
    allEvents: COPILOT_DIALECT.eventsForPoints(AGENT_POINTS),
    projectNote: 'Copilot CLI loads repository hooks only in a trusted folder (--trust-folder, or trust it when asked)',
    initNote: "Copilot CLI loads a repository's hooks only in a trusted folder (trust it when Copilot asks, which saves it in ~/.copilot/config.json)",
    summaryColumn: 22,
    // Every event posts to http hooks too; Copilot reaches a loopback http:// URL only when told to.
    http: { entry: httpEntry, unsent: {} },
    check: async (_port, context) => (context.transport === 'http' ? [httpWarning()] : []),
  },
  shim: {
    // Exit 0 with a JSON deny in both gates' forms (preToolUse's permissionDecision, permissionRequest's
    // behavior): on any other exit code Copilot refuses too, but drops the reason.
    refusal: { exit: 0, stdout: JSON.stringify(copilotDeny(REASON)) },
    // The git root, where Copilot CLI reads the project's hooks (measured).
    projectVariable: 'COPILOT_PROJECT_DIR',
    docs: {
      form: 'exit 0, `{"permissionDecision": "deny", "permissionDecisionReason": ..., "behavior": "deny", "message": ...}`',
      why: 'Copilot blocks on any non-zero exit too, but then the model reads only `hook exited with code 2`; preToolUse reads permissionDecision, permissionRequest behavior',
    },
  },
  expresses: {
    defer: 'asked instead (Copilot has no "decide later"); `-p` denies',
    permission: 'allow and deny (`permissionRequest`); ask and defer leave it to Copilot\'s own permission flow; no rewrite there',
    toolList: 'no',
    subagents: 'subagent:start (context), subagent:stop (keepWorking); their calls named (`agentId`, `agentType`)',
    agentPoints: 'compact:before and notification, observed',
    refuse: 'yes',
    rewriteArguments: 'yes (`modifiedArgs`)',
    rewriteResult: 'yes (`modifiedResult`), not after a failure',
    ask: 'yes (`ask`; `-p` denies)',
    run: 'userPromptSubmitted / agentStop',
    promptContext: 'yes, once per prompt (`userPromptTransformed`)',
    redact: 'no',
    failsClosed: 'the shim (JSON deny); an http hook that cannot connect denies too',
    tested: '1.0.102',
    toolConditions: 'no: Copilot hooks take no matcher; the sidecar skips the hooks that do not list it',
    model: 'no',
  },
})
