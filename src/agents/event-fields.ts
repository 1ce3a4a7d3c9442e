/**
 * The fields agents' hook events share, bounded: every body is untrusted (the bounded-JSON parser has
 * already capped its size and depth), and only the fields hookd reads are declared; the rest pass
 * through untouched. `parseEvent` says what is wrong with an event in a message a person can act on;
 * `jsonArguments` reads a tool's arguments sent as a JSON string, within the same limits.
 */
import * as z from 'zod'
import { DEFAULT_JSON_LIMITS, parseJson, stringifyJson } from '../protocol/bounded-json.js'
import { issueText } from '../protocol/issue-text.js'
import { HookdError } from '../protocol/status.js'
import { quoted } from '../protocol/text.js'

export const idField = z.string().min(1, 'is empty').max(256, 'is longer than 256 characters')
export const pathField = z.string().min(1, 'is empty').max(4096, 'is longer than 4096 characters')
export const nameField = z.string().min(1, 'is empty').max(256, 'is longer than 256 characters')
export const shortField = z.string().max(256, 'is longer than 256 characters')
export const objectField = z.record(z.string(), z.unknown())

/** `value` as `schema` reads it; a HookdError (invalid-argument) naming the field and the agent otherwise. */
export function parseEvent<T>(schema: z.ZodType<T>, value: unknown, what: string, agent: string): T {
  const parsed = schema.safeParse(value)
  if (!parsed.success) throw new HookdError('invalid-argument', `${issueText(parsed.error, what)}; is this a ${agent} hook event?`)
  return parsed.data
}

/** The event's name field when the body is an object: enough to tell a gate from the rest. */
export function fieldOf(body: unknown, field: string): unknown {
  return body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>)[field] : undefined
}

/** A tool's result as text: strings as they are, anything else as JSON. */
export function textOf(value: unknown): string {
  if (typeof value === 'string') return value
  if (value === undefined || value === null) return ''
  return stringifyJson(value) ?? ''
}

/** A tool's arguments sent as a JSON string, read as an object, or why they cannot be (NativeToolEvent.unreadable). */
export type JsonArguments = { ok: true; value: Record<string, unknown> } | { ok: false; problem: string }

/**
 * `text`, a tool's arguments as the agent sends them in a JSON string (Copilot's toolArgs, Cursor's
 * MCP tool_input), as an object: within hookd's size and depth limits, and an object, or a problem
 * naming the field (`Copilot CLI's toolArgs`) and the tool. Never a guess at what the text means.
 */
export function jsonArguments(text: string, field: string, tool: string): JsonArguments {
  const what = `${field} for ${quoted(tool)}`
  if (!text.trimStart().startsWith('{')) return { ok: false, problem: `${what} is not a JSON object` }
  const json = parseJson(text, what)
  // JSON text that starts with `{` and parses is an object.
  if (json.ok) return { ok: true, value: json.value as Record<string, unknown> }
  switch (json.problem) {
    case 'too-deep':
      return { ok: false, problem: `${what} is nested too deep (more than ${DEFAULT_JSON_LIMITS.maxDepth} levels of arrays and objects)` }
    case 'too-large':
      return { ok: false, problem: `${what} is over hookd's limit of ${DEFAULT_JSON_LIMITS.maxBytes} bytes` }
    case 'not-json':
      return { ok: false, problem: `${what} is not valid JSON` }
  }
}
