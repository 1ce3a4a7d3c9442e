/**
 * The test-case format (docs/writing-hooks.md, "Test cases"): one JSON file per case, in the hook's
 * `tests/` folder. A case names the point and its payload, the ctx it sets up, and what must come out:
 *
 *   { "name": "refuses rm -rf when the human says no",
 *     "point": "beforeToolExecute",
 *     "payload": { "id": "c1", "name": "shell", "arguments": { "command": "rm -rf /tmp/x" } },
 *     "ctx": { "confirm": [false], "files": { "notes.txt": "..." } },
 *     "expect": { "result": { "allow": false, "reason": "refused by the user" }, "match": "partial" } }
 *
 * Validated with zod; every problem names the file and the field (`tests/x.json: expect.match: ...`).
 * The case file is the author's own, but it is still outside input: parsed with the bounded parser,
 * and its paths are confined to the case's temporary workdir.
 */
import * as z from 'zod'
import { parseJson } from '../protocol/bounded-json.js'
import { HOST_CAPABILITY_NAMES } from '../protocol/capabilities.js'
import { DIAGNOSTIC_KINDS } from '../protocol/diagnostic.js'
import { issueText } from '../protocol/issue-text.js'
import { FILE_ACCESS, SESSION_ON_ERROR } from '../protocol/wire.js'
import { POINT_NAMES, type PointName, getPoint, isPointName } from '../protocol/points/points.js'
import { HOOK_NAME } from '../sidecar/hooks/hook-folder.js'
import { confinedPath } from '../sidecar/session/policy.js'
import { didYouMean } from '../protocol/did-you-mean.js'

/** The largest case file read. */
export const CASE_FILE_MAX_BYTES = 1024 * 1024

const hookName = z.string().regex(HOOK_NAME, 'a hook name is a folder name: letters, digits, ".", "_" and "-"')

/** A canned HTTP response: the body as text, or any JSON value (sent as application/json). */
export const httpResponse = z.strictObject({
  status: z.number().int().min(100).max(599).default(200),
  headers: z.record(z.string(), z.string()).default({}),
  body: z.unknown().optional(),
})

const ctxSchema = z.strictObject({
  /** Replaces the hook's `config` (hook.json) for this case. */
  config: z.unknown().optional(),
  /** Replaces the `config` of other hooks of a chain case, by name. */
  configs: z.record(z.string(), z.unknown()).default({}),
  /** Files in the case's temporary workdir before the call: path -> text. */
  files: z.record(z.string(), z.string()).default({}),
  /** Environment variables the session allows and sends. */
  env: z.record(z.string(), z.string()).default({}),
  /** Default: true when `confirm` gives answers, else false. */
  interactive: z.boolean().optional(),
  autoApprove: z.boolean().default(false),
  /** The answers to ctx.confirm, in the order the hook asks. */
  confirm: z.array(z.boolean()).default([]),
  /** Responses for ctx.http.fetch, by "URL" or "METHOD URL". Their origins are allowed. */
  http: z.record(z.string(), httpResponse).default({}),
  /** The session's policy; `httpOrigins` defaults to the origins of `http`. */
  policy: z
    .strictObject({
      file: z.enum(FILE_ACCESS).optional(),
      httpOrigins: z.array(z.string()).optional(),
      confirm: z.boolean().optional(),
    })
    .prefault({}),
  session: z.strictObject({ id: z.string().optional(), agentId: z.string().optional(), modelId: z.string().optional() }).prefault({}),
  /** What a hook's failure does at a gate (the session's onError). Default: the host library's, `default`. */
  onError: z.enum(SESSION_ON_ERROR).optional(),
})

export const expectedDiagnostic = z.strictObject({
  kind: z.enum(DIAGNOSTIC_KINDS),
  hook: z.string().optional(),
  /** A part of the message. */
  message: z.string().optional(),
  /** The author's file, relative to the hooks folder (e.g. "guard/index.ts"), and its line. */
  file: z.string().optional(),
  line: z.number().int().positive().optional(),
})

const expectedCall = z.strictObject({
  /** The calls that reach a host: every capability its record says the host serves. */
  capability: z.enum(HOST_CAPABILITY_NAMES),
  /** Omitted: any arguments. */
  args: z.array(z.unknown()).optional(),
  hook: z.string().optional(),
})

const expectSchema = z.strictObject({
  /** The chain's result. Omitted: not checked. */
  result: z.unknown().optional(),
  /** `exact` (default): equal. `partial`: every field given must match; others may be there too. */
  match: z.enum(['exact', 'partial']).default('exact'),
  /** The diagnostics, in order, by kind (and hook, part of the message, file, line). Default: none. */
  diagnostics: z.array(expectedDiagnostic).default([]),
  /** The ctx.log lines, in order. Omitted: not checked. */
  logs: z.array(z.string()).optional(),
  /** The capability calls that reached the host, in order. Omitted: not checked. */
  calls: z.array(expectedCall).optional(),
  /** Files in the workdir after the call: path -> text, or null for "must not exist". */
  files: z.record(z.string(), z.string().nullable()).optional(),
})

const caseSchema = z.strictObject({
  $schema: z.string().optional(),
  name: z.string().min(1).optional(),
  description: z.string().optional(),
  /** The hooks to run, in order. Default: the hook whose tests/ folder holds the case. */
  hooks: z.array(hookName).min(1, 'name at least one hook').optional(),
  point: z.string(),
  payload: z.unknown(),
  ctx: ctxSchema.prefault({}),
  expect: expectSchema.prefault({}),
})

type CaseData = z.output<typeof caseSchema>
export type CaseCtx = CaseData['ctx']
export type CaseExpect = CaseData['expect']
export type ExpectedDiagnostic = z.output<typeof expectedDiagnostic>
export type ExpectedCall = z.output<typeof expectedCall>
export type HttpResponse = z.output<typeof httpResponse>

export interface TestCase {
  /** The case file, as shown to the user. */
  file: string
  name: string
  /** The hook whose tests/ folder holds the case. */
  owner: string
  hooks: string[]
  point: PointName
  payload: unknown
  ctx: CaseCtx
  expect: CaseExpect
}

export type ParsedCase = { ok: true; testCase: TestCase } | { ok: false; message: string }

/** Parses and validates one case file; a problem names the file and the field. */
export function parseCase(text: string, file: string, owner: string): ParsedCase {
  const fail = (why: string): ParsedCase => ({ ok: false, message: `${file}: ${why}` })
  const json = parseJson(text, 'the case', { maxDepth: 64, maxBytes: CASE_FILE_MAX_BYTES })
  if (!json.ok) return fail(json.message)
  const parsed = caseSchema.safeParse(json.value)
  if (!parsed.success) return fail(issueText(parsed.error))
  const data = parsed.data
  if (!isPointName(data.point)) {
    const near = didYouMean(data.point, POINT_NAMES)
    // Not all ~140 names: 'hookd invoke --help' shows them by group, docs/points.md lists each one.
    return fail(`point: '${data.point}' is not a hook point; ${near ? `did you mean '${near}'?` : `'hookd invoke --help' shows the points by group, docs/points.md lists every one`}`)
  }
  const spec = getPoint(data.point)
  const payload = spec?.payload.safeParse(data.payload)
  if (payload && !payload.success) return fail(`${issueText(payload.error, 'payload')} (${data.point}: ${spec?.summary ?? ''})`)
  const hooks = data.hooks ?? [owner]
  // Keys are checked here, not by zod, whose record-key errors do not say which key or why.
  for (const [where, files] of [['ctx.files', data.ctx.files], ['expect.files', data.expect.files ?? {}]] as const) {
    for (const path of Object.keys(files)) {
      if (!confinedPath(path).ok || path === '') return fail(`${where}: '${path}' must be a path relative to the workdir, and stay inside it (no leading /, no .. that leads out)`)
    }
  }
  for (const name of Object.keys(data.ctx.env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return fail(`ctx.env: '${name}' is not an environment variable name`)
  }
  for (const name of Object.keys(data.ctx.configs)) {
    if (!hooks.includes(name)) return fail(`ctx.configs.${name}: '${name}' is not one of the case's hooks (${hooks.join(', ')})`)
  }
  for (const key of Object.keys(data.ctx.http)) {
    if (httpKey(key) === undefined) return fail(`ctx.http: '${key}' is not "URL" or "METHOD URL" with an absolute http(s) URL`)
  }
  return {
    ok: true,
    testCase: {
      file,
      name: data.name ?? file.replace(/^.*\//, '').replace(/\.json$/, ''),
      owner,
      hooks,
      point: data.point,
      // Sent as written: the sidecar applies the point's schema (and its defaults) itself.
      payload: data.payload,
      ctx: data.ctx,
      expect: data.expect,
    },
  }
}

/** "GET https://x/y" -> { method: 'GET', url }, "https://x/y" -> { method: undefined, url }. */
export function httpKey(key: string): { method: string | undefined; url: string } | undefined {
  const m = /^(?:([A-Z]+) +)?(\S+)$/.exec(key.trim())
  if (!m) return undefined
  const url = m[2] as string
  try {
    const parsed = new URL(url)
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined
  } catch {
    return undefined
  }
  return { method: m[1], url }
}
