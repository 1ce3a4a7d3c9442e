/**
 * Comparing what a case expects with what came out, as a readable diff: one line per difference, each
 * with the path of the field, what was expected and what was there.
 *
 *   result.allow: expected false, got true
 *   result.reason: expected "no shells", but it is missing
 *   result.arguments.force: not expected, got true
 *
 * `exact` wants equal values; `partial` wants every field the case gives, and ignores the others (arrays
 * are compared item by item, and must have the same length).
 */

export type MatchMode = 'exact' | 'partial'

/** The most differences listed for one value. */
const MAX_DIFFERENCES = 20

export function differences(expected: unknown, actual: unknown, mode: MatchMode, path: string): string[] {
  const found: string[] = []
  walk(expected, actual, mode, path, found)
  if (found.length > MAX_DIFFERENCES) {
    const more = found.length - MAX_DIFFERENCES
    return [...found.slice(0, MAX_DIFFERENCES), `... and ${more} more ${more === 1 ? 'difference' : 'differences'}`]
  }
  return found
}

/** True when `actual` satisfies `expected` under `mode`. */
export function matches(expected: unknown, actual: unknown, mode: MatchMode): boolean {
  return differences(expected, actual, mode, '').length === 0
}

function walk(expected: unknown, actual: unknown, mode: MatchMode, path: string, found: string[]): void {
  // Values come from JSON (the case file, the chain's result), so recursion is as deep as they are.
  if (found.length > MAX_DIFFERENCES) return
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) {
      found.push(`${path}: expected ${show(expected)}, got ${show(actual)}`)
      return
    }
    if (expected.length !== actual.length) {
      found.push(`${path}: expected ${expected.length} ${expected.length === 1 ? 'item' : 'items'}, got ${actual.length}: ${show(actual)}`)
      return
    }
    expected.forEach((item, i) => walk(item, actual[i], mode, `${path}[${i}]`, found))
    return
  }
  if (isObject(expected)) {
    if (!isObject(actual)) {
      found.push(`${path}: expected ${show(expected)}, got ${show(actual)}`)
      return
    }
    for (const [key, value] of Object.entries(expected)) {
      const at = field(path, key)
      if (!Object.hasOwn(actual, key)) found.push(`${at}: expected ${show(value)}, but it is missing`)
      else walk(value, actual[key], mode, at, found)
    }
    if (mode === 'exact') {
      for (const [key, value] of Object.entries(actual)) {
        if (!Object.hasOwn(expected, key)) found.push(`${field(path, key)}: not expected, got ${show(value)}`)
      }
    }
    return
  }
  if (!Object.is(expected, actual) && !(expected === 0 && actual === 0)) {
    found.push(`${path}: expected ${show(expected)}, got ${show(actual)}`)
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

function field(path: string, key: string): string {
  if (/^[A-Za-z_$][\w$]*$/.test(key)) return path ? `${path}.${key}` : key
  return `${path}[${JSON.stringify(key)}]`
}

/** A value as JSON, cut short when long. */
export function show(value: unknown, max = 200): string {
  if (value === undefined) return 'nothing'
  let text: string
  try {
    text = JSON.stringify(value) ?? String(value)
  } catch {
    text = String(value)
  }
  return text.length > max ? `${text.slice(0, max)}... (${text.length - max} more characters)` : text
}
