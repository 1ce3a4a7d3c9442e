/**
 * The canonical tools' names (src/agents/vocabulary.ts holds their arguments), for what must name them
 * without importing the agents: hook.json's "tools" (src/sidecar/hooks/hook-files.ts), which says the
 * tool calls a hook is called for. test/unit/agents/tool-names.test.ts holds the two lists equal.
 */
export const TOOL_NAMES = ['shell', 'read_file', 'write_file', 'edit_file', 'web_fetch', 'web_search', 'find_files', 'search_files', 'list_files'] as const

export type ToolName = (typeof TOOL_NAMES)[number]

export function isToolName(name: string): name is ToolName {
  return (TOOL_NAMES as readonly string[]).includes(name)
}

/**
 * The name of the tool call a point's payload is about (as parsed by the point's schema): afterToolExecute's `call.name`, the `name` of
 * beforeToolExecute (whose payload is the call), of permission:request and of the tool event points
 * (tool:gate, mcp:tool:gate, child:tool:gate, ...). Undefined at a point that is about no one call;
 * '' when the payload names none (the point's own schema refuses it later).
 */
export function callNameAt(point: string, payload: unknown): string | undefined {
  const about = point === 'afterToolExecute' || point === 'beforeToolExecute' || point === 'permission:request' || /^(child:|mcp:)?tool:/.test(point)
  if (!about) return undefined
  const p = payload !== null && typeof payload === 'object' ? (payload as Record<string, unknown>) : {}
  // As the session hands it over, parsed by the point's schema: an event point's is {initial, current}.
  const step = point === 'afterToolExecute' || point === 'beforeToolExecute'
  const event = !step && p.initial !== null && typeof p.initial === 'object' ? (p.initial as Record<string, unknown>) : p
  const holder = point === 'afterToolExecute' ? p.call : event
  const name = holder !== null && typeof holder === 'object' ? (holder as Record<string, unknown>).name : undefined
  return typeof name === 'string' ? name : ''
}
