/**
 * A stand-in OTLP trace receiver for tests, written from the public OTLP specification (opentelemetry-
 * proto's trace.proto, common.proto, resource.proto and trace_service.proto, and the OTLP/HTTP and
 * OTLP/gRPC transport rules). It accepts
 *
 *   POST /v1/traces  Content-Type application/x-protobuf  (http/protobuf; gzip or not)
 *   POST /v1/traces  Content-Type application/json        (http/json: hex ids, camelCase names)
 *   gRPC opentelemetry.proto.collector.trace.v1.TraceService/Export               (grpc)
 *
 * and decodes every span into a flat record (name, ids in hex, parent, kind, attributes, status, events,
 * resource and scope) that a test can assert on. The protobuf decoding is done here, field by field,
 * from the spec's field numbers: no generated code, no proto files. Only loopback is listened on.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http'
import { gunzipSync } from 'node:zlib'
import * as grpc from '@grpc/grpc-js'

export type Transport = 'http/protobuf' | 'http/json' | 'grpc'

export type AttributeValue = string | number | boolean | bigint | Uint8Array | null | AttributeValue[] | { [key: string]: AttributeValue }

export interface ReceivedSpan {
  transport: Transport
  resource: Record<string, AttributeValue>
  scope: { name: string; version: string }
  name: string
  /** 32 lower-case hex digits. */
  traceId: string
  /** 16 lower-case hex digits. */
  spanId: string
  /** The parent's span id, or undefined for a root span. */
  parentSpanId: string | undefined
  traceState: string
  /** SpanKind: 0 unspecified, 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number
  startTimeUnixNano: bigint
  endTimeUnixNano: bigint
  attributes: Record<string, AttributeValue>
  events: Array<{ name: string; timeUnixNano: bigint; attributes: Record<string, AttributeValue> }>
  /** StatusCode: 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string }
}

/** The largest request body accepted (a test's batch is far smaller). */
const MAX_BODY = 16 * 1024 * 1024

export const TRACE_SERVICE_EXPORT = '/opentelemetry.proto.collector.trace.v1.TraceService/Export'

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = []
  /** Requests refused, with the status answered: for tests of bad input. */
  readonly rejected: Array<{ status: number; message: string }> = []
  private waiters: Array<() => void> = []

  private constructor(
    private readonly http: Server,
    private readonly grpcServer: grpc.Server,
    /** `http://127.0.0.1:PORT`: the value for OTEL_EXPORTER_OTLP_ENDPOINT with an HTTP exporter. */
    readonly httpUrl: string,
    /** `http://127.0.0.1:PORT`: the value for OTEL_EXPORTER_OTLP_ENDPOINT with the gRPC exporter. */
    readonly grpcUrl: string,
  ) {}

  static async start(): Promise<OtlpReceiver> {
    let receiver: OtlpReceiver | undefined
    const http = createServer((req, res) => void (receiver as OtlpReceiver).handle(req, res))
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve))
    const grpcServer = new grpc.Server()
    grpcServer.addService(
      {
        Export: {
          path: TRACE_SERVICE_EXPORT,
          requestStream: false,
          responseStream: false,
          requestSerialize: (b: Buffer) => b,
          requestDeserialize: (b: Buffer) => b,
          // An empty ExportTraceServiceResponse: every span accepted (no partial_success).
          responseSerialize: () => Buffer.alloc(0),
          responseDeserialize: (b: Buffer) => b,
        },
      },
      {
        Export: (call: grpc.ServerUnaryCall<Buffer, unknown>, callback: grpc.sendUnaryData<unknown>) => {
          try {
            ;(receiver as OtlpReceiver).accept(decodeExportRequest(call.request), 'grpc')
            callback(null, {})
          } catch (err) {
            ;(receiver as OtlpReceiver).rejected.push({ status: grpc.status.INVALID_ARGUMENT, message: (err as Error).message })
            callback({ code: grpc.status.INVALID_ARGUMENT, details: (err as Error).message })
          }
        },
      },
    )
    const grpcPort = await new Promise<number>((resolve, reject) =>
      grpcServer.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))),
    )
    const { port } = http.address() as { port: number }
    receiver = new OtlpReceiver(http, grpcServer, `http://127.0.0.1:${port}`, `http://127.0.0.1:${grpcPort}`)
    return receiver
  }

  /** Resolves once `count` spans have arrived in all; rejects after `timeoutMs` saying how many did. */
  async waitForSpans(count: number, timeoutMs = 10_000): Promise<ReceivedSpan[]> {
    const deadline = Date.now() + timeoutMs
    while (this.spans.length < count) {
      const left = deadline - Date.now()
      if (left <= 0) throw new Error(`the OTLP receiver got ${this.spans.length} span(s) within ${timeoutMs} ms, not ${count}`)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left)
        this.waiters.push(() => {
          clearTimeout(timer)
          resolve()
        })
      })
    }
    return this.spans.slice(0, count)
  }

  async close(): Promise<void> {
    this.grpcServer.forceShutdown()
    this.http.closeAllConnections()
    await new Promise<void>((resolve) => this.http.close(() => resolve()))
  }

  private accept(spans: ReceivedSpan[], transport: Transport): void {
    for (const span of spans) this.spans.push({ ...span, transport })
    for (const wake of this.waiters.splice(0)) wake()
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const refuse = (status: number, message: string): void => {
      this.rejected.push({ status, message })
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 3, message }))
    }
    if (req.url?.split('?')[0] !== '/v1/traces') return refuse(404, `no OTLP endpoint at ${req.url}; traces go to /v1/traces`)
    if (req.method !== 'POST') return refuse(405, `${req.method} /v1/traces: OTLP/HTTP takes POST`)
    const chunks: Buffer[] = []
    let size = 0
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length
      if (size > MAX_BODY) return refuse(413, `the request is over ${MAX_BODY} bytes`)
      chunks.push(chunk)
    }
    let body = Buffer.concat(chunks)
    const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim()
    try {
      if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body, { maxOutputLength: MAX_BODY })
      if (type === 'application/x-protobuf') {
        this.accept(decodeExportRequest(body), 'http/protobuf')
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()
      } else if (type === 'application/json') {
        this.accept(decodeJsonRequest(JSON.parse(body.toString('utf8'))), 'http/json')
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
      } else {
        refuse(415, `Content-Type '${type}' is not an OTLP encoding; send application/x-protobuf or application/json`)
      }
    } catch (err) {
      refuse(400, `the request is not an ExportTraceServiceRequest: ${(err as Error).message}`)
    }
  }
}

// --- protobuf wire format ---------------------------------------------------------------------

/** One field of a protobuf message: its number, and its value by wire type. */
type Field = { no: number; varint: bigint } | { no: number; bytes: Buffer } | { no: number; fixed64: bigint; raw: Buffer } | { no: number; fixed32: number }

function fields(buf: Buffer): Field[] {
  const out: Field[] = []
  let i = 0
  const varint = (): bigint => {
    let result = 0n
    for (let shift = 0n; ; shift += 7n) {
      if (i >= buf.length) throw new Error('a varint runs past the end of the message')
      const byte = buf[i++] as number
      result |= BigInt(byte & 0x7f) << shift
      if ((byte & 0x80) === 0) return result
      if (shift > 63n) throw new Error('a varint is longer than 10 bytes')
    }
  }
  while (i < buf.length) {
    const tag = Number(varint())
    const no = tag >>> 3
    switch (tag & 7) {
      case 0:
        out.push({ no, varint: varint() })
        break
      case 1:
        if (i + 8 > buf.length) throw new Error('a fixed64 runs past the end of the message')
        out.push({ no, fixed64: buf.readBigUInt64LE(i), raw: buf.subarray(i, i + 8) })
        i += 8
        break
      case 2: {
        const length = Number(varint())
        if (i + length > buf.length) throw new Error(`field ${no} is ${length} bytes, past the end of the message`)
        out.push({ no, bytes: buf.subarray(i, i + length) })
        i += length
        break
      }
      case 5:
        if (i + 4 > buf.length) throw new Error('a fixed32 runs past the end of the message')
        out.push({ no, fixed32: buf.readUInt32LE(i) })
        i += 4
        break
      default:
        throw new Error(`wire type ${tag & 7} of field ${no} is not one protobuf 3 uses`)
    }
  }
  return out
}

const bytesOf = (f: Field): Buffer => ('bytes' in f ? f.bytes : Buffer.alloc(0))
const stringOf = (f: Field): string => bytesOf(f).toString('utf8')
const intOf = (f: Field): bigint => ('varint' in f ? f.varint : 'fixed64' in f ? f.fixed64 : 'fixed32' in f ? BigInt(f.fixed32) : 0n)

/** opentelemetry.proto.common.v1.AnyValue. */
function anyValue(buf: Buffer): AttributeValue {
  for (const f of fields(buf)) {
    switch (f.no) {
      case 1:
        return stringOf(f)
      case 2:
        return intOf(f) !== 0n
      case 3: {
        // int64, two's complement in a varint
        const n = BigInt.asIntN(64, intOf(f))
        return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n
      }
      case 4:
        return 'raw' in f ? f.raw.readDoubleLE(0) : null
      case 5:
        return fields(bytesOf(f)).filter((v) => v.no === 1).map((v) => anyValue(bytesOf(v)))
      case 6:
        return keyValues(fields(bytesOf(f)).filter((v) => v.no === 1))
      case 7:
        return new Uint8Array(bytesOf(f))
    }
  }
  return null
}

/** repeated opentelemetry.proto.common.v1.KeyValue (key = 1, value = 2). */
function keyValues(list: Field[]): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {}
  for (const kv of list) {
    let key = ''
    let value: AttributeValue = null
    for (const f of fields(bytesOf(kv))) {
      if (f.no === 1) key = stringOf(f)
      else if (f.no === 2) value = anyValue(bytesOf(f))
    }
    out[key] = value
  }
  return out
}

type SpanBase = Omit<ReceivedSpan, 'transport'>

/** opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest, flattened to its spans. */
export function decodeExportRequest(buf: Buffer): ReceivedSpan[] {
  const spans: SpanBase[] = []
  for (const rs of fields(buf).filter((f) => f.no === 1)) {
    let resource: Record<string, AttributeValue> = {}
    const scopeSpans: Buffer[] = []
    for (const f of fields(bytesOf(rs))) {
      if (f.no === 1) resource = keyValues(fields(bytesOf(f)).filter((a) => a.no === 1))
      else if (f.no === 2) scopeSpans.push(bytesOf(f))
    }
    for (const ss of scopeSpans) {
      const scope = { name: '', version: '' }
      const list: Buffer[] = []
      for (const f of fields(ss)) {
        if (f.no === 1) {
          for (const s of fields(bytesOf(f))) {
            if (s.no === 1) scope.name = stringOf(s)
            else if (s.no === 2) scope.version = stringOf(s)
          }
        } else if (f.no === 2) list.push(bytesOf(f))
      }
      for (const s of list) spans.push({ ...decodeSpan(s), resource, scope })
    }
  }
  return spans as ReceivedSpan[]
}

function decodeSpan(buf: Buffer): Omit<SpanBase, 'resource' | 'scope'> {
  const span: Omit<SpanBase, 'resource' | 'scope'> = {
    name: '',
    traceId: '',
    spanId: '',
    parentSpanId: undefined,
    traceState: '',
    kind: 0,
    startTimeUnixNano: 0n,
    endTimeUnixNano: 0n,
    attributes: {},
    events: [],
    status: { code: 0, message: '' },
  }
  const attributes: Field[] = []
  for (const f of fields(buf)) {
    switch (f.no) {
      case 1:
        span.traceId = bytesOf(f).toString('hex')
        break
      case 2:
        span.spanId = bytesOf(f).toString('hex')
        break
      case 3:
        span.traceState = stringOf(f)
        break
      case 4:
        span.parentSpanId = bytesOf(f).length > 0 ? bytesOf(f).toString('hex') : undefined
        break
      case 5:
        span.name = stringOf(f)
        break
      case 6:
        span.kind = Number(intOf(f))
        break
      case 7:
        span.startTimeUnixNano = intOf(f)
        break
      case 8:
        span.endTimeUnixNano = intOf(f)
        break
      case 9:
        attributes.push(f)
        break
      case 11: {
        const event = { name: '', timeUnixNano: 0n, attributes: {} as Record<string, AttributeValue> }
        const list: Field[] = []
        for (const e of fields(bytesOf(f))) {
          if (e.no === 1) event.timeUnixNano = intOf(e)
          else if (e.no === 2) event.name = stringOf(e)
          else if (e.no === 3) list.push(e)
        }
        event.attributes = keyValues(list)
        span.events.push(event)
        break
      }
      case 15:
        for (const s of fields(bytesOf(f))) {
          if (s.no === 2) span.status.message = stringOf(s)
          else if (s.no === 3) span.status.code = Number(intOf(s))
        }
        break
    }
  }
  span.attributes = keyValues(attributes)
  return span
}

// --- OTLP/JSON ----------------------------------------------------------------------------------

type JsonObject = Record<string, unknown>

const asObject = (v: unknown): JsonObject => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as JsonObject) : {})
const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])
/** OTLP/JSON uses lowerCamelCase; receivers should take the proto's snake_case names too. */
const get = (o: JsonObject, camel: string): unknown => o[camel] ?? o[camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)]
const big = (v: unknown): bigint => (typeof v === 'string' || typeof v === 'number' ? BigInt(v) : 0n)

function jsonAnyValue(v: unknown): AttributeValue {
  const o = asObject(v)
  if (get(o, 'stringValue') !== undefined) return String(get(o, 'stringValue'))
  if (get(o, 'boolValue') !== undefined) return Boolean(get(o, 'boolValue'))
  if (get(o, 'intValue') !== undefined) {
    // int64 travels as a decimal string (or a number) in OTLP/JSON.
    const n = big(get(o, 'intValue'))
    return n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n
  }
  if (get(o, 'doubleValue') !== undefined) return Number(get(o, 'doubleValue'))
  if (get(o, 'arrayValue') !== undefined) return asArray(asObject(get(o, 'arrayValue')).values).map(jsonAnyValue)
  if (get(o, 'kvlistValue') !== undefined) return jsonKeyValues(asObject(get(o, 'kvlistValue')).values)
  if (get(o, 'bytesValue') !== undefined) return new Uint8Array(Buffer.from(String(get(o, 'bytesValue')), 'base64'))
  return null
}

function jsonKeyValues(list: unknown): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {}
  for (const kv of asArray(list)) out[String(asObject(kv).key)] = jsonAnyValue(asObject(kv).value)
  return out
}

/** Trace and span ids are hex strings in OTLP/JSON (not base64, unlike protobuf's JSON mapping). */
function hexId(v: unknown, digits: number, what: string): string {
  const s = typeof v === 'string' ? v.toLowerCase() : ''
  if (!new RegExp(`^[0-9a-f]{${digits}}$`).test(s)) throw new Error(`${what} '${String(v)}' is not ${digits} hex digits`)
  return s
}

export function decodeJsonRequest(body: unknown): ReceivedSpan[] {
  const spans: SpanBase[] = []
  for (const rs of asArray(get(asObject(body), 'resourceSpans'))) {
    const resource = jsonKeyValues(asObject(get(asObject(rs), 'resource')).attributes)
    for (const ss of asArray(get(asObject(rs), 'scopeSpans'))) {
      const scopeJson = asObject(get(asObject(ss), 'scope'))
      const scope = { name: String(scopeJson.name ?? ''), version: String(scopeJson.version ?? '') }
      for (const sv of asArray(get(asObject(ss), 'spans'))) {
        const s = asObject(sv)
        const parent = get(s, 'parentSpanId')
        const status = asObject(s.status)
        spans.push({
          resource,
          scope,
          name: String(s.name ?? ''),
          traceId: hexId(get(s, 'traceId'), 32, 'traceId'),
          spanId: hexId(get(s, 'spanId'), 16, 'spanId'),
          parentSpanId: typeof parent === 'string' && parent !== '' ? hexId(parent, 16, 'parentSpanId') : undefined,
          traceState: String(get(s, 'traceState') ?? ''),
          kind: Number(s.kind ?? 0),
          startTimeUnixNano: big(get(s, 'startTimeUnixNano')),
          endTimeUnixNano: big(get(s, 'endTimeUnixNano')),
          attributes: jsonKeyValues(s.attributes),
          events: asArray(s.events).map((e) => ({
            name: String(asObject(e).name ?? ''),
            timeUnixNano: big(get(asObject(e), 'timeUnixNano')),
            attributes: jsonKeyValues(asObject(e).attributes),
          })),
          status: { code: Number(status.code ?? 0), message: String(status.message ?? '') },
        })
      }
    }
  }
  return spans as ReceivedSpan[]
}
