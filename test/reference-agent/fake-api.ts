/**
 * A stand-in for the Anthropic Messages API on 127.0.0.1:0, speaking its wire format: POST /v1/messages
 * with `stream: true` answered by server-sent events (message_start, content_block_start /
 * content_block_delta / content_block_stop for text and tool_use blocks, text_delta and
 * input_json_delta, message_delta, message_stop), or an error status with the API's error body.
 * It answers the requests in order from a list of replies and keeps every request it received.
 */
import { type IncomingHttpHeaders, type ServerResponse, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

export type Reply =
  | { text?: string; tools?: Array<{ id: string; name: string; input: Record<string, unknown> }>; stopReason?: string }
  | { status: number; type: string; message: string; headers?: Record<string, string> }
  /** Streams the start of an answer, then never finishes it. */
  | { hang: string }

/** The request body, as the agent sent it. */
export interface SentRequest {
  model: string
  max_tokens: number
  stream: boolean
  system?: string
  messages: Array<{ role: string; content: string | Array<Record<string, unknown>> }>
  tools?: Array<{ name: string; description: string; input_schema: Record<string, unknown> }>
}

export interface FakeApi {
  url: string
  requests: Array<{ headers: IncomingHttpHeaders; body: SentRequest }>
  /** Resolves when a `hang` reply has started streaming. */
  hanging: Promise<void>
  stop(): Promise<void>
}

function event(res: ServerResponse, type: string, data: Record<string, unknown>): void {
  res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)
}

/** Splits a string in two, so every block arrives as more than one delta. */
function halves(text: string): string[] {
  const cut = Math.ceil(text.length / 2)
  return [text.slice(0, cut), text.slice(cut)].filter(Boolean)
}

function start(res: ServerResponse, n: number, model: string): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': `req_${n}` })
  event(res, 'message_start', {
    message: {
      id: `msg_${n}`,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 25, output_tokens: 1, cache_creation_input_tokens: null, cache_read_input_tokens: null },
    },
  })
  res.write('event: ping\ndata: {"type": "ping"}\n\n')
}

export async function startFakeApi(replies: Reply[]): Promise<FakeApi> {
  const requests: FakeApi['requests'] = []
  let markHanging: () => void = () => {}
  const hanging = new Promise<void>((resolve) => {
    markHanging = resolve
  })
  const server = createServer((req, res) => {
    let raw = ''
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')))
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/messages') {
        res.writeHead(404, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: `no route ${req.method} ${req.url}` } }))
        return
      }
      const body = JSON.parse(raw) as SentRequest
      requests.push({ headers: req.headers, body })
      const n = requests.length
      const reply = replies[n - 1] ?? { status: 500, type: 'api_error', message: `the fake API has no reply for request ${n}` }
      if ('status' in reply) {
        res.writeHead(reply.status, { 'content-type': 'application/json', 'request-id': `req_${n}`, ...reply.headers })
        res.end(JSON.stringify({ type: 'error', error: { type: reply.type, message: reply.message } }))
        return
      }
      start(res, n, body.model)
      if ('hang' in reply) {
        event(res, 'content_block_start', { index: 0, content_block: { type: 'text', text: '' } })
        event(res, 'content_block_delta', { index: 0, delta: { type: 'text_delta', text: reply.hang } })
        markHanging()
        return
      }
      let index = 0
      if (reply.text) {
        event(res, 'content_block_start', { index, content_block: { type: 'text', text: '' } })
        for (const part of halves(reply.text)) event(res, 'content_block_delta', { index, delta: { type: 'text_delta', text: part } })
        event(res, 'content_block_stop', { index })
        index += 1
      }
      for (const tool of reply.tools ?? []) {
        event(res, 'content_block_start', { index, content_block: { type: 'tool_use', id: tool.id, name: tool.name, input: {} } })
        for (const part of halves(JSON.stringify(tool.input))) {
          event(res, 'content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: part } })
        }
        event(res, 'content_block_stop', { index })
        index += 1
      }
      const stop = reply.stopReason ?? (reply.tools?.length ? 'tool_use' : 'end_turn')
      event(res, 'message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 12 } })
      event(res, 'message_stop', {})
      res.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    hanging,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** A loopback URL where nothing listens (a server that was started and closed). */
export async function deadUrl(): Promise<string> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return `http://127.0.0.1:${port}`
}
