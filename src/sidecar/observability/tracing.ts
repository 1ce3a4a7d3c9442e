/**
 * OpenTelemetry traces: one span per point call (`hookd.point <point>`, kind SERVER) with one child
 * span per hook of its chain (`hookd.hook <hook>`), exported over OTLP. Loaded only when tracing is on
 * (tracing-config.ts); nothing is registered globally (no global provider, context manager or
 * propagator), so hookd's tracing never meets an embedding program's.
 *
 * The caller's trace continues into hookd: the W3C `traceparent` (and `tracestate`) of a Session
 * stream's or an Invoke's gRPC metadata is the parent of that session's point-call spans; an HTTP
 * request's headers are the parent of the point calls it makes (carried across its async work in an
 * AsyncLocalStorage, used only while tracing is on).
 *
 * Spans are made when the result is ready, from the result itself: the point span ends now and began
 * `durationUs` ago; the hooks' spans are laid end to end from its start, each as long as the hook's wall
 * time as its runner measured it (the gaps between them, IPC and validation, fall at the end). Their
 * durations are exact; where each began within the call is approximate. Nothing is timed twice and no
 * span is open while hooks run. Spans carry names, versions, outcomes and kinds, never payloads or text
 * from hooks: an ask's span says `hookd.outcome` asked and `hookd.asked_by` (the hooks that asked).
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import { type Attributes, type Context, DiagLogLevel, ROOT_CONTEXT, SpanKind, SpanStatusCode, type TextMapGetter, type Tracer, diag, trace } from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources'
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base'
import { ATTR_RPC_METHOD, ATTR_RPC_SYSTEM_NAME, ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions'
import { clip } from '../../protocol/text.js'
import { SERVICE_NAME } from '../../protocol/wire.js'
import type { SessionContext, TraceCarrier } from './observer.js'
import type { Decision, Part, PartSession } from './part.js'
import type { OtlpProtocol, TracingConfig } from './tracing-config.js'

const getter: TextMapGetter<TraceCarrier> = {
  keys: () => ['traceparent', 'tracestate'],
  get: (carrier, key) => carrier.get(key),
}

/** How long a shutdown waits for the last spans to be exported. */
const FLUSH_MS = 5000

async function exporterFor(protocol: OtlpProtocol): Promise<SpanExporter> {
  switch (protocol) {
    case 'grpc':
      return new (await import('@opentelemetry/exporter-trace-otlp-grpc')).OTLPTraceExporter()
    case 'http/json':
      return new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter()
    case 'http/protobuf':
      return new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter()
  }
}

export interface TracingOptions {
  version: string
  /** An export failed, or the SDK has something to say (each message at most once a minute). */
  report(message: string): void
}

export class Tracing implements Part {
  private readonly propagator = new W3CTraceContextPropagator()
  private readonly requests = new AsyncLocalStorage<Context>()

  private constructor(
    private readonly provider: BasicTracerProvider,
    private readonly tracer: Tracer,
  ) {}

  static async start(config: TracingConfig, options: TracingOptions): Promise<Tracing> {
    const said = new Map<string, number>()
    const say = (message: string): void => {
      const last = said.get(message)
      if (last !== undefined && Date.now() - last < 60_000) return
      said.set(message, Date.now())
      options.report(message)
    }
    const text = (args: unknown[]): string => args.map((a) => (a instanceof Error ? a.message : typeof a === 'string' ? a : JSON.stringify(a))).join(' ')
    diag.setLogger(
      { error: (...a) => say(text(a)), warn: (...a) => say(text(a)), info: () => {}, debug: () => {}, verbose: () => {} },
      { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
    )
    // hookd's name and release first, then what the environment says (OTEL_SERVICE_NAME,
    // OTEL_RESOURCE_ATTRIBUTES), which wins, as the specification wants.
    const resource = defaultResource()
      .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'hookd', [ATTR_SERVICE_VERSION]: options.version }))
      .merge(detectResources({ detectors: [envDetector] }))
    // BasicTracerProvider reads OTEL_TRACES_SAMPLER[_ARG]; the batch processor reads OTEL_BSP_*.
    const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(await exporterFor(config.protocol))] })
    return new Tracing(provider, provider.getTracer('hookd', options.version))
  }

  session(context: SessionContext): PartSession {
    const parent = context.carrier ? this.propagator.extract(ROOT_CONTEXT, context.carrier, getter) : undefined
    return {
      decided: (decision) => {
        const ids = this.record(decision, parent ?? this.requests.getStore() ?? ROOT_CONTEXT)
        decision.traceId = ids.traceId
        decision.spanId = ids.spanId
      },
    }
  }

  withRequest<T>(carrier: TraceCarrier, fn: () => T): T {
    if (carrier.get('traceparent') === undefined) return fn()
    return this.requests.run(this.propagator.extract(ROOT_CONTEXT, carrier, getter), fn)
  }

  async close(): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    await Promise.race([this.provider.shutdown().catch(() => {}), new Promise<void>((resolve) => (timer = setTimeout(resolve, FLUSH_MS)))])
    clearTimeout(timer)
  }

  private record({ result, facts, context, sessionId }: Decision, parent: Context): { traceId: string; spanId: string } {
    const end = performance.timeOrigin + performance.now()
    const start = end - result.durationUs / 1000
    // Literals, not spreads of a shared object: on Node 20 spreading these dotted keys cost ~10 us a span
    // (measured in make bench), more than the span itself.
    const attributes: Attributes = {
      'hookd.point': result.point,
      'hookd.decision_id': result.decisionId,
      'hookd.session.id': clip(sessionId, 128),
      'hookd.seq': result.seq,
      'hookd.outcome': facts.outcome,
      'hookd.transport': context.transport,
    }
    if (context.tenant !== undefined) attributes['hookd.tenant'] = context.tenant
    if (context.transport !== 'http') {
      attributes[ATTR_RPC_SYSTEM_NAME] = 'grpc'
      attributes[ATTR_RPC_METHOD] = `${SERVICE_NAME}/${context.transport === 'grpc-session' ? 'Session' : 'Invoke'}`
    }
    if (facts.refusedBy !== undefined) attributes['hookd.refused_by'] = facts.refusedBy
    // An ask (left to the agent's prompt): which hooks asked, by name only (their questions are hook text).
    if (facts.asked) attributes['hookd.asked_by'] = [...new Set(facts.asked.map((q) => q.hook))]
    if (facts.failure) {
      attributes['hookd.fail_mode'] = facts.failure.mode
      attributes['hookd.fail_kind'] = facts.failure.kind
    }
    if (facts.quota) attributes['hookd.quota'] = true
    const span = this.tracer.startSpan(`hookd.point ${result.point}`, { kind: SpanKind.SERVER, startTime: start, attributes }, parent)
    const inside = trace.setSpan(parent, span)
    let at = start
    for (const t of result.trace) {
      const hookAttributes: Attributes = {
        'hookd.point': result.point,
        'hookd.decision_id': result.decisionId,
        'hookd.hook': t.hook,
        'hookd.hook.version': t.version,
        'hookd.outcome': t.outcome,
        'hookd.cpu_us': t.cpuUs,
      }
      if (context.tenant !== undefined) hookAttributes['hookd.tenant'] = context.tenant
      // The content digest hookd.lock pins (src/sidecar/pinning/content-digest.ts).
      if (t.digest !== undefined) hookAttributes['hookd.hook.digest'] = t.digest
      const kind = facts.failedKinds.get(t.hook)
      if (t.outcome === 'failed' && kind) hookAttributes['hookd.diagnostic.kind'] = kind
      const child = this.tracer.startSpan(`hookd.hook ${t.hook}`, { kind: SpanKind.INTERNAL, startTime: at, attributes: hookAttributes }, inside)
      if (t.outcome === 'failed') child.setStatus({ code: SpanStatusCode.ERROR, message: kind ?? 'failed' })
      at = Math.min(end, at + t.durationUs / 1000)
      child.end(at)
    }
    span.end(end)
    const ids = span.spanContext()
    return { traceId: ids.traceId, spanId: ids.spanId }
  }
}
