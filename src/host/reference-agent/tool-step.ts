/**
 * One tool call, with its hooks, in this order:
 *
 *   beforeToolExecute (step)    a refusal becomes an error result carrying the reason; no tool runs.
 *                               Rewritten arguments are what everything after sees, the tool included.
 *   tool:gate (event)           block refuses; result answers without running the tool.
 *   tool:unknown                the model named no tool: result answers, suppressError makes it normal.
 *   validation:reject           the input does not fit the tool: the model reads what is wrong.
 *   tool:before, the tool, tool:error (the tool failed: result replaces the error text)
 *   afterToolExecute (step)     its rewrite is what the model reads.
 *   tool:transform (event)      result and isError, once more.
 *   tool:after
 */
import { toolGateDecisions, toolResultDecisions } from './decisions.js'
import type { AgentHookMap, ToolEvent } from './hook-map.js'
import type { ToolResultBlock, ToolUseBlock } from './model.js'
import { type RunContext, interrupted } from './run-context.js'
import type { ToolOutput } from './tools.js'

type Ctx<N extends keyof AgentHookMap> = Parameters<AgentHookMap[N]>[0]

/** What the model reads when a hook put something other than text in a result. */
function asText(value: unknown): string {
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value))
}

export async function runToolCall(run: RunContext, turn: number, call: ToolUseBlock): Promise<ToolResultBlock> {
  run.ui.toolCall({ id: call.id, name: call.name, input: call.input })
  const { output, input } = await execute(run, turn, call)
  run.ui.toolResult({ id: call.id, name: call.name, input }, output)
  return {
    type: 'tool_result',
    tool_use_id: call.id,
    // The API refuses an empty tool_result text.
    content: output.text === '' ? '(empty)' : output.text,
    ...(output.isError ? { is_error: true } : {}),
  }
}

async function execute(run: RunContext, turn: number, call: ToolUseBlock): Promise<{ output: ToolOutput; input: Record<string, unknown> }> {
  const { id, name } = call
  const gate = await run.call('beforeToolExecute', { id, name, arguments: call.input })
  for (const d of toolGateDecisions(name, call.input, gate)) run.ui.decision(d)
  if (!gate.result.allow) {
    const reason = gate.result.reason ?? `refused by hook '${gate.result.refusedBy ?? 'unknown'}'`
    return { output: { text: reason, isError: true }, input: call.input }
  }
  const input = gate.result.arguments
  const event: ToolEvent = { turn, callId: id, name, input }
  const answered = await eventGate(run, event)
  if (answered) return { output: answered, input }

  let output: ToolOutput
  const tool = run.tools.get(name)
  if (!tool) {
    const unknown: Ctx<'tool:unknown'> = { ...event }
    await run.fire('tool:unknown', unknown)
    if (unknown.result !== undefined && unknown.result !== null) return { output: { text: asText(unknown.result), isError: unknown.suppressError !== true }, input }
    return { output: { text: `there is no tool '${name}'; the tools are ${[...run.tools.keys()].join(', ')}`, isError: true }, input }
  }
  const parsed = tool.parse(input)
  if (!parsed.ok) {
    await run.fire('validation:reject', { ...event, error: parsed.message })
    return { output: { text: parsed.message, isError: true }, input }
  }
  await run.fire('tool:before', event)
  try {
    output = await tool.run(parsed.input, { workdir: run.workdir, signal: run.signal })
  } catch (err) {
    if (run.signal.aborted) throw interrupted()
    const failed: Ctx<'tool:error'> = { ...event, error: err instanceof Error ? err.message : String(err) }
    await run.fire('tool:error', failed)
    output = { text: failed.result !== undefined && failed.result !== null ? asText(failed.result) : failed.error, isError: true }
  }

  const after = await run.call('afterToolExecute', { call: { id, name, arguments: input }, result: output })
  for (const d of toolResultDecisions(name, output, after)) run.ui.decision(d)
  output = after.result
  const transform: Ctx<'tool:transform'> = { ...event, result: output.text, isError: output.isError, outputBytes: Buffer.byteLength(output.text) }
  await run.fire('tool:transform', transform)
  output = { text: asText(transform.result), isError: transform.isError === true }
  await run.fire('tool:after', { ...event, result: output.text, isError: output.isError, outputBytes: Buffer.byteLength(output.text) })
  return { output, input }
}

/** tool:gate: a block or a substitute result ends the call here. */
async function eventGate(run: RunContext, event: ToolEvent): Promise<ToolOutput | undefined> {
  const gate: Ctx<'tool:gate'> = { ...event }
  await run.fire('tool:gate', gate)
  if (gate.block === true) return { text: typeof gate.reason === 'string' && gate.reason ? gate.reason : 'blocked by a hook', isError: true }
  if (gate.result !== undefined && gate.result !== null) return { text: asText(gate.result), isError: false }
  return undefined
}
