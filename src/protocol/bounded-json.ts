/**
 * JSON from anyone hookd does not trust (a host's payloads and capability answers, a hook's answers and
 * capability arguments, a remote hook's messages, hook.json, an agent's HTTP hook body) is parsed here,
 * and only here, with a size and a nesting limit checked first.
 *
 * Why: V8's JSON.stringify, structured cloning, zod and hookd's own walks over a value recurse. A value
 * nested ~4,000 deep overflows the stack of a Node main thread when it is serialized again, and an
 * isolate's thread can build values nested far deeper. The depth check below is a single loop over the
 * text (no recursion), so a hostile document costs one linear scan, and everything that reaches the
 * rest of hookd is at most `maxDepth` deep: every later recursive walk over it is bounded too.
 */

export interface JsonLimits {
  /** Most nested arrays and objects. */
  maxDepth: number
  /** Most UTF-8 bytes of text. */
  maxBytes: number
}

/** hookd's default: deep enough for any real payload, far from any stack's limit. */
export const DEFAULT_JSON_LIMITS: JsonLimits = { maxDepth: 64, maxBytes: 8 * 1024 * 1024 }

export type JsonProblem = 'too-large' | 'too-deep' | 'not-json'

export type ParsedJson = { ok: true; value: unknown } | { ok: false; problem: JsonProblem; message: string }

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_BRACE = 0x7b
const OPEN_BRACKET = 0x5b
const CLOSE_BRACE = 0x7d
const CLOSE_BRACKET = 0x5d

/**
 * How deeply `text` nests arrays and objects, counted without parsing; stops counting (and returns
 * `limit + 1`) as soon as it passes `limit`. Brackets inside strings do not count.
 */
export function nestingDepth(text: string, limit = Infinity): number {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === BACKSLASH) i++
      else if (c === QUOTE) inString = false
      continue
    }
    if (c === QUOTE) inString = true
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth++
      if (depth > deepest) {
        deepest = depth
        if (deepest > limit) return deepest
      }
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--
  }
  return deepest
}

/**
 * Parses `input` (text, or UTF-8 bytes) after checking its size and nesting. `what` names the document
 * in messages ("the beforeToolExecute payload", "hook.json"). Never throws.
 */
export function parseJson(input: string | Buffer, what: string, limits: JsonLimits = DEFAULT_JSON_LIMITS): ParsedJson {
  const bytes = typeof input === 'string' ? Buffer.byteLength(input) : input.length
  if (bytes > limits.maxBytes) {
    return { ok: false, problem: 'too-large', message: `${what} is ${bytes} bytes, over the limit of ${limits.maxBytes} bytes` }
  }
  const text = typeof input === 'string' ? input : input.toString('utf8')
  if (text.length === 0) return { ok: false, problem: 'not-json', message: `${what} is empty; send a UTF-8 JSON document` }
  if (nestingDepth(text, limits.maxDepth) > limits.maxDepth) {
    return { ok: false, problem: 'too-deep', message: `${what} nests arrays and objects more than ${limits.maxDepth} deep; flatten it` }
  }
  try {
    return { ok: true, value: JSON.parse(text) as unknown }
  } catch (err) {
    // Node's message can quote the text; keep it short.
    const why = (err as Error).message.slice(0, 200)
    return { ok: false, problem: 'not-json', message: `${what} is not valid JSON (${why})` }
  }
}

/**
 * The JSON text of a value hookd built or already checked, or undefined when it cannot be serialized
 * (a value too deep for the stack, a BigInt, a cycle). For values whose depth hookd does not control,
 * check first; this is the last line, so that a mistake costs a message, not the process.
 */
export function stringifyJson(value: unknown): string | undefined {
  try {
    return JSON.stringify(value)
  } catch {
    return undefined
  }
}
