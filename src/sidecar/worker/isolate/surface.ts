/**
 * The capability surface: the whole `ctx` that hook code can touch, declared once.
 *
 * - The capabilities that `ctx` calls are one record each in src/protocol/capabilities.ts (their
 *   arguments, answer, policy class and server; they cross to the host on the wire as CapabilityCall).
 * - `PRELUDE` (prelude.js) is the JavaScript that runs inside each fresh isolate, before any of the hook's code, and
 *   builds `ctx` from plain data plus one host function reachable only from the prelude's closures.
 *   It also calls the hook and copies its answer out as JSON text, with size checks, inside the
 *   isolate: no hook getter, proxy trap or toJSON ever runs outside it.
 * - `wrapHookSource` turns a CommonJS hook file into a call of the prelude's entry with the module
 *   function, without moving its lines.
 *
 * types/hook.d.ts declares the same surface for hook authors; tests hold both to the records
 * (test/integration/capabilities/capability-dispatch.test.ts, test/types/hook-types.test.ts). The threat model
 * and what each failure looks like are in docs/containment.md.
 */
import { readFileSync } from 'node:fs'
import { MESSAGE_CHARS } from '../../../protocol/text.js'

/**
 * The global through which the hook's script hands its module function to the prelude (see PRELUDE):
 * defined by `hookdArm` just before the script runs, deleted by its first call, before any of the
 * hook's own top-level code runs.
 */
const ENTRY = '__hookdEnter'

/** The wrapper keeps the hook's own line numbers: it adds nothing before the first line's text. */
const WRAP_HEAD = `${ENTRY}(function (module, exports) {`
const WRAP_TAIL = '\n})'

export function wrapHookSource(source: string): { code: string; columnOffset: number } {
  return { code: WRAP_HEAD + source + WRAP_TAIL, columnOffset: -WRAP_HEAD.length }
}

/** What the prelude needs to know of the limits (the rest are enforced by the worker). */
export interface PreludeLimits {
  resultBytes: number
  logBytes: number
  logLines: number
  memoryMb: number
}


/**
 * The prelude (prelude.js, beside this file: read its header for the three steps it takes and why),
 * ready to evaluate: `(function hookdPrelude(MESSAGE_CHARS, ENTRY) {...})(...)` evaluates to
 * `hookdSetup`. It is a real file so that `make typecheck` checks it (tsconfig.prelude.json).
 */
export const PRELUDE = `(${readFileSync(new URL('../isolate/prelude.js', import.meta.url), 'utf8').replace(/^\/\/ @ts-check\n/, '')})(${MESSAGE_CHARS}, ${JSON.stringify(ENTRY)})`

/**
 * The script name hook code is compiled under, e.g. "hookd-hook:guard/index.js". The prelude reads line
 * numbers from stack frames by this prefix.
 */
export function hookScriptName(filename: string): string {
  return 'hookd-hook:' + filename
}

/** The 1-based line in a compile error's text such as "... [hookd-hook:guard/index.js:3:5]". */
export function lineFromMessage(message: string): number | undefined {
  const m = /hookd-hook:[^:\n]*:(\d{1,7}):\d/.exec(message)
  return m ? Number(m[1]) : undefined
}
