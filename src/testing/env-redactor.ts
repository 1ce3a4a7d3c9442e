/**
 * Keeps a session's environment values out of a captured case (capture.ts): every string in it (keys
 * too) has each value replaced by `<env NAME>`, and a number that spells one becomes that text. A value
 * reaches a case by many roads (a hook logs it, returns it, sends it in a fetch header or URL, a file
 * it reads holds it, the host's payload prints it), so the case is cleaned as a whole, not road by road.
 *
 * Each value is looked for as itself, as it reads escaped inside a JSON string (a hook that stringifies
 * an object holding it) and URL-encoded (a query parameter). A value shorter than MIN_INNER characters
 * ("1", "on") is replaced only where a whole string is that value (never in a number): replacing every
 * "1" inside other text would wreck the case and hide nothing. A hook that encodes a value some other way (base64,
 * reversed, split) can still write it; case files are 0600 for that reason, and worth a read before
 * they are committed.
 *
 * Bounded: at most MAX_ENV_VALUES values of MAX_ENV_CHARS characters in all; a session past that is
 * not captured at all (the caller reports it), since its values could not all be kept out. The case is
 * walked recursively, and its depth is bounded by the bounded JSON parser that read each part of it.
 */

/** Values shorter than this are replaced only where they are a whole string. */
export const MIN_INNER = 4
export const MAX_ENV_VALUES = 64
export const MAX_ENV_CHARS = 64 * 1024

export interface EnvRedactor {
  /** A copy of `value` with every env value replaced. */
  redact(value: unknown): unknown
  /** The names whose values were replaced so far, in the order first met. */
  readonly replaced: ReadonlySet<string>
}

/** What a redactor needs to know; throws when the values are past the bounds above. */
export function envRedactor(env: Readonly<Record<string, string>>): EnvRedactor {
  const entries = Object.entries(env).filter(([, value]) => value !== '')
  const chars = entries.reduce((n, [, value]) => n + value.length, 0)
  if (entries.length > MAX_ENV_VALUES || chars > MAX_ENV_CHARS) {
    throw new Error(
      `the session sent ${entries.length} environment values (${chars} characters), over the ${MAX_ENV_VALUES} values of ${MAX_ENV_CHARS} characters in all that capture keeps out of its cases; its calls were not captured (send fewer to capture them)`,
    )
  }
  /** Each form of each value, to the name it stands for. Longer values win a tie (one contains another). */
  const inner = new Map<string, string>()
  const whole = new Map<string, string>()
  for (const [name, value] of [...entries].sort((a, b) => b[1].length - a[1].length)) {
    const forms = new Set([value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value)])
    for (const form of forms) {
      if (!whole.has(form)) whole.set(form, name)
      if (value.length >= MIN_INNER && !inner.has(form)) inner.set(form, name)
    }
  }
  const pattern = inner.size
    ? new RegExp(
        [...inner.keys()]
          .sort((a, b) => b.length - a.length)
          .map(escapeRegExp)
          .join('|'),
        'g',
      )
    : undefined
  const replaced = new Set<string>()
  const placeholder = (name: string): string => {
    replaced.add(name)
    return `<env ${name}>`
  }
  const text = (s: string): string => {
    const name = whole.get(s)
    if (name !== undefined) return placeholder(name)
    if (!pattern) return s
    // One pass over the text: a placeholder already written is never searched again.
    return s.replace(pattern, (form) => placeholder(inner.get(form) as string))
  }
  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') return text(value)
    if (typeof value === 'number') {
      // Only long values: a count of 1 is no one's secret, even where CI=1.
      const spelt = String(value)
      const cleaned = pattern ? spelt.replace(pattern, (form) => placeholder(inner.get(form) as string)) : spelt
      return cleaned === spelt ? value : cleaned
    }
    if (Array.isArray(value)) return value.map(walk)
    if (value !== null && typeof value === 'object') {
      const out: Record<string, unknown> = {}
      // defineProperty: a key "__proto__" (JSON.parse makes it an own key) stays a key, not a prototype.
      for (const [key, item] of Object.entries(value)) Object.defineProperty(out, text(key), { value: walk(item), enumerable: true, writable: true, configurable: true })
      return out
    }
    return value
  }
  return { redact: walk, replaced }
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
