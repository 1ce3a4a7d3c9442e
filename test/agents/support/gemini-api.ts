/**
 * A stand-in for the Gemini API (Generative Language API, `v1beta`) on 127.0.0.1:0, as Gemini CLI
 * speaks it when `GOOGLE_GEMINI_BASE_URL` points at it:
 *
 * - `POST /v1beta/models/{model}:streamGenerateContent?alt=sse`: the agent's turns, answered by
 *   server-sent events, each `data:` line one GenerateContentResponse (`candidates[0].content.parts`
 *   carrying `text` and `functionCall` parts; the last chunk has `finishReason` and `usageMetadata`);
 * - `POST /v1beta/models/{model}:generateContent`: one-shot side calls the CLI makes for itself (the
 *   model router's complexity score, loop and next-speaker checks, summaries), answered with one JSON
 *   GenerateContentResponse;
 * - `POST /v1beta/models/{model}:countTokens`: `{ totalTokens }`.
 *
 * A script `(request, index) => reply` answers the streamed turns (index counts them from 0); side
 * calls get `sideReply` (by default a JSON text that satisfies the router). Every request is kept so
 * a test can assert what the model was sent: `functionResponses(body)` lists the tool results.
 */
import { type IncomingHttpHeaders, type ServerResponse, createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface GeminiCall {
  name: string
  args: Record<string, unknown>
  id?: string
}

export type GeminiReply = { text?: string; calls?: GeminiCall[] } | { status: number; message: string; reason?: string }

export interface Part {
  text?: string
  thought?: boolean
  functionCall?: { id?: string; name: string; args?: Record<string, unknown> }
  functionResponse?: { id?: string; name: string; response?: Record<string, unknown> }
  [key: string]: unknown
}

/** The body of generateContent / streamGenerateContent, as far as a test reads it. */
export interface GenerateRequest {
  contents: Array<{ role?: string; parts: Part[] }>
  systemInstruction?: { parts: Part[] }
  tools?: Array<{ functionDeclarations?: Array<{ name: string; description?: string; parameters?: unknown; parametersJsonSchema?: unknown }> }>
  generationConfig?: Record<string, unknown>
  [key: string]: unknown
}

export type Method = 'streamGenerateContent' | 'generateContent' | 'countTokens'

export interface RecordedRequest {
  method: Method
  model: string
  url: string
  headers: IncomingHttpHeaders
  body: GenerateRequest
}

export type GeminiScript = (request: GenerateRequest, index: number) => GeminiReply

export interface GeminiApi {
  /** The value for GOOGLE_GEMINI_BASE_URL. */
  baseUrl: string
  /** Every request to a known method, in order. */
  requests: RecordedRequest[]
  /** Only the streamed turns, in order: the ones the script answered. */
  turns: RecordedRequest[]
  /** Requests to any other route (answered 404). */
  unknown: Array<{ method: string; url: string }>
  stop(): Promise<void>
}

/** The tool results in a request: every `functionResponse` part, in order. */
export function functionResponses(body: GenerateRequest): Array<{ id?: string; name: string; response: Record<string, unknown> }> {
  return body.contents.flatMap((content) =>
    content.parts.flatMap((part) =>
      part.functionResponse
        ? [{ ...(part.functionResponse.id ? { id: part.functionResponse.id } : {}), name: part.functionResponse.name, response: part.functionResponse.response ?? {} }]
        : [],
    ),
  )
}

/** The names of the functions the agent declared to the model. */
export function declaredFunctions(body: GenerateRequest): string[] {
  return (body.tools ?? []).flatMap((tool) => (tool.functionDeclarations ?? []).map((declaration) => declaration.name))
}

const usageMetadata = { promptTokenCount: 100, candidatesTokenCount: 10, totalTokenCount: 110 }

function response(model: string, parts: Part[], final: boolean): Record<string, unknown> {
  return {
    candidates: [{ content: { role: 'model', parts }, index: 0, ...(final ? { finishReason: 'STOP' } : {}) }],
    ...(final ? { usageMetadata } : {}),
    modelVersion: model,
    responseId: `resp_${Math.random().toString(36).slice(2, 10)}`,
  }
}

function replyParts(reply: { text?: string; calls?: GeminiCall[] }): Part[] {
  const parts: Part[] = []
  if (reply.text !== undefined) parts.push({ text: reply.text })
  for (const call of reply.calls ?? []) parts.push({ functionCall: { ...(call.id ? { id: call.id } : {}), name: call.name, args: call.args } })
  return parts
}

function streamReply(res: ServerResponse, model: string, reply: { text?: string; calls?: GeminiCall[] }): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
  const chunks: Part[][] = []
  if (reply.text) {
    const cut = Math.ceil(reply.text.length / 2)
    chunks.push([{ text: reply.text.slice(0, cut) }])
    if (reply.text.length > cut) chunks.push([{ text: reply.text.slice(cut) }])
  }
  const calls = replyParts({ calls: reply.calls ?? [] })
  if (calls.length > 0) chunks.push(calls)
  if (chunks.length === 0) chunks.push([{ text: '' }])
  chunks.forEach((parts, i) => res.write(`data: ${JSON.stringify(response(model, parts, i === chunks.length - 1))}\r\n\r\n`))
  res.end()
}

function errorReply(res: ServerResponse, reply: { status: number; message: string; reason?: string }): void {
  res.writeHead(reply.status, { 'content-type': 'application/json' })
  res.end(JSON.stringify({ error: { code: reply.status, message: reply.message, status: reply.reason ?? 'INVALID_ARGUMENT' } }))
}

/** The router asks for a complexity score in JSON; any other side call takes the same text harmlessly. */
export const DEFAULT_SIDE_REPLY: GeminiReply = { text: '{"complexity_reasoning":"stand-in","complexity_score":10}' }

export async function startGeminiApi(script: GeminiScript, options: { sideReply?: (request: GenerateRequest) => GeminiReply } = {}): Promise<GeminiApi> {
  const requests: RecordedRequest[] = []
  const turns: RecordedRequest[] = []
  const unknown: GeminiApi['unknown'] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const url = req.url ?? ''
      const match = /^\/v1(?:beta|alpha)?\/models\/([^/:?]+):(streamGenerateContent|generateContent|countTokens)(?:\?|$)/.exec(url)
      if (req.method !== 'POST' || !match) {
        unknown.push({ method: req.method ?? '', url })
        errorReply(res, { status: 404, message: `no route ${req.method} ${url}`, reason: 'NOT_FOUND' })
        return
      }
      const model = match[1] ?? ''
      const method = match[2] as Method
      let body: GenerateRequest
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as GenerateRequest
      } catch (err) {
        errorReply(res, { status: 400, message: `bad JSON: ${String(err)}` })
        return
      }
      const recorded: RecordedRequest = { method, model, url, headers: req.headers, body }
      requests.push(recorded)
      if (method === 'countTokens') {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ totalTokens: Math.ceil(JSON.stringify(body).length / 4) }))
        return
      }
      let reply: GeminiReply
      if (method === 'streamGenerateContent') {
        turns.push(recorded)
        try {
          reply = script(body, turns.length - 1)
        } catch (err) {
          reply = { status: 500, message: `the stand-in's script threw: ${String(err)}`, reason: 'INTERNAL' }
        }
      } else {
        reply = options.sideReply?.(body) ?? DEFAULT_SIDE_REPLY
      }
      if ('status' in reply) errorReply(res, reply)
      else if (method === 'streamGenerateContent') streamReply(res, model, reply)
      else {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify(response(model, replyParts(reply), true)))
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    requests,
    turns,
    unknown,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
