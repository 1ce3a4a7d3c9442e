/**
 * `hookd setup claude-code`: points Claude Code's hooks at a running `hookd serve --http`. It asks the
 * sidecar which events the chosen hooks need and merges one entry per event into Claude Code's
 * settings (nothing else in the file changes), keeping the old file as a backup in the user's state
 * folder: `.claude/settings.local.json` of the project (which Claude Code keeps out of commits), or the
 * user's own `~/.claude/settings.json` with `--user`.
 *
 * The entries run hookd's shim (`--transport command`, the default): it proves itself to hookd with
 * the token file it names and refuses the call unless hookd's answer proves it came from hookd, so
 * whatever else listens on the port while hookd is down can neither learn the token nor answer in
 * its place; no secret is written into the settings. `--transport http` writes Claude Code's own `http`
 * hook entries instead (a process fewer per call, but Claude Code sends the token in the clear to
 * whatever answers on the port, and takes any answer as hookd's: docs/agents.md says when to choose
 * it).
 */
import { join, resolve } from 'node:path'
import { MAPPED_EVENTS, type MappedEvent, isMappedEvent } from '../agents/claude-code/events.js'
import { isCommandAgent } from '../agents/dialects.js'
import { DEFAULT_HTTP_TOKEN_FILE } from '../sidecar/http/http-token.js'
import { CommandError, UsageError, list, parse, positiveInt } from './args.js'
import { CLAUDE_FAIL_OPEN, type Settings, hookdSecrets, parseSettings, warnings, withHookd, withHookdCommands, withoutHookd } from './claude-settings.js'
import type { CliIo } from './io.js'
import { HTTP_URL_FILE } from './serve-http.js'
import { SETUP_AGENTS, setupCommandAgent } from './setup-command.js'
import { type FileChange, applyChanges, readConfig } from './setup-files.js'
import { gitExcludeChange } from './git-exclude.js'
import { gitIgnores, gitTracks } from './safe-git.js'
import { SETUP_FLAGS, askEvents, frontDoorUrl, routeOf, tokenFileFor } from './setup-shared.js'
import { shimCommand, shimPath } from './shim-command.js'

export const SETUP_HELP = `Usage: hookd setup claude-code (--hooks a,b | --profile NAME) [--dir DIR | --user] [options]
       hookd setup codex|gemini|copilot|cursor ...   (see 'hookd setup codex --help')

Makes Claude Code send its hook events to a running 'hookd serve --http' (docs/agents.md): asks the
sidecar which events the hooks need, and merges one hook entry per event into Claude Code's settings,
failing closed: when hookd cannot be asked, the tool call is refused. Everything else in the settings
file stays as it was; the old file is kept in ~/.local/state/hookd/backups/.

  --hooks a,b           the hooks to run, in order (posts to URL/claude-code/a,b)
  --profile NAME        or a profile: NAME.profile.json in the hooks folder (URL/claude-code/profile/NAME)
  --dir DIR             the project: writes DIR/.claude/settings.local.json, which is not meant to be
                        committed (default: the current folder)
  --user                writes ~/.claude/settings.json instead (every project of this user)
  --url URL             the front door, http://HOST:PORT (default: what 'hookd serve --http' wrote in
                        .hookd/${HTTP_URL_FILE})
  --token-file FILE     the sidecar's HTTP token (default: ${DEFAULT_HTTP_TOKEN_FILE}), named in the entries
  --token TOKEN         a tenant's token instead (default: $HOOKD_TOKEN, when set): kept in
                        ~/.config/hookd/tokens/ (0600), whose file the entries name
  --transport command   (default) entries that run hookd's shim, which proves itself to hookd and
                        checks that the answer is hookd's; no secret in the settings file
  --transport http      Claude Code's own http entries, with the token in their Authorization header:
                        a process fewer per call, but anything that listens on the port while hookd is
                        down gets the token and may answer in hookd's place
  --events LIST|all     register these events without asking the sidecar (default: ask it)
  --timeout S           seconds to wait for hookd before refusing (default: 30)
  --remove              remove hookd's entries instead
  --dry-run             show the change (tokens masked) and write nothing
  -h, --help            show this help

Run it from the folder where 'hookd serve --http' runs: the token and URL it finds there are the
sidecar's, so the settings work as written.`

const FAIL_OPEN = new Set<string>(CLAUDE_FAIL_OPEN)

export async function setup(argv: string[], io: CliIo): Promise<number> {
  const [agent, ...rest] = argv
  if (agent === undefined || agent === '-h' || agent === '--help') {
    io.stdout.write(`${SETUP_HELP}\n`)
    return agent === undefined ? 2 : 0
  }
  if (isCommandAgent(agent)) return setupCommandAgent(agent, rest, io)
  if (agent !== 'claude-code') throw new UsageError(`'hookd setup' knows the agents ${SETUP_AGENTS.join(', ')}; '${agent}' is not one of them\n\n${SETUP_HELP}`)
  const { values } = parse(SETUP_HELP, {
    args: rest,
    strict: true,
    options: { ...SETUP_FLAGS, user: { type: 'boolean', default: false }, transport: { type: 'string' } },
  })
  if (values.help) {
    io.stdout.write(`${SETUP_HELP}\n`)
    return 0
  }
  const transport = values.transport ?? 'command'
  if (transport !== 'command' && transport !== 'http') throw new UsageError(`--transport takes command or http, not '${transport}'`)
  if (values.user && values.dir !== undefined) throw new UsageError('--user and --dir choose the settings file; pass one of them')
  const home = io.env.HOME
  if (values.user && !home) throw new UsageError('--user needs $HOME, where ~/.claude/settings.json lives')
  const base = values.user ? (home as string) : resolve(io.cwd, values.dir ?? '.')
  const file = values.user ? join(base, '.claude', 'settings.json') : join(base, '.claude', 'settings.local.json')
  const before = await readConfig(file, base)
  const current = parseSettings(before, file)
  // With --transport http the file holds the token: never one that git commits.
  if (transport === 'http' && !values.remove && (await gitTracks(file))) {
    throw new CommandError(
      `${file} is tracked by git (git ls-files lists it), so --transport http would put hookd's token in a file that is committed. Untrack it ('git rm --cached ${file}', and add it to .gitignore), or use the default --transport command, whose entries hold no secret`,
    )
  }
  // Tokens an older setup wrote into the file: masked in --dry-run, whatever it shows.
  const masks = hookdSecrets(current)
  const changes: FileChange[] = []

  let next: Settings
  let summary: string[]
  if (values.remove) {
    next = withoutHookd(current)
    summary = ["hookd's entries removed"]
  } else {
    const route = routeOf(values.hooks, values.profile, 'Claude Code')
    const origin = await frontDoorUrl(values.url, io.cwd)
    const token = await tokenFileFor(values, io, changes)
    masks.push(token.value)
    const url = `${origin}/claude-code/${route}`
    const events = values.events !== undefined ? eventList(list(values.events).join(','), transport) : claudeEvents(await askEvents(url, token.value, 'Claude Code', io))
    const timeoutS = positiveInt('timeout', values.timeout) ?? 30
    if (transport === 'http') {
      next = withHookd(current, events, { url, token: token.value, timeoutS })
    } else {
      const shim = shimPath()
      next = withHookdCommands(current, events, (event) => ({
        command: shimCommand({ shim, url, tokenFile: token.file, timeoutS, failOpen: FAIL_OPEN.has(event) }),
        // Claude Code's own timeout comes after the shim's, which refuses: on its own timeout Claude Code lets the call through.
        timeoutS: timeoutS + 5,
      }))
    }
    summary = events.length ? events.map((e) => `${e.padEnd(18)} -> ${url}`) : ['no events: none of these hooks serves a point Claude Code can reach']
    for (const w of await warnings(next, file, url, { transport, home, project: values.user ? undefined : base })) io.stderr.write(`hookd setup: warning: ${w}\n`)
  }
  changes.unshift({ file, base, before, after: `${JSON.stringify(next, null, 2)}\n`, secret: true })
  // With --transport http the file holds the token: the repository's own exclude list keeps it out of
  // git status and commits.
  if (transport === 'http' && !values.remove && !values.user) {
    const exclude = await gitExcludeChange(file, base)
    if (exclude.kind === 'change') changes.push(exclude.change)
    if (exclude.kind === 'refused') io.stderr.write(`hookd setup: warning: ${exclude.message}\n`)
  }
  const written = await applyChanges(changes, io, { dryRun: values['dry-run'], masks })
  if (!written.includes(file)) return 0
  for (const line of summary) io.stdout.write(`  ${line}\n`)
  if (!values.user && !values.remove && (await gitIgnores(file)) === false) {
    const holds = transport === 'http' ? "hookd's token" : "this machine's paths (the shim, the token's file)"
    io.stderr.write(`hookd setup: warning: git does not ignore ${file}, which holds ${holds}; add '.claude/settings.local.json' to .gitignore\n`)
  }
  return 0
}

function eventList(text: string, transport: string): MappedEvent[] {
  if (text === 'all') return MAPPED_EVENTS.filter((e) => e !== 'SessionStart')
  const names = list(text)
  for (const name of names) {
    if (!(MAPPED_EVENTS as readonly string[]).includes(name)) throw new UsageError(`--events: '${name}' is not an event hookd maps; known: ${MAPPED_EVENTS.join(', ')}`)
    // Claude Code runs no http hook at SessionStart: an entry there would never be called.
    if (name === 'SessionStart' && transport === 'http') throw new UsageError('--events: Claude Code does not send SessionStart to http hooks; hookd runs beforeRun at the first prompt instead')
  }
  return names as MappedEvent[]
}

/** The sidecar's answer as Claude Code's events; a CommandError for one this setup does not know. */
function claudeEvents(events: string[]): MappedEvent[] {
  for (const e of events) {
    if (!isMappedEvent(e)) throw new CommandError(`hookd answered an event this setup does not know ('${e}'); are hookd and this command the same version?`)
  }
  return events as MappedEvent[]
}

