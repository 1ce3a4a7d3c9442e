/**
 * A stand-in for the OpenAI Responses API on 127.0.0.1:0, as Codex CLI speaks it to a custom model
 * provider with `wire_api = "responses"` and Copilot CLI to a BYOK provider with
 * `COPILOT_PROVIDER_WIRE_API=responses`: `POST {base_url}/responses` with `stream: true`, answered by
 * server-sent events (`response.created`; per output item `response.output_item.added`, its content
 * part and text deltas or its argument deltas, `..._done` events and `response.output_item.done`;
 * then `response.completed` carrying the response id and usage), or by an HTTP error with the API's
 * error body.
 *
 * A script `(request, index) => reply` answers each turn (index counts from 0), and every request is
 * kept so a test can assert what the model was sent: `functionOutputs(body)` lists the tool results
 * (`function_call_output` items) the agent sent back.
 */
import { type IncomingHttpHeaders, type ServerResponse, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface FunctionCall {
  name: string
  /** An object is sent JSON-encoded, as the API sends function arguments: a string is sent as it is. */
  arguments: Record<string, unknown> | string
  callId?: string
  /** The tool namespace the function belongs to (Codex's `multi_agent_v1` for spawn_agent), where it has one. */
  namespace?: string
}

/** A call of a freeform (`type: "custom"`) tool, such as Codex's `apply_patch` for some models: raw text input. */
export interface CustomCall {
  name: string
  input: string
  callId?: string
}

export type OpenAiReply =
  | { text?: string; calls?: Array<FunctionCall | CustomCall> }
  | { status: number; message: string; code?: string; type?: string }

/** The body of `POST /responses`, as far as a test reads it. */
export interface ResponsesRequest {
  model: string
  stream?: boolean
  instructions?: string
  input: Array<Record<string, unknown>>
  tools?: Array<Record<string, unknown>>
  [key: string]: unknown
}

export interface RecordedRequest {
  method: string
  path: string
  headers: IncomingHttpHeaders
  body: ResponsesRequest
}

export type OpenAiScript = (request: ResponsesRequest, index: number) => OpenAiReply

export interface OpenAiApi {
  /** The base URL to give the agent, ending in `/v1`. */
  baseUrl: string
  /** Every `POST /responses` received, in order. */
  requests: RecordedRequest[]
  /** Requests to any other route (answered 404), so a test can see what else the agent asked for. */
  unknown: Array<{ method: string; path: string }>
  stop(): Promise<void>
}

/** The tool results in a request's input: `function_call_output` and `custom_tool_call_output` items. */
export function functionOutputs(body: ResponsesRequest): Array<{ callId: string; output: string }> {
  return body.input
    .filter((item) => item['type'] === 'function_call_output' || item['type'] === 'custom_tool_call_output')
    .map((item) => {
      const output = item['output']
      // The output is a string, or a list of content items with `text`.
      const text =
        typeof output === 'string'
          ? output
          : Array.isArray(output)
            ? output.map((part: Record<string, unknown>) => String(part['text'] ?? '')).join('')
            : JSON.stringify(output)
      return { callId: String(item['call_id']), output: text }
    })
}

/** The user's words in a request's input. */
export function userTexts(body: ResponsesRequest): string[] {
  return body.input
    .filter((item) => item['type'] === 'message' && item['role'] === 'user')
    .flatMap((item) => (Array.isArray(item['content']) ? (item['content'] as Array<Record<string, unknown>>) : []))
    .map((part) => String(part['text'] ?? ''))
}

function send(res: ServerResponse, data: Record<string, unknown>): void {
  res.write(`event: ${String(data['type'])}\ndata: ${JSON.stringify(data)}\n\n`)
}

function stream(res: ServerResponse, n: number, model: string, reply: { text?: string; calls?: Array<FunctionCall | CustomCall> }): void {
  const id = `resp_${n}`
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-request-id': `req_${n}` })
  let seq = 0
  const base = { id, object: 'response', created_at: Math.floor(Date.now() / 1000), model }
  send(res, { type: 'response.created', sequence_number: seq++, response: { ...base, status: 'in_progress', output: [] } })
  const output: Array<Record<string, unknown>> = []
  let index = 0
  if (reply.text !== undefined) {
    const itemId = `msg_${n}_${index}`
    const part = { type: 'output_text', text: reply.text, annotations: [] }
    send(res, {
      type: 'response.output_item.added',
      sequence_number: seq++,
      output_index: index,
      item: { type: 'message', id: itemId, role: 'assistant', status: 'in_progress', content: [] },
    })
    const at = { item_id: itemId, output_index: index, content_index: 0 }
    send(res, { type: 'response.content_part.added', sequence_number: seq++, ...at, part: { ...part, text: '' } })
    // Two deltas, so a client that only joins deltas and one that reads the finished item both work.
    const cut = Math.ceil(reply.text.length / 2)
    for (const delta of [reply.text.slice(0, cut), reply.text.slice(cut)].filter(Boolean)) {
      send(res, { type: 'response.output_text.delta', sequence_number: seq++, ...at, delta })
    }
    send(res, { type: 'response.output_text.done', sequence_number: seq++, ...at, text: reply.text })
    send(res, { type: 'response.content_part.done', sequence_number: seq++, ...at, part })
    const item = { type: 'message', id: itemId, role: 'assistant', status: 'completed', content: [part] }
    send(res, { type: 'response.output_item.done', sequence_number: seq++, output_index: index, item })
    output.push(item)
    index++
  }
  for (const call of reply.calls ?? []) {
    const callId = call.callId ?? `call_${n}_${index}`
    const custom = 'input' in call
    const text = custom ? call.input : typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments)
    const itemId = `${custom ? 'ctc' : 'fc'}_${n}_${index}`
    const shell = custom
      ? { type: 'custom_tool_call', id: itemId, call_id: callId, name: call.name }
      : { type: 'function_call', id: itemId, call_id: callId, name: call.name, ...(call.namespace !== undefined ? { namespace: call.namespace } : {}) }
    const field = custom ? 'input' : 'arguments'
    send(res, { type: 'response.output_item.added', sequence_number: seq++, output_index: index, item: { ...shell, [field]: '', status: 'in_progress' } })
    send(res, {
      type: custom ? 'response.custom_tool_call_input.delta' : 'response.function_call_arguments.delta',
      sequence_number: seq++,
      item_id: itemId,
      output_index: index,
      delta: text,
    })
    send(res, {
      type: custom ? 'response.custom_tool_call_input.done' : 'response.function_call_arguments.done',
      sequence_number: seq++,
      item_id: itemId,
      output_index: index,
      [field]: text,
    })
    const item = { ...shell, [field]: text, status: 'completed' }
    send(res, { type: 'response.output_item.done', sequence_number: seq++, output_index: index, item })
    output.push(item)
    index++
  }
  send(res, {
    type: 'response.completed',
    sequence_number: seq++,
    response: {
      ...base,
      status: 'completed',
      output,
      usage: {
        input_tokens: 100,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 10,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 110,
      },
    },
  })
  res.end()
}

export async function startOpenAiApi(script: OpenAiScript): Promise<OpenAiApi> {
  const requests: RecordedRequest[] = []
  const unknown: OpenAiApi['unknown'] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0] ?? ''
      if (req.method !== 'POST' || !path.endsWith('/responses')) {
        unknown.push({ method: req.method ?? '', path: req.url ?? '' })
        res.writeHead(404, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}`, type: 'invalid_request_error', code: null } }))
        return
      }
      let body: ResponsesRequest
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ResponsesRequest
      } catch (err) {
        res.writeHead(400, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: { message: `bad JSON: ${String(err)}`, type: 'invalid_request_error', code: null } }))
        return
      }
      requests.push({ method: req.method, path, headers: req.headers, body })
      const n = requests.length
      let reply: OpenAiReply
      try {
        reply = script(body, n - 1)
      } catch (err) {
        reply = { status: 500, message: `the stand-in's script threw: ${String(err)}`, type: 'server_error' }
      }
      if ('status' in reply) {
        res.writeHead(reply.status, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: { message: reply.message, type: reply.type ?? 'invalid_request_error', code: reply.code ?? null } }))
        return
      }
      stream(res, n, body.model, reply)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    unknown,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
