/**
 * The flags of `hookd serve` for the HTTP front door (docs/agents.md): where it listens, its token
 * file, how long an agent session may stay quiet, its byte budgets, and the names agents may reach it
 * by. Kept here so that serve.ts only wires them in.
 */
import { writeFile } from 'node:fs/promises'
import { isIP } from 'node:net'
import { dirname, join, resolve } from 'node:path'
import { parseAddress } from '../protocol/address.js'
import type { Sidecar } from '../sidecar/sidecar.js'
import { DEFAULT_IDLE_MS } from '../agents/agent-runs.js'
import { DEFAULT_BYTE_BUDGET } from '../sidecar/http/byte-budget.js'
import { DEFAULT_HTTP_TOKEN_FILE, loadHttpToken } from '../sidecar/http/http-token.js'
import { UsageError, list, positiveInt } from './args.js'
import type { CliIo } from './io.js'

const MIB = 1024 * 1024

export const HTTP_HELP = `  --http [HOST:]PORT       also serve the HTTP front door for agents (Claude Code's http hooks, see
                           docs/agents.md) on HOST:PORT; a bare PORT means 127.0.0.1:PORT, port 0 picks
                           one. Loopback only unless --insecure. Prints "hookd: http on URL" when ready
  --http-token-file FILE   without --tenants, the token every HTTP request must carry, made (0600) on the
                           first start (default: ${DEFAULT_HTTP_TOKEN_FILE}); with --tenants, tenants' tokens
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
  port: number
  /** Absent with tenants. */
  tokenFile?: string
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
  if (values.tenants === undefined) settings.tokenFile = resolve(cwd, values['http-token-file'] ?? DEFAULT_HTTP_TOKEN_FILE)
  if (idleMs !== undefined) settings.idleMs = idleMs
  if (tenantMb !== undefined || totalMb !== undefined) {
    settings.budget = { ...(tenantMb !== undefined ? { tenantBytes: tenantMb * MIB } : {}), ...(totalMb !== undefined ? { totalBytes: totalMb * MIB } : {}) }
  }
  if (hosts.length > 0) settings.hosts = hosts.map((h) => h.toLowerCase())
  return settings
}

/** Starts the front door on a sidecar that is already listening, and says where on stderr. */
export async function startHttp(sidecar: Sidecar, settings: HttpSettings, io: CliIo): Promise<void> {
  let token: string | undefined
  if (settings.tokenFile !== undefined) {
    const loaded = await loadHttpToken(settings.tokenFile)
    token = loaded.token
    if (loaded.created) io.stderr.write(`hookd: made the HTTP token in ${settings.tokenFile} (mode 0600); 'hookd setup claude-code' puts it in Claude Code's settings\n`)
  }
  const url = await sidecar.listenHttp(settings.host, settings.port, {
    // The front door's lines (errors it answered, runs it ended) go to the command's stderr, and so through its log.
    report: (line) => void io.stderr.write(`hookd: ${line}\n`),
    ...(token !== undefined ? { token } : {}),
    ...(settings.idleMs !== undefined ? { runs: { idleMs: settings.idleMs } } : {}),
    ...(settings.budget ? { budget: settings.budget } : {}),
    ...(settings.hosts ? { hosts: settings.hosts } : {}),
  })
  if (settings.tokenFile !== undefined) await writeFile(join(dirname(settings.tokenFile), HTTP_URL_FILE), `${url}\n`, { mode: 0o600 })
  io.stderr.write(`hookd: http on ${url}\n`)
}

function isLoopback(host: string): boolean {
  if (host === 'localhost') return true
  if (isIP(host) === 4) return host.startsWith('127.')
  return host === '::1'
}
