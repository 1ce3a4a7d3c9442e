/**
 * `hookd setup codex|gemini|copilot|cursor`: points an agent's command hooks at a running `hookd serve
 * --http`, through the shim (build/hookd-hook, else bin/hookd-hook). It asks the sidecar which of the agent's events the hooks
 * need, merges one entry per event into the agent's own hooks file (nothing else changes), keeps a
 * backup, and never writes a token into it: the entry names the token's file, which only its owner
 * can read. By default it writes the user's file, which is not committed with any project (the
 * entries hold this machine's paths); `--dir DIR` writes the project's.
 *
 * Codex also needs its hooks trusted: setup records them in $CODEX_HOME/config.toml
 * (setup-codex-trust.ts).
 */
import { join, resolve } from 'node:path'
import { type CommandAgent, DIALECTS } from '../agents/dialects.js'
import { UsageError, list, parse, positiveInt } from './args.js'
import type { CliIo } from './io.js'
import { withTrust } from './setup-codex-trust.js'
import { type FileChange, applyChanges, readConfig } from './setup-files.js'
import { gitIgnores } from './safe-git.js'
import { SETUP_FLAGS, askEvents, frontDoorUrl, routeOf, tokenFileFor } from './setup-shared.js'
import { type Config, type HookShape, type Ours, type Placement, parseConfig, withHooks, withoutHooks } from './setup-hooks-json.js'
import { shimCommand, shimPath } from './shim-command.js'

export { NATIVE_SHIM, SCRIPT_SHIM, shellQuote, shimPath } from './shim-command.js'

export const SETUP_AGENTS = ['claude-code', 'codex', 'gemini', 'copilot', 'cursor'] as const

export interface AgentFiles {
  /** The user's hooks file (under $HOME, or the agent's own home variable). */
  user(env: NodeJS.ProcessEnv, home: string): string
  /** The project's hooks file. */
  project(dir: string): string
  shape: HookShape
  /** The entry field holding the command. */
  field: 'command' | 'bash'
  /** The entry for one event (the command already built). */
  entry(command: string, timeoutS: number): Record<string, unknown>
  /** The group matcher for tool events (grouped shape), if the agent wants one. */
  toolMatcher?: string
  /** Events that start or end a run: their entries fail open (nothing to refuse there). */
  failOpen: readonly string[]
  /** What to say about the project's file. */
  projectNote: string
  /** Extra top-level fields a new file needs. */
  fresh?: Config
}

export const FILES: Record<CommandAgent, AgentFiles> = {
  codex: {
    user: (env, home) => join(env.CODEX_HOME || join(home, '.codex'), 'hooks.json'),
    project: (dir) => join(dir, '.codex', 'hooks.json'),
    shape: 'grouped',
    field: 'command',
    // Seconds; no matcher: Codex hashes the matcher into a hook's trust, and none means every tool.
    entry: (command, timeoutS) => ({ type: 'command', command, timeout: timeoutS }),
    failOpen: ['SessionStart', 'Stop', 'SessionEnd'],
    projectNote: 'Codex runs a project\'s hooks only in a project it trusts ([projects."DIR"] trust_level = "trusted" in config.toml)',
  },
  gemini: {
    user: (_env, home) => join(home, '.gemini', 'settings.json'),
    project: (dir) => join(dir, '.gemini', 'settings.json'),
    shape: 'grouped',
    field: 'command',
    // Milliseconds.
    entry: (command, timeoutS) => ({ type: 'command', command, name: 'hookd', timeout: timeoutS * 1000 }),
    toolMatcher: '*',
    failOpen: ['SessionStart', 'AfterAgent', 'SessionEnd'],
    projectNote: "Gemini CLI runs a project's hooks only in a trusted folder",
  },
  copilot: {
    user: (_env, home) => join(home, '.copilot', 'settings.json'),
    project: (dir) => join(dir, '.github', 'hooks', 'hookd.json'),
    shape: 'flat',
    field: 'bash',
    entry: (command, timeoutS) => ({ type: 'command', bash: command, timeoutSec: timeoutS }),
    failOpen: ['sessionStart', 'agentStop', 'sessionEnd'],
    projectNote: 'Copilot CLI loads repository hooks only in a trusted folder (--trust-folder, or trust it when asked)',
    fresh: { version: 1 },
  },
  cursor: {
    user: (_env, home) => join(home, '.cursor', 'hooks.json'),
    project: (dir) => join(dir, '.cursor', 'hooks.json'),
    shape: 'flat',
    field: 'command',
    // Cursor's timeout units are not documented consistently: the shim's own --timeout bounds the wait.
    entry: (command) => ({ command }),
    failOpen: ['sessionStart', 'stop', 'sessionEnd'],
    projectNote: "Cursor runs a project's hooks only in a trusted workspace",
    fresh: { version: 1 },
  },
}

/** What hookd's entries look like in `agent`'s hooks files (setup-hooks-json.ts). */
export function oursOf(agent: CommandAgent): Ours {
  const files = FILES[agent]
  return { agent, shape: files.shape, field: files.field, entry: files.entry }
}

export const COMMAND_SETUP_HELP = `Usage: hookd setup codex|gemini|copilot|cursor (--hooks a,b | --profile NAME) [--dir DIR] [options]

Makes the agent run hookd's shim for each hook event the hooks need (build/hookd-hook, compiled at
install, else the script bin/hookd-hook), which hands the event to a running 'hookd serve --http'
and answers in the agent's own JSON (docs/agents.md). Merges one entry
per event into the agent's hooks file; everything else stays as it was, the old file is kept as
FILE.<time>.bak. The entries name the token's file, never the token. A gate fails closed: when hookd
cannot be reached, the shim refuses the call.

  (default)             the user's file: ~/.codex/hooks.json ($CODEX_HOME), ~/.gemini/settings.json,
                        ~/.copilot/settings.json, ~/.cursor/hooks.json. Codex's hooks are also
                        recorded as trusted in $CODEX_HOME/config.toml
  --dir DIR             the project's instead: DIR/.codex/hooks.json, DIR/.gemini/settings.json,
                        DIR/.github/hooks/hookd.json, DIR/.cursor/hooks.json (they hold this machine's
                        paths; the agents run them only in a trusted project)
  --hooks, --profile, --url, --events, --remove, --dry-run   as for claude-code
  --token-file FILE     the sidecar's HTTP token (default: .hookd/http-token), named in the entries
  --token TOKEN         a tenant's token instead (default: $HOOKD_TOKEN): kept in
                        ~/.config/hookd/tokens/ (0600), whose file the entries name
  --timeout S           seconds the shim waits for hookd before refusing (default: 30); the agent's
                        own timeout is S + 5, since every agent lets the call through on its timeout`

export async function setupCommandAgent(agent: CommandAgent, argv: string[], io: CliIo): Promise<number> {
  const { values } = parse(COMMAND_SETUP_HELP, {
    args: argv,
    strict: true,
    options: SETUP_FLAGS,
  })
  if (values.help) {
    io.stdout.write(`${COMMAND_SETUP_HELP}\n`)
    return 0
  }
  const spec = FILES[agent]
  const dialect = DIALECTS[agent]
  const home = io.env.HOME
  if (values.dir === undefined && !home) throw new UsageError(`the user's ${dialect.title} hooks file is under $HOME, which is not set; set it, or pass --dir DIR`)
  const project = values.dir !== undefined ? resolve(io.cwd, values.dir) : undefined
  const file = project !== undefined ? spec.project(project) : spec.user(io.env, home as string)
  // No part of the path below the project (or the user's home, or $CODEX_HOME) may be a link.
  const base = project ?? (agent === 'codex' && io.env.CODEX_HOME ? io.env.CODEX_HOME : (home as string))
  const before = await readConfig(file, base)
  const current = parseConfig(before, file)
  const changes: FileChange[] = []
  const summary: string[] = []
  let placements: Placement[] = []
  const masks: string[] = []
  let next: Config
  let moved: string[]
  if (values.remove) {
    ;({ config: next, moved } = withoutHooks(current, oursOf(agent)))
    summary.push("hookd's entries removed")
  } else {
    const route = routeOf(values.hooks, values.profile, dialect.title)
    const base = await frontDoorUrl(values.url, io.cwd)
    const timeoutS = positiveInt('timeout', values.timeout) ?? 30
    const token = await tokenFileFor(values, io, changes)
    masks.push(token.value)
    const url = `${base}/${agent}/${route}`
    const events = values.events !== undefined ? eventList(list(values.events).join(','), agent) : known(await askEvents(url, token.value, dialect.title, io), agent)
    const shim = shimPath()
    placements = events.map((event) => {
      const eventUrl = agent === 'copilot' ? `${url}?event=${event}` : url
      const command = shimCommand({ shim, url: eventUrl, tokenFile: token.file, timeoutS, failOpen: spec.failOpen.includes(event) })
      const tool = dialect.eventsForPoints(new Set(['beforeToolExecute', 'afterToolExecute'])).includes(event)
      return { event, entry: spec.entry(command, timeoutS + 5), ...(tool && spec.toolMatcher !== undefined ? { matcher: spec.toolMatcher } : {}) }
    })
    const fresh = before.trim() === '' ? (spec.fresh ?? {}) : {}
    const merged = withHooks({ ...fresh, ...current }, placements, oursOf(agent))
    next = merged.config
    moved = merged.moved
    if (agent === 'codex') {
      const trusted = placements.map((p) => ({ event: p.event, position: merged.positions.get(p.event) ?? { group: 0, handler: 0 }, command: String(p.entry.command), timeoutS: timeoutS + 5 }))
      await codexTrust(io, home, file, trusted, changes, summary)
    }
    for (const p of placements) summary.push(`${p.event.padEnd(20)} -> ${url}`)
    if (!placements.length) summary.push(`no events: none of these hooks serves a point ${dialect.title} can reach`)
  }
  if (values.remove && agent === 'codex') await codexTrust(io, home, file, [], changes, summary)
  changes.unshift({ file, base, before, after: `${JSON.stringify(next, null, 2)}\n` })
  const written = await applyChanges(changes, io, { dryRun: values['dry-run'], masks })
  if (agent === 'codex' && moved.length) {
    io.stderr.write(`hookd setup: warning: other hooks of ${moved.join(', ')} in ${file} moved; Codex trusts hooks by their place, so review them in Codex (/hooks) or they are skipped\n`)
  }
  if (values['dry-run'] || !written.length) return 0
  for (const line of summary) io.stdout.write(`  ${line}\n`)
  if (values.dir !== undefined && placements.length) {
    io.stderr.write(`hookd setup: note: ${spec.projectNote}\n`)
    if ((await gitIgnores(file)) === false) io.stderr.write(`hookd setup: warning: ${file} names this machine's paths (the shim, the token's file); keep it out of commits\n`)
  }
  return 0
}

async function codexTrust(io: CliIo, home: string | undefined, hooksFile: string, trusted: Parameters<typeof withTrust>[2], changes: FileChange[], summary: string[]): Promise<void> {
  const config = join(io.env.CODEX_HOME || join(home ?? '', '.codex'), 'config.toml')
  if (!io.env.CODEX_HOME && !home) return
  const base = io.env.CODEX_HOME || (home as string)
  const before = await readConfig(config, base)
  const { text, dropped } = withTrust(before, hooksFile, trusted)
  changes.push({ file: config, base, before, after: text })
  if (trusted.length) summary.push(`${trusted.length} hook${trusted.length > 1 ? 's' : ''} recorded as trusted in ${config}`)
  for (const key of dropped) summary.push(`stale trust for ${key} taken out of ${config}`)
}

function eventList(text: string, agent: CommandAgent): string[] {
  const all = DIALECTS[agent].eventsForPoints(new Set(['beforeRun', 'afterRun', 'beforeModelRequest', 'beforeToolExecute', 'afterToolExecute']))
  if (text === 'all') return all
  return known(list(text), agent)
}

/** `events`, each one the agent's dialect maps; a UsageError naming the first that is not. */
function known(events: string[], agent: CommandAgent): string[] {
  const mapped = DIALECTS[agent].events
  for (const name of events) {
    if (!mapped.includes(name)) throw new UsageError(`'${name}' is not a ${DIALECTS[agent].title} event hookd maps; known: ${mapped.join(', ')}`)
  }
  return mapped.filter((e) => events.includes(e))
}
