/**
 * Claude Code's hook events as the pinned binary declares them (its own schemas, kept as strings in
 * the installed package's claude.exe): every event is either mapped by hookd's dialect (src/agents/claude-code/events.ts
 * MAPPED_EVENTS) or listed as not mappable with its reason (UNMAPPED_EVENTS), and the fields the dialect
 * reads and writes for the events it maps are the binary's: the subagent's `agent_id`/`agent_type` on
 * every event, PermissionRequest's `decision.behavior` with `updatedInput` and `message`, PreToolUse's
 * `defer`, SubagentStart's `additionalContext`, and `async` on command hooks only.
 */
import { open } from 'node:fs/promises'
import { beforeAll, describe, expect, it } from 'vitest'
import { MAPPED_EVENTS, UNMAPPED_EVENTS } from '../../../src/agents/claude-code/events.js'
import { agentCli } from '../support/cli.js'

/** The binary's text, searched in chunks (it is ~370 MB): every occurrence's surroundings of each needle. */
async function strings(file: string, needles: readonly string[], around = 2000): Promise<Map<string, string[]>> {
  const found = new Map<string, string[]>(needles.map((n) => [n, []]))
  const handle = await open(file, 'r')
  try {
    const size = 16 * 1024 * 1024
    const buffer = Buffer.alloc(size + around * 2)
    let position = 0
    let carried = 0
    for (;;) {
      const { bytesRead } = await handle.read(buffer, carried, size, position)
      if (bytesRead === 0) break
      const end = carried + bytesRead
      const text = buffer.toString('latin1', 0, end)
      for (const needle of needles) {
        for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + 1)) {
          // Counted once: an occurrence in the carried tail was seen in the chunk before.
          if (i + needle.length <= carried) continue
          ;(found.get(needle) as string[]).push(text.slice(i, i + around))
        }
      }
      position += bytesRead
      carried = Math.min(around * 2, end)
      buffer.copy(buffer, 0, end - carried, end)
    }
  } finally {
    await handle.close()
  }
  return found
}

const EVENT_LIST = '["PreToolUse","PostToolUse","PostToolUseFailure","PostToolBatch","Notification",'
const PERMISSION_OUTPUT = 'hookEventName:E("PermissionRequest"),decision:'
const PRE_TOOL_DECISIONS = 'U(["allow","deny","ask","defer"])'
const SUBAGENT_FIELD = 'agent_id:n().optional().describe("Subagent identifier.'
const SUBAGENT_START_OUTPUT = 'hookEventName:E("SubagentStart"),additionalContext:'
const HTTP_HOOK = 'type:E("http").describe("HTTP hook type")'

let found: Map<string, string[]>

beforeAll(async () => {
  const claude = await agentCli('claude')
  found = await strings(claude, [EVENT_LIST, PERMISSION_OUTPUT, PRE_TOOL_DECISIONS, SUBAGENT_FIELD, SUBAGENT_START_OUTPUT, HTTP_HOOK])
}, 600_000)

const first = (needle: string): string => {
  const hits = found.get(needle) ?? []
  expect(hits.length, `the binary holds ${needle}`).toBeGreaterThan(0)
  return hits[0] as string
}

describe("Claude Code 2.1.328's hook events, from its binary", () => {
  it('every event is mapped or listed as not mappable, with a reason; no event is both', () => {
    const list = first(EVENT_LIST)
    const events = JSON.parse(list.slice(0, list.indexOf(']') + 1)) as string[]
    expect(events.length).toBe(33)
    const mapped = new Set<string>(MAPPED_EVENTS)
    const unmapped = Object.keys(UNMAPPED_EVENTS)
    expect([...mapped, ...unmapped].sort()).toEqual([...events].sort())
    for (const e of unmapped) expect(mapped.has(e), e).toBe(false)
    for (const reason of Object.values(UNMAPPED_EVENTS)) expect(reason.length).toBeGreaterThan(20)
  })

  it("PermissionRequest's answer is decision.behavior allow (with updatedInput) or deny (with message): no ask, no defer", () => {
    const schema = first(PERMISSION_OUTPUT)
    expect(schema).toMatch(/^hookEventName:E\("PermissionRequest"\),decision:Ge\(\[c\(\{behavior:E\("allow"\),updatedInput:[^}]*\}\),c\(\{behavior:E\("deny"\),message:/)
  })

  it("PreToolUse's permissionDecision takes defer", () => {
    expect(found.get(PRE_TOOL_DECISIONS)?.length).toBeGreaterThan(0)
  })

  it('every event carries agent_id inside a subagent (and agent_type beside it); SubagentStart answers additionalContext', () => {
    expect(first(SUBAGENT_FIELD)).toContain('agent_type:n().optional()')
    expect(found.get(SUBAGENT_START_OUTPUT)?.length).toBeGreaterThan(0)
  })

  it('http hooks take `if` and no `async` (only command hooks run in the background)', () => {
    const http = first(HTTP_HOOK)
    const fields = http.slice(0, http.indexOf('})'))
    expect(fields).toContain('if:')
    expect(fields).not.toContain('async:')
  })
})
