/**
 * Codex's patch format (`apply_patch`), parsed the way Codex parses it, so that the file a hook is
 * told about is the file Codex writes. Copilot CLI's apply_patch takes the same format (its runtime
 * carries the same parser and messages).
 *
 * This follows Codex's own parser (codex-rs/apply-patch/src/parser.rs in openai/codex, lenient mode,
 * which Codex uses for every call) rule for rule, where the pinned Codex 0.169.0 agrees; the pinned
 * binary is the oracle in test/agents/contracts/codex-patch-contract.test.ts. Where it differs from a
 * JavaScript reading:
 *
 * - Rust's `str::trim` strips Unicode White_Space, which includes U+0085 (NEL) and excludes U+FEFF
 *   (BOM); JavaScript's `trim` is the other way round. `rustTrim` is Rust's.
 * - Lines split at `\n`, each losing one `\r` before it (Rust's `str::lines`).
 * - The whole patch is trimmed; a marker line (`*** Begin Patch`, a hunk header) is trimmed before it
 *   is compared, so a header's path loses its trailing whitespace and keeps any after the marker's
 *   one space. `*** Move to: ` is matched on the untrimmed line (indented, it is a context line) and
 *   its path loses its trailing whitespace (measured with the pinned binary; that parser.rs keeps it).
 * - An added file's content runs while lines start with `+`; an update's chunks run until a line
 *   starting with `*`, blank lines between them skipped.
 * - A patch wrapped in a heredoc (`<<'EOF'` ... `EOF`) is read inside it.
 *
 * A text that is no patch to Codex parses as undefined: Codex would refuse it too.
 */

const BEGIN = '*** Begin Patch'
const END = '*** End Patch'
const ADD = '*** Add File: '
const DELETE = '*** Delete File: '
const UPDATE = '*** Update File: '
const MOVE = '*** Move to: '
const END_OF_FILE = '*** End of File'

/** One block of an update: old lines replaced by new ones (context lines are in both). */
export interface PatchChunk {
  /** The `@@ <context>` line's text, which narrows where the old lines are looked for. */
  context?: string
  oldLines: string[]
  newLines: string[]
  /** `*** End of File`: the old lines end the file. */
  endOfFile: boolean
}

/** A file header as the patch holds it: `line` untrimmed (what checks and messages quote), `path` as Codex reads it. */
export interface PatchHeader {
  line: string
  path: string
}

export type PatchHunk =
  | { op: 'add'; header: PatchHeader; content: string }
  | { op: 'delete'; header: PatchHeader }
  /** `chunks` counts the update's chunks; `first` is the first one, lines and all (see chunk). */
  | { op: 'update'; header: PatchHeader; move?: PatchHeader; chunks: number; first: PatchChunk }

// Unicode White_Space, which Rust's char::is_whitespace (and so str::trim) tests.
const RUST_WHITESPACE = '\t\n\v\f\r \u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000'

/** `text` without trailing Unicode White_Space, as Rust's `str::trim_end`. */
function rustTrimEnd(text: string): string {
  let end = text.length
  while (end > 0 && RUST_WHITESPACE.includes(text[end - 1] as string)) end--
  return text.slice(0, end)
}

/** `text` without leading and trailing Unicode White_Space, as Rust's `str::trim`. */
export function rustTrim(text: string): string {
  const end = rustTrimEnd(text)
  let start = 0
  while (start < end.length && RUST_WHITESPACE.includes(end[start] as string)) start++
  return end.slice(start)
}

/** True when `text` is all White_Space (Rust's `trim().is_empty()`), without copying it. */
function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (!RUST_WHITESPACE.includes(text[i] as string)) return false
  return true
}

/** Rust's `str::lines`: split at `\n`, one `\r` before it dropped, no empty line after a final `\n`. */
function rustLines(text: string): string[] {
  if (text === '') return []
  const lines = text.split('\n')
  const final = text.endsWith('\n')
  if (final) lines.pop()
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string
    if (line.endsWith('\r') && (final || i < lines.length - 1)) lines[i] = line.slice(0, -1)
  }
  return lines
}

/** The hunk lines between the markers, or undefined when the markers are not there. */
function body(lines: string[]): string[] | undefined {
  const strict = (ls: string[]): string[] | undefined =>
    ls.length >= 2 && rustTrim(ls[0] as string) === BEGIN && rustTrim(ls[ls.length - 1] as string) === END ? ls.slice(1, -1) : undefined
  const inside = strict(lines)
  if (inside) return inside
  const first = lines[0]
  const heredoc = first === '<<EOF' || first === "<<'EOF'" || first === '<<"EOF"'
  if (heredoc && lines.length >= 4 && (lines[lines.length - 1] as string).endsWith('EOF')) return strict(lines.slice(1, -1))
  return undefined
}

/**
 * The update chunk starting at `lines[at]` and how many lines it takes, or undefined when Codex would
 * refuse it. Every parse step works on indices into one array: a patch is at most a request body, but
 * a copy of the rest per chunk would make a patch of many small chunks cost its length squared.
 */
function chunk(lines: readonly string[], at: number, first: boolean): { chunk: PatchChunk; used: number } | undefined {
  // Only the first chunk's lines are kept (a later chunk's come back empty): hookd reads a patch's
  // lines only when it has one chunk, and a patch of a million chunks should cost a scan, not a
  // million pairs of arrays.
  let start = 0
  let context: string | undefined
  const head = lines[at] as string
  if (head === '@@') start = 1
  else if (head.startsWith('@@ ')) {
    context = head.slice(3)
    start = 1
  } else if (!first) return undefined
  if (at + start >= lines.length) return undefined
  const out: PatchChunk = { oldLines: [], newLines: [], endOfFile: false }
  if (context !== undefined) out.context = context
  let used = 0
  for (let i = at + start; i < lines.length; i++) {
    const line = lines[i] as string
    if (line === END_OF_FILE) {
      if (used === 0) return undefined
      out.endOfFile = true
      used++
      break
    }
    const mark = line[0]
    if (mark !== undefined && mark !== ' ' && mark !== '+' && mark !== '-') {
      if (used === 0) return undefined
      break
    }
    used++
    if (!first) continue
    if (mark !== '+') out.oldLines.push(line.slice(1))
    if (mark !== '-') out.newLines.push(line.slice(1))
  }
  return { chunk: out, used: used + start }
}

/** The hunk starting at `lines[at]` and how many lines it takes, or undefined when Codex would refuse it. */
function hunk(lines: readonly string[], at: number): { hunk: PatchHunk; used: number } | undefined {
  const line = lines[at] as string
  const marker = rustTrim(line)
  const header = (prefix: string): PatchHeader => ({ line, path: marker.slice(prefix.length) })
  if (marker.startsWith(ADD)) {
    let end = at + 1
    let content = ''
    while (end < lines.length && (lines[end] as string).startsWith('+')) content += `${(lines[end++] as string).slice(1)}\n`
    return { hunk: { op: 'add', header: header(ADD), content }, used: end - at }
  }
  if (marker.startsWith(DELETE)) return { hunk: { op: 'delete', header: header(DELETE) }, used: 1 }
  if (!marker.startsWith(UPDATE)) return undefined
  let next = at + 1
  const moveLine = lines[next]
  const move = moveLine?.startsWith(MOVE) ? { line: moveLine, path: rustTrimEnd(moveLine).slice(MOVE.length) } : undefined
  if (move) next++
  let chunks = 0
  let first: PatchChunk | undefined
  while (next < lines.length) {
    const text = lines[next] as string
    if (isBlank(text)) {
      next++
      continue
    }
    if (text.startsWith('*')) break
    const parsed = chunk(lines, next, chunks === 0)
    if (!parsed) return undefined
    first ??= parsed.chunk
    chunks++
    next += parsed.used
  }
  if (!first) return undefined
  return { hunk: { op: 'update', header: header(UPDATE), ...(move ? { move } : {}), chunks, first }, used: next - at }
}

/** The hunks of `patch` as Codex reads them, or undefined when Codex would refuse the patch. */
export function parsePatch(patch: string): PatchHunk[] | undefined {
  const lines = body(rustLines(rustTrim(patch)))
  if (!lines) return undefined
  const hunks: PatchHunk[] = []
  for (let at = 0; at < lines.length; ) {
    const parsed = hunk(lines, at)
    if (!parsed) return undefined
    hunks.push(parsed.hunk)
    at += parsed.used
  }
  return hunks
}
