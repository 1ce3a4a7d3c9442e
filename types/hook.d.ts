/**
 * hookd-sandbox/hook: types for hook authors.
 *
 * A hook is a folder with an `index.js` that assigns an object of point handlers to `module.exports`.
 * In plain JavaScript, annotate it to get checking and completion in any TypeScript-aware editor:
 *
 *     // @ts-check
 *     /** @type {import('hookd-sandbox/hook').Hook} *\/
 *     const hook = {
 *       beforeToolExecute(ctx, call) {
 *         if (call.name === 'shell' && !ctx.confirm({ title: 'Run a shell command?', body: String(call.arguments.command) })) {
 *           return { allow: false, reason: 'refused by the user' }
 *         }
 *       },
 *     }
 *     module.exports = hook
 *
 * Annotate a const, as here: TypeScript checks what is assigned to a typed const (a misspelt point
 * name, a field a point does not take, Claude Code's `decision`), while a type on `module.exports = {`
 * only types the handlers' parameters. A TypeScript hook (`index.ts`, bundled by hookd) writes
 * `const hook: Hook = {...}; export default hook`.
 *
 * With a `hook.json` beside `index.js` (`{"config": {...}}`), pass the config's shape:
 * `@type {import('hookd-sandbox/hook').Hook<{ level: number }>}` makes `ctx.config.level` a number.
 *
 * These declarations mirror the point catalog (src/protocol/points/points.ts) and the capability records
 * (src/protocol/capabilities.ts: a ctx function at each record's path, taking its arguments and
 * returning its answer); test/types/hook-types.test.ts fails the build when they drift apart.
 * docs/capabilities.md documents every `ctx` member.
 */

// ------------------------------------------------------------------------------------------------
// ctx
// ------------------------------------------------------------------------------------------------

/** What `ctx.confirm` and `ctx.notify` show the human. */
export interface Message {
  title: string
  body?: string
}

/** The options of `ctx.http.fetch`. */
export interface FetchInit {
  /** Default 'GET'. */
  method?: string
  headers?: Record<string, string>
  body?: string
}

/** What `ctx.http.fetch` returns. Redirects are not followed: a 3xx comes back as it is. */
export interface FetchResponse {
  status: number
  /** Lower-case header names. */
  headers: Record<string, string>
  /** The body as UTF-8 text. */
  body: string
}

/**
 * The codes a capability error carries as `err.code`. File capabilities also pass on the host's
 * system error code (ENOENT, EISDIR, ENOTDIR, EACCES, ...).
 */
export type CapabilityErrorCode =
  /**
   * The session's policy, the hook's own hook.json "permissions" or the host refused the call. Uncaught,
   * it ends the hook with a `capability-denied` diagnostic.
   */
  | 'denied'
  /** A limit was hit (capability calls per invocation, reply size). Uncaught: a `limit` diagnostic. */
  | 'limit'
  /** The arguments do not fit the capability (wrong type, too long). */
  | 'invalid'
  /** The host tried and failed (a network error, a handler that threw). */
  | 'failed'
  /** The host did not answer in time. */
  | 'timeout'
  /** The host cancelled the point call while the capability waited. */
  | 'cancelled'
  /** No host can serve the capability (a unary Invoke, or the host went away). */
  | 'unavailable'

/**
 * What a failed capability call throws inside the hook: a plain `Error` whose message says which
 * capability, what was asked and why, e.g. "ctx.file.read('../x') refused: the path leads outside
 * the workdir".
 */
export interface CapabilityError extends Error {
  code: CapabilityErrorCode | (string & {})
}

/**
 * Files below the workdir. Paths are relative to `ctx.workdir`; `..`, absolute paths and symbolic links
 * that lead outside are refused. Whatever the policy, writes are refused where something outside the
 * sandbox runs what it finds (`.git/`, `.claude/`, `package.json`, `.envrc`, the hooks folder, ...), and
 * so are reads of hookd's own files (`.hookd/`): code 'denied' (docs/containment.md, protected names).
 */
export interface CtxFile {
  /** The file's text (UTF-8). Throws with code 'ENOENT' when it does not exist. */
  read(path: string): string
  /** Creates or replaces the file, creating missing folders. */
  write(path: string, text: string): void
  /**
   * Adds `text` at the end of the file, creating it (and missing folders) when it is not there: a log
   * grows without being read and rewritten. Needs the same access as `write`.
   */
  append(path: string, text: string): void
  exists(path: string): boolean
  /** The names in a folder (default: the workdir itself), sorted. */
  list(dir?: string): string[]
}

export interface CtxHttp {
  /** Refused unless the session allows the URL's origin. */
  fetch(url: string, init?: FetchInit): FetchResponse
}

/** The hook's `config` from `hook.json`; `{}` when there is none. */
export type DefaultConfig = { readonly [key: string]: unknown }

/**
 * The context every handler receives first. Data fields are frozen copies; the functions call the
 * host and return its answer synchronously (the hook waits; waiting does not count against its time
 * limit). Every capability may throw a `CapabilityError`.
 *
 * `ctx` is the hook's only way out. Besides it, a hook's isolate holds the language built-ins and
 * nothing else (no `require`, `process`, `Buffer`, timers or `fetch`), and hookd removes three
 * built-ins before any hook code runs (src/sidecar/worker/isolate/surface.ts, docs/containment.md):
 * `console` (it would print nowhere: log with `ctx.log`), `WebAssembly` (its memory escapes the
 * memory limit) and `Atomics.waitAsync` (it can abort the sandbox worker). Using them throws a
 * `ReferenceError` or `TypeError`.
 */
export interface Ctx<Config = DefaultConfig> {
  /** The run's working directory on the host, as an absolute path. */
  readonly workdir: string
  readonly session: {
    readonly id: string
    /** True when a human answers `ctx.confirm`. */
    readonly interactive: boolean
    /** How `ctx.confirm` is answered when not interactive. */
    readonly autoApprove: boolean
  }
  readonly agent: { readonly id: string; readonly modelId: string }
  /** This hook's own configuration (`config` in its `hook.json`). */
  readonly config: Config
  readonly system: {
    /** As Node's process.platform on the sidecar, e.g. 'linux'. */
    readonly platform: string
    /** As Node's process.arch on the sidecar, e.g. 'x64'. */
    readonly arch: string
    readonly hookdVersion: string
  }
  /**
   * Only the environment variables the session allows; others are absent. A hook whose hook.json
   * declares "permissions" sees only the names in its "env": reading another name the session allows
   * throws an error with `code` 'denied'.
   */
  readonly env: { readonly [name: string]: string }
  readonly file: CtxFile
  readonly http: CtxHttp
  /**
   * Sends a line to the host while the hook runs; values are joined with spaces (non-strings as JSON).
   * Hooks have no `console`: this is how they log.
   */
  log(...values: unknown[]): void
  notify(message: Message): void
  /** Asks the human and waits for the answer; answered by auto-approve when the run is not interactive. */
  confirm(message: Message): boolean
}

// ------------------------------------------------------------------------------------------------
// The points: what each handler receives and may return
// ------------------------------------------------------------------------------------------------

/** beforeRun: once, at the start of a run. */
export interface RunStart {
  sessionId: string
  agentId: string
  modelId: string
}

/** afterRun: once, when the run ends, for any reason. */
export interface RunEnd {
  reason: 'end_turn' | 'interrupted' | 'error'
}

export interface ConversationMessage {
  role: string
  text: string
}

/** beforeModelRequest: every turn, just before the provider call. */
export interface ModelRequest {
  system: string
  model: string
  /** A read-only snapshot of the conversation. */
  messages: readonly ConversationMessage[]
}

/** afterModelResponse: every turn, after the model answers. */
export interface ModelResponse {
  text: string
  thinking: string
  /** Read-only. */
  toolCalls: readonly ToolCall[]
}

/** beforeToolExecute and afterToolExecute: the call. */
export interface ToolCall {
  id: string
  name: string
  arguments: Record<string, unknown>
}

/** afterToolExecute: what the tool returned. */
export interface ToolResult {
  text: string
  isError: boolean
}

/*
 * Returns: every field is optional and replaces only itself; `undefined` or `null` keeps the
 * current value; returning nothing means no opinion.
 */

export interface ModelRequestChanges {
  /** Replaces the system prompt for this turn only. */
  system?: string | null
}

export interface ModelResponseChanges {
  text?: string | null
  thinking?: string | null
}

export interface ToolCallDecision {
  /** `false` refuses the call; no later hook is consulted. */
  allow?: boolean | null
  /** Why, for the model; default "refused by hook '<name>'". */
  reason?: string | null
  /** Replaces the arguments the next hook and the tool see. */
  arguments?: Record<string, unknown> | null
  /**
   * `true` defers the call: it does not run now, and no later hook is consulted. An agent with its own
   * "decide later" (Claude Code's `defer`) is told so; elsewhere it is an ask where the agent can ask,
   * else a refusal (docs/agents.md).
   */
  defer?: boolean | null
}

export interface ToolResultChanges {
  text?: string | null
  isError?: boolean | null
}

/** A handler may answer directly or with a promise (an `async` function). */
export type Answer<R> = R | void | null | undefined | PromiseLike<R | void | null | undefined>

/** The points, each with the arguments after `ctx` and what the handler may return. */
export interface Points {
  beforeRun: { args: [event: RunStart]; returns: void }
  afterRun: { args: [event: RunEnd]; returns: void }
  beforeModelRequest: { args: [request: ModelRequest]; returns: ModelRequestChanges }
  afterModelResponse: { args: [response: ModelResponse]; returns: ModelResponseChanges }
  beforeToolExecute: { args: [call: ToolCall]; returns: ToolCallDecision }
  afterToolExecute: { args: [call: ToolCall, result: ToolResult]; returns: ToolResultChanges }
}

export type PointName = keyof Points

/**
 * The fields of Claude Code's hook answers, which hookd does not read. They are declared `never` on
 * every handler's answer so that a typed hook returning one fails to compile, instead of having the
 * field ignored at run time (an `ignored-field` diagnostic) and the tool call let through.
 */
export interface NotClaudeCodeAnswer {
  /** Claude Code's `decision: "block"`. In hookd, refuse from beforeToolExecute with `{ allow: false, reason }`. */
  decision?: never
  /** Claude Code's `permissionDecision: "deny"`. In hookd, refuse from beforeToolExecute with `{ allow: false, reason }`. */
  permissionDecision?: never
  /** Claude Code's `continue: false`. A hookd hook does not stop the run: refuse the tool call with `{ allow: false, reason }`. */
  continue?: never
  /** Claude Code's nested answer. hookd's answers are flat: `{ allow: false, reason }`, `{ text }`, `{ system }`. */
  hookSpecificOutput?: never
}

/** The handler for one point. */
export type Handler<P extends PointName, Config = DefaultConfig> = (
  ctx: Ctx<Config>,
  ...args: Points[P]['args']
) => Answer<Points[P]['returns'] extends void ? void : Points[P]['returns'] & NotClaudeCodeAnswer>

/** What a hook's `index.js` assigns to `module.exports`: any subset of the points. */
export type Hook<Config = DefaultConfig> = { [P in PointName]?: Handler<P, Config> }
