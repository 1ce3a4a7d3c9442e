/**
 * The conformance suite's case format (test/conformance/cases/*.json, documented in
 * docs/languages.md), and how a runner judges what it saw. This file is the format's reference: a
 * runner in another language (runner.py) implements the same checks.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { z } from 'zod'

export const CASES_DIR = join(import.meta.dirname, 'cases')

const message = z.strictObject({ hook: z.string(), title: z.string(), body: z.string().optional() })

const expectation = z.strictObject({
  /** The chain's final value, compared exactly (key order aside). Not checked when absent. */
  result: z.unknown().optional(),
  /** The point result's diagnostics, in order. Absent means none. */
  diagnostics: z
    .array(z.strictObject({ hook: z.string(), kind: z.string(), point: z.string().optional(), messageContains: z.string().optional() }))
    .default([]),
  /** [hook, outcome] per trace entry, in order. Not checked when absent. */
  trace: z.array(z.tuple([z.string(), z.string()])).optional(),
  /** The ctx.log lines that arrived during the step, in order. Not checked when absent. */
  logs: z.array(z.strictObject({ hook: z.string(), message: z.string() })).optional(),
  /** The ctx.confirm questions that reached the host during the step. Not checked when absent. */
  confirms: z.array(message).optional(),
  /** The ctx.notify calls that reached the host during the step. Not checked when absent. */
  notifications: z.array(message).optional(),
})
export type Expectation = z.infer<typeof expectation>

const step = z.union([
  z.strictObject({ call: z.string(), payload: z.unknown(), expect: expectation }),
  z.strictObject({ close: z.enum(['end_turn', 'interrupted', 'error']), expect: expectation }),
])
export type Step = z.infer<typeof step>

export const caseSchema = z.strictObject({
  /** The file's name without .json. */
  name: z.string(),
  /** The seed rule the case shows, in one sentence. */
  rule: z.string(),
  /** The hooks folder the sidecar serves, relative to test/conformance/. */
  hooks: z.string(),
  open: z.strictObject({
    hooks: z.array(z.string()),
    sessionId: z.string().optional(),
    agentId: z.string().optional(),
    modelId: z.string().optional(),
    interactive: z.boolean().default(false),
    autoApprove: z.boolean().default(false),
  }),
  /** What the scripted human answers, in order. A question past the end of the list fails the case. */
  answers: z.strictObject({ confirm: z.array(z.boolean()).default([]) }).default({ confirm: [] }),
  /** The open must fail: the error code (lower case, dashes) and a part of its message. No steps run. */
  expectOpen: z.strictObject({ error: z.string(), messageContains: z.string() }).optional(),
  /** The distinct {hook, kind} of the diagnostics pushed outside point results during the session. Absent means none. */
  pushed: z.array(z.strictObject({ hook: z.string(), kind: z.string() })).default([]),
  steps: z.array(step).default([]),
})
export type Case = z.infer<typeof caseSchema>

export function loadCases(dir = CASES_DIR): Case[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file) => {
      const parsed = caseSchema.safeParse(JSON.parse(readFileSync(join(dir, file), 'utf8')))
      if (!parsed.success) throw new Error(`${file}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`)
      if (`${parsed.data.name}.json` !== file) throw new Error(`${file}: "name" must be the file's name, ${file.replace(/\.json$/, '')}`)
      return parsed.data
    })
}

/** What a runner saw during one step. */
export interface Seen {
  result: unknown
  diagnostics: Array<{ hook: string; point: string; kind: string; message: string }>
  trace: Array<[string, string]>
  logs: Array<{ hook: string; message: string }>
  confirms: Array<{ hook: string; title: string; body?: string }>
  notifications: Array<{ hook: string; title: string; body?: string }>
}

/** Every way `seen` differs from `expected`, one line each; empty when it conforms. */
export function judge(expected: Expectation, seen: Seen): string[] {
  const problems: string[] = []
  const show = (v: unknown): string => JSON.stringify(v)
  if (expected.result !== undefined && !isDeepStrictEqual(seen.result, expected.result)) {
    problems.push(`result: expected ${show(expected.result)}, got ${show(seen.result)}`)
  }
  const d = expected.diagnostics
  const matches =
    d.length === seen.diagnostics.length &&
    d.every((want, i) => {
      const got = seen.diagnostics[i]
      return (
        got !== undefined &&
        got.hook === want.hook &&
        got.kind === want.kind &&
        (want.point === undefined || got.point === want.point) &&
        (want.messageContains === undefined || got.message.includes(want.messageContains))
      )
    })
  if (!matches) problems.push(`diagnostics: expected ${show(d)}, got ${show(seen.diagnostics)}`)
  for (const key of ['trace', 'logs', 'confirms', 'notifications'] as const) {
    const want = expected[key]
    if (want !== undefined && !isDeepStrictEqual(seen[key], want)) problems.push(`${key}: expected ${show(want)}, got ${show(seen[key])}`)
  }
  return problems
}

/** Pushed diagnostics as the case compares them: distinct "hook:kind", sorted. */
export function pushedKeys(list: ReadonlyArray<{ hook: string; kind: string }>): string[] {
  return [...new Set(list.map((d) => `${d.hook}:${d.kind}`))].sort()
}
