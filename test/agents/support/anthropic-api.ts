/**
 * A stand-in for the Anthropic Messages API on 127.0.0.1:0, for driving a real agent CLI (Claude Code,
 * the Claude Agent SDK) offline. Written from the public wire format:
 *
 * - `POST /v1/messages` (any query string, e.g. `?beta=true`): with `"stream": true` the answer is a
 *   server-sent-event stream (message_start, ping, content_block_start / content_block_delta /
 *   content_block_stop per block with text_delta, input_json_delta or thinking_delta, message_delta,
 *   message_stop); without it, one JSON message.
 * - `POST /v1/messages/count_tokens`: `{ input_tokens }`, a rough count of the body's characters / 4.
 * - Any other path: recorded and answered 404 with the API's error body, unless `routes` answers it.
 *
 * Every request is recorded (method, path, headers, parsed body, arrival time). A test scripts the
 * conversation with a function `(request, index) => reply` called for each main-loop Messages call
 * (index 0, 1, 2, ...): it can read the tool_result blocks of the previous turn (`toolResults`) and
 * decide the next reply. Claude Code also sends side requests through the same endpoint; which ones
 * a request is (`classify`) decides whether the script or `side` answers it, so the script sees only
 * the turns of the conversation and runs stay deterministic. See SIDE_REQUESTS below for the ones
 * Claude Code 2.1.328 was seen to make.
 */
import { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

/** A content block of a request message, as sent. */
export type ContentBlock = { type: string; [key: string]: unknown }

export interface MessagesRequest {
  model: string
  max_tokens: number
  stream?: boolean
  system?: string | ContentBlock[]
  /** Claude Code 2.1.328 also sends `role: 'system'` messages (environment notes, reminders). */
  messages: Array<{ role: string; content: string | ContentBlock[] }>
  tools?: Array<{ name: string; description?: string; input_schema?: Record<string, unknown>; [key: string]: unknown }>
  [key: string]: unknown
}

export interface ToolUse {
  /** Default: `toolu_stand_in_<turn>_<n>`. */
  id?: string
  name: string
  input: Record<string, unknown>
}

export type Reply =
  | {
      text?: string
      /** A thinking block streamed before the text. */
      thinking?: string
      tools?: ToolUse[]
      /** Default: `tool_use` when there are tools, else `end_turn`. */
      stopReason?: string
      usage?: { input_tokens?: number; output_tokens?: number }
    }
  /** An API error: `status` with `{ type: 'error', error: { type, message } }`. */
  | { error: { status: number; type: string; message: string }; headers?: Record<string, string> }

/** Who answers a Messages call. */
export type Kind = 'main' | 'side'

export interface RecordedRequest {
  /** 0-based order of arrival among all requests. */
  seq: number
  method: string
  /** The path without its query string. */
  path: string
  query: string
  headers: IncomingHttpHeaders
  /** The parsed JSON body, or the raw text when it is not JSON (undefined when empty). */
  body: unknown
  /** For `POST /v1/messages`: who answered it; for a main call, its script index. */
  kind?: Kind
  index?: number
  /** ms since the epoch at arrival, and when the answer was complete. */
  at: number
  doneAt?: number
  /** The HTTP status answered. */
  status?: number
}

export type Script = (request: MessagesRequest, index: number) => Reply | Promise<Reply>

export interface AnthropicApiOptions {
  /** Answers the main-loop Messages calls. Default: a text reply "done." to every one. */
  script?: Script
  /** Answers the side Messages calls (see SIDE_REQUESTS). Default: `defaultSideReply`. */
  side?: (request: MessagesRequest, index: number) => Reply | Promise<Reply>
  /** Decides main or side for a Messages call. Default: `classifyRequest`. */
  classify?: (request: MessagesRequest) => Kind
  /** Extra routes, keyed `METHOD /path` (no query string); they answer with a status and a JSON body. */
  routes?: Record<string, (request: RecordedRequest) => { status: number; body: unknown }>
}

export interface AnthropicApi {
  /** The base URL for ANTHROPIC_BASE_URL: `http://127.0.0.1:PORT`. */
  url: string
  /** Every request in order of arrival. */
  requests: RecordedRequest[]
  /** The main-loop Messages calls, in script order. */
  readonly main: MessagesRequest[]
  /** The side Messages calls. */
  readonly side: MessagesRequest[]
  /** Script errors (a throwing script answers 500 and lands here). */
  errors: Error[]
  stop(): Promise<void>
}

/**
 * The side requests Claude Code 2.1.328 was seen to make through the Messages endpoint in `-p` mode
 * (with DISABLE_TELEMETRY=1 and CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1), besides the turns of the
 * conversation:
 *  - `web_search`: the WebSearch tool makes one streaming call on the session's model whose only tool
 *    is the server tool `web_search_*` (no input_schema) and whose user message reads "Perform a web
 *    search for the query: ...". Claude Code builds the tool's result from that answer's blocks.
 *  - `web_fetch`: the WebFetch tool sends one streaming call on the session's model with NO tools and
 *    a user message starting "\nWeb page content:\n---\n" (the page as markdown, then the tool's
 *    prompt); the answer's text becomes the tool's result.
 *  - `compaction`: `/compact` (and auto-compaction) sends the conversation with its usual tool list
 *    and a last user message beginning "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools."
 *    (two such calls were seen for one manual /compact); the text answered becomes the summary.
 * Not seen: title generation, quota probes, count_tokens, haiku calls (runs with the flags above).
 * A subagent (Agent tool) sends its own turns with a client tool list: those are main calls, told
 * apart by their prompt (`promptText`). WebFetch offline needs the setting skipWebFetchPreflight
 * (its domain preflight goes to claude.ai, not to this server) and an https page (it upgrades http).
 */
export const SIDE_REQUESTS = ['web_search', 'web_fetch', 'compaction'] as const

/** The last user message's text starts Claude Code's compaction instruction. */
export function isCompaction(request: MessagesRequest): boolean {
  const last = [...request.messages].reverse().find((m) => m.role === 'user')
  const text = last ? blockText(last.content) : ''
  return text.includes('CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.')
}

/**
 * The default main/side split: a conversation turn (the session's or a subagent's) offers client
 * tools, which carry an input_schema, and is not a compaction; a side call offers none, or only
 * server tools such as `web_search_20250305`, or asks for a compaction summary.
 */
export function classifyRequest(request: MessagesRequest): Kind {
  const clientTools = Array.isArray(request.tools) && request.tools.some((tool) => tool.input_schema !== undefined)
  return clientTools && !isCompaction(request) ? 'main' : 'side'
}

export function defaultSideReply(): Reply {
  return { text: 'stand-in' }
}

/** The tool_result blocks of the request's last user message. */
export function toolResults(request: MessagesRequest): Array<{ tool_use_id: string; is_error: boolean; text: string }> {
  const last = [...request.messages].reverse().find((m) => m.role === 'user')
  if (!last || typeof last.content === 'string') return []
  return last.content
    .filter((block) => block.type === 'tool_result')
    .map((block) => ({ tool_use_id: String(block.tool_use_id), is_error: block.is_error === true, text: blockText(block.content) }))
}

/** All text of a content value (a string, or blocks whose text fields are joined by newlines). */
export function blockText(content: unknown): string {
  if (typeof content === 'string') return content
  if (Array.isArray(content)) {
    return content
      .map((block: unknown) => {
        if (block && typeof block === 'object' && 'text' in block && typeof block.text === 'string') return block.text
        if (block && typeof block === 'object' && 'content' in block) return blockText(block.content)
        return ''
      })
      .filter(Boolean)
      .join('\n')
  }
  return ''
}

/** Everything the request carries as text: system prompt and every message, for `includes` checks. */
export function requestText(request: MessagesRequest): string {
  const parts = [blockText(request.system)]
  for (const message of request.messages) parts.push(blockText(message.content))
  return parts.join('\n')
}

/** The text of the first user message (the prompt, with whatever Claude Code put around it). */
export function promptText(request: MessagesRequest): string {
  const first = request.messages.find((m) => m.role === 'user')
  return first ? blockText(first.content) : ''
}

/** A Bash tool call. */
export function bash(command: string, description = 'Run a command'): Reply {
  return { tools: [{ name: 'Bash', input: { command, description } }] }
}

export function finish(text: string): Reply {
  return { text }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
    req.on('error', reject)
  })
}

function parse(raw: string): unknown {
  if (raw === '') return undefined
  try {
    return JSON.parse(raw) as unknown
  } catch {
    return raw
  }
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers })
  res.end(JSON.stringify(body))
}

/** Splits a string in pieces of at most `size`, so every block arrives as more than one delta. */
function pieces(text: string, size = 40): string[] {
  const out: string[] = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out.length ? out : ['']
}

function estimateTokens(body: unknown): number {
  return Math.max(1, Math.ceil(JSON.stringify(body ?? '').length / 4))
}

type Block = { type: 'text'; text: string } | { type: 'thinking'; thinking: string; signature: string } | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }

function blocksOf(reply: Exclude<Reply, { error: unknown }>, turn: string): Block[] {
  const blocks: Block[] = []
  if (reply.thinking !== undefined) blocks.push({ type: 'thinking', thinking: reply.thinking, signature: 'stand-in-signature' })
  if (reply.text !== undefined) blocks.push({ type: 'text', text: reply.text })
  ;(reply.tools ?? []).forEach((tool, n) => blocks.push({ type: 'tool_use', id: tool.id ?? `toolu_stand_in_${turn}_${n}`, name: tool.name, input: tool.input }))
  return blocks
}

function streamMessage(res: ServerResponse, id: string, model: string, blocks: Block[], stopReason: string, usage: { input_tokens: number; output_tokens: number }): void {
  const event = (type: string, data: Record<string, unknown>): void => {
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'request-id': `req_${id}` })
  event('message_start', {
    message: {
      id: `msg_${id}`,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: usage.input_tokens, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    },
  })
  event('ping', {})
  blocks.forEach((block, index) => {
    if (block.type === 'text') {
      event('content_block_start', { index, content_block: { type: 'text', text: '' } })
      for (const part of pieces(block.text)) event('content_block_delta', { index, delta: { type: 'text_delta', text: part } })
    } else if (block.type === 'thinking') {
      event('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } })
      for (const part of pieces(block.thinking)) event('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: part } })
      event('content_block_delta', { index, delta: { type: 'signature_delta', signature: block.signature } })
    } else {
      event('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } })
      for (const part of pieces(JSON.stringify(block.input))) event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: part } })
    }
    event('content_block_stop', { index })
  })
  event('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } })
  event('message_stop', {})
  res.end()
}

export async function startAnthropicApi(options: AnthropicApiOptions = {}): Promise<AnthropicApi> {
  const script: Script = options.script ?? (() => ({ text: 'done.' }))
  const sideScript = options.side ?? defaultSideReply
  const classify = options.classify ?? classifyRequest
  const requests: RecordedRequest[] = []
  const main: MessagesRequest[] = []
  const side: MessagesRequest[] = []
  const errors: Error[] = []
  let seq = 0

  async function messages(record: RecordedRequest, res: ServerResponse): Promise<void> {
    const body = record.body as MessagesRequest
    if (!body || typeof body !== 'object' || !Array.isArray(body.messages)) {
      record.status = 400
      sendJson(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'messages: field required' } })
      return
    }
    const kind = classify(body)
    const list = kind === 'main' ? main : side
    const index = list.length
    list.push(body)
    record.kind = kind
    record.index = index
    let reply: Reply
    try {
      reply = await (kind === 'main' ? script : sideScript)(body, index)
    } catch (error) {
      errors.push(error instanceof Error ? error : new Error(String(error)))
      reply = { error: { status: 500, type: 'api_error', message: `stand-in script failed: ${String(error)}` } }
    }
    const id = `${kind}_${index}`
    if ('error' in reply) {
      record.status = reply.error.status
      sendJson(res, reply.error.status, { type: 'error', error: { type: reply.error.type, message: reply.error.message } }, { 'request-id': `req_${id}`, ...reply.headers })
      return
    }
    const blocks = blocksOf(reply, id)
    const stopReason = reply.stopReason ?? (blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn')
    const usage = { input_tokens: reply.usage?.input_tokens ?? estimateTokens(body), output_tokens: reply.usage?.output_tokens ?? 10 }
    record.status = 200
    if (body.stream) {
      streamMessage(res, id, body.model, blocks, stopReason, usage)
    } else {
      sendJson(
        res,
        200,
        {
          id: `msg_${id}`,
          type: 'message',
          role: 'assistant',
          model: body.model,
          content: blocks,
          stop_reason: stopReason,
          stop_sequence: null,
          usage: { ...usage, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
        },
        { 'request-id': `req_${id}` },
      )
    }
  }

  const server = createServer((req, res) => {
    void (async () => {
      const raw = await readBody(req)
      const [path = '/', query = ''] = (req.url ?? '/').split('?', 2)
      const record: RecordedRequest = { seq: seq++, method: req.method ?? 'GET', path, query, headers: req.headers, body: parse(raw), at: Date.now() }
      requests.push(record)
      res.on('finish', () => {
        record.doneAt = Date.now()
      })
      const route = options.routes?.[`${record.method} ${path}`]
      if (route) {
        const { status, body } = route(record)
        record.status = status
        sendJson(res, status, body)
      } else if (record.method === 'POST' && path === '/v1/messages') {
        await messages(record, res)
      } else if (record.method === 'POST' && path === '/v1/messages/count_tokens') {
        record.status = 200
        sendJson(res, 200, { input_tokens: estimateTokens(record.body) })
      } else {
        record.status = 404
        sendJson(res, 404, { type: 'error', error: { type: 'not_found_error', message: `stand-in has no route ${record.method} ${path}` } })
      }
    })().catch((error: unknown) => {
      errors.push(error instanceof Error ? error : new Error(String(error)))
      if (!res.headersSent) sendJson(res, 500, { type: 'error', error: { type: 'api_error', message: String(error) } })
      else res.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    main,
    side,
    errors,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
