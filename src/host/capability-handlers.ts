/**
 * What a host serves hooks' capability calls with: the handlers' shapes, who made a call (CallOrigin),
 * and the error a handler throws to fail one (CapabilityError), which the hook sees with its code and
 * message. The defaults are workdir-files.ts, allowlisted-fetch.ts and terminal-confirm.ts; the
 * dispatch that calls them is capability-table.ts.
 */
import type { Diagnostic } from '../protocol/diagnostic.js'
import type { FetchResult } from '../protocol/capabilities.js'
import type { CapabilityCode } from '../protocol/capability-errors.js'
import type { LogLineData } from '../protocol/wire.js'

/** Which hook, during which point call, made a capability call. */
export interface CallOrigin {
  hook: string
  point: string
  seq: number
}

export interface Message {
  title: string
  body?: string
}

export interface FetchInit {
  method?: string
  headers?: Record<string, string>
  body?: string
}

export interface FileHandlers {
  read(path: string, origin: CallOrigin): Promise<string>
  write(path: string, text: string, origin: CallOrigin): Promise<void>
  /** Adds `text` at the end of the file, creating it (and missing folders) when it is not there. */
  append(path: string, text: string, origin: CallOrigin): Promise<void>
  exists(path: string, origin: CallOrigin): Promise<boolean>
  list(dir: string, origin: CallOrigin): Promise<string[]>
}

/** A capability call as the host received it, its arguments validated, before its handler runs. */
export interface ReceivedCall {
  capability: string
  args: readonly unknown[]
  origin: CallOrigin
}

/**
 * A confirm handler's answer: yes (true), no (false), or `'deferred'`: yes for the chain's sake, the
 * agent's own permission prompt deciding the call (the host answers its agent `ask`). Only at a gate
 * point (beforeToolExecute, tool:gate, ...); the sidecar records the result asked, with the question,
 * and the host reports what became of the call (HostSession.reportOutcome). A sidecar older than that
 * records it as a yes.
 */
export type ConfirmAnswer = boolean | 'deferred'

/** Everything a host can serve. Each handler is optional; missing ones get the defaults (capability-table.ts servingHandlers). */
export interface CapabilityHandlers {
  /** Ask the human. Default: a yes/no prompt on the terminal. Only called in interactive sessions. */
  confirm?(message: Message, origin: CallOrigin): Promise<ConfirmAnswer> | ConfirmAnswer
  notify?(message: Message, origin: CallOrigin): Promise<void> | void
  file?: Partial<FileHandlers>
  fetch?(url: string, init: FetchInit, origin: CallOrigin): Promise<FetchResult>
  /** A hook's ctx.log line, while the hook runs. */
  log?(line: LogLineData): void
  /** A diagnostic the sidecar pushed outside any point result (e.g. a broken hook at open). */
  diagnostic?(d: Diagnostic): void
  /** Told of every capability call before its handler runs (to record or audit them; `hookd test` records its cases' calls so). */
  onCall?(call: ReceivedCall): void
}

/**
 * A capability's failure, as the hook will see it (`err.code`, `err.message`). The code is one of
 * hookd's (`denied`, `limit`, `invalid`, `failed`, `timeout`, `cancelled`, `unavailable`) or a system
 * error's (`ENOENT`, ...): docs/capabilities.md, "Errors".
 */
export class CapabilityError extends Error {
  constructor(
    readonly code: CapabilityCode,
    message: string,
  ) {
    super(message)
    this.name = 'CapabilityError'
  }
}

/**
 * The most a default handler sends back in one reply (a file's bytes, a response body). A reply
 * crosses gRPC to the sidecar, which accepts messages of at most 8 MiB; a bigger one would end the
 * session instead of failing the call.
 */
export const MAX_REPLY_BYTES = 4 * 1024 * 1024
