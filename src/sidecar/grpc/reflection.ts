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
import { LOADER_OPTIONS, PROTO_FILE, SERVICE_NAME, packageDefinition } from '../../protocol/wire.js'
import { withRealFileNames } from './descriptor-names.js'

export const HEALTH_SERVICE_NAME = 'grpc.health.v1.Health'

/**
 * The file each package's descriptor is served as: the paths the protos have in their repositories
 * (hookd's under proto/, the health service's as grpc/grpc publishes it), which is what a client that
 * asks by file name (`file_by_filename`) names.
 */
export const REFLECTED_FILES: Readonly<Record<string, string>> = {
  'hookd.v1': PROTO_FILE,
  'grpc.health.v1': 'grpc/health/v1/health.proto',
}

/** The services reflection lists. */
export const REFLECTED_SERVICES = [SERVICE_NAME, HEALTH_SERVICE_NAME] as const

/** Adds the reflection services to `server`. */
export function addReflection(server: Pick<grpc.Server, 'addService'>): void {
  const health = protoLoader.loadSync(healthProto, LOADER_OPTIONS)
  const reflection = new ReflectionService(withRealFileNames({ ...packageDefinition(), ...health }, REFLECTED_FILES), { services: [...REFLECTED_SERVICES] })
  reflection.addToServer(server)
}
