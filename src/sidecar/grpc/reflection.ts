/**
 * gRPC server reflection (grpc.reflection.v1 and v1alpha), so that generic clients (grpcurl, Postman,
 * grpcui, a Python `grpc_reflection` client) can list the sidecar's services and call them without a
 * copy of the proto. It describes what the sidecar serves: hookd.v1.HookExecutor and
 * grpc.health.v1.Health. The `hookd.v1.Hook` service of hook.proto is served by remote hooks, not by
 * the sidecar, so it is not listed here.
 */
import type * as grpc from '@grpc/grpc-js'
import * as protoLoader from '@grpc/proto-loader'
import { ReflectionService } from '@grpc/reflection'
import { protoPath as healthProto } from 'grpc-health-check'
import { LOADER_OPTIONS, SERVICE_NAME, packageDefinition } from '../../protocol/wire.js'

export const HEALTH_SERVICE_NAME = 'grpc.health.v1.Health'

/** The services reflection lists. */
export const REFLECTED_SERVICES = [SERVICE_NAME, HEALTH_SERVICE_NAME] as const

/** Adds the reflection services to `server`. */
export function addReflection(server: Pick<grpc.Server, 'addService'>): void {
  const health = protoLoader.loadSync(healthProto, LOADER_OPTIONS)
  const reflection = new ReflectionService({ ...packageDefinition(), ...health }, { services: [...REFLECTED_SERVICES] })
  reflection.addToServer(server)
}
