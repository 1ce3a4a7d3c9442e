/**
 * `hookd init AGENT --hooks a,b`: sets a project up once for the whole team. It writes hookd's entries
 * into the agent's *committed* settings (`.claude/settings.json`, `.gemini/settings.json`,
 * `.codex/hooks.json`, `.github/hooks/hookd.json`, `.cursor/hooks.json`) with nothing secret and
 * nothing of this machine's: each entry runs the shim that `hookd up` installs in the user's state
 * folder, on a bare route (/AGENT/HOOKS) that reaches the user's own hookd, which runs the project's
 * own hooks folder. Each teammate runs `npx hookd-sandbox up` once; from then on every project with
 * such entries is guarded by its own hooks.
 *
 * Where hookd is not set up on a machine, the entry itself refuses the call and says to run
 * `hookd up` (exit 2, which every agent here reads as a refusal); at the events that only start or end
 * a run it lets them through instead.
 */
import { isAbsolute, join, relative, resolve, sep } from 'node:path'
import { eventsForPoints as claudeEvents } from '../agents/claude-code/events.js'
import { type CommandAgent, DIALECTS, isCommandAgent } from '../agents/dialects.js'
import { UsageError, list, parse, positiveInt } from './args.js'
import { checkHooks } from './check.js'
import { parseSettings, withHookdCommands, withoutHookd } from './claude-settings.js'
import type { CliIo } from './io.js'
import { type FileChange, applyChanges, readConfig } from './setup-files.js'
import { withTrust } from './setup-codex-trust.js'
import { type Config, type HookShape, hookdEntries, parseConfig, withHooks, withoutHooks } from './setup-hooks-json.js'
import { gitRoot } from './safe-git.js'
import { FILES } from './setup-command.js'
import { shellQuote } from './shim-command.js'

/** What `hookd init` writes for one agent: its committed file and the shape of its entries. */
interface InitAgent {
  title: string
  /** The committed file, relative to the project. */
  file: string
  events(points: ReadonlySet<string>): string[]
  /** Events that only start or end a run: a missing hookd lets them through. */
  failOpen: readonly string[]
  shape: HookShape | 'claude'
  field: 'command' | 'bash'
  entry(command: string, timeoutS: number): Record<string, unknown>
  toolMatcher?: string
  fresh?: Config
  /** Events whose route names them (`?event=`: Copilot's events do not name themselves). */
  namedEvents?: boolean
  /** What each user needs before the agent runs a project's committed hooks (measured with each pinned CLI). */
  note?: string
}

/** An agent with command hooks, from the files `hookd setup` writes for it (setup-command.ts). */
function commandAgent(agent: CommandAgent, note: string): InitAgent {
  const files = FILES[agent]
  return {
    title: DIALECTS[agent].title,
    file: relative('/', files.project('/')),
    events: (points) => DIALECTS[agent].eventsForPoints(points),
    failOpen: files.failOpen,
    shape: files.shape,
    field: files.field,
    entry: files.entry,
    ...(files.toolMatcher !== undefined ? { toolMatcher: files.toolMatcher } : {}),
    ...(files.fresh !== undefined ? { fresh: files.fresh } : {}),
    ...(agent === 'copilot' ? { namedEvents: true } : {}),
    note,
  }
}

const AGENTS: Record<string, InitAgent> = {
  'claude-code': {
    title: 'Claude Code',
    file: join('.claude', 'settings.json'),
    events: (points) => claudeEvents(points),
    failOpen: ['SessionStart', 'Stop', 'StopFailure', 'SessionEnd'],
    shape: 'claude',
    field: 'command',
    entry: (command, timeoutS) => ({ type: 'command', command, timeout: timeoutS }),
    note: "Claude Code reads a project's .claude/settings.json when it is started in the project's folder (not in a folder below it)",
  },
  codex: commandAgent(
    'codex',
    "Codex runs a project's hooks only once each user trusts them: run 'npx hookd-sandbox init codex --trust' in your clone (it records the project and these hooks as trusted in $CODEX_HOME/config.toml), or review them in Codex's /hooks",
  ),
  gemini: commandAgent('gemini', "Gemini CLI runs a project's hooks only in a trusted folder (trust it when Gemini CLI asks, or GEMINI_CLI_TRUST_WORKSPACE=true), and reads .gemini/settings.json only when started in the project's folder"),
  copilot: commandAgent('copilot', "Copilot CLI loads a repository's hooks only in a trusted folder (trust it when Copilot asks, which saves it in ~/.copilot/config.json)"),
  cursor: commandAgent('cursor', "Cursor runs a project's hooks only in a trusted workspace (hookd follows Cursor's documented contract here: Cursor cannot run in hookd's tests)"),
}

export const INIT_AGENTS = Object.keys(AGENTS)

export const INIT_HELP = `Usage: hookd init AGENT --hooks a,b [--hooks-dir DIR] [--dir PROJECT] [options]

Sets a project up for the whole team: writes hookd's entries into the agent's committed settings,
with no token and nothing of this machine's, so that the file can be committed. Each teammate runs
'npx hookd-sandbox up' once (docs/agents.md, "A team sets up once"); from then on their agent, in
this project, runs these hooks from the project's own hooks folder through their own hookd.

  AGENT                 ${INIT_AGENTS.join(', ')}
  --hooks a,b           the hooks to run, in order
  --hooks-dir DIR       the project's hooks folder, relative to the project (default: hooks)
  --dir PROJECT         the project (default: the current folder)
  --events LIST         register these events instead of the ones the hooks need
  --timeout S           seconds to wait for hookd before refusing (default: 30)
  --remove              remove hookd's entries instead
  --trust               Codex: record the project and hookd's entries in it as trusted, in your own
                        $CODEX_HOME/config.toml (each user runs it once in their clone; without --hooks
                        it trusts the entries the committed file holds)
  --dry-run             show the change and write nothing
  -h, --help            show this help

Where hookd is not set up, the agent's call is refused with a line saying to run 'npx hookd-sandbox up'.`

/** The shell command a committed entry runs: the user's shim, or a refusal that says how to get it. */
export function teamCommand(route: string, hooksDir: string, timeoutS: number, failOpen: boolean): string {
  const missing = failOpen ? 'exit 0' : `{ echo "hookd is not set up for this user: run 'npx hookd-sandbox up' (hookd's docs/agents.md)" >&2; exit 2; }`
  const shim = '"${HOOKD_STATE_DIR:-$HOME/.local/state/hookd}/bin/hookd-hook"'
  const args = [...(failOpen ? ['--fail-open'] : []), '--timeout', String(timeoutS), '--hooks-dir', hooksDir, route].map(shellQuote).join(' ')
  return `h=${shim}; [ -x "$h" ] || ${missing}; exec "$h" ${args}`
}

export async function init(argv: string[], io: CliIo): Promise<number> {
  const [agentName, ...rest] = argv
  if (agentName === undefined || agentName === '-h' || agentName === '--help') {
    io.stdout.write(`${INIT_HELP}\n`)
    return agentName === undefined ? 2 : 0
  }
  const agent = AGENTS[agentName]
  if (!agent) throw new UsageError(`'hookd init' knows the agents ${INIT_AGENTS.join(', ')}; '${agentName}' is not one of them\n\n${INIT_HELP}`)
  const { values } = parse(INIT_HELP, {
    args: rest,
    strict: true,
    options: {
      hooks: { type: 'string', multiple: true },
      'hooks-dir': { type: 'string' },
      dir: { type: 'string' },
      events: { type: 'string', multiple: true },
      timeout: { type: 'string' },
      remove: { type: 'boolean', default: false },
      trust: { type: 'boolean', default: false },
      'dry-run': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) {
    io.stdout.write(`${INIT_HELP}\n`)
    return 0
  }
  const project = resolve(io.cwd, values.dir ?? '.')
  const file = join(project, agent.file)
  const before = await readConfig(file, project)
  const changes: FileChange[] = []
  const summary: string[] = []
  if (values.trust && agentName !== 'codex') throw new UsageError(`--trust is for Codex, which asks each user to trust a project's hooks; ${agent.title} does not`)
  let after: string
  if (values.trust && values.hooks === undefined && !values.remove) {
    after = before
  } else if (values.remove) {
    after = agent.shape === 'claude' ? json(withoutHookd(parseSettings(before, file))) : json(withoutHooks(parseConfig(before, file), agent.shape, agent.field).config)
    summary.push("hookd's entries removed")
  } else {
    const hooks = list(values.hooks)
    if (!hooks.length) throw new UsageError('--hooks lists no hook; write --hooks guard or --hooks guard,audit')
    const hooksDir = values['hooks-dir'] ?? 'hooks'
    const inside = relative(project, resolve(project, hooksDir))
    if (isAbsolute(hooksDir) || inside === '' || inside === '..' || inside.startsWith(`..${sep}`)) {
      throw new UsageError(`--hooks-dir '${hooksDir}' must be a folder inside the project, written relative to it (e.g. hooks)`)
    }
    const timeoutS = positiveInt('timeout', values.timeout) ?? 30
    const events = values.events !== undefined ? list(values.events) : await neededEvents(agent, join(project, inside), hooks, io)
    const route = `/${agentName}/${hooks.join(',')}`
    const routeOf = (event: string): string => (agent.namedEvents ? `${route}?event=${event}` : route)
    const command = (event: string): string => teamCommand(routeOf(event), inside.split(sep).join('/'), timeoutS, agent.failOpen.includes(event))
    if (agent.shape === 'claude') {
      after = json(withHookdCommands(parseSettings(before, file), events as Parameters<typeof withHookdCommands>[1], (event) => ({ command: command(event), timeoutS: timeoutS + 5 })))
    } else {
      const tools = new Set(isCommandAgent(agentName) ? DIALECTS[agentName].eventsForPoints(new Set(['beforeToolExecute', 'afterToolExecute'])) : [])
      const placements = events.map((event) => ({
        event,
        entry: agent.entry(command(event), timeoutS + 5),
        ...(tools.has(event) && agent.toolMatcher !== undefined ? { matcher: agent.toolMatcher } : {}),
      }))
      const current = parseConfig(before, file)
      after = json(withHooks({ ...(before.trim() === '' ? (agent.fresh ?? {}) : {}), ...current }, placements, agent.shape, agent.field).config)
    }
    for (const e of events) summary.push(`${e.padEnd(20)} -> ${route} (hooks from ${inside})`)
    if (!events.length) summary.push(`no events: none of these hooks serves a point ${agent.title} can reach`)
  }
  changes.push({ file, base: project, before, after })
  if (values.trust || (values.remove && agentName === 'codex')) await codexTrust(io, project, file, values.remove ? [] : hookdEntries(parseConfig(after, file), 'grouped', 'command'), changes, summary)
  const written = await applyChanges(changes, io, { dryRun: values['dry-run'], command: 'init' })
  if (!written.length) return 0
  for (const line of summary) io.stdout.write(`  ${line}\n`)
  if (!values.remove) {
    io.stdout.write(`hookd init: commit ${relative(io.cwd, file) || file}; each teammate then runs 'npx hookd-sandbox up' once\n`)
    if (agent.note) io.stderr.write(`hookd init: note: ${agent.note}\n`)
  }
  return 0
}

/** Records (or, with none, takes out) Codex's trust for the project's hookd entries in the user's config.toml. */
async function codexTrust(io: CliIo, project: string, hooksFile: string, entries: ReturnType<typeof hookdEntries>, changes: FileChange[], summary: string[]): Promise<void> {
  const home = io.env.HOME
  const codexHome = io.env.CODEX_HOME || (home ? join(home, '.codex') : undefined)
  if (!codexHome) throw new UsageError("Codex keeps its trust in $CODEX_HOME/config.toml (~/.codex), and neither CODEX_HOME nor HOME is set")
  const config = join(codexHome, 'config.toml')
  const base = io.env.CODEX_HOME || (home as string)
  const before = await readConfig(config, base)
  // Codex keys a project's trust by its git root (measured).
  const root = (await gitRoot(project)) ?? project
  const trusted = entries.map((e) => ({ event: e.event, position: e.position, command: String(e.entry.command), timeoutS: Number(e.entry.timeout) }))
  const { text } = withTrust(before, hooksFile, trusted, trusted.length ? root : undefined)
  changes.push({ file: config, base, before, after: text })
  summary.push(trusted.length ? `${trusted.length} hook${trusted.length > 1 ? 's' : ''} and the project ${root} recorded as trusted in ${config}` : `hookd's trust for ${hooksFile} taken out of ${config}`)
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`
}

/** The agent's events the hooks need, from loading them as the sidecar would (the chosen ones must load). */
async function neededEvents(agent: InitAgent, hooksRoot: string, hooks: string[], io: CliIo): Promise<string[]> {
  const report = await checkHooks(hooksRoot, io.cwd)
  const points = new Set<string>()
  for (const name of hooks) {
    const hook = report.hooks.find((h) => h.name === name)
    if (!hook) throw new UsageError(`there is no hook '${name}' in ${hooksRoot} (there: ${report.hooks.map((h) => h.name).join(', ') || 'none'}); create it with 'hookd new ${name} --dir ${hooksRoot}'`)
    if (!hook.ok) {
      const problem = report.problems.find((p) => p.hook === name && p.severity === 'error')
      throw new UsageError(`hook '${name}' does not load (${problem ? `${problem.file}${problem.line !== undefined ? `:${problem.line}` : ''}: ${problem.message}` : 'see hookd check'}); fix it first, or pass --events`)
    }
    for (const p of hook.points) points.add(p)
  }
  return agent.events(points)
}
