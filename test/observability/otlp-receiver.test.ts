/**
 * The stand-in OTLP receiver (test/support/otlp-receiver.ts) against the real OpenTelemetry exporters,
 * the ones hookd's tracing will use: a parent and a child span, exported over http/json, http/protobuf
 * and gRPC, arrive with their names, ids, parent, kind, attributes, events, status and resource. Also
 * what part 2 relies on: the exporters and resource read OTEL_* variables, OTEL_TRACES_SAMPLER turns
 * recording off, and a W3C traceparent carried in gRPC metadata joins the caller's trace.
 */
import * as grpc from '@grpc/grpc-js'
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, type TextMapGetter, type TextMapSetter, trace } from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc'
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources'
import { BasicTracerProvider, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base'
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { OtlpReceiver, type Transport } from '../support/otlp-receiver.js'

let receiver: OtlpReceiver

beforeAll(async () => {
  receiver = await OtlpReceiver.start()
})

afterAll(async () => {
  await receiver?.close()
})

afterEach(() => {
  receiver.spans.length = 0
})

/** Exports a parent and a child span through `exporter`; returns their ids as the SDK saw them. */
async function exportTwo(exporter: SpanExporter, service = 'hookd-test'): Promise<{ traceId: string; parent: string; child: string }> {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: service }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  })
  const tracer = provider.getTracer('hookd.test', '0.1.0')
  const parent = tracer.startSpan('hookd.session', { kind: SpanKind.SERVER, attributes: { 'hookd.session.id': 'run-1' } })
  const child = tracer.startSpan(
    'hookd.hook guard',
    {
      attributes: {
        'hookd.hook': 'guard',
        'hookd.point': 'beforeToolExecute',
        'hookd.duration_us': 812,
        'hookd.cpu_share': 0.25,
        'hookd.refused': true,
        'hookd.hooks': ['guard', 'audit'],
      },
    },
    trace.setSpan(ROOT_CONTEXT, parent),
  )
  child.addEvent('refused', { reason: 'refused by the user' })
  child.setStatus({ code: SpanStatusCode.ERROR, message: 'refused' })
  child.end()
  parent.end()
  await provider.forceFlush()
  await provider.shutdown()
  return { traceId: parent.spanContext().traceId, parent: parent.spanContext().spanId, child: child.spanContext().spanId }
}

describe('the OTLP receiver, fed by the real exporters', () => {
  it.each<[Transport, () => SpanExporter]>([
    ['http/json', () => new JsonExporter({ url: `${receiver.httpUrl}/v1/traces` })],
    ['http/protobuf', () => new ProtoExporter({ url: `${receiver.httpUrl}/v1/traces` })],
    ['grpc', () => new GrpcExporter({ url: receiver.grpcUrl })],
  ])('decodes spans sent over %s', async (transport, make) => {
    const ids = await exportTwo(make())
    const spans = await receiver.waitForSpans(2)
    const child = spans.find((s) => s.name === 'hookd.hook guard')
    const parent = spans.find((s) => s.name === 'hookd.session')
    expect(child).toMatchObject({
      transport,
      // A resource given to the provider replaces the default one (telemetry.sdk.* included) in SDK 2.x.
      resource: { 'service.name': 'hookd-test' },
      scope: { name: 'hookd.test', version: '0.1.0' },
      traceId: ids.traceId,
      spanId: ids.child,
      parentSpanId: ids.parent,
      kind: 1,
      attributes: {
        'hookd.hook': 'guard',
        'hookd.point': 'beforeToolExecute',
        'hookd.duration_us': 812,
        'hookd.cpu_share': 0.25,
        'hookd.refused': true,
        'hookd.hooks': ['guard', 'audit'],
      },
      events: [{ name: 'refused', timeUnixNano: expect.any(BigInt), attributes: { reason: 'refused by the user' } }],
      status: { code: 2, message: 'refused' },
    })
    expect(parent).toMatchObject({ transport, traceId: ids.traceId, spanId: ids.parent, parentSpanId: undefined, kind: 2 })
    expect((child?.endTimeUnixNano ?? 0n) >= (child?.startTimeUnixNano ?? 1n)).toBe(true)
  })

  it('refuses what is not OTLP, saying why', async () => {
    const post = (type: string, body: string | Buffer, path = '/v1/traces') =>
      fetch(`${receiver.httpUrl}${path}`, { method: 'POST', headers: { 'content-type': type }, body })
    expect((await post('text/plain', 'hi')).status).toBe(415)
    expect((await post('application/x-protobuf', Buffer.from([0x0a, 0x05, 0x01]))).status).toBe(400)
    expect((await post('application/json', '{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"zz","spanId":"00"}]}]}]}')).status).toBe(400)
    expect((await post('application/json', '{}', '/v1/metrics')).status).toBe(404)
    expect(receiver.rejected.map((r) => r.message)).toEqual([
      "Content-Type 'text/plain' is not an OTLP encoding; send application/x-protobuf or application/json",
      'the request is not an ExportTraceServiceRequest: field 1 is 5 bytes, past the end of the message',
      "the request is not an ExportTraceServiceRequest: traceId 'zz' is not 32 hex digits",
      'no OTLP endpoint at /v1/metrics; traces go to /v1/traces',
    ])
    expect(receiver.spans).toEqual([])
  })
})

describe('what hookd will read from the environment', () => {
  const saved = { ...process.env }
  afterEach(() => {
    for (const key of Object.keys(process.env)) if (key.startsWith('OTEL_')) delete process.env[key]
    Object.assign(process.env, saved)
  })

  it('OTEL_EXPORTER_OTLP_ENDPOINT is the base URL: the HTTP exporters add /v1/traces, the gRPC one takes it as is', async () => {
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.httpUrl
    await exportTwo(new ProtoExporter())
    await exportTwo(new JsonExporter())
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.grpcUrl
    await exportTwo(new GrpcExporter())
    const spans = await receiver.waitForSpans(6)
    expect(spans.map((s) => s.transport).sort()).toEqual(['grpc', 'grpc', 'http/json', 'http/json', 'http/protobuf', 'http/protobuf'])
  })

  it('OTEL_SERVICE_NAME reaches the resource through the env detector', async () => {
    process.env.OTEL_SERVICE_NAME = 'hookd-from-env'
    process.env.OTEL_RESOURCE_ATTRIBUTES = 'deployment.environment.name=test'
    const resource = detectResources({ detectors: [envDetector] })
    const provider = new BasicTracerProvider({ resource, spanProcessors: [new SimpleSpanProcessor(new ProtoExporter({ url: `${receiver.httpUrl}/v1/traces` }))] })
    provider.getTracer('t').startSpan('one').end()
    await provider.shutdown()
    const [span] = await receiver.waitForSpans(1)
    expect(span?.resource).toMatchObject({ 'service.name': 'hookd-from-env', 'deployment.environment.name': 'test' })
  })

  it('OTEL_TRACES_SAMPLER=always_off: spans are not recorded, and not sampled for callers downstream', () => {
    process.env.OTEL_TRACES_SAMPLER = 'always_off'
    const span = new BasicTracerProvider().getTracer('t').startSpan('off')
    expect(span.isRecording()).toBe(false)
    expect(span.spanContext().traceFlags).toBe(0)
    span.end()
  })
})

describe('W3C trace context through gRPC metadata', () => {
  it('a traceparent sent by the host makes the sidecar span a child of the host span', async () => {
    const propagator = new W3CTraceContextPropagator()
    const setter: TextMapSetter<grpc.Metadata> = { set: (md, key, value) => md.set(key, value) }
    const getter: TextMapGetter<grpc.Metadata> = {
      keys: (md) => Object.keys(md.getMap()),
      get: (md, key) => md.get(key).map(String),
    }
    const provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'hookd' }),
      spanProcessors: [new SimpleSpanProcessor(new ProtoExporter({ url: `${receiver.httpUrl}/v1/traces` }))],
    })
    const tracer = provider.getTracer('hookd')
    // The host's side: its span, injected into the call's metadata.
    const host = tracer.startSpan('agent.tool_call', { kind: SpanKind.CLIENT })
    const metadata = new grpc.Metadata()
    propagator.inject(trace.setSpan(ROOT_CONTEXT, host), metadata, setter)
    expect(metadata.get('traceparent')).toEqual([`00-${host.spanContext().traceId}-${host.spanContext().spanId}-01`])
    // The sidecar's side: extract, and start the server span in that context.
    const remote = propagator.extract(ROOT_CONTEXT, metadata, getter)
    tracer.startSpan('hookd.v1.HookExecutor/Session', { kind: SpanKind.SERVER }, remote).end()
    host.end()
    await provider.shutdown()
    const spans = await receiver.waitForSpans(2)
    const server = spans.find((s) => s.name === 'hookd.v1.HookExecutor/Session')
    expect(server).toMatchObject({ traceId: host.spanContext().traceId, parentSpanId: host.spanContext().spanId, kind: 2 })
  })
})
