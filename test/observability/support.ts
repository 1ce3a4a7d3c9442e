/**
 * Test support for hookd's metrics, traces and logs: hook folders whose outcomes are known in advance,
 * a Prometheus text reader, a gRPC health client, and a host client that sends a W3C traceparent with its calls.
 */
import { readFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { join } from 'node:path'
import * as grpc from '@grpc/grpc-js'
import * as protoLoader from '@grpc/proto-loader'
import { protoPath as healthProto } from 'grpc-health-check'
import { HookdClient } from '../../src/host/index.js'
import { hook, writeTree } from '../support/sidecar.js'

/** Kills its worker outright (V8's fatal "invalid size" error), like test/hostile/fixtures/fatal-size. */
export const CRASH_SOURCE = readFile(join(import.meta.dirname, '..', 'hostile', 'fixtures', 'fatal-size', 'index.js'), 'utf8')

/**
 * Hooks with one known outcome each: allow (no opinion), deny (refuses shell commands with rm), thrower
 * (throws: its own mistake, skipped), huge (answers past the 1 MiB result limit: could not decide, a gate
 * refuses), asker (one capability the policy allows and one it refuses, then no opinion), crash (kills
 * its worker).
 */
export async function outcomeHooks(): Promise<string> {
  return writeTree({
    'allow/index.js': hook({ beforeToolExecute: 'function () {}' }),
    'deny/index.js': hook({
      beforeToolExecute: "function (ctx, call) { if (/\\brm\\b/.test(call.arguments.command || '')) return { allow: false, reason: 'no rm' } }",
    }),
    'thrower/index.js': hook({ beforeToolExecute: "function () { throw new Error('oops') }" }),
    'huge/index.js': hook({ beforeToolExecute: "function () { return { reason: 'x'.repeat(2 * 1024 * 1024) } }" }),
    'asker/index.js': hook({
      beforeToolExecute: "function (ctx) { ctx.confirm({ title: 'go?' }); try { ctx.file.read('/etc/passwd') } catch (e) {} }",
    }),
    'crash/index.js': await CRASH_SOURCE,
  })
}

/** Prometheus text as `series -> value`, the series written as the exposition writes it (`name{a="x",b="y"}`). */
export function readMetrics(text: string): Map<string, number> {
  const series = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue
    const at = line.lastIndexOf(' ')
    series.set(line.slice(0, at), Number(line.slice(at + 1)))
  }
  return series
}

/** The series of `metrics` whose name is `name` (histograms: also its _bucket, _sum and _count). */
export function family(metrics: Map<string, number>, name: string): Record<string, number> {
  const names = [name, `${name}_bucket`, `${name}_sum`, `${name}_count`]
  return Object.fromEntries([...metrics].filter(([series]) => names.includes(series.split('{', 1)[0] as string)))
}

export async function scrape(url: string): Promise<Map<string, number>> {
  const res = await fetch(url)
  if (res.status !== 200) throw new Error(`GET ${url} answered ${res.status}`)
  return readMetrics(await res.text())
}

export async function getJson(url: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url)
  return { status: res.status, body: await res.json() }
}

/** A W3C traceparent for a host span of its own: `00-TRACE-SPAN-01`. */
export function hostSpan(): { traceId: string; spanId: string; traceparent: string } {
  const hex = (n: number): string => Array.from({ length: n }, () => Math.floor(Math.random() * 16).toString(16)).join('')
  const traceId = hex(32)
  const spanId = hex(16)
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` }
}

/** A host client whose every call carries `traceparent` in its gRPC metadata, as an instrumented host's would. */
export async function tracedClient(address: string, traceparent: string): Promise<HookdClient> {
  const client = await HookdClient.connect(address)
  const plain = client.metadata.bind(client)
  client.metadata = () => {
    const metadata = plain()
    metadata.set('traceparent', traceparent)
    return metadata
  }
  return client
}

export type HealthClient = grpc.Client & { check(req: { service: string }, cb: (e: grpc.ServiceError | null, r: { status: string }) => void): void }

export function healthClient(address: string): HealthClient {
  const def = protoLoader.loadSync(healthProto, { enums: String })
  const pkg = grpc.loadPackageDefinition(def).grpc as unknown as { health: { v1: { Health: new (a: string, c: grpc.ChannelCredentials) => HealthClient } } }
  return new pkg.health.v1.Health(address, grpc.credentials.createInsecure())
}

/** The health service's answer for `service`, or the gRPC status name when it answers with an error. */
export function check(client: HealthClient, service: string): Promise<string> {
  return new Promise((resolve) => client.check({ service }, (err, res) => resolve(err ? grpc.status[err.code] : res.status)))
}

/** A TCP port free a moment ago on 127.0.0.1, for a listener whose address must be known before it prints it. */
export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}
