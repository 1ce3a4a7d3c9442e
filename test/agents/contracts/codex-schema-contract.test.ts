/**
 * Codex CLI 0.169.0's hook contract as its own binary states it: the binary holds a JSON schema for
 * each command hook's input and output (`pre-tool-use.command.input`, `permission-request.command.output`,
 * ...), the ones Codex's hook runner parses with. This reads them from the pinned binary (the
 * platform package beside the npm package's launcher) and checks the dialect against them:
 *
 * - every event Codex has a schema for is one the dialect reads, and none other (PreModelRequest and
 *   PostModelRequest, which have none, are docs/agents.md's "not mapped": no request to judge);
 * - an input built from each schema's required fields alone is read, to the point docs/agents.md says;
 * - every answer the dialect gives holds only what the event's output schema takes (Codex ignores a
 *   whole answer with one unknown field, which at a gate would let the call through).
 */
import { readdir, readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import * as z from 'zod'
import { beforeAll, describe, expect, it } from 'vitest'
import { CODEX_DIALECT } from '../../../src/agents/codex/codex-dialect.js'
import type { DialectAnswer, HookEvent } from '../../../src/agents/hook-event.js'
import { agentCli } from '../support/cli.js'

/** A property's schema: an object, or `true` (any value: Codex's tool_input and tool_response). */
type Property = Record<string, unknown> | true
type Schema = Record<string, unknown> & { title: string; properties: Record<string, Property>; required?: string[] }

/** The binary of the pinned platform package: node_modules/@openai/codex-PLATFORM/vendor/TRIPLE/bin/codex. */
async function codexBinary(): Promise<string> {
  const scope = join(dirname(dirname(await agentCli('codex'))), '..')
  for (const pkg of (await readdir(scope)).filter((n) => n.startsWith('codex-'))) {
    for (const triple of await readdir(join(scope, pkg, 'vendor')).catch(() => [])) return join(scope, pkg, 'vendor', triple, 'bin', 'codex')
  }
  throw new Error(`no Codex platform package under ${scope}`)
}

/** Every `*.command.input`/`*.command.output` JSON schema the binary holds, by title. */
function schemasIn(binary: Buffer): Map<string, Schema> {
  const text = binary.toString('latin1')
  const marker = '{\n  "$schema": "http://json-schema.org/draft-07/schema#"'
  const found = new Map<string, Schema>()
  for (let at = text.indexOf(marker); at >= 0; at = text.indexOf(marker, at + 1)) {
    let depth = 0
    let quoted = false
    let end = at
    for (; end < text.length; end++) {
      const c = text[end]
      if (quoted) {
        if (c === '\\') end++
        else if (c === '"') quoted = false
      } else if (c === '"') quoted = true
      else if (c === '{') depth++
      else if (c === '}' && --depth === 0) break
    }
    const schema = JSON.parse(text.slice(at, end + 1)) as Schema
    if (typeof schema.title === 'string' && /\.command\.(input|output)$/.test(schema.title)) found.set(schema.title, schema)
  }
  return found
}

/** The smallest input a schema takes: its required fields, each with a value of its type. */
function minimalInput(schema: Schema): Record<string, unknown> {
  const input: Record<string, unknown> = {}
  for (const field of schema.required ?? []) {
    const property = schema.properties[field] ?? {}
    const p: Record<string, unknown> = property === true ? {} : property
    if ('const' in p) input[field] = p.const
    else if (Array.isArray(p.enum)) input[field] = p.enum[0]
    else if (p.$ref === '#/definitions/NullableString') input[field] = null
    else if (p.type === 'boolean') input[field] = false
    else if (p.type === 'string') input[field] = field === 'cwd' ? '/home/me/project' : field === 'tool_name' ? 'Bash' : `${field}-1`
    else input[field] = field === 'tool_input' ? { command: 'ls' } : {}
  }
  return input
}

let schemas: Map<string, Schema>
const eventOf = (s: Schema): string => {
  const name = s.properties.hook_event_name
  return name === undefined || name === true ? '' : String(name.const)
}

beforeAll(async () => {
  schemas = schemasIn(await readFile(await codexBinary()))
}, 600_000)

describe("Codex 0.169.0's own hook schemas", () => {
  it('has an input schema for exactly the events the dialect reads', () => {
    const events = [...schemas.values()].filter((s) => s.title.endsWith('.input')).map(eventOf)
    expect(events.sort()).toEqual([...CODEX_DIALECT.events].sort())
  })

  const reaches: Record<string, HookEvent['kind'] | string> = {
    SessionStart: 'start',
    UserPromptSubmit: 'prompt',
    PreToolUse: 'beforeTool',
    PermissionRequest: 'permission:request',
    PostToolUse: 'afterTool',
    SubagentStart: 'subagent:start',
    SubagentStop: 'subagent:stop',
    PreCompact: 'compact:before',
    PostCompact: 'compact:after',
    Stop: 'end',
    Interrupt: 'end',
    SessionEnd: 'end',
  }

  it('reads an input holding only the required fields of each, to its point', () => {
    for (const schema of [...schemas.values()].filter((s) => s.title.endsWith('.input'))) {
      const { event } = CODEX_DIALECT.parse(minimalInput(schema))
      expect(event.kind === 'point' ? event.point : event.kind, schema.title).toBe(reaches[eventOf(schema)])
    }
  })

  /** What the dialect answers, per event, each with only the fields measured to work. */
  const answers = (): Array<[string, DialectAnswer]> => {
    const input = (event: string): unknown => minimalInput([...schemas.values()].find((s) => s.title.endsWith('.input') && eventOf(s) === event) as Schema)
    const parsed = (event: string) => CODEX_DIALECT.parse(input(event)).native
    const say = (event: string, point: Parameters<NonNullable<typeof CODEX_DIALECT.answer>>[1], fields: Record<string, unknown>, changedInput?: Record<string, unknown>) =>
      CODEX_DIALECT.answer?.(parsed(event), point, { fields, ...(changedInput ? { input: changedInput } : {}) }).answer
    const pre = parsed('PreToolUse')
    return [
      ['PreToolUse', CODEX_DIALECT.tool(pre, { kind: 'deny', reason: 'no' })],
      ['PreToolUse', CODEX_DIALECT.tool(pre, { kind: 'rewrite', input: { command: 'ls -a' } })],
      ['PreToolUse', CODEX_DIALECT.tool(pre, { kind: 'ask', reason: 'sure?' })],
      ['PreToolUse', CODEX_DIALECT.refuse(input('PreToolUse'), 'hookd is down')],
      ['PostToolUse', CODEX_DIALECT.result(parsed('PostToolUse'), { kind: 'replace', text: 'new', isError: false })],
      ['UserPromptSubmit', CODEX_DIALECT.promptContext?.(parsed('UserPromptSubmit'), 'Today is Monday.')],
      ['PermissionRequest', say('PermissionRequest', 'permission:request', { decision: 'allow' })],
      ['PermissionRequest', say('PermissionRequest', 'permission:request', { decision: 'deny', reason: 'no' })],
      ['PermissionRequest', say('PermissionRequest', 'permission:request', { decision: 'allow' }, { command: 'ls -a' })],
      ['PermissionRequest', CODEX_DIALECT.refuse(input('PermissionRequest'), 'hookd is down')],
      ['SubagentStart', say('SubagentStart', 'subagent:start', { context: 'stay in src/' })],
      ['SubagentStop', say('SubagentStop', 'subagent:stop', { keepWorking: true, reason: 'run the tests' })],
      ['PreCompact', say('PreCompact', 'compact:before', { block: true, reason: 'not now' })],
    ]
  }

  it('takes every answer the dialect gives there, and would reject one with a field it does not know', () => {
    for (const [event, answer] of answers()) {
      const inputTitle = [...schemas.values()].find((i) => i.title.endsWith('.input') && eventOf(i) === event)?.title
      const output = inputTitle ? schemas.get(inputTitle.replace(/\.input$/, '.output')) : undefined
      expect(output, `${event}'s output schema`).toBeDefined()
      expect(answer, `${event} answers something`).toBeDefined()
      const schema = z.fromJSONSchema(output as z.core.JSONSchema.JSONSchema)
      expect(schema.safeParse(answer).success, `${event}: ${JSON.stringify(answer)}`).toBe(true)
      // The check can fail: the same answer with one field Codex does not know is refused.
      expect(schema.safeParse({ ...(answer as Record<string, unknown>), hookd: 1 }).success).toBe(false)
    }
  })
})
