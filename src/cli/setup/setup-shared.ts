/**
 * What every `hookd setup AGENT` does alike: find the front door and its token, ask it which events a
 * route's hooks need, and write the agent's files with a backup (or show the change with --dry-run).
 */
import { createHash } from 'node:crypto'
import { isIP } from 'node:net'
import { basename, dirname, join, resolve } from 'node:path'
import * as z from 'zod'
import { parseJson } from '../../protocol/bounded-json.js'
import { HookdError } from '../../protocol/status.js'
import { DEFAULT_HTTP_TOKEN_FILE } from '../../sidecar/http/http-token.js'
import { PROJECT_STATE_DIR, StateFolder, readStateFile } from '../../sidecar/state/state-folder.js'
import { CommandError, UsageError, list } from '../common/args.js'
import type { CliIo } from '../common/io.js'
import { HTTP_URL_FILE } from '../serve/serve-http.js'
import { type FileChange, readConfig } from './setup-files.js'
import type { AgentDefinition } from '../../agents/agent-definition.js'
import type { Placement } from '../../agents/settings/settings-format.js'
import { nativeTools, routeTools } from '../../agents/tool-conditions.js'

/** The route's text after the agent: `a,b` for --hooks, `profile/NAME` for --profile. */
export function routeOf(hooks: readonly string[] | undefined, profile: string | undefined, agent: string): string {
  if ((hooks === undefined) === (profile === undefined)) throw new UsageError(`pass --hooks a,b or --profile NAME (one of them): which hooks ${agent} runs`)
  if (profile !== undefined) return `profile/${profile}`
  const names = list(hooks)
  if (!names.length) throw new UsageError('--hooks lists no hook; write --hooks guard or --hooks guard,audit')
  return names.join(',')
}

/**
 * The front door's origin: --url, or what `hookd serve --http` recorded in `.hookd/http-url`, read only
 * from a state folder hookd made (state-folder.ts) and only when it names a loopback address: a
 * repository can commit a `.hookd/` whose URL would receive the token.
 */
export async function frontDoorUrl(flag: string | undefined, cwd: string): Promise<string> {
  let text = flag
  let recordedIn: string | undefined
  if (text === undefined) {
    const folder = await stateFolder(cwd)
    const recorded = folder && (await readState(folder, HTTP_URL_FILE))
    if (!folder || !recorded) {
      throw new UsageError(`pass --url http://HOST:PORT (the 'hookd: http on ...' line of 'hookd serve --http'), or run setup where hookd serve runs (it records the URL in ${PROJECT_STATE_DIR}/${HTTP_URL_FILE})`)
    }
    text = recorded.trim()
    recordedIn = folder.file(HTTP_URL_FILE)
  }
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new UsageError(`${recordedIn ? `${recordedIn} holds` : '--url'} '${text}', which is not a URL; write http://HOST:PORT`)
  }
  if (url.protocol !== 'http:' || url.pathname !== '/' || url.search) throw new UsageError(`${recordedIn ? `${recordedIn} holds` : '--url'} '${text}': write the front door's address alone, http://HOST:PORT`)
  if (recordedIn && !isLoopback(url.hostname)) {
    throw new UsageError(`${recordedIn} names ${url.origin}, which is not a loopback address; hookd serve records only where it listens on this machine, so this file is not its own. To use a front door elsewhere, pass --url`)
  }
  return url.origin
}

function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '')
  if (bare === 'localhost') return true
  if (isIP(bare) === 4) return bare.startsWith('127.')
  return bare === '::1'
}

/** The project's state folder where setup runs, when there is one that passes the rule. */
async function stateFolder(cwd: string): Promise<StateFolder | undefined> {
  try {
    return await StateFolder.open(join(cwd, PROJECT_STATE_DIR), { create: false })
  } catch (err) {
    throw new CommandError(HookdError.from(err).message)
  }
}

async function readState(folder: StateFolder, name: string): Promise<string | undefined> {
  try {
    return await folder.read(name)
  } catch (err) {
    throw new CommandError(HookdError.from(err).message)
  }
}

export interface TokenFlags {
  token?: string | undefined
  'token-file'?: string | undefined
}

/** A token given as such (--token, or $HOOKD_TOKEN when no --token-file): a tenant's. */
export function givenToken(values: TokenFlags, io: CliIo): string | undefined {
  return values.token ?? (values['token-file'] === undefined ? io.env.HOOKD_TOKEN || undefined : undefined)
}

/** The sidecar's token file (--token-file, or .hookd/http-token where setup runs), absolute. */
export function tokenFileOf(values: TokenFlags, io: CliIo): string {
  return resolve(io.cwd, values['token-file'] ?? DEFAULT_HTTP_TOKEN_FILE)
}

/**
 * The token: given, or read from the token file, which must pass the state files' rule (a regular
 * file of this user's, closed to others, not a link); a UsageError saying where to find one otherwise.
 */
export async function tokenOf(values: TokenFlags, io: CliIo): Promise<string> {
  const given = givenToken(values, io)
  if (given) return given
  return readTokenFile(tokenFileOf(values, io))
}

/** The token in `file` (state files' rule); a UsageError when there is none, a CommandError when it cannot be trusted. */
export async function readTokenFile(file: string): Promise<string> {
  let text: string | undefined
  try {
    if (basename(dirname(file)) === PROJECT_STATE_DIR) await StateFolder.open(dirname(file), { create: false })
    text = await readStateFile(file, 4096)
  } catch (err) {
    throw new CommandError(HookdError.from(err).message)
  }
  const token = (text ?? '').trim()
  if (!token) {
    throw new UsageError(`no token: ${file} is missing or empty. Run setup where 'hookd serve --http' runs (it makes the token there), or pass --token-file FILE, or --token TOKEN for a tenant`)
  }
  return token
}

/**
 * The token's file the entries name: the sidecar's (--token-file, or .hookd/http-token), or for a
 * token given as such (a tenant's), a file setup keeps it in under ~/.config/hookd/tokens/ (0600),
 * added to `changes`.
 */
export async function tokenFileFor(values: TokenFlags, io: CliIo, changes: FileChange[]): Promise<{ file: string; value: string }> {
  const given = givenToken(values, io)
  if (given) {
    const home = io.env.HOME
    if (!home) throw new UsageError('a --token is kept in ~/.config/hookd/tokens/, and $HOME is not set; write it to a file (chmod 600) and pass --token-file FILE')
    const file = join(home, '.config', 'hookd', 'tokens', createHash('sha256').update(given).digest('hex').slice(0, 16))
    changes.push({ file, base: home, before: await readConfig(file, home), after: `${given}\n`, secret: true })
    return { file, value: given }
  }
  const file = tokenFileOf(values, io)
  return { file, value: await readTokenFile(file) }
}

const describeAnswer = z.object({
  hooks: z.array(z.object({ name: z.string(), status: z.string(), points: z.array(z.string()), error: z.string().optional(), tools: z.array(z.string().max(64)).max(64).optional() })),
  events: z.array(z.string()),
})

/** What the sidecar says a route needs: the agent's events, and the canonical tools its hooks are called for (undefined: every tool). */
export interface RouteNeeds {
  events: string[]
  tools: ReadonlySet<string> | undefined
}

/**
 * The entries to write for `events`: each with its group's matcher (the agent's matcher naming only the
 * native tools of `tools` where it can, tool-conditions.ts) and, for the command transport, the fields
 * that run observe-only events in the background. Tool events are left out when none of the agent's
 * tools is one the hooks list (a line in `notes` says so).
 */
export function placementsFor(
  agent: AgentDefinition,
  events: readonly string[],
  entryOf: (event: string) => Record<string, unknown>,
  options: { tools?: ReadonlySet<string> | undefined; transport: string },
): { placements: Placement[]; notes: string[] } {
  const s = agent.settings
  const tm = s.toolMatcher
  const natives = options.tools && tm?.names ? nativeTools(agent.dialect.tools, options.tools) : undefined
  const notes: string[] = []
  const placements: Placement[] = []
  for (const event of events) {
    const isTool = tm?.events.includes(event) === true
    if (isTool && natives !== undefined && !natives.length) continue
    const matcher = isTool && tm ? (natives !== undefined && tm.names ? tm.names(natives) : tm.matcher) : undefined
    const background = options.transport === 'command' && s.observeOnly?.events.includes(event) ? s.observeOnly.fields : {}
    placements.push({ event, entry: { ...entryOf(event), ...background }, ...(matcher !== undefined ? { matcher } : {}) })
  }
  if (natives !== undefined && !natives.length && events.some((e) => tm?.events.includes(e))) {
    notes.push(`no tool event: none of ${agent.title}'s tools is one the hooks list (${[...(options.tools ?? [])].join(', ')})`)
  }
  return { placements, notes }
}

/**
 * The events the route's hooks need, as the running sidecar says; a CommandError when it cannot say.
 * Warns about hooks that do not load now, which refuse the agent's tool calls until they do.
 */
export async function askEvents(url: string, token: string, agent: string, io: CliIo): Promise<RouteNeeds> {
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
    if (hook.status === 'broken') io.stderr.write(`hookd setup: warning: hook '${hook.name}' does not load now (${hook.error ?? 'no reason given'}); ${agent}'s tool calls are refused until it does\n`)
  }
  return { events: parsed.data.events, tools: routeTools(parsed.data.hooks) }
}

/** The flags every `hookd setup AGENT` takes (setup.ts adds --user and --transport where the agent has them). */
export const SETUP_FLAGS = {
  hooks: { type: 'string', multiple: true },
  profile: { type: 'string' },
  dir: { type: 'string' },
  url: { type: 'string' },
  'token-file': { type: 'string' },
  token: { type: 'string' },
  events: { type: 'string', multiple: true },
  timeout: { type: 'string' },
  remove: { type: 'boolean', default: false },
  'dry-run': { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h' },
} as const
