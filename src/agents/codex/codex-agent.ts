/**
 * Codex CLI, as hookd serves it: its dialect and tools (codex-dialect.ts, tools.ts, its patch parser
 * behind apply-patch.ts), its hooks.json, Codex's trust of hookd's entries (trust.ts), the shim's form
 * for it, and what it can express (docs/agents.md, "Codex").
 */
import { defineAgent } from '../agent-definition.js'
import { AGENT_POINTS } from '../hook-event.js'
import { nameList } from '../tool-conditions.js'
import { hooksJson } from '../settings/hooks-json.js'
import { CODEX_DIALECT } from './codex-dialect.js'
import { CODEX } from './tools.js'
import { CODEX_TRUST } from './trust.js'

export const CODEX_AGENT = defineAgent(CODEX_DIALECT, {
  settings: {
    // Seconds.
    format: hooksJson({ agent: CODEX, shape: 'grouped', field: 'command', entry: (command, timeoutS) => ({ type: 'command', command, timeout: timeoutS }) }),
    // Where the route's hooks list their tools, a matcher naming only Codex's names for them, as an exact
    // list (`Bash|apply_patch`); otherwise none, which Codex reads as every tool. Codex 0.169.0 reads a
    // matcher of letters, digits, `_` and `|` alone as exact names, anything else as an unanchored
    // regular expression (codex-rs/hooks/src/events/common.rs, matches_matcher), and tests it against
    // the name the event carries (`Bash` for every shell call, `apply_patch`; its source also tests
    // apply_patch as `Write` and `Edit`): the name the sidecar reads the call by (tools.ts). Measured in
    // test/agents/codex-project-trust.test.ts. It hashes the matcher into the entry's trust (trust-toml.ts).
    toolMatcher: { events: ['PreToolUse', 'PermissionRequest', 'PostToolUse'], names: nameList },
    committed: '.codex/hooks.json',
    user: { dir: '.codex', file: 'hooks.json', variable: 'CODEX_HOME' },
    // The rest fail open too, since nothing is refused there; PermissionRequest fails closed (exit 2
    // with a reason denies it), and SubagentStop must not (exit 2 would send the subagent back to work).
    failOpen: ['SessionStart', 'SubagentStart', 'SubagentStop', 'PreCompact', 'PostCompact', 'Stop', 'Interrupt', 'SessionEnd'],
    allEvents: CODEX_DIALECT.eventsForPoints(AGENT_POINTS),
    projectNote: 'Codex runs a project\'s hooks only in a project it trusts ([projects."DIR"] trust_level = "trusted" in config.toml)',
    initNote:
      "Codex runs a project's hooks only once each user trusts the project and them: run 'npx hookd-sandbox init codex --trust' in your clone (it records hookd's entries and the project as trusted in $CODEX_HOME/config.toml, and refuses while the project's .codex folders hold anything else), or trust the project and review the hooks in Codex's /hooks",
    summaryColumn: 20,
    trust: CODEX_TRUST,
  },
  shim: {
    refusal: { exit: 2 },
    // Codex names no project folder and runs hooks where it was started, but reads .codex/hooks.json
    // from the git root above it.
    projectMarker: '.codex/hooks.json',
    docs: {
      form: 'exit 2, the reason on stderr',
      why: 'Codex blocks on exit 2 with a non-empty stderr: `Command blocked by PreToolUse hook: <reason>`. Exit 1, or 2 with nothing on stderr, lets the call through',
    },
  },
  expresses: {
    refuse: 'yes',
    rewriteArguments: 'yes (`allow` + `updatedInput`, the whole input)',
    rewriteResult: 'replaced as a whole (`decision: "block"` + the text)',
    ask: 'no: answered no',
    run: 'UserPromptSubmit / Stop',
    promptContext: 'yes, once per prompt (a developer message)',
    redact: 'no',
    failsClosed: 'the shim (exit 2)',
    tested: '0.169.0',
    toolConditions: 'a matcher of the native tools (`Bash`, `apply_patch`), an exact list, hashed into its trust',
    agentPoints: 'compact:before (PreCompact: a block stops the turn), compact:after',
    defer: 'no: refused (Codex can neither defer nor ask at PreToolUse); at PermissionRequest, Codex reviews the call itself',
    permission: 'PermissionRequest: allow, deny (with the reason); ask and defer leave it to Codex; no rewrite',
    model: 'no (PreModelRequest and PostModelRequest carry neither the request nor the response)',
    toolList: 'no',
    subagents: 'SubagentStart (context), SubagentStop (keep working); their tool calls name the subagent',
  },
})
