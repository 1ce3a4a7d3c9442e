/**
 * The agent-event case (docs/writing-hooks.md, "Agent-event cases"): one event of an agent people use,
 * as it arrived at the front door, and the answer the agent got. `hookd test` replays it through the
 * agent's own dialect (run-agent-case.ts), so a captured Claude Code PreToolUse replays to the answer
 * Claude Code would get:
 *
 *   { "agent": "claude-code",
 *     "route": "guard",
 *     "event": { "hook_event_name": "PreToolUse", "session_id": "s1", "cwd": "/home/me/project", ... },
 *     "ctx": { "workdir": "/home/me/project", "files": { "notes.txt": "..." } },
 *     "expect": { "answer": { "hookSpecificOutput": { "permissionDecision": "deny", ... } } } }
 *
 * `route` is the part of the front door's URL after the agent (`guard,audit`, `profile/strict`: the
 * profile is read from the hooks folder under test); `eventName` the route's `?event=` (Copilot).
 * `ctx.workdir` is the folder the agent ran in: on replay, every path under it in the event names the
 * case's temporary workdir instead (holding `ctx.files`), and the answer names it again. `expect.answer`
 * null means the agent got no answer (204, the shim prints nothing).
 *
 * `capturedEventCase` writes one from what the front door saw (front-door-capture.ts), with env values
 * and credentials redacted; `parseAgentCase` reads one.
 */
import { isAbsolute } from 'node:path'
import * as z from 'zod'
import { AGENT_IDS } from '../agents/registry.js'
import { type RoutePath, parseRoutePath } from '../agents/route-path.js'
import { parseJson } from '../protocol/bounded-json.js'
import type { Diagnostic } from '../protocol/diagnostic.js'
import { issueText } from '../protocol/issue-text.js'
import { confinedPath } from '../sidecar/session/policy.js'
import { CASE_FILE_MAX_BYTES, type CaseExpect, type HttpResponse, expectedDiagnostic, httpKey, httpResponse } from './case-file.js'
import { type CapturedCapability, type KeptOut, redactedNote } from './capture.js'
import { credentialRedactor } from './credential-redactor.js'
import { envRedactor } from './env-redactor.js'

const agentCaseSchema = z.strictObject({
  $schema: z.string().optional(),
  name: z.string().min(1).optional(),
  description: z.string().optional(),
  agent: z.enum(AGENT_IDS as [string, ...string[]]),
  /** Default: the hook whose tests/ folder holds the case. */
  route: z.string().min(1).max(4096).optional(),
  eventName: z.string().min(1).max(256).optional(),
  event: z.unknown(),
  ctx: z
    .strictObject({
      workdir: z.string().optional(),
      files: z.record(z.string(), z.string()).default({}),
      http: z.record(z.string(), httpResponse).default({}),
      env: z.record(z.string(), z.string()).default({}),
    })
    .prefault({}),
  expect: z
    .strictObject({
      /** The agent's answer; null: none. Omitted: not checked. */
      answer: z.unknown().optional(),
      match: z.enum(['exact', 'partial']).default('exact'),
      diagnostics: z.array(expectedDiagnostic).default([]),
    })
    .prefault({}),
})

export interface AgentCase {
  kind: 'agent'
  file: string
  name: string
  owner: string
  agent: string
  route: RoutePath
  eventName?: string
  event: unknown
  ctx: { workdir?: string; files: Record<string, string>; http: Record<string, HttpResponse>; env: Record<string, string> }
  expect: { answer?: unknown; match: CaseExpect['match']; diagnostics: CaseExpect['diagnostics'] }
  /** The route's hooks (a profile's, read from the hooks folder when the case is loaded). */
  hooks: string[]
}

/** True when the case file's JSON is an agent-event case (it names an agent), before it is validated. */
export function isAgentCaseJson(value: unknown): boolean {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && 'agent' in value
}

export type ParsedAgentCase = { ok: true; testCase: Omit<AgentCase, 'hooks'> & { hooks?: string[] } } | { ok: false; message: string }

/**
 * Parses and validates one agent-event case; a problem names the file and the field. The hooks of a
 * profile route are left to the loader (they are in the hooks folder).
 */
export function parseAgentCase(text: string, file: string, owner: string): ParsedAgentCase {
  const fail = (why: string): ParsedAgentCase => ({ ok: false, message: `${file}: ${why}` })
  const json = parseJson(text, 'the case', { maxDepth: 64, maxBytes: CASE_FILE_MAX_BYTES })
  if (!json.ok) return fail(json.message)
  const parsed = agentCaseSchema.safeParse(json.value)
  if (!parsed.success) return fail(issueText(parsed.error))
  const data = parsed.data
  const routeText = data.route ?? owner
  let route: RoutePath | undefined
  try {
    route = parseRoutePath(`/${data.agent}/${routeText}`, AGENT_IDS)
  } catch (err) {
    return fail(`route: ${(err as Error).message}`)
  }
  if (!route) return fail(`route: '${routeText}' is not a route of ${data.agent}`)
  if (data.ctx.workdir !== undefined && (!isAbsolute(data.ctx.workdir) || data.ctx.workdir === '/')) {
    return fail(`ctx.workdir: '${data.ctx.workdir}' must be the absolute folder the agent ran in (not /)`)
  }
  for (const path of Object.keys(data.ctx.files)) {
    if (!confinedPath(path).ok || path === '') return fail(`ctx.files: '${path}' must be a path relative to the workdir, and stay inside it (no leading /, no .. that leads out)`)
  }
  for (const name of Object.keys(data.ctx.env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return fail(`ctx.env: '${name}' is not an environment variable name`)
  }
  for (const key of Object.keys(data.ctx.http)) {
    if (httpKey(key) === undefined) return fail(`ctx.http: '${key}' is not "URL" or "METHOD URL" with an absolute http(s) URL`)
  }
  const eventName = data.eventName
  return {
    ok: true,
    testCase: {
      kind: 'agent',
      file,
      name: data.name ?? file.replace(/^.*\//, '').replace(/\.json$/, ''),
      owner,
      agent: data.agent,
      route,
      ...(eventName !== undefined ? { eventName } : {}),
      ...('hooks' in route.source ? { hooks: route.source.hooks } : {}),
      event: data.event,
      ctx: { ...(data.ctx.workdir !== undefined ? { workdir: data.ctx.workdir } : {}), files: data.ctx.files, http: data.ctx.http, env: data.ctx.env },
      expect: data.expect,
    },
  }
}

/** One event as the front door saw it, and what its point calls read. */
export interface CapturedEvent {
  agent: string
  route: string
  eventName?: string
  event: unknown
  /** The event's own name (`PreToolUse`), for the case's name. */
  label: string
  sessionId?: string
  /** The folder the agent ran in (the dialect's cwd). */
  workdir?: string
  /** undefined: the agent got no answer. */
  answer: unknown
  capabilities: readonly CapturedCapability[]
  diagnostics: readonly Diagnostic[]
  /** The runs' env values: replaced by `<env NAME>` wherever they appear. */
  env: Readonly<Record<string, string>>
  at: Date
}

/** The case file's content for a captured event: env values, `keptOut` and credentials redacted. */
export function capturedEventCase(captured: CapturedEvent, keptOut: readonly KeptOut[] = []): Record<string, unknown> {
  const files: Record<string, string> = {}
  const http: Record<string, unknown> = {}
  for (const c of captured.capabilities) {
    const [first, second] = c.args
    if (c.capability === 'file.read' && typeof first === 'string' && typeof c.value === 'string') {
      const path = captured.workdir !== undefined && first.startsWith(`${captured.workdir}/`) ? first.slice(captured.workdir.length + 1) : first
      if (confinedPath(path).ok && path !== '' && !(path in files)) files[path] = c.value
    } else if (c.capability === 'http.fetch' && typeof first === 'string' && c.value !== null && typeof c.value === 'object') {
      const init = second !== null && typeof second === 'object' ? (second as Record<string, unknown>) : {}
      const method = typeof init.method === 'string' ? init.method.toUpperCase() : 'GET'
      const { status, headers, body } = c.value as Record<string, unknown>
      http[`${method} ${first}`] = { status: typeof status === 'number' ? status : 200, headers: headers !== null && typeof headers === 'object' ? headers : {}, body: typeof body === 'string' ? body : '' }
    }
  }
  const ctx: Record<string, unknown> = {}
  if (captured.workdir !== undefined) ctx.workdir = captured.workdir
  if (Object.keys(files).length) ctx.files = files
  if (Object.keys(http).length) ctx.http = http
  const diagnostics = dedupe(captured.diagnostics.filter((d) => d.kind !== 'reload').map((d) => (d.hook ? { kind: d.kind, hook: d.hook } : { kind: d.kind })))
  const env = envRedactor(captured.env)
  const credentials = credentialRedactor(keptOut)
  const clean = <T>(value: T): T => credentials.redact(env.redact(value)) as T
  const parts = clean({ event: captured.event, ctx, expect: { answer: captured.answer ?? null, diagnostics }, session: captured.sessionId ?? '' })
  const notes = [`${captured.agent}'s ${captured.label} event as it reached hookd's front door at ${captured.at.toISOString()}, and the answer it got.`]
  const names = Object.keys(captured.env)
  if (names.length) notes.push(`The route allowed the environment variables ${names.join(', ')}; their values are not recorded: add them to ctx.env.`)
  if (env.replaced.size) notes.push('Where an environment value appeared it is written as <env NAME>.')
  if (credentials.replaced.size) notes.push(redactedNote(credentials.replaced))
  return {
    name: `captured ${captured.agent} ${captured.label}${parts.session ? ` (${parts.session})` : ''}`,
    description: notes.join(' '),
    agent: captured.agent,
    route: captured.route,
    ...(captured.eventName !== undefined ? { eventName: clean(captured.eventName) } : {}),
    event: parts.event,
    ...(Object.keys(parts.ctx).length ? { ctx: parts.ctx } : {}),
    expect: parts.expect,
  }
}

function dedupe<T>(items: T[]): T[] {
  const seen = new Set<string>()
  return items.filter((item) => {
    const key = JSON.stringify(item)
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

/** The event's own name where its JSON says it (`hook_event_name`, as most agents send), for names and file names. */
export function ownName(event: unknown): string | undefined {
  if (event === null || typeof event !== 'object') return undefined
  const name = (event as Record<string, unknown>).hook_event_name
  return typeof name === 'string' && name !== '' && name.length <= 64 ? name : undefined
}
