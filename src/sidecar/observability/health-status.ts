/**
 * The gRPC health service's answers, by service name, following a Readiness: the whole sidecar ('') and
 * hookd.v1.HookExecutor are SERVING while it is ready (every hook folder loaded once, workers running,
 * not draining); the health and reflection services themselves until it drains.
 *
 * Any number of health services can follow one Readiness and answer alike: the sidecar's own, on its
 * listener, and the `--health-listen` one that `hookd serve` binds before the hooks load, so that probes
 * get NOT_SERVING (not a refused connection) during a long first load.
 */
import { HealthImplementation } from 'grpc-health-check'
import { SERVICE_NAME } from '../../protocol/wire.js'
import { HEALTH_SERVICE_NAME } from '../grpc/reflection.js'
import type { Readiness } from './readiness.js'

const REFLECTION_SERVICES = ['grpc.reflection.v1.ServerReflection', 'grpc.reflection.v1alpha.ServerReflection']

export function healthFollowing(readiness: Readiness): HealthImplementation {
  const health = new HealthImplementation({})
  const sync = (): void => {
    const ready = readiness.ready ? 'SERVING' : 'NOT_SERVING'
    const up = readiness.stopping ? 'NOT_SERVING' : 'SERVING'
    health.setStatus('', ready)
    health.setStatus(SERVICE_NAME, ready)
    for (const name of [HEALTH_SERVICE_NAME, ...REFLECTION_SERVICES]) health.setStatus(name, up)
  }
  sync()
  readiness.onChange(sync)
  return health
}
