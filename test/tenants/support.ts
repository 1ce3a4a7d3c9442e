/**
 * Test support for multi-tenant sidecars: a temp folder holding a tenants file and one hooks folder per
 * tenant, a real sidecar on a real socket, and a client per tenant.
 */
import { mkdtemp, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { HookdClient } from '../../src/host/index.js'
import { Sidecar, type SidecarOptions } from '../../src/sidecar/sidecar.js'
import { hashToken, newToken } from '../../src/sidecar/tenancy/tenant-token.js'
import { addFiles } from '../support/sidecar.js'

export interface TenantSpec {
  id: string
  /** Hook files relative to the tenant's hooks folder. */
  hooks?: Record<string, string>
  limits?: Record<string, unknown>
  policy?: Record<string, unknown>
  /** The addresses its remote hooks may name. */
  remoteHooks?: string[]
  /** Its own worker processes (default 1). */
  workers?: number
  /** More fields of its entry, as written ("requireSigned", "trustedKeys", ...). */
  fields?: Record<string, unknown>
  /** Every hook must declare its permissions (hook.json "permissions"). */
  requirePermissions?: boolean
}

export interface TenantFixture {
  dir: string
  file: string
  sidecar: Sidecar
  address: string
  /** Each tenant's token, by id. */
  tokens: Map<string, string>
  /** What the sidecar reported to the operator (reloads, broken edits, revocations). */
  reports: string[]
  /** The tenants file's entries as last written. */
  entries: Array<Record<string, unknown>>
  /** A connected client, with the tenant's token (or the given one). */
  client(idOrToken: string | undefined): Promise<HookdClient>
  /** Rewrites the tenants file (temp file + rename, as editors do). */
  write(entries: Array<Record<string, unknown>>): Promise<void>
  /** An entry for a new tenant, with a fresh token (recorded in `tokens`) and its hooks folder. */
  entry(spec: TenantSpec): Promise<Record<string, unknown>>
  stop(): Promise<void>
}

export async function startTenants(
  specs: TenantSpec[],
  options: Omit<SidecarOptions, 'tenants' | 'hooks'> & { audit?: SidecarOptions['audit']; slots?: number } = {},
): Promise<TenantFixture> {
  const dir = await mkdtemp(join(tmpdir(), 'hookd-tenants-'))
  const file = join(dir, 'tenants.json')
  const tokens = new Map<string, string>()
  const reports: string[] = []
  const clients: HookdClient[] = []
  const entry = async (spec: TenantSpec): Promise<Record<string, unknown>> => {
    const token = newToken()
    tokens.set(spec.id, token)
    await mkdir(join(dir, 'hooks', spec.id), { recursive: true })
    await addFiles(join(dir, 'hooks', spec.id), spec.hooks ?? {})
    const e: Record<string, unknown> = { id: spec.id, tokenHash: hashToken(token), hooks: `hooks/${spec.id}` }
    if (spec.limits) e.limits = spec.limits
    if (spec.policy) e.policy = spec.policy
    if (spec.remoteHooks) e.remoteHooks = spec.remoteHooks
    if (spec.workers !== undefined) e.workers = spec.workers
    Object.assign(e, spec.fields)
    if (spec.requirePermissions !== undefined) e.requirePermissions = spec.requirePermissions
    return e
  }
  const entries = await Promise.all(specs.map(entry))
  await writeFile(file, JSON.stringify({ tenants: entries }, null, 2))
  const { slots, ...rest } = options
  const sidecar = await Sidecar.create({
    ...rest,
    tenants: { file, report: (line) => reports.push(line), watch: { debounceMs: 30, settleMs: 30 }, ...(slots !== undefined ? { slots } : {}) },
  })
  const address = await sidecar.listen(`unix:${join(dir, 'hookd.sock')}`)
  const fixture: TenantFixture = {
    dir,
    file,
    sidecar,
    address,
    tokens,
    reports,
    entries,
    async client(idOrToken) {
      const token = idOrToken === undefined ? undefined : (tokens.get(idOrToken) ?? idOrToken)
      const client = await HookdClient.connect(address, token === undefined ? {} : { token })
      clients.push(client)
      return client
    },
    async write(next) {
      fixture.entries = next
      const temp = `${file}.tmp`
      await writeFile(temp, JSON.stringify({ tenants: next }, null, 2))
      await rename(temp, file)
    },
    entry,
    async stop() {
      for (const c of clients) c.close()
      await sidecar.stop()
      await rm(dir, { recursive: true, force: true })
    },
  }
  return fixture
}

/** Reads the JSON lines of an audit log. */
export async function auditLines(file: string): Promise<Array<Record<string, unknown>>> {
  const text = await readFile(file, 'utf8').catch(() => '')
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>)
}

export const toolCall = { id: 'c1', name: 'shell', arguments: { command: 'ls' } }
