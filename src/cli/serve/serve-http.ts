/**
 * The flags of `hookd serve` for the HTTP front door (docs/agents.md): where it listens, its token
 * file, how long an agent session may stay quiet, its byte budgets, and the names agents may reach it
 * by. Kept here so that serve.ts only wires them in.
 */
import { isIP } from 'node:net'
import { join, resolve } from 'node:path'
import { prepareSocket } from '../../sidecar/grpc/socket.js'
import { userStateDir } from '../../sidecar/state/state-folder.js'
import { parseAddress } from '../../protocol/address.js'
import type { Sidecar } from '../../sidecar/sidecar.js'
import { DEFAULT_IDLE_MS } from '../../agents/agent-runs.js'
import { DEFAULT_BYTE_BUDGET } from '../../sidecar/http/byte-budget.js'
import { DEFAULT_HTTP_TOKEN_FILE, loadHttpToken } from '../../sidecar/http/http-token.js'
import type { StateFolder } from '../../sidecar/state/state-folder.js'
import type { FrontDoorCapture } from '../../testing/front-door-capture.js'
import { UsageError, list, positiveInt } from '../common/args.js'
import type { CliIo } from '../common/io.js'

const MIB = 1024 * 1024

export const HTTP_HELP = `  --http [HOST:]PORT       also serve the HTTP front door for agents (Claude Code's http hooks, see
                           docs/agents.md) on HOST:PORT; a bare PORT means 127.0.0.1:PORT, port 0 picks
                           one. Loopback only unless --insecure. Prints "hookd: http on URL" when ready
  --http-token-file FILE   without --tenants, the token every HTTP request must carry: a file you made
                           (a regular file only you can read); by default hookd makes ${DEFAULT_HTTP_TOKEN_FILE}
                           (folder 0700, file 0600) on the first start. With --tenants, tenants' tokens
  --http-idle-ms N         end an agent session's run (afterRun: interrupted) after N ms without an event
                           (default: ${DEFAULT_IDLE_MS})
  --http-tenant-mb N       MiB of event bodies one tenant's requests may hold while their hooks run; past
                           it a request is refused (429) before its body is read (default: ${DEFAULT_BYTE_BUDGET.tenantBytes / MIB})
  --http-total-mb N        the same for all requests together (503 past it; default: ${DEFAULT_BYTE_BUDGET.totalBytes / MIB})
  --http-hosts NAME,...    names agents reach the front door by besides loopback and its own address (with
                           --insecure on 0.0.0.0: this machine's DNS name); requests for any other Host
                           are refused (421), so that a web page cannot reach it through a name of its own`

export const HTTP_FLAGS = {
  http: { type: 'string' },
  'http-token-file': { type: 'string' },
  'http-idle-ms': { type: 'string' },
  'http-tenant-mb': { type: 'string' },
  'http-total-mb': { type: 'string' },
  'http-hosts': { type: 'string', multiple: true },
} as const

export interface HttpValues {
  http?: string | undefined
  'http-token-file'?: string | undefined
  'http-idle-ms'?: string | undefined
  'http-tenant-mb'?: string | undefined
  'http-total-mb'?: string | undefined
  'http-hosts'?: string[] | undefined
  tenants?: string | undefined
  insecure?: boolean | undefined
}

export interface HttpSettings {
  host: string
  /** -1: no TCP listener (the user's hookd with its socket alone). */
  port: number
  /** The Unix socket the front door also listens on (the user's hookd, --projects). */
  socket?: string
  /** Absent with tenants. */
  tokenFile?: string
  /** True when the operator named the token file (--http-token-file): it must exist; hookd makes none there. */
  tokenNamed?: boolean
  idleMs?: number
  budget?: { tenantBytes?: number; totalBytes?: number }
  hosts?: string[]
}

const HOST_NAME = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i

/** The file beside the token where serve writes the front door's URL, for `hookd setup`. */
export const HTTP_URL_FILE = 'http-url'

/** Checks the flags before anything starts; undefined without --http. */
export function httpSettings(values: HttpValues, cwd: string): HttpSettings | undefined {
  const idleMs = positiveInt('http-idle-ms', values['http-idle-ms'])
  const tenantMb = positiveInt('http-tenant-mb', values['http-tenant-mb'])
  const totalMb = positiveInt('http-total-mb', values['http-total-mb'])
  const hosts = list(values['http-hosts'])
  if (values.http === undefined) {
    if (values['http-token-file'] !== undefined || idleMs !== undefined || tenantMb !== undefined || totalMb !== undefined || hosts.length > 0) {
      throw new UsageError('--http-token-file and --http-idle-ms apply to --http, as do --http-tenant-mb, --http-total-mb and --http-hosts')
    }
    return undefined
  }
  for (const name of hosts) {
    if (!HOST_NAME.test(name) && isIP(name) === 0) throw new UsageError(`--http-hosts takes host names or addresses without a port (hookd.example.com,10.0.0.5); got '${name}'`)
  }
  const text = /^\d+$/.test(values.http) ? `127.0.0.1:${values.http}` : values.http
  let address
  try {
    address = parseAddress(text)
  } catch (err) {
    throw new UsageError(`--http: ${(err as Error).message.replace('write unix:PATH or HOST:PORT', 'write HOST:PORT or PORT')}`)
  }
  if (address.kind !== 'tcp') throw new UsageError(`--http takes HOST:PORT or PORT, not ${values.http}`)
  if (!isLoopback(address.host) && !values.insecure) {
    throw new UsageError(
      `refusing to serve HTTP on ${values.http}: the front door has no TLS, so its tokens and the agents' events would cross the network in clear. ` +
        'Use a loopback address (127.0.0.1:PORT), or pass --insecure if the network is trusted',
    )
  }
  if (values.tenants !== undefined && values['http-token-file'] !== undefined) {
    throw new UsageError("--http-token-file does not apply with --tenants: each tenant's own token is its HTTP credential")
  }
  const settings: HttpSettings = { host: address.host, port: address.port }
  if (values.tenants === undefined) {
    settings.tokenFile = resolve(cwd, values['http-token-file'] ?? DEFAULT_HTTP_TOKEN_FILE)
    if (values['http-token-file'] !== undefined) settings.tokenNamed = true
  }
  if (idleMs !== undefined) settings.idleMs = idleMs
  Object.assign(settings, budgetOf(values))
  if (hosts.length > 0) settings.hosts = hosts.map((h) => h.toLowerCase())
  return settings
}

/** The file in the user's state folder the user's hookd listens on (--projects), and the shim connects to. */
export const PROJECTS_SOCKET = 'front.sock'

/**
 * The front door of the user's hookd (--projects): its socket and token in the user's state folder, and
 * a TCP listener too when --http is given.
 */
export function projectsHttp(values: HttpValues, io: CliIo): HttpSettings {
  const state = userStateDir(io.env)
  const tcp = values.http === undefined ? undefined : httpSettings({ ...values, tenants: undefined, 'http-token-file': undefined }, io.cwd)
  const idleMs = positiveInt('http-idle-ms', values['http-idle-ms'])
  return {
    host: tcp?.host ?? '127.0.0.1',
    port: tcp?.port ?? -1,
    socket: join(state, PROJECTS_SOCKET),
    tokenFile: join(state, 'http-token'),
    ...(idleMs !== undefined ? { idleMs } : {}),
    ...budgetOf(values),
    ...(tcp?.hosts ? { hosts: tcp.hosts } : {}),
  }
}

/** --http-tenant-mb and --http-total-mb, as the front door's byte budget. */
function budgetOf(values: HttpValues): { budget?: NonNullable<HttpSettings['budget']> } {
  const tenantMb = positiveInt('http-tenant-mb', values['http-tenant-mb'])
  const totalMb = positiveInt('http-total-mb', values['http-total-mb'])
  if (tenantMb === undefined && totalMb === undefined) return {}
  return { budget: { ...(tenantMb !== undefined ? { tenantBytes: tenantMb * MIB } : {}), ...(totalMb !== undefined ? { totalBytes: totalMb * MIB } : {}) } }
}

/**
 * Starts the front door on a sidecar that is already listening (or, for the user's hookd, on its
 * socket), and says where on stderr. Returns where it listens first (the socket, else the URL).
 */
export async function startHttp(sidecar: Sidecar, settings: HttpSettings, io: CliIo, capture?: FrontDoorCapture): Promise<string> {
  let token: string | undefined
  let folder: StateFolder | undefined
  if (settings.tokenFile !== undefined) {
    const loaded = await loadHttpToken(settings.tokenFile, { create: !settings.tokenNamed })
    token = loaded.token
    folder = loaded.folder
    if (loaded.created) io.stderr.write(`hookd: made the HTTP token in ${settings.tokenFile} (mode 0600); 'hookd setup claude-code' points Claude Code at it\n`)
    // An agent that printed the token (cat .hookd/http-token) must not put it in a case.
    capture?.keepOut('hookd token', loaded.token)
  }
  const door = {
    // The front door's lines (errors it answered, runs it ended) go to the command's stderr, and so through its log.
    report: (line: string) => void io.stderr.write(`hookd: ${line}\n`),
    ...(token !== undefined ? { token, tokenFile: settings.tokenFile as string } : {}),
    ...(settings.idleMs !== undefined ? { runs: { idleMs: settings.idleMs } } : {}),
    ...(settings.budget ? { budget: settings.budget } : {}),
    ...(settings.hosts ? { hosts: settings.hosts } : {}),
    ...(capture ? { capture } : {}),
  }
  let first: string | undefined
  if (settings.socket !== undefined) {
    await prepareSocket(settings.socket)
    first = await sidecar.listenHttp('', 0, { ...door, socket: settings.socket })
    io.stderr.write(`hookd: http on ${first}\n`)
  }
  if (settings.port < 0) return first as string
  const url = await sidecar.listenHttp(settings.host, settings.port, door)
  // Recorded for `hookd setup`, in hookd's own state folder only (never beside a token in a folder hookd did not make).
  if (folder) await folder.write(HTTP_URL_FILE, `${url}\n`)
  io.stderr.write(`hookd: http on ${url}\n`)
  return first ?? url
}

function isLoopback(host: string): boolean {
  if (host === 'localhost') return true
  if (isIP(host) === 4) return host.startsWith('127.')
  return host === '::1'
}
