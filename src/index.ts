/** hookd: the sidecar, for programs that embed it. Hosts import `hookd-sandbox/host`. */
export { Sidecar, type SidecarOptions } from './sidecar/sidecar.js'
export { DEFAULT_LIMITS, type Limits } from './sidecar/limits.js'
export { points, POINT_NAMES, type PointName, type PointPayload, type PointOutput } from './protocol/points/points.js'
export { DIAGNOSTIC_KINDS, type Diagnostic, type DiagnosticKind } from './protocol/diagnostic.js'
export { HookdError } from './protocol/status.js'
export { DEFAULT_ADDRESS } from './protocol/address.js'
export { HOOKD_VERSION, PROTOCOL_VERSION } from './protocol/version.js'
