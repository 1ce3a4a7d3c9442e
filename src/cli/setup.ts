/**
 * `hookd setup claude-code`: points Claude Code's hooks at a running `hookd serve --http`. It asks the
 * sidecar which events the chosen hooks need, merges one `http` hook entry per event into Claude
 * Code's settings (nothing else in the file changes), keeps a backup, and puts the token only in a
 * file that is not meant to be committed: `.claude/settings.local.json` of the project, or the
 * user's own `~/.claude/settings.json` with `--user`.
 */
import { join, resolve } from 'node:path'
import { MAPPED_EVENTS, type MappedEvent, isMappedEvent } from '../agents/claude-code/events.js'
import { isCommandAgent } from '../agents/dialects.js'
import { DEFAULT_HTTP_TOKEN_FILE } from '../sidecar/http/http-token.js'
import { CommandError, UsageError, list, parse, positiveInt } from './args.js'
import { type Settings, parseSettings, warnings, withHookd, withoutHookd } from './claude-settings.js'
import type { CliIo } from './io.js'
import { HTTP_URL_FILE } from './serve-http.js'
import { SETUP_AGENTS, setupCommandAgent } from './setup-command.js'
import { SETUP_FLAGS, applyChanges, askEvents, frontDoorUrl, gitIgnores, readText, routeOf, tokenOf } from './setup-shared.js'

export const SETUP_HELP = `Usage: hookd setup claude-code (--hooks a,b | --profile NAME) [--dir DIR | --user] [options]
       hookd setup codex|gemini|copilot|cursor ...   (see 'hookd setup codex --help')

Makes Claude Code send its hook events to a running 'hookd serve --http' (docs/agents.md): asks the
sidecar which events the hooks need, and merges one http hook entry per event into Claude Code's
settings, failing closed (onFailure "block"), with the token in the Authorization header. Everything
else in the settings file stays as it was; the old file is kept as FILE.<time>.bak.

  --hooks a,b           the hooks to run, in order (posts to URL/claude-code/a,b)
  --profile NAME        or a profile: NAME.profile.json in the hooks folder (URL/claude-code/profile/NAME)
  --dir DIR             the project: writes DIR/.claude/settings.local.json, which is not meant to be
                        committed (default: the current folder)
  --user                writes ~/.claude/settings.json instead (every project of this user)
  --url URL             the front door, http://HOST:PORT (default: what 'hookd serve --http' wrote in
                        .hookd/${HTTP_URL_FILE})
  --token-file FILE     the sidecar's HTTP token (default: ${DEFAULT_HTTP_TOKEN_FILE})
  --token TOKEN         a tenant's token instead (default: $HOOKD_TOKEN, when set)
  --events LIST|all     register these events without asking the sidecar (default: ask it)
  --timeout S           seconds Claude Code waits for hookd before failing closed (default: 30)
  --remove              remove hookd's entries instead
  --dry-run             show the change and write nothing
  -h, --help            show this help

Run it from the folder where 'hookd serve --http' runs: the token and URL it finds there are the
sidecar's, so the settings work as written.`

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
    options: { ...SETUP_FLAGS, user: { type: 'boolean', default: false } },
  })
  if (values.help) {
    io.stdout.write(`${SETUP_HELP}\n`)
    return 0
  }
  if (values.user && values.dir !== undefined) throw new UsageError('--user and --dir choose the settings file; pass one of them')
  const home = io.env.HOME
  if (values.user && !home) throw new UsageError('--user needs $HOME, where ~/.claude/settings.json lives')
  const file = values.user ? join(home as string, '.claude', 'settings.json') : join(resolve(io.cwd, values.dir ?? '.'), '.claude', 'settings.local.json')
  const before = await readText(file)
  const current = parseSettings(before, file)

  let next: Settings
  let summary: string[]
  let secret: string | undefined
  if (values.remove) {
    next = withoutHookd(current)
    summary = ["hookd's entries removed"]
  } else {
    const route = routeOf(values.hooks, values.profile, 'Claude Code')
    const base = await frontDoorUrl(values.url, io.cwd)
    const token = await tokenOf(values, io)
    secret = token
    const url = `${base}/claude-code/${route}`
    const events = values.events !== undefined ? eventList(list(values.events).join(',')) : claudeEvents(await askEvents(url, token, 'Claude Code', io))
    const timeoutS = positiveInt('timeout', values.timeout) ?? 30
    next = withHookd(current, events, { url, token, timeoutS })
    summary = events.length ? events.map((e) => `${e.padEnd(18)} -> ${url}`) : ['no events: none of these hooks serves a point Claude Code can reach']
    for (const w of warnings(next, file, url)) io.stderr.write(`hookd setup: warning: ${w}\n`)
  }
  const after = `${JSON.stringify(next, null, 2)}\n`
  const written = await applyChanges([{ file, before, after, secret: true }], io, { dryRun: values['dry-run'], mask: secret })
  if (!written.length) return 0
  for (const line of summary) io.stdout.write(`  ${line}\n`)
  if (!values.user && !values.remove) {
    const ignored = await gitIgnores(file)
    if (ignored === false) io.stderr.write(`hookd setup: warning: git does not ignore ${file}, which holds hookd's token; add '.claude/settings.local.json' to .gitignore\n`)
  }
  return 0
}

function eventList(text: string): MappedEvent[] {
  if (text === 'all') return MAPPED_EVENTS.filter((e) => e !== 'SessionStart')
  const names = list(text)
  for (const name of names) {
    if (!(MAPPED_EVENTS as readonly string[]).includes(name)) throw new UsageError(`--events: '${name}' is not an event hookd maps; known: ${MAPPED_EVENTS.join(', ')}`)
    // Claude Code runs no http hook at SessionStart: an entry there would never be called.
    if (name === 'SessionStart') throw new UsageError('--events: Claude Code does not send SessionStart to http hooks; hookd runs beforeRun at the first prompt instead')
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
