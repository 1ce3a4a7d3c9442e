/**
 * Traces from `hookd serve`, switched on by the standard OpenTelemetry environment and received by the
 * stand-in OTLP receiver (test/support/otlp-receiver.ts) over each protocol: a span per point call whose
 * parent is the host's span (W3C traceparent in gRPC metadata, or in an HTTP request's headers), and a
 * child span per hook. The JSON log's decision lines carry the same trace and span ids.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { HookdClient } from '../../src/host/index.js'
import { OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js'
import { type Serving, runInProcess, startServe, stopProcess } from '../support/processes.js'
import { hook, sessionOptions, writeTree } from '../support/sidecar.js'
import { hostSpan, tracedClient } from './support.js'

const shell = (command: string) => ({ id: 'c1', name: 'shell', arguments: { command } })
/** The JSON log's line saying where hookd listens. */
const JSON_LISTENING = /"msg":"listening on ([^"]+)"/
// OTLP's SpanKind numbers.
const INTERNAL = 1
const SERVER = 2

async function twoHooks(): Promise<string> {
  return writeTree({
    'allow/index.js': hook({ beforeToolExecute: 'function () {}' }),
    'deny/index.js': hook({
      beforeToolExecute: "function (ctx, call) { if (/\\brm\\b/.test(call.arguments.command || '')) return { allow: false, reason: 'no rm' } }",
    }),
    'asker/index.js': hook({ beforeToolExecute: "function (ctx) { ctx.confirm({ title: 'go on?' }) }" }),
  })
}

/** The spans of one trace, `point` first and then its children in order of start. */
function ofTrace(spans: ReceivedSpan[], traceId: string): ReceivedSpan[] {
  return spans.filter((s) => s.traceId === traceId).sort((a, b) => (a.kind === SERVER ? -1 : b.kind === SERVER ? 1 : Number(a.startTimeUnixNano - b.startTimeUnixNano)))
}

/** What a test checks of a span: its shape and place in the trace, not its timing. */
function shape(span: ReceivedSpan): Record<string, unknown> {
  return { name: span.name, kind: span.kind, parentSpanId: span.parentSpanId, attributes: span.attributes, status: span.status.code }
}

/** Starts hookd with OTLP traces going to `receiver` over `protocol`, exported 50 ms after they end. */
function tracedServe(hooks: string, cwd: string, receiver: OtlpReceiver, protocol: string, extra: string[] = []): Promise<Serving> {
  const json = extra.includes('json')
  return startServe(['--hooks', hooks, '--workers', '1', '--no-watch', '--listen', `unix:${join(cwd, 'hookd.sock')}`, ...extra], {
    cwd,
    ...(json ? { ready: JSON_LISTENING } : {}),
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: protocol === 'grpc' ? receiver.grpcUrl : receiver.httpUrl,
      OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
      OTEL_SERVICE_NAME: 'hookd-under-test',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=test',
      OTEL_BSP_SCHEDULE_DELAY: '50',
    },
  })
}

describe('traces over http/protobuf, with JSON logs', () => {
  let receiver: OtlpReceiver
  let hooks: string
  let cwd: string
  let serving: Serving
  let client: HookdClient | undefined
  const host = hostSpan()

  beforeAll(async () => {
    receiver = await OtlpReceiver.start()
    hooks = await twoHooks()
    cwd = await mkdtemp(join(tmpdir(), 'hookd-traces-'))
    serving = await tracedServe(hooks, cwd, receiver, 'http/protobuf', ['--log-format', 'json', '--http', '0'])
  })

  afterAll(async () => {
    client?.close()
    if (serving) await stopProcess(serving.child, 'SIGKILL')
    await receiver?.close()
    await rm(cwd, { recursive: true, force: true })
    await rm(hooks, { recursive: true, force: true })
  })

  it("makes a point-call span under the host's span, with a child span per hook", async () => {
    client = await tracedClient(serving.address, host.traceparent)
    const answer = await client.invoke(sessionOptions(['allow', 'deny']), 'beforeToolExecute', shell('rm -rf /'))
    expect(answer.result).toMatchObject({ allow: false, refusedBy: 'deny' })
    const decisionId = answer.decisionId as string
    expect(decisionId).toMatch(/\S/)

    await receiver.waitForSpans(3)
    const [point, allow, deny] = ofTrace(receiver.spans, host.traceId)
    if (!point || !allow || !deny) throw new Error(`spans: ${JSON.stringify(receiver.spans.map((s) => s.name))}`)
    expect(shape(point)).toEqual({
      name: 'hookd.point beforeToolExecute',
      kind: SERVER,
      parentSpanId: host.spanId,
      attributes: {
        'hookd.point': 'beforeToolExecute',
        'hookd.decision_id': decisionId,
        'hookd.session.id': expect.any(String),
        'hookd.seq': expect.any(Number),
        'hookd.outcome': 'refused',
        'hookd.refused_by': 'deny',
        'hookd.transport': 'grpc-invoke',
        'rpc.system.name': 'grpc',
        'rpc.method': 'hookd.v1.HookExecutor/Invoke',
      },
      status: 0,
    })
    const child = (name: string, outcome: string) => ({
      name: `hookd.hook ${name}`,
      kind: INTERNAL,
      parentSpanId: point.spanId,
      attributes: {
        'hookd.point': 'beforeToolExecute',
        'hookd.decision_id': decisionId,
        'hookd.hook': name,
        'hookd.hook.version': expect.stringMatching(/\S/),
        'hookd.hook.digest': expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
        'hookd.outcome': outcome,
        'hookd.cpu_us': expect.any(Number),
      },
      status: 0,
    })
    expect([shape(allow), shape(deny)]).toEqual([child('allow', 'no-opinion'), child('deny', 'refused')])
    // A child lies within its parent.
    for (const c of [allow, deny]) {
      expect(c.startTimeUnixNano >= point.startTimeUnixNano && c.endTimeUnixNano <= point.endTimeUnixNano).toBe(true)
    }
    expect(point.resource['service.name']).toBe('hookd-under-test')
    expect(point.resource['service.version']).toBe(JSON.parse(await readFile(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8')).version)
    expect(point.resource['deployment.environment']).toBe('test')
    expect(point.scope.name).toBe('hookd')
    expect(point.transport).toBe('http/protobuf')

    // The decision's log line, as JSON, names the same trace and span.
    await vi.waitFor(() => expect(serving.output.stderr).toContain(decisionId), { timeout: 10_000 })
    const line = serving.output.stderr
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.event === 'decision' && l.decision_id === decisionId)
    expect(line).toMatchObject({ level: 'info', point: 'beforeToolExecute', outcome: 'refused', refused_by: 'deny', trace_id: host.traceId, span_id: point.spanId })
  })

  it("continues the host's trace through a Session stream: one span per point call, all under the stream's traceparent", async () => {
    const before = receiver.spans.length
    const session = await (client as HookdClient).openSession(sessionOptions(['allow']))
    await session.call('beforeToolExecute', shell('ls'))
    await session.call('beforeToolExecute', shell('pwd'))
    await session.close()
    const spans = (await receiver.waitForSpans(before + 4)).slice(before)
    const points = spans.filter((s) => s.kind === SERVER)
    expect(points.map((s) => [s.name, s.traceId, s.parentSpanId, s.attributes['rpc.method'], s.attributes['hookd.seq']])).toEqual([
      ['hookd.point beforeToolExecute', host.traceId, host.spanId, 'hookd.v1.HookExecutor/Session', 1],
      ['hookd.point beforeToolExecute', host.traceId, host.spanId, 'hookd.v1.HookExecutor/Session', 2],
    ])
    const hooks = spans.filter((s) => s.kind === INTERNAL)
    expect(hooks.map((s) => [s.name, s.parentSpanId])).toEqual(points.map((p) => ['hookd.hook allow', p.spanId]))
  })

  it("takes the parent from an HTTP request's traceparent header at the front door", async () => {
    const url = /"msg":"http on (http:\/\/127\.0\.0\.1:\d+)"/.exec(serving.output.stderr)?.[1]
    if (!url) throw new Error(`no http line: ${serving.output.stderr}`)
    const token = (await readFile(join(cwd, '.hookd', 'http-token'), 'utf8')).trim()
    const web = hostSpan()
    const res = await fetch(`${url}/claude-code/deny`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, traceparent: web.traceparent },
      body: JSON.stringify({ session_id: 's-web', cwd, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'rm -rf /' } }),
    })
    expect(((await res.json()) as { hookSpecificOutput: { permissionDecision: string } }).hookSpecificOutput.permissionDecision).toBe('deny')
    await vi.waitFor(() => expect(ofTrace(receiver.spans, web.traceId)).toHaveLength(2), { timeout: 10_000, interval: 50 })
    const [point, deny] = ofTrace(receiver.spans, web.traceId) as [ReceivedSpan, ReceivedSpan]
    expect([point.name, point.parentSpanId, point.attributes['hookd.transport'], point.attributes['rpc.method']]).toEqual([
      'hookd.point beforeToolExecute',
      web.spanId,
      'http',
      undefined,
    ])
    expect([deny.name, deny.parentSpanId, deny.attributes['hookd.outcome']]).toEqual(['hookd.hook deny', point.spanId, 'refused'])
  })

  it("says asked, and which hooks asked, for a confirm the front door left to Claude Code's prompt", async () => {
    const url = /"msg":"http on (http:\/\/127\.0\.0\.1:\d+)"/.exec(serving.output.stderr)?.[1]
    if (!url) throw new Error(`no http line: ${serving.output.stderr}`)
    const token = (await readFile(join(cwd, '.hookd', 'http-token'), 'utf8')).trim()
    const web = hostSpan()
    const res = await fetch(`${url}/claude-code/asker`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, traceparent: web.traceparent },
      body: JSON.stringify({ session_id: 's-ask', cwd, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'make' }, tool_use_id: 'toolu_ask' }),
    })
    expect(((await res.json()) as { hookSpecificOutput: { permissionDecision: string } }).hookSpecificOutput.permissionDecision).toBe('ask')
    await vi.waitFor(() => expect(ofTrace(receiver.spans, web.traceId)).toHaveLength(2), { timeout: 10_000, interval: 50 })
    const [point] = ofTrace(receiver.spans, web.traceId) as [ReceivedSpan]
    expect(point.attributes).toMatchObject({ 'hookd.outcome': 'asked', 'hookd.asked_by': ['asker'] })
    // The question is hook text: never on a span.
    expect(JSON.stringify(point.attributes)).not.toContain('go on?')
  })

  it('starts a trace of its own for a call that carries no traceparent', async () => {
    const plain = await HookdClient.connect(serving.address)
    try {
      const before = receiver.spans.length
      await plain.invoke(sessionOptions(['allow']), 'beforeToolExecute', shell('ls'))
      const fresh = (await receiver.waitForSpans(before + 2)).slice(before)
      const [point, allow] = ofTrace(fresh, fresh[0]?.traceId as string) as [ReceivedSpan, ReceivedSpan]
      // A root span: no parent.
      expect([point.name, point.parentSpanId, allow.parentSpanId, allow.traceId]).toEqual(['hookd.point beforeToolExecute', undefined, point.spanId, point.traceId])
      expect(point.traceId).not.toBe(host.traceId)
    } finally {
      plain.close()
    }
  })
})

describe.each(['http/json', 'grpc'])('traces over %s', (protocol) => {
  it("arrive with the host's span as the parent", async () => {
    const receiver = await OtlpReceiver.start()
    const hooks = await twoHooks()
    const cwd = await mkdtemp(join(tmpdir(), 'hookd-traces-'))
    let serving: Serving | undefined
    let client: HookdClient | undefined
    try {
      serving = await tracedServe(hooks, cwd, receiver, protocol)
      const host = hostSpan()
      client = await tracedClient(serving.address, host.traceparent)
      await client.invoke(sessionOptions(['allow']), 'beforeToolExecute', shell('ls'))
      await receiver.waitForSpans(2)
      const [point, allow] = ofTrace(receiver.spans, host.traceId) as [ReceivedSpan, ReceivedSpan]
      expect([point.transport, point.name, point.parentSpanId, point.resource['service.name']]).toEqual([protocol, 'hookd.point beforeToolExecute', host.spanId, 'hookd-under-test'])
      expect([allow.name, allow.parentSpanId, allow.attributes['hookd.outcome']]).toEqual(['hookd.hook allow', point.spanId, 'no-opinion'])
    } finally {
      client?.close()
      if (serving) await stopProcess(serving.child, 'SIGKILL')
      await receiver.close()
      await rm(cwd, { recursive: true, force: true })
      await rm(hooks, { recursive: true, force: true })
    }
  })
})

describe('the tracing environment', () => {
  it('refuses a protocol hookd cannot speak, and an exporter other than OTLP, before starting', async () => {
    const bad = await runInProcess(['serve'], { env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'thrift' } })
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining('OTEL_EXPORTER_OTLP_PROTOCOL=thrift is not an OTLP protocol hookd speaks; use http/protobuf, http/json, grpc')])
    const zipkin = await runInProcess(['serve'], { env: { OTEL_TRACES_EXPORTER: 'zipkin' } })
    expect([zipkin.code, zipkin.stderr]).toEqual([2, expect.stringContaining('OTEL_TRACES_EXPORTER=zipkin: hookd exports traces over OTLP only; set it to otlp (or none to turn tracing off)')])
  })
})
