/**
 * Canonical JSON: object keys sorted (by UTF-16 code units, as JSON.stringify's callers usually mean
 * "sorted"), no white space, arrays in their order. Two values that mean the same JSON give the same
 * text on every machine, so hookd.lock, the bundle's manifest and the permissions a lock records can be
 * compared and signed as text. Only for values already bounded (parsed with bounded-json.ts, or built
 * by hookd): it recurses.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(',')}]`
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`
}

/** Canonical JSON indented by two spaces, one key per line: the same order, for files people read and diff. */
export function canonicalJsonPretty(value: unknown, indent = ''): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  const inner = `${indent}  `
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]'
    return `[\n${value.map((v) => inner + canonicalJsonPretty(v === undefined ? null : v, inner)).join(',\n')}\n${indent}]`
  }
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  if (entries.length === 0) return '{}'
  return `{\n${entries.map(([k, v]) => `${inner}${JSON.stringify(k)}: ${canonicalJsonPretty(v, inner)}`).join(',\n')}\n${indent}}`
}
