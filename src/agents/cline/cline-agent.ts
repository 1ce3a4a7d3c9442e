/**
 * Cline, as hookd serves it: its dialect and tools (cline-dialect.ts, tools.ts), its hooks folder (one
 * script per event, settings/script-folder.ts: `.cline/hooks/` in the project, `~/.cline/hooks/` or
 * `$CLINE_DIR/hooks/` for the user), the shim's form for it, and what it can express (docs/agents.md,
 * "Cline").
 */
import { REASON, defineAgent } from '../agent-definition.js'
import { AGENT_POINTS } from '../hook-event.js'
import { hooksJson } from '../settings/hooks-json.js'
import { shScripts } from '../settings/script-folder.js'
import { CLINE_DIALECT } from './cline-dialect.js'
import { CLINE } from './tools.js'

export const CLINE_AGENT = defineAgent(CLINE_DIALECT, {
  settings: {
    // The folder read as flat hooks.json: each event's script is one entry running the shim.
    format: hooksJson({ agent: CLINE, shape: 'flat', field: 'command', entry: (command) => ({ type: 'command', command }) }),
    committed: '.cline/hooks',
    user: { dir: '.cline', file: 'hooks', variable: 'CLINE_DIR' },
    scripts: shScripts('Cline', 'hookd setup cline --remove'),
    // Cline runs these detached and reads nothing they print: there is nothing to refuse.
    failOpen: ['TaskStart', 'TaskResume', 'UserPromptSubmit', 'TaskComplete', 'TaskError', 'TaskCancel', 'SessionShutdown'],
    allEvents: CLINE_DIALECT.eventsForPoints(AGENT_POINTS),
    projectNote: "Cline runs a project's .cline/hooks/ scripts in any folder it works in, with no trust step: keep the folder's scripts reviewed like code",
    initNote: 'Cline runs the scripts of .cline/hooks/ with no trust step',
    noInit: "Cline's hooks are scripts in .cline/hooks/, not entries of a settings file, and hookd init writes settings files only: run 'hookd setup cline --dir DIR' on each machine instead",
    summaryColumn: 16,
  },
  shim: {
    // Exit 0 with JSON: Cline reads a hook's stdout as its answer and ignores the exit code, so a
    // refusal on stderr alone would let the call through.
    refusal: { exit: 0, stdout: JSON.stringify({ cancel: true, errorMessage: REASON }) },
    docs: {
      form: 'exit 0, `{"cancel": true, "errorMessage": ...}`',
      why: 'Cline ignores the exit code and runs the tool unless stdout cancels it (cancel stops the task)',
    },
  },
  expresses: {
    refuse: 'stops the task (`cancel`)',
    rewriteArguments: 'yes (`overrideInput`)',
    rewriteResult: 'no (said as context)',
    ask: 'no (refused)',
    run: 'TaskStart / TaskComplete',
    promptContext: 'no (UserPromptSubmit runs detached)',
    redact: 'no',
    failsClosed: 'the shim (JSON cancel)',
    tested: '3.0.65',
    toolConditions: 'no: Cline runs its hook file for every tool; the sidecar skips the hooks that do not list it',
    defer: 'no: refused (stops the task)',
    permission: 'no (Cline has no permission hook)',
    model: 'no',
    toolList: 'no',
    subagents: 'subagent:start, subagent:stop, observed; their calls named (`parent_agent_id`)',
    agentPoints: 'no (PreCompact never runs in 3.0.65)',
  },
})
