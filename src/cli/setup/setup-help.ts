/**
 * The help of `hookd setup` and `hookd init`, written from the agents' definitions
 * (src/agents/registry.ts): the agents they know, the files each writes, and the options only some
 * agents have (a project file of their own: --user; their own http hooks: --transport; a trust of
 * their own: --trust).
 */
import type { AgentDefinition } from '../../agents/agent-definition.js'
import { AGENTS } from '../../agents/registry.js'
import { DEFAULT_HTTP_TOKEN_FILE } from '../../sidecar/http/http-token.js'
import { HTTP_URL_FILE } from '../serve/serve-http.js'

const COLUMN = 24

/** `text` as an option's description: after its name, wrapped at ~100 characters, later lines indented. */
function option(name: string, text: string): string {
  const lines: string[] = []
  let line = `  ${name}`.padEnd(COLUMN - 1)
  for (const word of text.split(' ')) {
    if (line.length + word.length + 1 > 102 && line.trim() !== name) {
      lines.push(line)
      line = ' '.repeat(COLUMN - 1)
    }
    line += ` ${word}`
  }
  lines.push(line)
  return lines.join('\n')
}

/** The user's file of `agent`, as help names it. */
export function userFileLabel(agent: AgentDefinition): string {
  const { dir, file, variable } = agent.settings.user
  return `~/${dir}/${file}${variable !== undefined ? ` ($${variable}/${file} when $${variable} is set)` : ''}`
}

function ids(agents: readonly AgentDefinition[]): string {
  return agents.map((a) => a.id).join(', ')
}

/** Where setup writes for each of `agents`, and what else it does there. */
function files(agents: readonly AgentDefinition[]): string[] {
  return agents.map((a) => {
    const s = a.settings
    const where =
      s.local !== undefined
        ? `DIR/${s.local} (default: the current folder; not meant to be committed), or ${userFileLabel(a)} with --user`
        : `the user's ${userFileLabel(a)} by default, or DIR/${s.committed} with --dir (it holds this machine's paths: not for committing)`
    return option(a.id, `${where}${s.trust ? `; ${s.trust.help.setup}` : ''}`)
  })
}

/** `hookd setup`'s help, for one agent or (none given) for all. */
export function setupHelp(only?: AgentDefinition): string {
  const agents = only ? [only] : AGENTS
  const local = agents.filter((a) => a.settings.local !== undefined)
  const http = agents.filter((a) => a.settings.http !== undefined)
  const name = only?.id ?? 'AGENT'
  const lines = [
    `Usage: hookd setup ${name} (--hooks a,b | --profile NAME) [--dir DIR${local.length ? ' | --user' : ''}] [options]`,
    ...(only ? [] : [`       AGENT: ${ids(AGENTS)}`]),
    '',
    `Makes ${only ? only.title : 'the agent'} send its hook events to a running 'hookd serve --http' (docs/agents.md): asks the`,
    "sidecar which events the hooks need, and merges one entry per event into the agent's own settings,",
    'failing closed: when hookd cannot be asked, the tool call is refused. Everything else in the file',
    'stays as it was; the old file is kept in ~/.local/state/hookd/backups/. The entries run hookd\'s shim',
    '(build/hookd-hook, compiled at install, else the script bin/hookd-hook), which proves itself to hookd',
    "with the token's file they name, never the token, and checks that the answer is hookd's.",
    '',
    'Where it writes:',
    ...files(agents),
    '',
    option('--hooks a,b', `the hooks to run, in order (posts to URL/${name}/a,b)`),
    option('--profile NAME', `or a profile: NAME.profile.json in the hooks folder (URL/${name}/profile/NAME)`),
    option('--dir DIR', "the project's file instead of the user's (see above)"),
    ...(local.length ? [option('--user', `${ids(local)}: writes the user's own file instead (every project of this user)`)] : []),
    option('--url URL', `the front door, http://HOST:PORT (default: what 'hookd serve --http' wrote in .hookd/${HTTP_URL_FILE})`),
    option('--token-file FILE', `the sidecar's HTTP token (default: ${DEFAULT_HTTP_TOKEN_FILE}), named in the entries`),
    option('--token TOKEN', 'a tenant\'s token instead (default: $HOOKD_TOKEN, when set): kept in ~/.config/hookd/tokens/ (0600), whose file the entries name'),
    ...(http.length
      ? [
          option('--transport command', `${ids(http)}: (default) entries that run hookd's shim, which proves itself to hookd and checks that the answer is hookd's; no secret in the settings file`),
          option('--transport http', `${ids(http)}: the agent's own http entries, with the token in their Authorization header: a process fewer per call, but anything that listens on the port while hookd is down gets the token and may answer in hookd's place`),
        ]
      : []),
    option('--events LIST|all', 'register these events without asking the sidecar (default: ask it)'),
    option('--timeout S', "seconds the shim waits for hookd before refusing (default: 30); the agent's own timeout is S + 5, since every agent lets the call through on its timeout"),
    option('--remove', "remove hookd's entries instead"),
    option('--dry-run', 'show the change (tokens masked) and write nothing'),
    option('-h, --help', 'show this help'),
    '',
    "Run it from the folder where 'hookd serve --http' runs: the token and URL it finds there are the",
    "sidecar's, so the settings work as written.",
  ]
  return lines.join('\n')
}

/** `hookd init`'s help. */
export function initHelp(): string {
  const trusting = AGENTS.filter((a) => a.settings.trust !== undefined)
  return [
    'Usage: hookd init AGENT --hooks a,b [--hooks-dir DIR] [--dir PROJECT] [options]',
    '',
    "Sets a project up for the whole team: writes hookd's entries into the agent's committed settings,",
    "with no token and nothing of this machine's, so that the file can be committed. Each teammate runs",
    "'npx hookd-sandbox up' once (docs/agents.md, \"A team sets up once\"); from then on their agent, in",
    "this project, runs these hooks from the project's own hooks folder through their own hookd.",
    '',
    option('AGENT', ids(AGENTS)),
    ...AGENTS.map((a) => option(`  ${a.id}`, a.settings.noInit === undefined ? `writes ${a.settings.committed}` : `writes no ${a.settings.committed}: use hookd setup ${a.id} on each machine`)),
    option('--hooks a,b', 'the hooks to run, in order'),
    option('--hooks-dir DIR', "the project's hooks folder, relative to the project (default: hooks)"),
    option('--dir PROJECT', 'the project (default: the current folder)'),
    option('--events LIST', 'register these events instead of the ones the hooks need'),
    option('--timeout S', 'seconds to wait for hookd before refusing (default: 30)'),
    option('--remove', "remove hookd's entries instead"),
    ...trusting.map((a) => option('--trust', `${a.id}: ${a.settings.trust?.help.init ?? ''}`)),
    option('--dry-run', 'show the change and write nothing'),
    option('-h, --help', 'show this help'),
    '',
    "Where hookd is not set up, the agent's call is refused with a line saying to run 'npx hookd-sandbox up'.",
  ].join('\n')
}
