/**
 * The host's side of `ctx`: handlers that serve capability calls forwarded by the sidecar, and sound
 * defaults for each. The sidecar has already checked the session's policy; these defaults check again
 * where only the host can (real paths through symlinks, for one: a link to `.git` or to the hooks
 * folder is refused like the name itself, src/protocol/protected-paths.ts), and bound what they send
 * back. This file gathers them: the handlers' shapes and CapabilityError (capability-handlers.ts), the
 * file handlers (workdir-files.ts), fetch (allowlisted-fetch.ts) and confirm (terminal-confirm.ts).
 *
 * Errors are `CapabilityError`s: the hook sees an Error whose `code` is the error's code and whose
 * message is the error's message, so the defaults word theirs like the sidecar's refusals:
 * "ctx.file.read('notes.txt') failed: no such file or directory".
 */
export {
  type CallOrigin,
  type CapabilityHandlers,
  CapabilityError,
  type ConfirmAnswer,
  type FetchInit,
  type FileHandlers,
  MAX_REPLY_BYTES,
  type Message,
  type ReceivedCall,
} from './capability-handlers.js'
export { MAX_LIST_ENTRIES } from '../protocol/capabilities.js'
export {
  type FileLimits,
  MAX_WRITE_BYTES_PER_CALL,
  type WorkdirFilesOptions,
  type WorkdirPin,
  confine,
  pinOf,
  workdirFiles,
} from './workdir-files.js'
export { FETCH_TIMEOUT_MS, type FetchOptions, allowlistedFetch } from './allowlisted-fetch.js'
export { type ConfirmTerminal, terminalConfirm } from './terminal-confirm.js'
