/**
 * What to write instead: one line of advice for the mistakes hook authors make first, attached to the
 * diagnostic that reports them. Every hint is worded here, once, like piscina's errors.ts, and says
 * what to do, not only what went wrong. Pure: no I/O; the registry, the chain and `hookd check` call
 * `hintFor` with what they know of a failure.
 *
 * The mistakes come from the sandbox being a bare JavaScript engine (no Node: no `require`, `process`,
 * `fs`, `console`), from hooks being CommonJS scripts unless hookd bundles them (`export` in a plain
 * index.js), from misspelt point names, and from answers written for Claude Code's hooks
 * (`{decision: "block"}`) instead of hookd's (`{allow: false, reason}`).
 */
import type { DiagnosticKind } from '../../protocol/diagnostic.js'
import { closestPoint } from './hook-files.js'

/** What is known of a failure. Every field is optional; the more is known, the sharper the hint. */
export interface AuthorFailure {
  /** The diagnostic's kind, when the failure is one. */
  kind?: DiagnosticKind | undefined
  /** The diagnostic's or the error's text. */
  message?: string | undefined
  /** The point the handler ran for. */
  point?: string | undefined
  /** What the handler returned, when hookd read it (an invalid result, ignored fields). */
  returned?: unknown
  /** An exported name that is not a hook point. */
  exported?: string | undefined
}

const CJS_EXAMPLE = 'module.exports = { beforeToolExecute(ctx, call) { ... } }'

/**
 * What hooks use instead of a Node built-in module, by module name. The sandbox is a bare JavaScript
 * engine: only what `ctx` offers reaches the outside.
 */
export function builtinAdvice(moduleName: string): string {
  const name = moduleName.replace(/^node:/, '').split('/')[0] ?? moduleName
  const files = 'read and write files in the workdir with ctx.file.read/write/append/exists/list'
  const http = 'make HTTP requests with ctx.http.fetch(url, init) (to origins the session allows)'
  switch (name) {
    case 'fs':
      return files
    case 'http':
    case 'https':
    case 'http2':
    case 'net':
    case 'tls':
    case 'dgram':
    case 'dns':
      return http
    case 'child_process':
    case 'cluster':
    case 'worker_threads':
      return 'hooks cannot start programs or threads; refuse the tool call ({ allow: false, reason }) or ask the human with ctx.confirm'
    case 'process':
    case 'os':
      return 'read allowed environment variables from ctx.env, the platform from ctx.system and the working directory from ctx.workdir'
    case 'path':
      return "work on paths as strings ('a/' + name), or bundle a pure-JavaScript package such as path-browserify (npm install it and import it by its own name)"
    case 'crypto':
      return 'bundle a pure-JavaScript package (for instance js-sha256) for hashing'
    case 'timers':
      return 'hooks have no timers: a handler answers once, and waits on the host only through ctx capabilities'
    default:
      return `bundle a pure-JavaScript package instead (npm install it in the hook's folder); ${files}, ${http}`
  }
}

/** Globals a Node script expects that the sandbox does not have, and what to use instead. */
const MISSING_GLOBALS: Record<string, string> = {
  require:
    "hooks have no require() when they run: write import (or require('./file') with a literal path) and hookd bundles the hook's own files and its npm packages (a package.json beside index.js); Node's own modules (fs, path, child_process, ...) do not exist in the sandbox: use ctx.file for files, ctx.http.fetch for HTTP and ctx.env for environment variables",
  process:
    'hooks have no process: read allowed environment variables from ctx.env, the platform from ctx.system and the working directory from ctx.workdir; to stop, return (or throw)',
  console: 'hooks have no console: log with ctx.log(...values), which reaches the host while the hook runs',
  Buffer: 'hooks have no Buffer: work with strings, or bundle a pure-JavaScript package such as buffer',
  setTimeout: 'hooks have no timers: a handler answers once, and waits on the host only through ctx capabilities',
  setInterval: 'hooks have no timers: a handler answers once, and waits on the host only through ctx capabilities',
  fetch: 'hooks have no global fetch: use ctx.http.fetch(url, init), which returns { status, headers, body } (to origins the session allows)',
  __dirname: "hooks cannot see their own folder: ctx.workdir is the run's working directory, and ctx.config holds hook.json's config",
  __filename: "hooks cannot see their own folder: ctx.workdir is the run's working directory, and ctx.config holds hook.json's config",
}

/** One line of advice for `failure`, or undefined when hookd has none. */
export function hintFor(failure: AuthorFailure): string | undefined {
  const message = failure.message ?? ''
  return (
    moduleSyntaxHint(message) ??
    missingGlobalHint(message) ??
    pointNameHint(failure.exported) ??
    foreignAnswerHint(failure.point, failure.returned, message)
  )
}

/**
 * A failure's text and its hint apart: the sidecar puts the hint in a diagnostic's message (what a host
 * and `hookd serve` show), and `hookd check` and `hookd test` show it on a line of its own instead.
 */
export function splitHint(failure: AuthorFailure & { message: string }): { message: string; hint?: string } {
  const hint = hintFor(failure)
  if (hint === undefined) return { message: failure.message }
  return { message: failure.message.replace(`; ${hint}`, ''), hint }
}

/** `export`/`import` in a file the sandbox runs as a CommonJS script. */
function moduleSyntaxHint(message: string): string | undefined {
  if (/Unexpected token 'export'|Cannot use import statement outside a module|Unexpected token '\{'.*import|import\.meta/.test(message)) {
    return `hookd runs a plain index.js as a CommonJS script: write ${CJS_EXAMPLE} instead of export, or name the file index.mjs (or index.ts) and hookd bundles it as a module`
  }
  return undefined
}

function missingGlobalHint(message: string): string | undefined {
  const name = /ReferenceError: ([\w$]+) is not defined/.exec(message)?.[1] ?? /\b([\w$]+) is not defined\b/.exec(message)?.[1]
  return name !== undefined && Object.hasOwn(MISSING_GLOBALS, name) ? MISSING_GLOBALS[name] : undefined
}

function pointNameHint(exported: string | undefined): string | undefined {
  if (exported === undefined) return undefined
  if (exported === 'default') {
    return `hookd reads the handlers from module.exports: in a plain index.js write ${CJS_EXAMPLE}; export default { ... } works in an index.mjs or index.ts, which hookd bundles`
  }
  const near = closestPoint(exported)
  return near && near !== exported ? `rename '${exported}' to '${near}'` : undefined
}

/** The fields of other agents' hook answers, and what hookd's own answer looks like at each point. */
const FOREIGN_FIELDS = ['decision', 'permissionDecision', 'continue', 'hookSpecificOutput', 'stopReason', 'suppressOutput', 'systemMessage'] as const

/**
 * A Claude Code-style answer (`{decision: "block"}`, `{permissionDecision: "deny"}`,
 * `{continue: false}`) where hookd expects its own (`{allow: false, reason}`).
 */
function foreignAnswerHint(point: string | undefined, returned: unknown, message: string): string | undefined {
  const fields = new Set<string>()
  let reason: string | undefined
  let refuses = false
  if (returned !== null && typeof returned === 'object' && !Array.isArray(returned)) {
    const answer = returned as Record<string, unknown>
    const nested = answer.hookSpecificOutput
    const inner = nested !== null && typeof nested === 'object' && !Array.isArray(nested) ? (nested as Record<string, unknown>) : {}
    for (const field of FOREIGN_FIELDS) if (Object.hasOwn(answer, field)) fields.add(field)
    const decision = answer.decision ?? inner.permissionDecision ?? answer.permissionDecision
    refuses = decision === 'block' || decision === 'deny' || answer.continue === false
    for (const text of [answer.reason, inner.permissionDecisionReason, answer.permissionDecisionReason, answer.stopReason]) {
      if (typeof text === 'string' && text !== '') {
        reason = text
        break
      }
    }
  } else {
    // Only the diagnostic's text: "hook 'x' returned 'decision', 'reason', which ... does not let a hook change".
    const listed = /returned ((?:'[^']+'(?:, )?)+), which/.exec(message)?.[1] ?? ''
    for (const m of listed.matchAll(/'([^']+)'/g)) if ((FOREIGN_FIELDS as readonly string[]).includes(m[1] as string)) fields.add(m[1] as string)
    refuses = fields.has('decision') || fields.has('permissionDecision') || fields.has('continue')
  }
  if (fields.size === 0) return undefined
  const said = [...fields].map((f) => `'${f}'`).join(', ')
  const why = JSON.stringify(reason ?? 'why, for the model')
  const own = `${said} ${fields.size === 1 ? 'is' : 'are'} Claude Code's hook answer, not hookd's`
  switch (point) {
    case 'afterToolExecute':
      return `${own}: return { text, isError } to change what the model reads, e.g. { text: ${why}, isError: true }`
    case 'beforeModelRequest':
      return `${own}: return { system } to change this turn's system prompt, e.g. { system: request.system + '\\n' + note }`
    case 'afterModelResponse':
      return `${own}: return { text } to rewrite the model's answer`
    default:
      return refuses || point === 'beforeToolExecute' || point === undefined
        ? `${own}: to refuse the tool call, return { allow: false, reason: ${why} } from beforeToolExecute (to let it run, return nothing)`
        : `${own}: each point takes its own fields; see the table in README.md ("Writing a hook")`
  }
}
