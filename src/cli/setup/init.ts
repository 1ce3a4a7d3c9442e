/**
 * `hookd init AGENT --hooks a,b`: sets a project up once for the whole team, for any agent of the
 * registry (src/agents/registry.ts). It writes hookd's entries into the agent's *committed* settings
 * (its definition's `committed` file: `.claude/settings.json`, `.codex/hooks.json`, ...) with nothing secret and
 * nothing of this machine's: each entry runs the shim that `hookd up` installs in the user's state
 * folder, on a bare route (/AGENT/HOOKS) that reaches the user's own hookd, which runs the project's
 * own hooks folder. Each teammate runs `npx hookd-sandbox up` once; from then on every project with
 * such entries is guarded by its own hooks.
 *
 * Where hookd is not set up on a machine, the entry itself refuses the call and says to run
 * `hookd up` (exit 2, which every agent here reads as a refusal); at the events that only start or end
 * a run it lets them through instead. An agent that trusts hooks by a record of its own (Codex) takes
 * `--trust`, through its definition.
 */
import { isAbsolute, join, relative, resolve, sep } from 'node:path'
import type { AgentDefinition } from '../../agents/agent-definition.js'
import { AGENTS, AGENT_IDS, agentById } from '../../agents/registry.js'
import { teamCommand } from '../../agents/settings/shim-command.js'
import { inert } from '../../protocol/text.js'
import { UsageError, list, parse, positiveInt } from '../common/args.js'
import { checkHooks } from '../check/check.js'
import type { CliIo } from '../common/io.js'
import { routeTools } from '../../agents/tool-conditions.js'
import { settingsIo } from './settings-io.js'
import { type RouteNeeds, placementsFor } from './setup-shared.js'
import { type FileChange, applyChanges, readConfig } from './setup-files.js'
import { initHelp } from './setup-help.js'

export async function init(argv: string[], io: CliIo): Promise<number> {
  const [agentName, ...rest] = argv
  const help = initHelp()
  if (agentName === undefined || agentName === '-h' || agentName === '--help') {
    io.stdout.write(`${help}\n`)
    return agentName === undefined ? 2 : 0
  }
  const agent = agentById(agentName)
  if (!agent) throw new UsageError(`'hookd init' knows the agents ${AGENT_IDS.join(', ')}; '${agentName}' is not one of them\n\n${help}`)
  const s = agent.settings
  if (s.noInit !== undefined) throw new UsageError(`'hookd init ${agent.id}' writes nothing: ${s.noInit}`)
  const { values } = parse(help, {
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
    io.stdout.write(`${help}\n`)
    return 0
  }
  const project = resolve(io.cwd, values.dir ?? '.')
  const file = join(project, s.committed)
  const before = await readConfig(file, project)
  const changes: FileChange[] = []
  const summary: string[] = []
  if (values.trust && !s.trust) {
    const trusting = AGENTS.filter((a) => a.settings.trust !== undefined).map((a) => a.title)
    throw new UsageError(`--trust is for ${trusting.join(' and ')}, which asks each user to trust a project's hooks; ${agent.title} does not`)
  }
  let after: string
  if (values.trust && values.hooks === undefined && !values.remove) {
    after = before
  } else if (values.remove) {
    after = json(s.format.without(s.format.parse(before, file)).config)
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
    const needs = values.events !== undefined ? { events: list(values.events), tools: undefined } : await neededEvents(agent, join(project, inside), hooks, io)
    const events = needs.events
    const route = `/${agent.id}/${hooks.join(',')}`
    const routeOf = (event: string): string => (s.namedEvents ? `${route}?event=${event}` : route)
    const command = (event: string): string => teamCommand(routeOf(event), inside.split(sep).join('/'), timeoutS, s.failOpen.includes(event))
    const { placements, notes } = placementsFor(agent, events, (event) => s.format.entry(command(event), timeoutS + 5), { tools: needs.tools, transport: 'command' })
    const current = s.format.parse(before, file)
    after = json(s.format.with({ ...(before.trim() === '' ? (s.fresh ?? {}) : {}), ...current }, placements).config)
    for (const p of placements) summary.push(`${p.event.padEnd(20)} -> ${route} (hooks from ${inside})${p.matcher !== undefined && p.matcher !== s.toolMatcher?.matcher ? ` (${p.matcher})` : ''}`)
    summary.push(...notes)
    if (!events.length) summary.push(`no events: none of these hooks serves a point ${agent.title} can reach`)
  }
  changes.push({ file, base: project, before, after })
  const trust = s.trust && (values.trust || values.remove) ? await s.trust.init(settingsIo(io), project, file, values.remove ? undefined : s.format.parse(after, file), s.format) : undefined
  if (trust) changes.push(...trust.changes)
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
    io.stderr.write(`hookd init: note: ${s.initNote}\n`)
  }
  return 0
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`
}

/** The agent's events the hooks need, and the tools they are called for, from loading them as the sidecar would (the chosen ones must load). */
async function neededEvents(agent: AgentDefinition, hooksRoot: string, hooks: string[], io: CliIo): Promise<RouteNeeds> {
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
  const chosen = hooks.map((name) => report.hooks.find((h) => h.name === name)).filter((h) => h !== undefined)
  return { events: agent.dialect.eventsForPoints(points, { mayAsk }), tools: routeTools(chosen) }
}
