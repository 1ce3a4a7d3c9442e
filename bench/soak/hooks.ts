/**
 * The soak's hooks, one folder per tenant: what each decides is known from its source, so every
 * answer the soak gets can be checked (expect.ts). Each answer carries what made it: the tenant (the
 * guard's reason, the rewriter's tag), the rewriter's generation (hot reload writes new ones) and the
 * session (the tagger's tag), so a result from another tenant, another session or an old version shows.
 *
 *   guard     refuses a shell command with the word DENY; hook.json "onError": "refuse"
 *   parker    asks ctx.confirm for a command with PARK (the host answers after a pause; no for PARKNO)
 *   rewriter  appends ` #rw:TENANT:gN` to the command, ` #out:TENANT:gN` to the tool's result text
 *   tagger    appends ` #s:SESSION` (ctx.session.id); spins 40 ms of CPU for a command with SPIN
 */
import { mkdir, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { hashToken, newToken } from '../../src/sidecar/tenancy/tenant-token.js'

/** The tenants, their worker processes, and their per-invocation limits. */
export const TENANTS = [
  { id: 'acme', workers: 2 },
  { id: 'beta', workers: 1 },
  { id: 'gamma', workers: 1 },
] as const

export type TenantId = (typeof TENANTS)[number]['id']

/** Wall-time limit per invocation: a worker stopped past it (plus the pool's 5 s hang grace) is killed. */
export const WALL_MS = 2000
/** What the pool waits past the wall-time limit before it kills a hung worker (PoolOptions.hangGraceMs default). */
export const HANG_GRACE_MS = 5000

/** The chains: gRPC sessions ask confirm (parker), the front door's route does not (Claude Code would ask its person). */
export const GRPC_CHAIN = ['guard', 'parker', 'rewriter', 'tagger'] as const
export const HTTP_CHAIN = ['guard', 'rewriter', 'tagger'] as const

export const guardReason = (tenant: string): string => `guard:${tenant}: DENY refused`
export const parkerReason = (tenant: string): string => `parker:${tenant}: declined`
export const rewriteTag = (tenant: string, gen: number): string => ` #rw:${tenant}:g${gen}`
export const outTag = (tenant: string, gen: number): string => ` #out:${tenant}:g${gen}`
export const sessionTag = (session: string): string => ` #s:${session}`

const guardSource = (tenant: string): string => `// soak guard of tenant ${tenant}
module.exports = {
  beforeToolExecute(ctx, call) {
    const command = String(call.arguments.command || '')
    if (/\\bDENY\\b/.test(command)) return { allow: false, reason: ${JSON.stringify(guardReason(tenant))} }
  },
}
`

const parkerSource = (tenant: string): string => `// soak parker of tenant ${tenant}: waits on its host for PARK commands
module.exports = {
  beforeToolExecute(ctx, call) {
    const command = String(call.arguments.command || '')
    if (!/\\bPARK(NO)?\\b/.test(command)) return
    if (!ctx.confirm({ title: 'soak park', body: command })) return { allow: false, reason: ${JSON.stringify(parkerReason(tenant))} }
  },
}
`

const taggerSource = `// soak tagger: the session id in the command, and CPU spent for SPIN commands
module.exports = {
  beforeToolExecute(ctx, call) {
    const command = String(call.arguments.command || '')
    if (/\\bSPIN\\b/.test(command)) { const end = Date.now() + 40; while (Date.now() < end) {} }
    return { arguments: { ...call.arguments, command: command + ' #s:' + ctx.session.id } }
  },
}
`

/** The rewriter's generation `gen`: what hot reload serves after an edit. */
export function rewriterSource(tenant: string, gen: number): string {
  return `// soak rewriter of tenant ${tenant}, generation ${gen}
module.exports = {
  beforeToolExecute(ctx, call) {
    const command = String(call.arguments.command || '')
    return { arguments: { ...call.arguments, command: command + ${JSON.stringify(rewriteTag(tenant, gen))} } }
  },
  afterToolExecute(ctx, call, result) {
    return { text: result.text + ${JSON.stringify(outTag(tenant, gen))} }
  },
}
`
}

/** Ways an edit breaks the rewriter: each must leave the last good generation serving. */
export const BREAKS = ['syntax', 'throws', 'no-points', 'truncated'] as const
export type BreakKind = (typeof BREAKS)[number]

export function brokenRewriter(tenant: string, gen: number, kind: BreakKind): string {
  const good = rewriterSource(tenant, gen)
  switch (kind) {
    case 'syntax':
      return good.replace('return {', 'return {{')
    case 'throws':
      return `${good}throw new Error('soak: generation ${gen} is broken')\n`
    case 'no-points':
      return good.replace('beforeToolExecute(', 'beforeToolExecut(').replace('afterToolExecute(', 'afterToolExecut(')
    case 'truncated':
      return good.slice(0, Math.floor(good.length / 2))
  }
}

export interface SoakTenant {
  id: TenantId
  token: string
  hooks: string
}

/** Writes every tenant's hooks (rewriter generation 1) and the tenants file; returns the tenants and the file. */
export async function writeTenants(dir: string): Promise<{ tenants: SoakTenant[]; file: string }> {
  const tenants: SoakTenant[] = []
  for (const { id } of TENANTS) {
    const hooks = join(dir, 'hooks', id)
    for (const name of ['guard', 'parker', 'rewriter', 'tagger']) await mkdir(join(hooks, name), { recursive: true })
    await writeFile(join(hooks, 'guard', 'index.js'), guardSource(id))
    await writeFile(join(hooks, 'guard', 'hook.json'), '{ "onError": "refuse" }\n')
    await writeFile(join(hooks, 'parker', 'index.js'), parkerSource(id))
    await writeFile(join(hooks, 'rewriter', 'index.js'), rewriterSource(id, 1))
    await writeFile(join(hooks, 'tagger', 'index.js'), taggerSource)
    tenants.push({ id, token: newToken(), hooks })
  }
  const file = join(dir, 'tenants.json')
  const entries = tenants.map((t) => ({
    id: t.id,
    tokenHash: hashToken(t.token),
    hooks: t.hooks,
    workers: TENANTS.find((x) => x.id === t.id)?.workers ?? 1,
    limits: { wallMs: WALL_MS, cpuMs: 500 },
  }))
  await writeFile(file, `${JSON.stringify({ tenants: entries }, null, 2)}\n`)
  return { tenants, file }
}

/** Saves a rewriter's source as editors do: alternately a temp file renamed over it, and a write in place. */
export async function saveRewriter(tenant: SoakTenant, text: string, inPlace: boolean): Promise<void> {
  const file = join(tenant.hooks, 'rewriter', 'index.js')
  if (inPlace) return writeFile(file, text)
  const temp = join(tenant.hooks, 'rewriter', `.index.js.${process.pid}.tmp`)
  await writeFile(temp, text)
  await rename(temp, file)
}
