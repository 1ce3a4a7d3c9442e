/**
 * `hookd setup claude-code`: points Claude Code's hooks at a running `hookd serve --http`. It asks the
 * sidecar which events the chosen hooks need, merges one `http` hook entry per event into Claude
 * Code's settings (nothing else in the file changes), keeps a backup, and puts the token only in a
 * file that is not meant to be committed: `.claude/settings.local.json` of the project, or the
 * user's own `~/.claude/settings.json` with `--user`.
 */
import { execFile } from 'node:child_process'
import { chmod, copyFile, mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { z } from 'zod'
import { MAPPED_EVENTS, type MappedEvent } from '../agents/claude-code/events.js'
import { parseJson } from '../protocol/bounded-json.js'
import { DEFAULT_HTTP_TOKEN_FILE } from '../sidecar/http/http-token.js'
import { CommandError, UsageError, list, parse, positiveInt } from './args.js'
import { type Settings, parseSettings, warnings, withHookd, withoutHookd } from './claude-settings.js'
import type { CliIo } from './io.js'
import { HTTP_URL_FILE } from './serve-http.js'
import { lineDiff } from './text-diff.js'

export const SETUP_HELP = `Usage: hookd setup claude-code (--hooks a,b | --profile NAME) [--dir DIR | --user] [options]

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

const describeAnswer = z.object({
  hooks: z.array(z.object({ name: z.string(), status: z.string(), points: z.array(z.string()), error: z.string().optional() })),
  events: z.array(z.enum(MAPPED_EVENTS)),
})

export async function setup(argv: string[], io: CliIo): Promise<number> {
  const [agent, ...rest] = argv
  if (agent === undefined || agent === '-h' || agent === '--help') {
    io.stdout.write(`${SETUP_HELP}\n`)
    return agent === undefined ? 2 : 0
  }
  if (agent !== 'claude-code') throw new UsageError(`'hookd setup' knows the agent 'claude-code'; '${agent}' is not one (yet)\n\n${SETUP_HELP}`)
  const { values } = parse(SETUP_HELP, () =>
    parseArgs({
      args: rest,
      strict: true,
      options: {
        hooks: { type: 'string' },
        profile: { type: 'string' },
        dir: { type: 'string' },
        user: { type: 'boolean', default: false },
        url: { type: 'string' },
        'token-file': { type: 'string' },
        token: { type: 'string' },
        events: { type: 'string' },
        timeout: { type: 'string' },
        remove: { type: 'boolean', default: false },
        'dry-run': { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h' },
      },
    }),
  )
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
    const route = routeOf(values.hooks, values.profile)
    const base = await frontDoorUrl(values.url, io.cwd)
    const token = await tokenOf(values, io)
    secret = token
    const url = `${base}/claude-code/${route}`
    const events = values.events !== undefined ? eventList(values.events) : await askEvents(url, token, io)
    const timeoutS = positiveInt('timeout', values.timeout) ?? 30
    next = withHookd(current, events, { url, token, timeoutS })
    summary = events.length ? events.map((e) => `${e.padEnd(18)} -> ${url}`) : ['no events: none of these hooks serves a point Claude Code can reach']
    for (const w of warnings(next, file, url)) io.stderr.write(`hookd setup: warning: ${w}\n`)
  }
  const after = `${JSON.stringify(next, null, 2)}\n`
  if (values['dry-run']) {
    // The token stays off the terminal (and out of logs that capture it).
    const shown = (text: string): string => (secret ? text.split(secret).join('<token>') : text)
    io.stdout.write(`hookd setup: would write ${file}:\n${before === after ? '  (no change)' : lineDiff(shown(before), shown(after))}\n`)
    return 0
  }
  if (before === after) {
    io.stdout.write(`hookd setup: ${file} already says this; nothing changed\n`)
    return 0
  }
  const backup = before === '' ? undefined : `${file}.${new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '')}.bak`
  if (backup) {
    await copyFile(file, backup)
    await chmod(backup, 0o600)
  }
  await mkdir(dirname(file), { recursive: true })
  // The file holds a token: only its owner reads it.
  await writeFile(file, after, { mode: 0o600 })
  await chmod(file, 0o600)
  io.stdout.write(`hookd setup: wrote ${file}${backup ? ` (the old one is ${backup})` : ''}\n`)
  for (const line of summary) io.stdout.write(`  ${line}\n`)
  if (!values.user && !values.remove) {
    const ignored = await gitIgnores(file)
    if (ignored === false) io.stderr.write(`hookd setup: warning: git does not ignore ${file}, which holds hookd's token; add '.claude/settings.local.json' to .gitignore\n`)
  }
  return 0
}

function routeOf(hooks: string | undefined, profile: string | undefined): string {
  if ((hooks === undefined) === (profile === undefined)) throw new UsageError('pass --hooks a,b or --profile NAME (one of them): which hooks Claude Code runs')
  if (profile !== undefined) return `profile/${profile}`
  const names = list(hooks)
  if (!names.length) throw new UsageError('--hooks lists no hook; write --hooks guard or --hooks guard,audit')
  return names.join(',')
}

async function frontDoorUrl(flag: string | undefined, cwd: string): Promise<string> {
  let text = flag
  if (text === undefined) {
    const recorded = await readText(join(cwd, '.hookd', HTTP_URL_FILE))
    if (!recorded) {
      throw new UsageError(`pass --url http://HOST:PORT (the 'hookd: http on ...' line of 'hookd serve --http'), or run setup where hookd serve runs (it records the URL in .hookd/${HTTP_URL_FILE})`)
    }
    text = recorded.trim()
  }
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new UsageError(`--url '${text}' is not a URL; write http://HOST:PORT`)
  }
  if (url.protocol !== 'http:' || url.pathname !== '/' || url.search) throw new UsageError(`--url '${text}': write the front door's address alone, http://HOST:PORT`)
  return url.origin
}

async function tokenOf(values: { token?: string | undefined; 'token-file'?: string | undefined }, io: CliIo): Promise<string> {
  const given = values.token ?? (values['token-file'] === undefined ? io.env.HOOKD_TOKEN : undefined)
  if (given) return given
  const file = resolve(io.cwd, values['token-file'] ?? DEFAULT_HTTP_TOKEN_FILE)
  const text = (await readText(file)).trim()
  if (!text) {
    throw new UsageError(`no token: ${file} is missing or empty. Run setup where 'hookd serve --http' runs (it makes the token there), or pass --token-file FILE, or --token TOKEN for a tenant`)
  }
  return text
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

/** The events the route's hooks need, as the running sidecar says; a CommandError when it cannot say. */
async function askEvents(url: string, token: string, io: CliIo): Promise<MappedEvent[]> {
  let response: Response
  try {
    response = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(10_000) })
  } catch (err) {
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : String(err)
    throw new CommandError(`cannot reach hookd at ${new URL(url).origin} (${cause}); start 'hookd serve --http ...' first, or pass --events to write the settings without asking it`)
  }
  const body = parseJson(Buffer.from(await response.arrayBuffer()), `hookd's answer from ${url}`, { maxBytes: 1024 * 1024, maxDepth: 16 })
  const error = body.ok && body.value !== null && typeof body.value === 'object' ? (body.value as { error?: unknown }).error : undefined
  if (!response.ok) throw new CommandError(`hookd at ${url} answered ${response.status}: ${typeof error === 'string' ? error : 'no reason given'}`)
  const parsed = body.ok ? describeAnswer.safeParse(body.value) : undefined
  if (!parsed?.success) throw new CommandError(`hookd at ${url} answered something setup does not understand; is it a hookd with the HTTP front door?`)
  for (const hook of parsed.data.hooks) {
    if (hook.status === 'broken') io.stderr.write(`hookd setup: warning: hook '${hook.name}' does not load now (${hook.error ?? 'no reason given'}); Claude Code's tool calls are refused until it does\n`)
  }
  return parsed.data.events
}

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return ''
    throw new CommandError(`cannot read ${file}: ${(err as Error).message}`)
  }
}

/** Whether git ignores `file`; undefined when it is not in a git work tree (or git is missing). */
function gitIgnores(file: string): Promise<boolean | undefined> {
  return new Promise((resolveIgnored) => {
    execFile('git', ['-C', dirname(file), 'rev-parse', '--is-inside-work-tree'], { timeout: 5000 }, (err) => {
      if (err) return resolveIgnored(undefined)
      execFile('git', ['-C', dirname(file), 'check-ignore', '-q', file], { timeout: 5000 }, (e) => {
        resolveIgnored(e ? ((e as { code?: unknown }).code === 1 ? false : undefined) : true)
      })
    })
  })
}
