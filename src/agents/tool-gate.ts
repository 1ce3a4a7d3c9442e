/**
 * A tool call through the hooks, whatever the agent: beforeToolExecute on the canonical call, and the
 * hooks' answer as a verdict in the agent's own terms (its native input for a rewrite); and
 * afterToolExecute on the text the model is about to read. Each dialect then says the verdict in its
 * agent's JSON.
 */
import { createHash } from 'node:crypto'
import type { AgentRun, Ask, AskFollowing } from './agent-run.js'
import type { NativeToolEvent, ResultVerdict, ToolVerdict } from './hook-event.js'
import type { ToolRead, ToolTable } from './tool-mapping.js'

/** What the agent's permission prompt shows: each hook's question, title and body. */
export function askReason(asks: readonly Ask[]): string {
  return asks.map((a) => `${a.title}${a.body ? `: ${a.body}` : ''} (asked by hookd hook '${a.hook}')`).join('\n')
}

/**
 * The key an agent's later events name a tool call by: its id where the agent gives one (Claude Code's
 * tool_use_id), else its tool and input (Copilot's events carry no id: the same tool with the same
 * arguments is the same call, the oldest first). Bounded whatever the input: the input is hashed.
 */
export function callKey(tool: string, id: string, input: Record<string, unknown>): string {
  if (id !== '') return `id ${id}`
  return `call ${createHash('sha256').update(tool).update('\0').update(JSON.stringify(input)).digest('hex')}`
}

/** The refusal of a call whose arguments hookd cannot read: no hook could check what it would do. */
export function unreadableReason(why: string): string {
  return `hookd refused this call, which no hook could check: ${why}`
}

/**
 * The call hooks see for an agent's tool event, and why its arguments have no canonical reading when
 * they have none (the dialect could not read them, or the table cannot: tool-mapping.ts).
 */
export function readCall(tools: ToolTable, event: NativeToolEvent, workdir: string): ToolRead {
  if (event.unreadable === undefined) return tools.read(event.id, event.tool, event.input, workdir)
  const native = { agent: tools.agent, name: event.tool, input: event.input }
  return { call: { id: event.id, name: event.tool, arguments: event.input, native }, unreadable: event.unreadable }
}

/**
 * beforeToolExecute for one call. A call whose arguments hookd cannot read is refused without asking
 * the hooks, saying why. A rewrite the agent's tool cannot take (a field of the wrong type) refuses the
 * call, saying which field; canonical fields the tool does not know are reported and dropped.
 */
export async function gateTool(
  run: AgentRun,
  tools: ToolTable,
  title: string,
  event: NativeToolEvent,
  workdir: string,
  report: (line: string) => void,
  following: AskFollowing = 'follow',
  putsAsk: (ask: Extract<ToolVerdict, { kind: 'ask' }>) => boolean = () => true,
): Promise<ToolVerdict> {
  if (!run.serves('beforeToolExecute')) return { kind: 'allow' }
  const { call, unreadable } = readCall(tools, event, workdir)
  if (unreadable !== undefined) {
    const reason = unreadableReason(unreadable)
    report(`${event.tool} call ${call.id}: ${reason}`)
    return { kind: 'deny', reason }
  }
  const answer = await run.call('beforeToolExecute', withSubagent(call, event))
  const decision = answer.result as { allow?: unknown; reason?: unknown; arguments?: unknown; deferred?: unknown }
  if (decision.allow !== true) {
    const reason = typeof decision.reason === 'string' && decision.reason ? decision.reason : decision.deferred === true ? 'deferred by a hook' : 'refused by a hook'
    return decision.deferred === true ? { kind: 'defer', reason } : { kind: 'deny', reason }
  }
  const args = isObject(decision.arguments) ? decision.arguments : call.arguments
  const rewrite = tools.toNative(call, args, workdir)
  // The session recorded an ask as asked; its outcome is what the agent later says of the call it runs.
  const asked = answer.asks.length > 0 && answer.decisionId !== undefined ? answer.decisionId : undefined
  const key = asked !== undefined ? callKey(event.tool, event.id, rewrite?.ok ? rewrite.input : event.input) : ''
  if (asked !== undefined) run.awaitOutcome?.(key, asked)
  if (rewrite && !rewrite.ok) {
    if (asked !== undefined) run.outcome?.(key, 'denied', 'rewrite refused', 'hookd')
    return { kind: 'deny', reason: `hookd refused this call: ${rewrite.message}, so ${title}'s ${event.tool} cannot take them; fix the hook that rewrites ${call.name}` }
  }
  const ask: Extract<ToolVerdict, { kind: 'ask' }> | undefined = answer.asks.length ? { kind: 'ask', reason: askReason(answer.asks), ...(rewrite ? { input: rewrite.input } : {}) } : undefined
  if (asked !== undefined && ask) {
    // An ask the agent's answer cannot carry is a refusal the dialect writes: the call does not run.
    if (!putsAsk(ask)) run.outcome?.(key, 'denied', 'cannot ask', 'hookd')
    else if (following === 'not followed') run.outcome?.(key, 'unknown', 'not followed', 'hookd')
  }
  if (rewrite?.ignored.length) {
    const fields = rewrite.ignored.map((f) => `'${f}'`).join(', ')
    report(`${event.tool} call ${call.id}: the hooks' ${fields} ${rewrite.ignored.length > 1 ? 'are' : 'is'} not part of ${call.name}'s arguments; ignored`)
  }
  if (ask) return ask
  if (rewrite) return { kind: 'rewrite', input: rewrite.input }
  return { kind: 'allow' }
}

/** afterToolExecute on the text the model is about to read. */
export async function filterResult(
  run: AgentRun,
  tools: ToolTable,
  event: NativeToolEvent,
  workdir: string,
  text: string,
  isError: boolean,
): Promise<ResultVerdict> {
  if (!run.serves('afterToolExecute')) return { kind: 'keep' }
  // A call hookd could not read is shown under its own name, with nothing hookd could not read.
  const { call } = readCall(tools, event, workdir)
  const answer = await run.call('afterToolExecute', { call: withSubagent(call, event), result: { text, isError } })
  const result = answer.result as { text?: unknown; isError?: unknown }
  const newText = typeof result.text === 'string' ? result.text : text
  const newError = result.isError === true
  if (newText === text && newError === isError) return { kind: 'keep' }
  return { kind: 'replace', text: newText, isError: newError }
}

/** The canonical call with the subagent that makes it, where the agent names one: the same hooks see every call. */
export function withSubagent<C extends object>(call: C, event: NativeToolEvent): C & { subagent?: NativeToolEvent['subagent'] } {
  return event.subagent ? { ...call, subagent: event.subagent } : call
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}
