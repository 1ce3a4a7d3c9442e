/**
 * Test support: remote hooks served by grpc-js in the test process, on real sockets. A handler gets the
 * invocation and an `io` to make capability calls and log lines, and returns the answer's JSON value
 * (undefined: no opinion), throws (a HookFailure), or takes over the raw stream for hostile tests.
 */
import * as grpc from '@grpc/grpc-js'
import { hookService } from '../../src/sidecar/runners/remote/remote-wire.js'

export interface Invocation {
  callId: number
  hook: string
  handler: string
  point: string
  args: unknown[]
  ctx: Record<string, unknown>
  mutate: boolean
  mutateArg: number
  wallMs: number
}

export class RemoteCapabilityError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

export interface RemoteIo {
  capability(name: string, args: unknown[]): Promise<unknown>
  log(message: string): void
  /** The raw stream, for tests that break the protocol on purpose. */
  stream: grpc.ServerDuplexStream<unknown, unknown>
}

export type RemoteHandler = (inv: Invocation, io: RemoteIo) => unknown

export interface RemoteHookServer {
  address: string
  /** Invocations received, in order. */
  invocations: Invocation[]
  stop(): Promise<void>
}

export interface RemoteHookOptions {
  points?: string[]
  version?: string
  /** Replaces the Describe implementation. */
  describe?: (request: { hook: string; protocolVersion: number }) => Record<string, unknown> | grpc.ServiceError
}

const RAW = Symbol('raw')
/** Returned by a handler that wrote (or will write) its own answer on io.stream. */
export const RAW_ANSWER: unknown = RAW

export async function serveRemoteHook(
  address: string,
  handlers: Record<string, RemoteHandler>,
  options: RemoteHookOptions = {},
): Promise<RemoteHookServer> {
  const server = new grpc.Server()
  const invocations: Invocation[] = []
  server.addService(hookService(), {
    Describe: (call: grpc.ServerUnaryCall<{ hook: string; protocolVersion: number }, unknown>, done: grpc.sendUnaryData<unknown>) => {
      const custom = options.describe?.(call.request)
      if (custom && 'code' in custom && typeof custom.code === 'number') return done(custom as grpc.ServiceError)
      done(null, custom ?? { protocolVersion: 1, points: options.points ?? Object.keys(handlers), version: options.version ?? 'v1', description: 'test' })
    },
    Run: (stream: grpc.ServerDuplexStream<unknown, unknown>) => {
      let nextId = 1
      const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>()
      stream.on('error', () => {})
      stream.on('data', (raw: Record<string, unknown>) => {
        if (raw.kind === 'invocation') {
          const i = raw.invocation as Record<string, unknown>
          const inv: Invocation = {
            callId: i.callId as number,
            hook: i.hook as string,
            handler: i.handler as string,
            point: i.point as string,
            args: JSON.parse((i.args as Buffer).toString()) as unknown[],
            ctx: JSON.parse((i.ctx as Buffer).toString()) as Record<string, unknown>,
            mutate: i.mutate as boolean,
            mutateArg: i.mutateArg as number,
            wallMs: i.wallMs as number,
          }
          invocations.push(inv)
          const io: RemoteIo = {
            stream,
            log: (message) => stream.write({ log: { message } }),
            capability: (name, args) =>
              new Promise((resolve, reject) => {
                const id = nextId++
                waiting.set(id, { resolve, reject })
                stream.write({ capabilityCall: { id, capability: name, args: Buffer.from(JSON.stringify(args)) } })
              }),
          }
          const handler = handlers[inv.handler]
          void (async () => {
            try {
              const value = handler ? await handler(inv, io) : undefined
              if (value === RAW) return
              stream.write({ answer: value === undefined ? { value: Buffer.alloc(0) } : { value: Buffer.from(JSON.stringify(value)) } })
              stream.end()
            } catch (err) {
              const code = err instanceof RemoteCapabilityError ? err.code : ''
              stream.write({ answer: { error: { message: String(err), code, file: 'server.ts', line: 7 } } })
              stream.end()
            }
          })()
        } else if (raw.kind === 'capabilityResult') {
          const r = raw.capabilityResult as { id: number; value?: Buffer | null; error?: { code: string; message: string } | null }
          const w = waiting.get(r.id)
          waiting.delete(r.id)
          if (r.error) w?.reject(new RemoteCapabilityError(r.error.code, r.error.message))
          else w?.resolve(JSON.parse((r.value as Buffer).toString()))
        }
      })
    },
  })
  await new Promise<number>((resolve, reject) =>
    server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))),
  ).then((port) => {
    if (!address.startsWith('unix:')) address = address.replace(/:0$/, `:${port}`)
  })
  return {
    address,
    invocations,
    stop: async () => {
      server.forceShutdown()
    },
  }
}
