/**
 * What every `hookd setup AGENT` does alike: find the front door and its token, ask it which events a
 * route's hooks need, and write the agent's files with a backup (or show the change with --dry-run).
 */
import { execFile } from 'node:child_process'
import { chmod, copyFile, mkdir, readFile, writeFile } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import * as z from 'zod'
import { parseJson } from '../protocol/bounded-json.js'
import { DEFAULT_HTTP_TOKEN_FILE } from '../sidecar/http/http-token.js'
import { CommandError, UsageError, list } from './args.js'
import type { CliIo } from './io.js'
import { HTTP_URL_FILE } from './serve-http.js'
import { lineDiff } from './text-diff.js'

/** The route's text after the agent: `a,b` for --hooks, `profile/NAME` for --profile. */
export function routeOf(hooks: readonly string[] | undefined, profile: string | undefined, agent: string): string {
  if ((hooks === undefined) === (profile === undefined)) throw new UsageError(`pass --hooks a,b or --profile NAME (one of them): which hooks ${agent} runs`)
  if (profile !== undefined) return `profile/${profile}`
  const names = list(hooks)
  if (!names.length) throw new UsageError('--hooks lists no hook; write --hooks guard or --hooks guard,audit')
  return names.join(',')
}

/** The front door's origin: --url, or what `hookd serve --http` recorded in .hookd/http-url. */
export async function frontDoorUrl(flag: string | undefined, cwd: string): Promise<string> {
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

/** The token: given, or read from the token file; a UsageError saying where to find one otherwise. */
export async function tokenOf(values: TokenFlags, io: CliIo): Promise<string> {
  const given = givenToken(values, io)
  if (given) return given
  const file = tokenFileOf(values, io)
  const text = (await readText(file)).trim()
  if (!text) {
    throw new UsageError(`no token: ${file} is missing or empty. Run setup where 'hookd serve --http' runs (it makes the token there), or pass --token-file FILE, or --token TOKEN for a tenant`)
  }
  return text
}

const describeAnswer = z.object({
  hooks: z.array(z.object({ name: z.string(), status: z.string(), points: z.array(z.string()), error: z.string().optional() })),
  events: z.array(z.string()),
})

/**
 * The events the route's hooks need, as the running sidecar says; a CommandError when it cannot say.
 * Warns about hooks that do not load now, which refuse the agent's tool calls until they do.
 */
export async function askEvents(url: string, token: string, agent: string, io: CliIo): Promise<string[]> {
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
  return parsed.data.events
}

/** A file's text, or '' when there is none. */
export async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return ''
    throw new CommandError(`cannot read ${file}: ${(err as Error).message}`)
  }
}

/** One file setup changes: its text before and after. */
export interface FileChange {
  file: string
  before: string
  after: string
  /** 0600 for files that hold a token; the mode the file has, or 0644, otherwise. */
  secret?: boolean
}

/**
 * Shows the changes (--dry-run, with `mask` replaced by `<token>`), or writes them: each changed file
 * backed up first as FILE.<time>.bak. Returns the files written.
 */
export async function applyChanges(changes: readonly FileChange[], io: CliIo, options: { dryRun: boolean; mask?: string | undefined }): Promise<string[]> {
  if (options.dryRun) {
    const shown = (text: string): string => (options.mask ? text.split(options.mask).join('<token>') : text)
    for (const c of changes) io.stdout.write(`hookd setup: would write ${c.file}:\n${c.before === c.after ? '  (no change)' : lineDiff(shown(c.before), shown(c.after))}\n`)
    return []
  }
  const written: string[] = []
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '')
  for (const c of changes) {
    if (c.before === c.after) {
      io.stdout.write(`hookd setup: ${c.file} already says this; nothing changed\n`)
      continue
    }
    const backup = c.before === '' ? undefined : `${c.file}.${stamp}.bak`
    if (backup) {
      await copyFile(c.file, backup)
      await chmod(backup, 0o600)
    }
    await mkdir(dirname(c.file), { recursive: true })
    await writeFile(c.file, c.after, { mode: c.secret ? 0o600 : 0o644 })
    if (c.secret) await chmod(c.file, 0o600)
    io.stdout.write(`hookd setup: wrote ${c.file}${backup ? ` (the old one is ${backup})` : ''}\n`)
    written.push(c.file)
  }
  return written
}

/** Whether git ignores `file`; undefined when it is not in a git work tree (or git is missing). */
export function gitIgnores(file: string): Promise<boolean | undefined> {
  return new Promise((resolveIgnored) => {
    execFile('git', ['-C', dirname(file), 'rev-parse', '--is-inside-work-tree'], { timeout: 5000 }, (err) => {
      if (err) return resolveIgnored(undefined)
      execFile('git', ['-C', dirname(file), 'check-ignore', '-q', file], { timeout: 5000 }, (e) => {
        resolveIgnored(e ? ((e as { code?: unknown }).code === 1 ? false : undefined) : true)
      })
    })
  })
}

/** The flags every `hookd setup AGENT` takes (claude-code adds --user). */
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
