/**
 * The host's side of `ctx`: handlers that serve capability calls forwarded by the sidecar, and sound
 * defaults for each. The sidecar has already checked the session's policy; these defaults check again
 * where only the host can (real paths through symlinks, for one).
 */
import { mkdir, readFile, readdir, realpath, stat, writeFile } from 'node:fs/promises'
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path'
import { createInterface } from 'node:readline/promises'
import type { LogLineData } from '../protocol/wire.js'
import type { Diagnostic } from '../protocol/diagnostic.js'
import type { FetchResult } from '../protocol/capabilities.js'

/** Which hook, during which point call, made a capability call. */
export interface CallOrigin {
  hook: string
  point: string
  seq: number
}

export interface Message {
  title: string
  body?: string
}

export interface FetchInit {
  method?: string
  headers?: Record<string, string>
  body?: string
}

export interface FileHandlers {
  read(path: string, origin: CallOrigin): Promise<string>
  write(path: string, text: string, origin: CallOrigin): Promise<void>
  exists(path: string, origin: CallOrigin): Promise<boolean>
  list(dir: string, origin: CallOrigin): Promise<string[]>
}

/** Everything a host can serve. Each handler is optional; missing ones get the defaults below. */
export interface CapabilityHandlers {
  /** Ask the human. Default: a yes/no prompt on the terminal. Only called in interactive sessions. */
  confirm?(message: Message, origin: CallOrigin): Promise<boolean> | boolean
  notify?(message: Message, origin: CallOrigin): Promise<void> | void
  file?: Partial<FileHandlers>
  fetch?(url: string, init: FetchInit, origin: CallOrigin): Promise<FetchResult>
  /** A hook's ctx.log line, while the hook runs. */
  log?(line: LogLineData): void
  /** A diagnostic the sidecar pushed outside any point result (e.g. a broken hook at open). */
  diagnostic?(d: Diagnostic): void
}

export class CapabilityError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

/** Resolves `path` inside `workdir`, following symlinks; refuses anything that ends up outside. */
export async function confine(workdir: string, path: string): Promise<string> {
  if (isAbsolute(path)) throw new CapabilityError('denied', `'${path}' is absolute; use a path relative to the workdir`)
  const root = await realpath(workdir)
  const target = resolve(root, path)
  const inside = (p: string): boolean => {
    const rel = relative(root, p)
    return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel))
  }
  if (!inside(target)) throw new CapabilityError('denied', `'${path}' leads outside the workdir`)
  // Follow the longest existing prefix through symlinks.
  let existing = target
  const rest: string[] = []
  for (;;) {
    try {
      const real = await realpath(existing)
      const full = resolve(real, ...rest.reverse())
      if (!inside(full)) throw new CapabilityError('denied', `'${path}' leads outside the workdir through a symbolic link`)
      return full
    } catch (err) {
      if (err instanceof CapabilityError) throw err
      const parent = dirname(existing)
      if (parent === existing) throw err
      rest.push(existing.slice(parent.length + 1))
      existing = parent
    }
  }
}

function notFound(path: string, err: unknown): CapabilityError {
  const code = (err as NodeJS.ErrnoException).code ?? 'failed'
  return new CapabilityError(code, `${path}: ${(err as Error).message.replace(/^[A-Z]+: /, '')}`)
}

export function workdirFiles(workdir: string): FileHandlers {
  return {
    async read(path) {
      const full = await confine(workdir, path)
      try {
        return await readFile(full, 'utf8')
      } catch (err) {
        throw notFound(path, err)
      }
    },
    async write(path, text) {
      const full = await confine(workdir, path)
      try {
        await mkdir(dirname(full), { recursive: true })
        await writeFile(full, text)
      } catch (err) {
        throw notFound(path, err)
      }
    },
    async exists(path) {
      const full = await confine(workdir, path)
      return stat(full).then(
        () => true,
        () => false,
      )
    },
    async list(dir) {
      const full = await confine(workdir, dir)
      try {
        return (await readdir(full)).sort()
      } catch (err) {
        throw notFound(dir, err)
      }
    },
  }
}

/** Fetch through the platform's fetch, re-checking the origin against the allowlist. */
export function allowlistedFetch(origins: readonly string[]): NonNullable<CapabilityHandlers['fetch']> {
  return async (url, init) => {
    const origin = new URL(url).origin
    if (!origins.includes(origin)) throw new CapabilityError('denied', `origin ${origin} is not allowed by the host`)
    const response = await fetch(url, {
      method: init.method ?? 'GET',
      ...(init.headers ? { headers: init.headers } : {}),
      ...(init.body !== undefined ? { body: init.body } : {}),
      redirect: 'manual',
    })
    const headers: Record<string, string> = {}
    response.headers.forEach((value, name) => {
      headers[name] = value
    })
    return { status: response.status, headers, body: await response.text() }
  }
}

/** Asks on the terminal; one question at a time. */
let terminalQueue: Promise<unknown> = Promise.resolve()
export function terminalConfirm(message: Message, origin: CallOrigin): Promise<boolean> {
  const ask = async (): Promise<boolean> => {
    const rl = createInterface({ input: process.stdin, output: process.stderr })
    try {
      const body = message.body ? `\n  ${message.body}` : ''
      const answer = await rl.question(`[${origin.hook}] ${message.title}${body}\n  Allow? [y/N] `)
      return /^y(es)?$/i.test(answer.trim())
    } finally {
      rl.close()
    }
  }
  const next = terminalQueue.then(ask, ask)
  terminalQueue = next.catch(() => {})
  return next
}
