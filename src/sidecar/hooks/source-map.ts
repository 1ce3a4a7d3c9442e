/**
 * Source maps (version 3) as esbuild writes them for a bundled hook: `mapPosition` turns a line of the
 * bundle (where the isolate saw a throw) back into a file and line of the author's own source, so a
 * diagnostic points at `index.ts:12`, not at line 4,031 of a script the author never wrote.
 *
 * Only what that needs is decoded: the generated line and column, the source index and the source line
 * of each mapping segment. Names and source contents are ignored.
 */

export interface SourceMap {
  version: number
  sources: readonly string[]
  mappings: string
}

/** A position in the author's source: `file` relative to the hook's folder, `line` 1-based. */
export interface SourcePosition {
  file: string
  line: number
}

interface Segment {
  column: number
  source: number
  line: number
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
const DIGIT = new Map([...BASE64].map((c, i) => [c, i]))

/** Decoded lines, per map: a hook's diagnostics map through the same bundle many times. */
const decoded = new WeakMap<SourceMap, Segment[][]>()

/**
 * Where line `line` (1-based), column `column` (0-based; default the line's first mapping) of the
 * bundle came from, or undefined when that place maps to no source (hookd's own footer, say) or the map
 * cannot be read. `sourceMap` is the map's JSON text or the parsed map.
 */
export function mapPosition(sourceMap: string | SourceMap, line: number, column = 0): SourcePosition | undefined {
  const map = typeof sourceMap === 'string' ? parseSourceMap(sourceMap) : sourceMap
  if (!map || !Number.isInteger(line) || line < 1) return undefined
  let lines = decoded.get(map)
  if (!lines) {
    lines = decodeMappings(map.mappings)
    decoded.set(map, lines)
  }
  const segments = lines[line - 1]
  if (!segments || segments.length === 0) return undefined
  // The last segment that starts at or before the column; before the first one, the first one.
  let chosen = segments[0] as Segment
  for (const segment of segments) {
    if (segment.column > column) break
    chosen = segment
  }
  const file = map.sources[chosen.source]
  return file === undefined ? undefined : { file, line: chosen.line + 1 }
}

/** The map from its JSON text, or undefined when it is not a version 3 source map. */
export function parseSourceMap(text: string): SourceMap | undefined {
  let value: unknown
  try {
    // hookd's own output (esbuild's), never a hook's: plain JSON.parse is enough.
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  if (value === null || typeof value !== 'object') return undefined
  const { version, sources, mappings } = value as Record<string, unknown>
  if (version !== 3 || typeof mappings !== 'string' || !Array.isArray(sources) || !sources.every((s) => typeof s === 'string')) return undefined
  return { version, sources: sources as string[], mappings }
}

/**
 * The segments of each generated line. Fields are deltas: the column restarts on every line, the
 * source index and source line carry over from segment to segment across lines.
 */
function decodeMappings(mappings: string): Segment[][] {
  const lines: Segment[][] = []
  let source = 0
  let sourceLine = 0
  for (const text of mappings.split(';')) {
    const segments: Segment[] = []
    let column = 0
    for (const part of text.split(',')) {
      if (part === '') continue
      const fields = decodeVlq(part)
      if (!fields || fields.length === 0) continue
      column += fields[0] as number
      // A one-field segment maps to no source.
      if (fields.length < 4) continue
      source += fields[1] as number
      sourceLine += fields[2] as number
      segments.push({ column, source, line: sourceLine })
    }
    lines.push(segments)
  }
  return lines
}

/** Base64 VLQ: 5 bits a digit, least significant first, a continuation bit, the sign in the lowest bit. */
function decodeVlq(text: string): number[] | undefined {
  const values: number[] = []
  let value = 0
  let shift = 0
  for (const c of text) {
    const digit = DIGIT.get(c)
    if (digit === undefined) return undefined
    value += (digit & 31) * 2 ** shift
    if (digit & 32) {
      shift += 5
      continue
    }
    values.push(value % 2 === 1 ? -(value - 1) / 2 : value / 2)
    value = 0
    shift = 0
  }
  return values
}
