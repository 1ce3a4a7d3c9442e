/**
 * OpenCode, as hookd serves it: its dialect and tools (opencode-dialect.ts, tools.ts), hookd's plugin
 * for it (plugin.ts, `hookd-sandbox/opencode`), its opencode.json entry (opencode-settings.ts), and what
 * it can express (docs/agents.md, "OpenCode"). OpenCode runs no hook command: the plugin posts to the
 * front door itself, so the shim's form below is only what the shim would say on a route of OpenCode's.
 */
import { defineAgent } from '../agent-definition.js'
import { AGENT_POINTS } from '../hook-event.js'
import { OPENCODE_DIALECT } from './opencode-dialect.js'
import { OPENCODE_SETTINGS } from './opencode-settings.js'

export const OPENCODE_AGENT = defineAgent(OPENCODE_DIALECT, {
  settings: {
    format: OPENCODE_SETTINGS,
    committed: 'opencode.json',
    user: { dir: '.config/opencode', file: 'opencode.json' },
    // The plugin posts these without waiting for an answer: there is nothing to refuse.
    failOpen: ['chat.message', 'session.created', 'experimental.session.compacting', 'session.compacted', 'session.idle', 'session.error'],
    allEvents: OPENCODE_DIALECT.eventsForPoints(AGENT_POINTS),
    projectNote: "OpenCode loads a project's opencode.json plugins with no trust step; the entry names this machine's paths (the plugin, the token's file)",
    initNote: "OpenCode loads a project's opencode.json plugins with no trust step",
    noInit: "OpenCode's plugin entry names this machine's paths (the plugin, the token's file), which a committed file cannot: run 'hookd setup opencode' on each machine instead",
    summaryColumn: 32,
  },
  shim: {
    refusal: { exit: 2 },
    docs: {
      form: 'none (the plugin refuses itself)',
      why: 'OpenCode runs no hook command: the plugin throws, and OpenCode fails the call with its message',
    },
  },
  expresses: {
    refuse: 'yes (the plugin throws)',
    rewriteArguments: 'yes (`args`)',
    rewriteResult: 'yes (`output`)',
    ask: 'no (refused)',
    run: 'chat.message / session.idle',
    promptContext: 'no',
    redact: 'no',
    failsClosed: 'the plugin (throws)',
    tested: '1.18.33',
    toolConditions: 'no: the plugin posts every call; the sidecar skips the hooks that do not list it',
    defer: 'no: refused (the plugin can neither defer nor ask)',
    permission: 'no (1.18.33 calls no permission hook)',
    model: 'no',
    toolList: 'no',
    subagents: 'child sessions: subagent:start, subagent:stop, observed; their calls named',
    agentPoints: 'compact:before, observed (a plugin cannot stop a compaction); compact:after',
  },
})
