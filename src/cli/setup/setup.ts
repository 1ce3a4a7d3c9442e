/**
 * `hookd setup AGENT`: points an agent's hooks at a running `hookd serve --http`, for any agent of the
 * registry (src/agents/registry.ts), from its definition. It asks the sidecar which of the agent's
 * events the chosen hooks need and merges one entry per event into the agent's own file (nothing else
 * in it changes), keeping the old file as a backup in the user's state folder.
 *
 * Which file: an agent with a project file of one user's own (Claude Code's `.claude/settings.local.json`,
 * which it keeps out of commits) gets that one by default, and the user's with `--user`; any other
 * agent gets the user's file by default (not committed with any project: the entries hold this
 * machine's paths), and the project's with `--dir DIR`.
 *
 * The entries run hookd's shim (shimCommand): it proves itself to hookd with the token file it names
 * and refuses the call unless hookd's answer proves it came from hookd, so whatever else listens on the
 * port while hookd is down can neither learn the token nor answer in its place; no secret is written
 * into the settings. An agent with http hooks of its own (Claude Code) takes `--transport http`
 * instead: a process fewer per call, but the agent sends the token in the clear to whatever answers on
 * the port, and takes any answer as hookd's (docs/agents.md says when to choose it). The agent's own
 * steps (Codex's trust) run through its definition.
 */
import { join, relative, resolve } from 'node:path'
import type { AgentDefinition, Placed } from '../../agents/agent-definition.js'
import { AGENT_IDS, agentById } from '../../agents/registry.js'
import type { Config, Merged, Placement } from '../../agents/settings/settings-format.js'
import { shimCommand, shimPath } from '../../agents/settings/shim-command.js'
import { CommandError, UsageError, list, parse, positiveInt } from '../common/args.js'
import type { CliIo } from '../common/io.js'
import { gitExcludeChange } from './git-exclude.js'
import { gitIgnores, gitTracks } from './safe-git.js'
import { settingsIo } from './settings-io.js'
import { readScriptFolder } from './script-folder.js'
import { type FileChange, applyChanges, readConfig } from './setup-files.js'
import { setupHelp } from './setup-help.js'
import { SETUP_FLAGS, askEvents, frontDoorUrl, placementsFor, routeOf, tokenFileFor } from './setup-shared.js'

export async function setup(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv
  if (name === undefined || name === '-h' || name === '--help') {
    io.stdout.write(`${setupHelp()}\n`)
    return name === undefined ? 2 : 0
  }
  const agent = agentById(name)
  if (!agent) throw new UsageError(`'hookd setup' knows the agents ${AGENT_IDS.join(', ')}; '${name}' is not one of them\n\n${setupHelp()}`)
  return setupAgent(agent, rest, io)
}

async function setupAgent(agent: AgentDefinition, argv: string[], io: CliIo): Promise<number> {
  const s = agent.settings
  const help = setupHelp(agent)
  const { values } = parse(help, {
    args: argv,
    strict: true,
    options: { ...SETUP_FLAGS, ...(s.local !== undefined ? { user: { type: 'boolean', default: false } } : {}), ...(s.http !== undefined ? { transport: { type: 'string' } } : {}) },
  })
  if (values.help) {
    io.stdout.write(`${help}\n`)
    return 0
  }
  const transport = (values as { transport?: string }).transport ?? 'command'
  if (transport !== 'command' && transport !== 'http') throw new UsageError(`--transport takes command or http, not '${transport}'`)
  const user = (values as { user?: boolean }).user === true
  const home = io.env.HOME
  const { file, base, project } = target(agent, values.dir, user, io)

  // An agent whose hooks are scripts in a folder (Cline's) has the folder read as its settings.
  const folder = s.scripts ? await readScriptFolder(agent, s.scripts, file, base) : undefined
  const before = folder ? folder.text : await readConfig(file, base)
  const current = s.format.parse(before, file)
  // With --transport http the file holds the token: never one that git commits.
  if (transport === 'http' && !values.remove && (await gitTracks(file))) {
    throw new CommandError(
      `${file} is tracked by git (git ls-files lists it), so --transport http would put hookd's token in a file that is committed. Untrack it ('git rm --cached ${file}', and add it to .gitignore), or use the default --transport command, whose entries hold no secret`,
    )
  }
  // Tokens an older setup wrote into the file: masked in --dry-run, whatever it shows.
  const masks = s.format.secrets?.(current) ?? []
  const port = settingsIo(io)
  const changes: FileChange[] = []
  const summary: string[] = []
  let placements: Placement[] = []
  let next: { config: Config; moved: string[] } & Partial<Pick<Merged, 'positions'>>
  if (values.remove) {
    next = s.format.without(current)
    summary.push("hookd's entries removed")
    if (s.trust) {
      const trust = await s.trust.setup(port, file, [])
      changes.push(...trust.changes)
      summary.push(...trust.lines)
    }
  } else {
    const route = routeOf(values.hooks, values.profile, agent.title)
    const origin = await frontDoorUrl(values.url, io.cwd)
    const timeoutS = positiveInt('timeout', values.timeout) ?? 30
    const token = await tokenFileFor(values, io, changes)
    masks.push(token.value)
    const url = `${origin}/${agent.id}/${route}`
    const needs = values.events !== undefined ? { events: givenEvents(agent, list(values.events).join(','), transport), tools: undefined } : await askEvents(url, token.value, agent.title, io)
    const events = answeredEvents(agent, needs.events)
    const shim = shimPath()
    const entryOf = (event: string): Record<string, unknown> => {
      const eventUrl = s.namedEvents ? `${url}?event=${event}` : url
      return transport === 'http' && s.http
        ? s.http.entry(event, url, token.value, timeoutS)
        : s.format.entryOf
          ? // An agent that runs no command (OpenCode's plugin) takes the route and the token's file itself.
            s.format.entryOf({ url: eventUrl, tokenFile: token.file, timeoutS, failOpen: s.failOpen.includes(event) })
          : // The agent's own timeout comes after the shim's, which refuses: on its own timeout every agent lets the call through.
            s.format.entry(shimCommand({ shim, url: eventUrl, tokenFile: token.file, timeoutS, failOpen: s.failOpen.includes(event) }), timeoutS + 5)
    }
    const placed = placementsFor(agent, events, entryOf, { tools: needs.tools, transport })
    placements = placed.placements
    const fresh = before.trim() === '' ? (s.fresh ?? {}) : {}
    next = s.format.with({ ...fresh, ...current }, placements)
    if (s.trust) {
      const positions = next.positions
      const placed: Placed[] = placements.map((p) => ({ ...p, position: positions?.get(p.event) ?? { group: 0, handler: 0 } }))
      const trust = await s.trust.setup(port, file, placed)
      changes.push(...trust.changes)
      summary.push(...trust.lines)
    }
    for (const p of placements) summary.push(`${p.event.padEnd(s.summaryColumn)} -> ${url}${p.matcher !== undefined && p.matcher !== s.toolMatcher?.matcher ? ` (${p.matcher})` : ''}`)
    summary.push(...placed.notes)
    if (!placements.length) summary.push(`no events: none of these hooks serves a point ${agent.title} can reach`)
    for (const w of (await s.check?.(port, { config: next.config, file, url, transport, home, project })) ?? []) io.stderr.write(`hookd setup: warning: ${w}\n`)
  }
  // An agent whose entries may hold a token (its own http hooks) has its file written 0600.
  if (folder) changes.unshift(...folder.changes(next.config))
  else changes.unshift({ file, base, before, after: `${JSON.stringify(next.config, null, 2)}\n`, ...(s.http ? { secret: true } : {}) })
  // With --transport http the file holds the token: the repository's own exclude list keeps it out of
  // git status and commits.
  if (transport === 'http' && !values.remove && project !== undefined) {
    const exclude = await gitExcludeChange(file, project)
    if (exclude.kind === 'change') changes.push(exclude.change)
    if (exclude.kind === 'refused') io.stderr.write(`hookd setup: warning: ${exclude.message}\n`)
  }
  const written = await applyChanges(changes, io, { dryRun: values['dry-run'], masks })
  if (s.trust && next.moved.length) io.stderr.write(`hookd setup: warning: ${s.trust.moved(file, next.moved)}\n`)
  if (!written.length) return 0
  for (const line of summary) io.stdout.write(`  ${line}\n`)
  if (project !== undefined && placements.length) {
    if (s.projectNote) io.stderr.write(`hookd setup: note: ${s.projectNote}\n`)
    if ((await gitIgnores(file)) === false) {
      if (s.local !== undefined) {
        const holds = transport === 'http' ? "hookd's token" : "this machine's paths (the shim, the token's file)"
        io.stderr.write(`hookd setup: warning: git does not ignore ${file}, which holds ${holds}; add '${relative(project, file)}' to .gitignore\n`)
      } else {
        io.stderr.write(`hookd setup: warning: ${file} names this machine's paths (the shim, the token's file); keep it out of commits\n`)
      }
    }
  }
  return 0
}

/** The file setup writes for `agent`, the folder no link may be on the way below, and the project it is of (none: the user's own file). */
function target(agent: AgentDefinition, dir: string | undefined, user: boolean, io: CliIo): { file: string; base: string; project: string | undefined } {
  const s = agent.settings
  const home = io.env.HOME
  const userFile = (): { file: string; base: string; project: undefined } => {
    const variable = s.user.variable !== undefined ? io.env[s.user.variable] : undefined
    // No part of the path below the user's home (or the agent's own folder variable) may be a link.
    const folder = variable || join(home as string, s.user.dir)
    return { file: join(folder, s.user.file), base: variable || (home as string), project: undefined }
  }
  if (s.local !== undefined) {
    if (user && dir !== undefined) throw new UsageError('--user and --dir choose the settings file; pass one of them')
    if (user && !home) throw new UsageError(`--user needs $HOME, where ~/${s.user.dir}/${s.user.file} lives`)
    if (user) return userFile()
    const project = resolve(io.cwd, dir ?? '.')
    return { file: join(project, s.local), base: project, project }
  }
  if (dir === undefined && !home) throw new UsageError(`the user's ${agent.title} hooks file is under $HOME, which is not set; set it, or pass --dir DIR`)
  if (dir === undefined) return userFile()
  const project = resolve(io.cwd, dir)
  return { file: join(project, s.committed), base: project, project }
}

/** `--events`: the agent's events named (or `all`), in the agent's order; a UsageError naming the first it does not map. */
function givenEvents(agent: AgentDefinition, text: string, transport: string): string[] {
  const s = agent.settings
  if (text === 'all') return [...s.allEvents]
  const names = list(text)
  const mapped = agent.dialect.events
  for (const name of names) {
    if (!mapped.includes(name)) throw new UsageError(`--events: '${name}' is not a ${agent.title} event hookd maps; known: ${mapped.join(', ')}`)
    const unsent = transport === 'http' ? s.http?.unsent[name] : undefined
    if (unsent !== undefined) throw new UsageError(`--events: ${unsent}`)
  }
  return mapped.filter((e) => names.includes(e))
}

/** The sidecar's answer as the agent's events; a CommandError for one this setup does not know. */
function answeredEvents(agent: AgentDefinition, events: string[]): string[] {
  const mapped = agent.dialect.events
  for (const e of events) {
    if (!mapped.includes(e)) throw new CommandError(`hookd answered an event this setup does not know ('${e}'); are hookd and this command the same version?`)
  }
  return mapped.filter((e) => events.includes(e))
}
