/**
 * What observability costs a point call (docs/operations.md): one sidecar per setting, all running at
 * once, called in turn (one call to each, then the next round, calls PACE_MS apart as an agent's hook
 * points come), so that every setting sees the same machine at the same moments. Settings:
 *
 * - off: nothing on, tracing off (--log-level error, no --metrics, no OTEL_*): no part watches a
 *   session. The baseline of the others.
 * - sampled-off: tracing configured, the SDK loaded, but the sampler drops every span
 *   (OTEL_TRACES_SAMPLER=always_off).
 * - traced: every point call and hook is a span, exported over OTLP/http-protobuf to a stand-in receiver.
 * - metrics: --metrics (prom-client counters and histograms per call).
 * - logs: the default --log-level info (one line per decision on stderr, read by this process).
 *
 * With tracing off (OTEL_* unset) nothing of OpenTelemetry is loaded (tracing-config.ts). The figures
 * are medians of the calls' latency seen by the host, and each setting's difference to `off`.
 *
 * End to end, on a loaded machine, differences of a few microseconds drown in noise; so the same
 * settings are also measured in this process, on the sidecar's own code: what reporting one decision
 * costs the main thread (observer.session(...).decided(result), in nanoseconds), with each part, and
 * with no observer at all (`no-observer`: the sidecar as hookd test and embedders run it, the baseline
 * of tracing off).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { HookdClient, type HostSession as Session } from '../src/host/index.js'
import { Logger } from '../src/sidecar/observability/logger.js'
import { Observability, type ObservabilityOptions } from '../src/sidecar/observability/observability.js'
import { type DecidedResult, NO_OBSERVER } from '../src/sidecar/observability/observer.js'
import { OtlpReceiver } from '../test/support/otlp-receiver.js'
import { type Serving, startServe, stopProcess } from '../test/support/processes.js'

export const SETTINGS = ['off', 'sampled-off', 'traced', 'metrics', 'logs'] as const
export type Setting = (typeof SETTINGS)[number]

export interface ObservabilityResult {
  calls: number
  /** Median and 99th percentile of a point call with one hook, in microseconds, by setting. */
  latency_us: Record<Setting, { p50: number; p99: number }>
  /** Each setting's median minus off's, in microseconds (noise makes small values of either sign). */
  p50_over_off_us: Record<Setting, number>
  spans_received: number
  /** Main-thread cost of reporting one decision, in nanoseconds, by setting (in-process, see above). */
  decision_report_ns: Record<Setting | 'no-observer', number>
}

const HOOK = `module.exports = { beforeToolExecute(ctx, call) { return { arguments: { ...call.arguments, checked: true } } } }\n`
const call = { id: 'c1', name: 'shell', arguments: { command: 'ls -la' } }

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return 0
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number
}

function args(setting: Setting, hooks: string, address: string): string[] {
  const base = ['--hooks', hooks, '--listen', address, '--workers', '1', '--no-watch']
  if (setting === 'logs') return base
  if (setting === 'metrics') return [...base, '--log-level', 'error', '--metrics', '127.0.0.1:0']
  return [...base, '--log-level', 'error']
}

function env(setting: Setting, receiver: OtlpReceiver): Record<string, string> {
  if (setting !== 'traced' && setting !== 'sampled-off') return {}
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.httpUrl,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
    OTEL_TRACES_SAMPLER: setting === 'traced' ? 'always_on' : 'always_off',
  }
}

export async function observabilityBench(smoke: boolean, paceMs: number): Promise<ObservabilityResult> {
  const calls = smoke ? 20 : 1500
  const warmup = smoke ? 5 : 200
  const dir = await mkdtemp(join(tmpdir(), 'hookd-bench-obs-'))
  const hooks = join(dir, 'hooks')
  await mkdir(join(hooks, 'one'), { recursive: true })
  await writeFile(join(hooks, 'one', 'index.js'), HOOK)
  const receiver = await OtlpReceiver.start()
  const running: Serving[] = []
  const clients: HookdClient[] = []
  try {
    const sessions = new Map<Setting, Session>()
    // The sidecars start side by side (nothing is measured while they start: it halves the smoke run).
    const started = await Promise.allSettled(SETTINGS.map((setting) => startServe(args(setting, hooks, `unix:${join(dir, `${setting}.sock`)}`), { env: env(setting, receiver) })))
    for (const s of started) if (s.status === 'fulfilled') running.push(s.value)
    for (const s of started) if (s.status === 'rejected') throw s.reason
    for (const [i, setting] of SETTINGS.entries()) {
      const serving = running[i] as Serving
      // The logs setting writes a line per call: keep reading them, as a log collector would.
      serving.child.stderr?.on('data', () => {})
      const client = await HookdClient.connect(serving.address)
      clients.push(client)
      sessions.set(setting, await client.openSession({ sessionId: `obs-${setting}`, hooks: ['one'] }))
    }
    const samples = new Map<Setting, number[]>(SETTINGS.map((s) => [s, []]))
    for (let i = 0; i < warmup + calls; i++) {
      // A different setting goes first each round, so that none always follows the same one.
      for (let k = 0; k < SETTINGS.length; k++) {
        const setting = SETTINGS[(i + k) % SETTINGS.length] as Setting
        await new Promise((resolve) => setTimeout(resolve, paceMs))
        const start = process.hrtime.bigint()
        await (sessions.get(setting) as Session).call('beforeToolExecute', call)
        if (i >= warmup) samples.get(setting)?.push(Number(process.hrtime.bigint() - start) / 1000)
      }
    }
    for (const session of sessions.values()) session.abandon()
    // Stopping flushes the spans still queued, so that the count below is complete.
    for (const serving of running.splice(0)) await stopProcess(serving.child)
    const latency = {} as ObservabilityResult['latency_us']
    for (const setting of SETTINGS) {
      const sorted = [...(samples.get(setting) as number[])].sort((a, b) => a - b)
      latency[setting] = { p50: Math.round(percentile(sorted, 50) * 10) / 10, p99: Math.round(percentile(sorted, 99) * 10) / 10 }
    }
    const over = {} as ObservabilityResult['p50_over_off_us']
    for (const setting of SETTINGS) over[setting] = Math.round((latency[setting].p50 - latency.off.p50) * 10) / 10
    const spans = receiver.spans.length
    return { calls, latency_us: latency, p50_over_off_us: over, spans_received: spans, decision_report_ns: await decisionReportNs(smoke, receiver) }
  } finally {
    for (const client of clients) client.close()
    for (const serving of running) await stopProcess(serving.child)
    await receiver.close()
    await rm(dir, { recursive: true, force: true })
  }
}

/** A decided result like the one the end-to-end run makes: one hook, allowed. */
const DECIDED: DecidedResult = {
  seq: 1,
  point: 'beforeToolExecute',
  result: { allow: true },
  diagnostics: [],
  trace: [{ hook: 'one', version: 'v1', outcome: 'changed', durationUs: 400, cpuUs: 300 }],
  durationUs: 900,
  decisionId: '00000000-0000-4000-8000-000000000000',
}

/**
 * ns per `decided(result)` through the Observability each setting builds. With tracing, spans past the
 * batch processor's queue (2048) are dropped while an export runs: the export itself is off the call
 * path either way.
 */
export async function decisionReportNs(smoke: boolean, receiver: OtlpReceiver): Promise<Record<Setting | 'no-observer', number>> {
  const n = smoke ? 2000 : 200_000
  const out = {} as Record<Setting | 'no-observer', number>
  const bare = NO_OBSERVER.session({ tenant: undefined, transport: 'grpc-session' })
  for (let i = 0; i < n / 10; i++) bare.decided(DECIDED)
  const start = process.hrtime.bigint()
  for (let i = 0; i < n; i++) bare.decided(DECIDED)
  out['no-observer'] = Math.round(Number(process.hrtime.bigint() - start) / n)
  const saved = { ...process.env }
  try {
    for (const setting of SETTINGS) {
      Object.assign(process.env, env(setting, receiver))
      const options: ObservabilityOptions = { version: 'bench' }
      if (setting === 'metrics') options.metrics = { processMetrics: false }
      if (setting === 'logs') options.logger = new Logger(() => {}, 'info', 'json')
      if (setting === 'traced' || setting === 'sampled-off') options.tracing = { protocol: 'http/protobuf' }
      const observer = await Observability.start(options)
      const session = observer.session({ tenant: undefined, transport: 'grpc-session' })
      session.opened('bench')
      for (let i = 0; i < n / 10; i++) session.decided(DECIDED)
      const start = process.hrtime.bigint()
      for (let i = 0; i < n; i++) session.decided(DECIDED)
      out[setting] = Math.round(Number(process.hrtime.bigint() - start) / n)
      session.ended()
      await observer.close()
      for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key]
    }
  } finally {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key]
  }
  return out
}

export function observabilityRows(r: ObservabilityResult | undefined): Array<[string, string]> {
  if (!r) return []
  return [
    ...SETTINGS.map((s): [string, string] => [
      `observability: ${s}, 1 hook (p50 / p99 us; p50 - off)`,
      `${r.latency_us[s].p50} / ${r.latency_us[s].p99}${s === 'off' ? '' : ` (${r.p50_over_off_us[s] >= 0 ? '+' : ''}${r.p50_over_off_us[s]})`}`,
    ]),
    ['observability: one decision reported, in process (ns)', (['no-observer', ...SETTINGS] as const).map((s) => `${s} ${r.decision_report_ns[s]}`).join(', ')],
  ]
}
