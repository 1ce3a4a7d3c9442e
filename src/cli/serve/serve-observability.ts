/**
 * The flags of `hookd serve` for running it like infrastructure (docs/operations.md): the metrics and
 * probes listener, the operator log's level and format, and tracing from the OpenTelemetry environment.
 * Kept here so that serve.ts only wires them in.
 */
import { inert } from '../../protocol/text.js'
import { HOOKD_VERSION } from '../../protocol/version.js'
import { MetricsListener, parseMetricsAddress } from '../../sidecar/observability/metrics-listener.js'
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel, Logger } from '../../sidecar/observability/logger.js'
import { Observability } from '../../sidecar/observability/observability.js'
import { Readiness } from '../../sidecar/observability/readiness.js'
import { type TracingConfig, tracingConfig } from '../../sidecar/observability/tracing-config.js'
import type { SidecarOptions } from '../../sidecar/sidecar.js'
import { UsageError } from '../common/args.js'
import type { CliIo } from '../common/io.js'
import { loggedStderr } from '../common/logged-stderr.js'

export const OBSERVABILITY_HELP = `  --metrics HOST:PORT      serve Prometheus metrics at http://HOST:PORT/metrics, and /healthz (live) and
                           /readyz (ready) for probes, on a listener of their own; prints "hookd: metrics
                           on URL" (see docs/operations.md#metrics)
  --log-level LEVEL        error, warn, info (default: one line per decision, reload, worker exit and
                           drain) or debug; the lines saying where hookd listens are always printed
  --log-format FORMAT      text (default: "hookd: ..." lines) or json (one object per line, for log
                           pipelines; see docs/operations.md#logs)
  Traces go over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set (OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf,
  http/json or grpc; OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER, ...; see docs/operations.md#traces)`

export const OBSERVABILITY_FLAGS = {
  metrics: { type: 'string' },
  'log-level': { type: 'string' },
  'log-format': { type: 'string' },
} as const

export interface ObservabilityValues {
  metrics?: string | undefined
  'log-level'?: string | undefined
  'log-format'?: string | undefined
}

export interface ObservabilitySettings {
  metrics: string | undefined
  level: LogLevel
  format: LogFormat
  tracing: TracingConfig | undefined
}

function oneOf<T extends string>(flag: string, value: string | undefined, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback
  if ((allowed as readonly string[]).includes(value)) return value as T
  throw new UsageError(`--${flag} must be one of ${allowed.join(', ')}; got '${value}'`)
}

/** Checks the flags and the OTEL_* environment before anything starts. */
export function observabilitySettings(values: ObservabilityValues, env: NodeJS.ProcessEnv): ObservabilitySettings {
  try {
    if (values.metrics !== undefined) parseMetricsAddress(values.metrics)
    return {
      metrics: values.metrics,
      level: oneOf('log-level', values['log-level'], LOG_LEVELS, 'info'),
      format: oneOf('log-format', values['log-format'], LOG_FORMATS, 'text'),
      tracing: tracingConfig(env),
    }
  } catch (err) {
    if (err instanceof UsageError) throw err
    throw new UsageError((err as Error).message)
  }
}

/** What serve runs with once observability started. */
export interface Observed {
  /** The command's io, its stderr through the operator log. */
  io: CliIo
  /** Live and ready, shared by the sidecar, the metrics listener and an early --health-listen. */
  readiness: Readiness
  /** Sidecar options with the observer, the readiness and the tenants' report wired in. */
  wire(options: SidecarOptions): SidecarOptions
  /** Closes the metrics listener and exports the spans still queued (after the sidecar stopped). */
  close(): Promise<void>
}

/**
 * Starts what the settings ask for: the operator log, metrics and their listener (bound now, before any
 * hook loads, so that probes get answers during a long first load), tracing.
 */
export async function startObservability(settings: ObservabilitySettings, io: CliIo): Promise<Observed> {
  const logger = new Logger((line) => void io.stderr.write(line), settings.level, settings.format)
  const readiness = new Readiness()
  const observability = await Observability.start({
    version: HOOKD_VERSION,
    logger,
    ...(settings.metrics !== undefined ? { metrics: { readiness } } : {}),
    ...(settings.tracing ? { tracing: settings.tracing } : {}),
  })
  let listener: MetricsListener | undefined
  try {
    if (settings.metrics !== undefined) listener = await MetricsListener.listen(settings.metrics, observability.metrics, readiness)
  } catch (err) {
    await observability.close()
    throw err
  }
  const stderr = loggedStderr(logger, io.stderr)
  if (listener) stderr.write(`hookd: metrics on ${listener.url}/metrics\n`)
  return {
    io: { ...io, stderr },
    readiness,
    wire: (options) => {
      const wired: SidecarOptions = { ...options, observer: observability, readiness }
      // With tenants, the news of the tenants file (reloads, revocations, load failures) goes through the log too.
      if (typeof options.tenants === 'object') wired.tenants = { ...options.tenants, report: (line) => void stderr.write(`hookd: ${inert(line)}\n`) }
      // So does the audit log's (it cannot write, writes again, how many it did not write).
      if (options.audit) wired.audit = { ...options.audit, report: (line) => void stderr.write(`hookd: ${inert(line)}\n`) }
      // And the news of pinning and bundles (a lock file that cannot be read, a bundle refused or served).
      wired.report = (line) => void stderr.write(`hookd: ${inert(line)}\n`)
      // And the floor's (its hooks' loads and reloads).
      if (options.floor !== undefined) wired.floorReport = (line) => void stderr.write(`hookd: floor: ${inert(line)}\n`)
      return wired
    },
    close: async () => {
      await listener?.close()
      await observability.close()
    },
  }
}
