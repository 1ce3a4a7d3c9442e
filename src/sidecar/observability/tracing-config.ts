/**
 * Whether `hookd serve` traces, read from the standard OpenTelemetry environment, without loading any of
 * OpenTelemetry: tracing is on when an OTLP endpoint is configured (OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) or OTEL_TRACES_EXPORTER=otlp asks for the default one, and
 * OTEL_SDK_DISABLED is not true. Off, nothing is loaded or registered (tracing.ts is never imported).
 *
 * The exporter packages each speak one protocol and none reads OTEL_EXPORTER_OTLP_PROTOCOL (only the
 * all-in-one sdk-node does): hookd maps it to an exporter itself. The rest of the environment (endpoint,
 * headers, timeout, compression, certificates, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES,
 * OTEL_TRACES_SAMPLER[_ARG], OTEL_BSP_*) is read by the SDK and the exporters themselves.
 */
import { HookdError } from '../../protocol/status.js'

export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json', 'grpc'] as const
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number]

export interface TracingConfig {
  protocol: OtlpProtocol
}

/** The tracing `env` asks for; undefined when off. Throws an `invalid-argument` HookdError for values hookd cannot honour. */
export function tracingConfig(env: NodeJS.ProcessEnv): TracingConfig | undefined {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return undefined
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((e) => e.trim().toLowerCase())
    .filter(Boolean)
  const unsupported = exporters.filter((e) => e !== 'otlp' && e !== 'none')
  if (unsupported.length) {
    throw new HookdError('invalid-argument', `OTEL_TRACES_EXPORTER=${env.OTEL_TRACES_EXPORTER}: hookd exports traces over OTLP only; set it to otlp (or none to turn tracing off)`)
  }
  if (exporters.includes('none')) return undefined
  const endpoint = Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim())
  if (!endpoint && !exporters.includes('otlp')) return undefined
  const named = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim() ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL'
  const protocol = (env[named]?.trim() || 'http/protobuf').toLowerCase()
  if (!(OTLP_PROTOCOLS as readonly string[]).includes(protocol)) {
    throw new HookdError('invalid-argument', `${named}=${env[named]} is not an OTLP protocol hookd speaks; use ${OTLP_PROTOCOLS.join(', ')}`)
  }
  return { protocol: protocol as OtlpProtocol }
}
