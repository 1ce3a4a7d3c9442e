/**
 * The hookd.v1.HookExecutor service on a gRPC server: Session, Invoke and ListHooks. Every call is
 * authenticated here, once, by the tenancy: the tenant its metadata names is what the call runs as.
 */
import * as grpc from '@grpc/grpc-js'
import { HookdError } from '../../protocol/status.js'
import { hookExecutorService, hookInfoToWire } from '../../protocol/wire.js'
import type { Observer, TraceCarrier } from '../observability/observer.js'
import type { Tenancy, Tenant } from '../tenant.js'
import { withTolerantDecoding } from './frames.js'
import { serveInvoke } from './invoke.js'
import type { OpenStreams } from './open-streams.js'
import { type StreamTap, serveSessionStream } from './session-stream.js'

/** A call's metadata as a trace carrier (traceparent, tracestate), read only if tracing asks. */
function carrier(metadata: grpc.Metadata): TraceCarrier {
  return { get: (key) => metadata.get(key).map(String)[0] }
}

export function addHookExecutor(server: grpc.Server, tenancy: Tenancy, sessions: OpenStreams, observer: Observer, tap?: () => StreamTap): void {
  /**
   * The tenant a call's metadata names (the implicit one without tenants), or why none. A draining
   * sidecar still answers (health checks must see NOT_SERVING), but takes nothing new.
   */
  const identify = (metadata: grpc.Metadata): Tenant | HookdError => {
    if (sessions.draining) return sessions.draining
    try {
      return tenancy.identify(metadata.get('authorization'))
    } catch (err) {
      return HookdError.from(err)
    }
  }
  const status = (err: HookdError): Partial<grpc.StatusObject> => ({ code: err.grpcStatus, details: err.message })

  server.addService(withTolerantDecoding(hookExecutorService()), {
    Session: (call: grpc.ServerDuplexStream<unknown, unknown>) => {
      const tenant = identify(call.metadata)
      if (tenant instanceof HookdError) return void call.emit('error', status(tenant))
      serveSessionStream(call, tenant, sessions, observer.session({ tenant: tenant.id, transport: 'grpc-session', carrier: carrier(call.metadata) }), tap?.())
    },
    Invoke: (call: grpc.ServerUnaryCall<unknown, unknown>, done: grpc.sendUnaryData<unknown>) => {
      const tenant = identify(call.metadata)
      if (tenant instanceof HookdError) return done(status(tenant))
      serveInvoke(call.request, tenant, observer.session({ tenant: tenant.id, transport: 'grpc-invoke', carrier: carrier(call.metadata) })).then(
        (response) => done(null, response),
        (err: unknown) => done(status(HookdError.from(err))),
      )
    },
    ListHooks: (call: grpc.ServerUnaryCall<unknown, unknown>, done: grpc.sendUnaryData<unknown>) => {
      const tenant = identify(call.metadata)
      if (tenant instanceof HookdError) return done(status(tenant))
      done(null, { hooks: tenant.registry.list().map(hookInfoToWire) })
    },
  })
}
