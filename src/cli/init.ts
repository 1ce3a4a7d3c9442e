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
import { inert } from '../protocol/text.js'
import { UsageError, list, parse, positiveInt } from './args.js'
import { checkHooks } from './check.js'
import { CLAUDE_FAIL_OPEN, parseSettings, withHookdCommands, withoutHookd } from './claude-settings.js'
import type { CliIo } from './io.js'
import { codexTrust } from './init-codex-trust.js'
import { type FileChange, applyChanges, readConfig } from './setup-files.js'
import { type Config, type HookShape, type Ours, parseConfig, withHooks, withoutHooks } from './setup-hooks-json.js'
import { FILES, oursOf } from './setup-command.js'
import { teamCommand } from './shim-command.js'

export { teamCommand } from './shim-command.js'

/** What `hookd init` writes for one agent: its committed file and the shape of its entries. */
interface InitAgent {
  title: string
  /** The committed file, relative to the project. */
  file: string
  /** With `mayAsk`, also the events that say what became of an ask (hook-event.ts EventOptions). */
  events(points: ReadonlySet<string>, options: { mayAsk?: boolean }): string[]
  /** Events that only start or end a run: a missing hookd lets them through. */
  failOpen: readonly string[]
  shape: HookShape | 'claude'
  /** What hookd's entries look like in the file (the agents with command hooks). */
  ours?: Ours
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
    events: (points, options) => DIALECTS[agent].eventsForPoints(points, options),
    failOpen: files.failOpen,
    shape: files.shape,
    ours: oursOf(agent),
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
    events: (points, options) => claudeEvents(points, options),
    failOpen: CLAUDE_FAIL_OPEN,
    shape: 'claude',
    note: "Claude Code reads a project's .claude/settings.json when it is started in the project's folder (not in a folder below it)",
  },
  codex: commandAgent(
    'codex',
    "Codex runs a project's hooks only once each user trusts the project and them: run 'npx hookd-sandbox init codex --trust' in your clone (it records hookd's entries and the project as trusted in $CODEX_HOME/config.toml, and refuses while the project's .codex folders hold anything else), or trust the project and review the hooks in Codex's /hooks",
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
  --trust               Codex: record in your own $CODEX_HOME/config.toml that Codex may run the
                        entries 'hookd init' wrote in the committed .codex/hooks.json (each listed
                        with its hash; any other entry is refused, and listed with why), and trust
                        the project, which Codex needs to run a project's hooks at all. Refused when
                        the project's .codex folders hold anything else Codex reads in a trusted
                        project (config.toml, rules, ...): it lists them. Each user runs it once in
                        their clone; without --hooks it reads the committed file as it is
  --dry-run             show the change and write nothing
  -h, --help            show this help

Where hookd is not set up, the agent's call is refused with a line saying to run 'npx hookd-sandbox up'.`

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
    after = agent.shape === 'claude' ? json(withoutHookd(parseSettings(before, file))) : json(withoutHooks(parseConfig(before, file), agent.ours as Ours).config)
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
    if (agent.ours === undefined) {
      after = json(withHookdCommands(parseSettings(before, file), events as Parameters<typeof withHookdCommands>[1], (event) => ({ command: command(event), timeoutS: timeoutS + 5 })))
    } else {
      const ours = agent.ours
      const tools = new Set(isCommandAgent(agentName) ? DIALECTS[agentName].eventsForPoints(new Set(['beforeToolExecute', 'afterToolExecute'])) : [])
      const placements = events.map((event) => ({
        event,
        entry: ours.entry(command(event), timeoutS + 5),
        ...(tools.has(event) && agent.toolMatcher !== undefined ? { matcher: agent.toolMatcher } : {}),
      }))
      const current = parseConfig(before, file)
      after = json(withHooks({ ...(before.trim() === '' ? (agent.fresh ?? {}) : {}), ...current }, placements, ours).config)
    }
    for (const e of events) summary.push(`${e.padEnd(20)} -> ${route} (hooks from ${inside})`)
    if (!events.length) summary.push(`no events: none of these hooks serves a point ${agent.title} can reach`)
  }
  changes.push({ file, base: project, before, after })
  const trust = values.trust || (values.remove && agentName === 'codex') ? await codexTrust(io, project, file, values.remove ? undefined : parseConfig(after, file), agent.ours as Ours, changes) : undefined
  const written = await applyChanges(changes, io, { dryRun: values['dry-run'], command: 'init' })
  // What --trust trusts and refuses is shown whether or not anything changed.
  if (values.remove) summary.push(...(trust?.lines ?? []))
  else for (const line of trust?.lines ?? []) io.stdout.write(`  ${values['dry-run'] ? '(dry run) ' : ''}${line}\n`)
  // A warning names files and keys of the repository's: each line made inert before it reaches the terminal.
  for (const warning of trust?.warnings ?? []) io.stderr.write(`hookd init: warning: ${warning.split('\n').map((line) => inert(line)).join('\n')}\n`)
  if (!written.length) return 0
  for (const line of summary) io.stdout.write(`  ${line}\n`)
  if (!values.remove) {
    io.stdout.write(`hookd init: commit ${relative(io.cwd, file) || file}; each teammate then runs 'npx hookd-sandbox up' once\n`)
    if (agent.note) io.stderr.write(`hookd init: note: ${agent.note}\n`)
  }
  return 0
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`
}

/** The agent's events the hooks need, from loading them as the sidecar would (the chosen ones must load). */
async function neededEvents(agent: InitAgent, hooksRoot: string, hooks: string[], io: CliIo): Promise<string[]> {
  const report = await checkHooks(hooksRoot, io.cwd)
  const points = new Set<string>()
  let mayAsk = false
  for (const name of hooks) {
    const hook = report.hooks.find((h) => h.name === name)
    if (!hook) throw new UsageError(`there is no hook '${name}' in ${hooksRoot} (there: ${report.hooks.map((h) => h.name).join(', ') || 'none'}); create it with 'hookd new ${name} --dir ${hooksRoot}'`)
    if (!hook.ok) {
      const problem = report.problems.find((p) => p.hook === name && p.severity === 'error')
      throw new UsageError(`hook '${name}' does not load (${problem ? `${problem.file}${problem.line !== undefined ? `:${problem.line}` : ''}: ${problem.message}` : 'see hookd check'}); fix it first, or pass --events`)
    }
    for (const p of hook.points) points.add(p)
    // As the sidecar's describe judges it (front-door.ts): a hook at the gate that may call ctx.confirm.
    if (hook.mayAsk && hook.points.includes('beforeToolExecute')) mayAsk = true
  }
  return agent.events(points, { mayAsk })
}
