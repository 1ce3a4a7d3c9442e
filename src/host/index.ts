/** hookd-sandbox/host: the library a TypeScript agent host uses to run its hooks in hookd. */
export { HookdClient, type SessionOptions, type PointCallResult, type InvokeResult, type ConnectOptions } from './client.js'
export { HostSession, type OutcomeReport } from './session.js'
export type { AskOutcome } from '../protocol/ask-outcomes.js'
export {
  CapabilityError,
  type CapabilityHandlers,
  type ConfirmAnswer,
  type CallOrigin,
  type FetchInit,
  type FileHandlers,
  type Message,
  type FetchOptions,
  MAX_REPLY_BYTES,
  FETCH_TIMEOUT_MS,
  confine,
  workdirFiles,
  type WorkdirFilesOptions,
  pinOf,
  type WorkdirPin,
  allowlistedFetch,
  terminalConfirm,
  type ConfirmTerminal,
} from './capabilities.js'
export { PROTECTED_NAMES, protectionOf, protectedReason, hooksRoot, hookdStateRoots, type ProtectedRoot } from '../protocol/protected-paths.js'
export { points, POINT_NAMES, type PointName, type PointPayload, type PointOutput } from '../protocol/points/points.js'
export type { Diagnostic, DiagnosticKind } from '../protocol/diagnostic.js'
export type { HookTrace, HookOutcome, HookInfoData, LogLineData } from '../protocol/wire.js'
export { HookdError, type ErrorCode } from '../protocol/status.js'
export { DEFAULT_ADDRESS } from '../protocol/address.js'
export { GuardedSession, type GuardOptions } from './guarded-session.js'
export { type FailurePolicy, type FailureMode, type PointFailurePolicy, DEFAULT_DEADLINE_MS } from './failure-policy.js'
export { bridgeHookable, applyChanges, serializableContext, type HookableLike, type BridgeTarget, type BridgeOptions } from './bridge.js'
